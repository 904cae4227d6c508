use super::*;
use crate::engine::coverage::node_coverage;
use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
use crate::engine::revision::RevisionIndex;
use crate::model::{DaemonSet, Pod};

struct Fleet {
    nodes: Vec<Node>,
    rows: Vec<NodeCoverage>,
}

fn fleet(ds: &DaemonSet, nodes: Vec<Node>, pods: &[Pod]) -> Fleet {
    let old = daemonset("agent:1").build();
    let revisions = RevisionIndex::new(
        ds,
        &[revision_of(&old, "old", 1), revision_of(ds, "new", 2)],
    );
    let rows = nodes
        .iter()
        .map(|n| {
            let on_node: Vec<&Pod> = pods
                .iter()
                .filter(|p| p.node_name() == Some(n.name()))
                .collect();
            node_coverage(n, ds, &on_node, &revisions, at(100))
        })
        .collect();
    Fleet { nodes, rows }
}

fn old_pod(n: &str) -> Pod {
    pod(&format!("{n}-old"), n, "old").ready_since(0).build()
}

#[test]
fn skipped_nodes_carry_their_reason() {
    let ds = daemonset("agent:2")
        .on_delete()
        .node_selector("agent", "yes")
        .build();
    let eligible = |name: &str| node(name).label("agent", "yes");
    let nodes = vec![
        node("a-excluded").build(),
        eligible("b-cordoned").cordoned().build(),
        eligible("c-not-ready").not_ready().build(),
        eligible("d-updated").build(),
        eligible("e-no-pod").build(),
        eligible("f-ok").build(),
        eligible("g-terminating-only").build(),
    ];
    let pods = vec![
        old_pod("a-excluded"),
        old_pod("b-cordoned"),
        old_pod("c-not-ready"),
        pod("d-new", "d-updated", "new").ready_since(0).build(),
        old_pod("f-ok"),
        pod("g-old", "g-terminating-only", "old")
            .ready_since(0)
            .terminating()
            .build(),
    ];
    let f = fleet(&ds, nodes, &pods);
    let plan = plan_rollout(&f.rows, &f.nodes, &PlanOptions::default());
    let skipped: Vec<(&str, &SkipReason)> = plan
        .skipped
        .iter()
        .map(|s| (s.node.as_str(), &s.reason))
        .collect();
    assert!(
        matches!(skipped[0], ("a-excluded", SkipReason::NotEligible { message, .. }) if message.contains("agent")),
        "{skipped:?}"
    );
    assert_eq!(
        skipped[1..],
        [
            ("b-cordoned", &SkipReason::Cordoned),
            ("c-not-ready", &SkipReason::NotReady),
            ("d-updated", &SkipReason::AlreadyUpdated),
            ("e-no-pod", &SkipReason::NoDaemonPod),
            ("g-terminating-only", &SkipReason::NoDaemonPod),
        ]
    );
    let steps: Vec<&str> = plan.steps.iter().map(|s| s.node.as_str()).collect();
    assert_eq!(steps, vec!["f-ok"]);
    assert_eq!(
        plan.steps[0].pod.as_ref().map(|p| p.name.as_str()),
        Some("f-ok-old")
    );
}

#[test]
fn order_is_canaries_then_group_then_name() {
    let ds = daemonset("agent:2").on_delete().build();
    let nodes = vec![
        node("n1").label("topology.kubernetes.io/zone", "b").build(),
        node("n2")
            .label("cloud.google.com/gke-nodepool", "gpu")
            .label("topology.kubernetes.io/zone", "a")
            .build(),
        node("n3").label("topology.kubernetes.io/zone", "a").build(),
        node("n4").build(),
        node("n5")
            .label("topology.kubernetes.io/zone", "b")
            .label("canary", "true")
            .build(),
        node("n6").label("topology.kubernetes.io/zone", "a").build(),
    ];
    let pods: Vec<Pod> = nodes.iter().map(|n| old_pod(n.name())).collect();
    let f = fleet(&ds, nodes, &pods);
    let options = PlanOptions {
        canaries: ["n6".to_owned()].into_iter().collect(),
        canary_selector: Some(Selector::parse("canary=true").expect("selector")),
        ..PlanOptions::default()
    };
    let plan = plan_rollout(&f.rows, &f.nodes, &options);
    let order: Vec<(&str, bool, &str)> = plan
        .steps
        .iter()
        .map(|s| (s.node.as_str(), s.canary, s.group.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            ("n6", true, "topology.kubernetes.io/zone=a"),
            ("n5", true, "topology.kubernetes.io/zone=b"),
            ("n2", false, "cloud.google.com/gke-nodepool=gpu"),
            ("n3", false, "topology.kubernetes.io/zone=a"),
            ("n1", false, "topology.kubernetes.io/zone=b"),
            ("n4", false, ""),
        ]
    );
}

/// kubeadm labels control-plane nodes `node-role.kubernetes.io/control-plane`
/// (and `master` before 1.20): a rollout meets the workers first, whatever
/// pool name sorts first, and the full plan, its first page and the next
/// batch all agree on it. A control-plane node marked as a canary still goes first.
#[test]
fn control_plane_nodes_go_last_unless_marked_canary() {
    let ds = daemonset("agent:2").on_delete().build();
    let nodes = vec![
        node("cp-01")
            .label("node-pool", "a-control")
            .label("node-role.kubernetes.io/control-plane", "")
            .build(),
        node("cp-02")
            .label("node-pool", "a-control")
            .label("node-role.kubernetes.io/master", "")
            .build(),
        node("edge-01").label("node-pool", "edge").build(),
        node("general-01").label("node-pool", "general").build(),
    ];
    let pods: Vec<Pod> = nodes.iter().map(|n| old_pod(n.name())).collect();
    let f = fleet(&ds, nodes, &pods);
    let cases: [(&str, &[&str], &[&str]); 2] = [
        (
            "no canary",
            &[],
            &["edge-01", "general-01", "cp-01", "cp-02"],
        ),
        (
            "cp-02 marked",
            &["cp-02"],
            &["cp-02", "edge-01", "general-01", "cp-01"],
        ),
    ];
    for (name, canaries, expected) in cases {
        let options = PlanOptions {
            canaries: canaries.iter().map(|c| (*c).to_owned()).collect(),
            ..PlanOptions::default()
        };
        let plan = plan_rollout(&f.rows, &f.nodes, &options);
        let order: Vec<&str> = plan.steps.iter().map(|s| s.node.as_str()).collect();
        assert_eq!(order, expected, "{name}: full plan");
        let node_of = |n: &str| f.nodes.iter().find(|node| node.name() == n);
        let head = plan_head(&f.rows, node_of, &options, 10);
        let head: Vec<&str> = head.plan.steps.iter().map(|s| s.node.as_str()).collect();
        assert_eq!(head, expected, "{name}: first page");
        let batch = next_steps(&f.rows, node_of, &options, 1, &BTreeSet::new());
        assert_eq!(batch[0].node, expected[0], "{name}: next batch");
        let last = plan.steps.last().map(|s| s.control_plane);
        assert_eq!(last, Some(true), "{name}: marked as control plane");
    }
}

#[test]
fn next_batch_keeps_canaries_apart_and_skips_excluded() {
    let step = |node: &str, canary: bool| PlanStep {
        node: node.into(),
        canary,
        group: String::new(),
        pod: None,
        control_plane: false,
    };
    let plan = RolloutPlan {
        steps: vec![
            step("c1", true),
            step("c2", true),
            step("n1", false),
            step("n2", false),
            step("n3", false),
        ],
        skipped: vec![],
    };
    let names = |batch: Vec<&PlanStep>| batch.iter().map(|s| s.node.clone()).collect::<Vec<_>>();
    let none = BTreeSet::new();
    assert_eq!(
        names(next_batch(&plan, 3, &none)),
        vec!["c1", "c2"],
        "a canary batch holds only canaries"
    );
    let done: BTreeSet<String> = ["c1", "c2", "n1"].iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(names(next_batch(&plan, 3, &done)), vec!["n2", "n3"]);
    assert_eq!(
        names(next_batch(
            &plan,
            1,
            &["c1".to_owned()].into_iter().collect()
        )),
        vec!["c2"]
    );
    assert!(next_batch(&plan, 0, &none).is_empty());
}

#[test]
fn rollback_walks_most_recently_updated_first() {
    let ds = daemonset("agent:2").on_delete().build();
    let nodes = vec![
        node("n1").build(),
        node("n2").build(),
        node("n3").build(),
        node("n4").build(),
    ];
    let pods = vec![
        pod("p1", "n1", "new").created(30).build(),
        pod("p2", "n2", "new").created(50).build(),
        pod("p3", "n3", "old").created(60).build(),
        pod("p4", "n4", "new").created(30).build(),
    ];
    let f = fleet(&ds, nodes, &pods);
    assert_eq!(rollback_order(&f.rows, "new"), vec!["n2", "n1", "n4"]);
    assert_eq!(rollback_order(&f.rows, "old"), vec!["n3"]);
    assert!(rollback_order(&f.rows, "none").is_empty());
}

mod next_steps_equal_the_plan {
    use proptest::prelude::*;

    use super::*;

    /// One generated node: eligible (label), pool label key and value, cordoned,
    /// Ready, canary label, and its pod: none, old, new, or old terminating.
    pub(super) type NodeCase = (bool, u8, u8, bool, bool, bool, u8);

    pub(super) fn fleet_of(cases: &[NodeCase]) -> Fleet {
        let ds = daemonset("agent:2")
            .on_delete()
            .node_selector("agent", "yes")
            .build();
        let keys = [
            "node-pool",
            "pool",
            "topology.kubernetes.io/zone",
            "nodepool",
        ];
        let mut nodes = Vec::new();
        let mut pods = Vec::new();
        for (i, (eligible, key, value, cordoned, ready, canary, pod_kind)) in
            cases.iter().enumerate()
        {
            let name = format!("n{}", (i * 7) % 23 + i * 100 % 7);
            let name = format!("{name}-{i}");
            let mut builder = node(&name);
            if *eligible {
                builder = builder.label("agent", "yes");
            }
            if let Some(key) = keys.get(usize::from(*key)) {
                builder = builder.label(key, &format!("v{}", value % 3));
            }
            if *cordoned {
                builder = builder.cordoned();
            }
            if !*ready {
                builder = builder.not_ready();
            }
            if *canary {
                builder = builder.label("canary", "yes");
            }
            nodes.push(builder.build());
            match pod_kind % 4 {
                1 => pods.push(old_pod(&name)),
                2 => pods.push(
                    pod(&format!("{name}-new"), &name, "new")
                        .ready_since(0)
                        .build(),
                ),
                3 => pods.push(
                    pod(&format!("{name}-old"), &name, "old")
                        .ready_since(0)
                        .terminating()
                        .build(),
                ),
                _ => {}
            }
        }
        fleet(&ds, nodes, &pods)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn next_steps_is_the_plans_next_batch(
            cases in proptest::collection::vec(
                (any::<bool>(), 0u8..5, any::<u8>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<u8>()),
                0..30,
            ),
            by_selector in any::<bool>(),
            hand_marked in proptest::collection::vec(0usize..30, 0..4),
            excluded in proptest::collection::vec(0usize..30, 0..6),
            include_cordoned in any::<bool>(),
            size in 1usize..6,
        ) {
            let f = fleet_of(&cases);
            let pick = |picks: &[usize]| -> BTreeSet<String> {
                picks
                    .iter()
                    .filter_map(|i| f.nodes.get(*i).map(|n| n.name().to_owned()))
                    .collect()
            };
            let options = PlanOptions {
                canaries: pick(&hand_marked),
                canary_selector: by_selector
                    .then(|| crate::engine::selector::Selector::parse("canary=yes").ok())
                    .flatten(),
                include_cordoned,
                ..PlanOptions::default()
            };
            let exclude = pick(&excluded);
            let plan = plan_rollout(&f.rows, &f.nodes, &options);
            let expected: Vec<PlanStep> =
                next_batch(&plan, size, &exclude).into_iter().cloned().collect();
            let by_name: std::collections::HashMap<&str, &Node> =
                f.nodes.iter().map(|n| (n.name(), n)).collect();
            // Rows in any order: reversed here.
            let got = next_steps(
                f.rows.iter().rev(),
                |name| by_name.get(name).copied(),
                &options,
                size,
                &exclude,
            );
            prop_assert_eq!(got, expected);
        }
    }
}

mod plan_head_is_the_plans_head {
    use proptest::prelude::*;

    use super::next_steps_equal_the_plan::fleet_of;
    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn plan_head_is_the_first_page_of_the_plan(
            cases in proptest::collection::vec(
                (any::<bool>(), 0u8..5, any::<u8>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<u8>()),
                0..30,
            ),
            hand_marked in proptest::collection::vec(0usize..30, 0..4),
            include_cordoned in any::<bool>(),
            limit in 0usize..12,
        ) {
            let f = fleet_of(&cases);
            let options = PlanOptions {
                canaries: hand_marked
                    .iter()
                    .filter_map(|i| f.nodes.get(*i).map(|n| n.name().to_owned()))
                    .collect(),
                include_cordoned,
                ..PlanOptions::default()
            };
            let plan = plan_rollout(&f.rows, &f.nodes, &options);
            let by_name: std::collections::HashMap<&str, &Node> =
                f.nodes.iter().map(|n| (n.name(), n)).collect();
            let head = plan_head(f.rows.iter().rev(), |name| by_name.get(name).copied(), &options, limit);
            prop_assert_eq!(head.steps, plan.steps.len());
            prop_assert_eq!(head.skipped, plan.skipped.len());
            prop_assert_eq!(&head.plan.steps[..], &plan.steps[..limit.min(plan.steps.len())]);
            prop_assert_eq!(&head.plan.skipped[..], &plan.skipped[..limit.min(plan.skipped.len())]);
        }
    }
}
