use super::*;
use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
use proptest::prelude::*;

fn index(ds: &DaemonSet) -> RevisionIndex {
    let old = daemonset("agent:1").build();
    RevisionIndex::new(
        ds,
        &[revision_of(&old, "old", 1), revision_of(ds, "new", 2)],
    )
}

#[test]
fn availability_follows_is_pod_available() {
    // (name, minReadySeconds, pod, now offset, ready, available)
    let cases = vec![
        (
            "ready with minReadySeconds 0 is available",
            0,
            pod("p", "n", "new").ready_since(100),
            100,
            true,
            true,
        ),
        (
            "ready exactly minReadySeconds ago is not yet available (strict Before)",
            10,
            pod("p", "n", "new").ready_since(100),
            110,
            true,
            false,
        ),
        (
            "ready longer than minReadySeconds is available",
            10,
            pod("p", "n", "new").ready_since(100),
            111,
            true,
            true,
        ),
        (
            "not ready is never available",
            0,
            pod("p", "n", "new").running_not_ready(0),
            500,
            false,
            false,
        ),
        (
            "pending without conditions",
            0,
            pod("p", "n", "new"),
            500,
            false,
            false,
        ),
        (
            "terminating but Ready still counts as ready (IsPodReady ignores deletion)",
            0,
            pod("p", "n", "new").ready_since(0).terminating(),
            10,
            true,
            true,
        ),
    ];
    let ds = daemonset("agent:2").build();
    let revisions = index(&ds);
    for (name, min_ready, builder, now, ready, available) in cases {
        let c = pod_coverage(&builder.build(), &revisions, min_ready, at(now));
        assert_eq!((c.ready, c.available), (ready, available), "{name}");
    }
}

#[test]
fn pod_row_names_revision_and_problem() {
    let ds = daemonset("agent:2").build();
    let revisions = index(&ds);
    let cases = vec![
        (
            "current revision",
            pod("a", "n", "new").ready_since(0),
            Some(2),
            true,
            None,
        ),
        (
            "old revision",
            pod("a", "n", "old").ready_since(0),
            Some(1),
            false,
            None,
        ),
        (
            "unknown hash",
            pod("a", "n", "gone").ready_since(0),
            None,
            false,
            None,
        ),
        (
            "crash loop",
            pod("a", "n", "new")
                .running_not_ready(0)
                .waiting("CrashLoopBackOff", 4),
            Some(2),
            true,
            Some("CrashLoopBackOff"),
        ),
        (
            "image pull",
            pod("a", "n", "new").waiting("ImagePullBackOff", 0),
            Some(2),
            true,
            Some("ImagePullBackOff"),
        ),
        (
            "creating is not a problem",
            pod("a", "n", "new").waiting("ContainerCreating", 0),
            Some(2),
            true,
            None,
        ),
        (
            "failed phase",
            pod("a", "n", "new").phase("Failed"),
            Some(2),
            true,
            Some("Failed"),
        ),
    ];
    for (name, builder, revision, updated, problem) in cases {
        let c = pod_coverage(&builder.build(), &revisions, 0, at(10));
        assert_eq!(c.revision, revision, "{name}");
        assert_eq!(c.updated, updated, "{name}");
        assert_eq!(c.problem.as_deref(), problem, "{name}");
    }
}

#[test]
fn only_a_failing_pod_carries_its_containers_words() {
    let ds = daemonset("agent:2").build();
    let revisions = index(&ds);
    let crash_looping = pod("a", "n", "new")
        .running_not_ready(0)
        .waiting("CrashLoopBackOff", 4)
        .last_terminated(1, "Error", "exec format error")
        .build();
    let c = pod_coverage(&crash_looping, &revisions, 0, at(10));
    assert_eq!(
        c.failure_detail.as_deref(),
        Some("container main: exit code 1 (Error): exec format error")
    );
    // Ready again after a restart: its last termination is history, not a
    // failure, and no view shows it as one.
    let recovered = pod("a", "n", "new")
        .ready_since(0)
        .restarts(1)
        .last_terminated(137, "Error", "")
        .build();
    let c = pod_coverage(&recovered, &revisions, 0, at(10));
    assert_eq!(c.problem, None);
    assert_eq!(c.failure_detail, None);
}

/// Issue 33: between two back-offs the kubelet reports a crash-looping
/// container `running`; the pod is failing the whole time (the grid's `!`
/// must not come and go with the restarts), with the same cause.
#[test]
fn a_crash_loop_fails_between_its_restarts_too() {
    let ds = daemonset("agent:2").build();
    let revisions = index(&ds);
    let cases = [
        (
            "backing off",
            pod("a", "n", "new")
                .running_not_ready(0)
                .waiting("CrashLoopBackOff", 4)
                .last_terminated(1, "Error", "exec format error"),
            Some("CrashLoopBackOff"),
        ),
        (
            "running again, not Ready",
            pod("a", "n", "new")
                .running_not_ready(0)
                .running_again(4)
                .last_terminated(1, "Error", "exec format error"),
            Some("CrashLoopBackOff"),
        ),
        (
            "running again after a clean exit",
            pod("a", "n", "new")
                .running_not_ready(0)
                .running_again(1)
                .last_terminated(0, "Completed", ""),
            None,
        ),
        (
            "Ready again",
            pod("a", "n", "new")
                .ready_since(0)
                .restarts(4)
                .last_terminated(1, "Error", "exec format error"),
            None,
        ),
    ];
    for (name, builder, problem) in cases {
        let c = pod_coverage(&builder.build(), &revisions, 0, at(10));
        assert_eq!(c.problem.as_deref(), problem, "{name}");
        if problem.is_some() {
            assert_eq!(
                c.failure_detail.as_deref(),
                Some("container main: exit code 1 (Error): exec format error"),
                "{name}"
            );
        }
    }
}

#[test]
fn several_pods_on_a_node_are_listed_oldest_first() {
    let ds = daemonset("agent:2").build();
    let newer = pod("b-new", "n1", "new").created(50).build();
    let older = pod("a-old", "n1", "old")
        .created(10)
        .ready_since(11)
        .build();
    let row = node_coverage(
        &node("n1").build(),
        &ds,
        &[&newer, &older],
        &index(&ds),
        at(100),
    );
    let names: Vec<&str> = row.pods.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["a-old", "b-new"]);
    assert!(row.has_multiple_pods());
    assert_eq!(row.primary().map(|p| p.updated), Some(false));
}

#[test]
fn fleet_coverage_places_only_controlled_pods() {
    let ds = daemonset("agent:2").build();
    let nodes = vec![node("n1").build(), node("n2").build()];
    let pods = vec![
        pod("mine", "n1", "new").build(),
        pod("foreign", "n2", "new").owners(vec![]).build(),
        pod("elsewhere", "gone-node", "new").build(),
    ];
    let rows = fleet_coverage(&ds, &nodes, &pods, &index(&ds), at(0));
    let placed: Vec<(&str, Vec<&str>)> = rows
        .iter()
        .map(|r| {
            (
                r.node.as_str(),
                r.pods.iter().map(|p| p.name.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(placed, vec![("n1", vec!["mine"]), ("n2", vec![])]);
}

/// One case of the status totals: nodes with their pods, and the expected counts.
struct TotalsCase {
    name: &'static str,
    nodes: Vec<(Node, Vec<Pod>)>,
    expected: Totals,
}

fn totals(
    desired: i32,
    current: i32,
    updated: i32,
    ready: i32,
    available: i32,
    misscheduled: i32,
) -> Totals {
    Totals {
        desired,
        current,
        updated,
        ready,
        available,
        unavailable: desired - available,
        misscheduled,
    }
}

#[test]
fn totals_count_as_update_daemon_set_status() {
    let ssd = || node("n1").label("disk", "ssd");
    let cases = vec![
        TotalsCase {
            name: "eligible node with an updated available pod",
            nodes: vec![(
                ssd().build(),
                vec![pod("p", "n1", "new").ready_since(0).build()],
            )],
            expected: totals(1, 1, 1, 1, 1, 0),
        },
        TotalsCase {
            name: "eligible node without a pod",
            nodes: vec![(ssd().build(), vec![])],
            expected: totals(1, 0, 0, 0, 0, 0),
        },
        TotalsCase {
            name: "pod on a node that should not run it is misscheduled",
            nodes: vec![(
                node("n1").build(),
                vec![pod("p", "n1", "new").ready_since(0).build()],
            )],
            expected: totals(0, 0, 0, 0, 0, 1),
        },
        TotalsCase {
            name: "NoSchedule-tainted node: should not run, so its pod is misscheduled",
            nodes: vec![(
                ssd().taint("dedicated", "gpu", "NoSchedule").build(),
                vec![pod("p", "n1", "new").ready_since(0).build()],
            )],
            expected: totals(0, 0, 0, 0, 0, 1),
        },
        TotalsCase {
            name: "only the oldest of two pods counts",
            nodes: vec![(
                ssd().build(),
                vec![
                    pod("b", "n1", "new")
                        .created(20)
                        .running_not_ready(21)
                        .build(),
                    pod("a", "n1", "old").created(10).ready_since(11).build(),
                ],
            )],
            expected: totals(1, 1, 0, 1, 1, 0),
        },
        TotalsCase {
            name: "deleted failed pod is ignored",
            nodes: vec![(
                ssd().build(),
                vec![pod("p", "n1", "new").phase("Failed").terminating().build()],
            )],
            expected: totals(1, 0, 0, 0, 0, 0),
        },
        TotalsCase {
            name: "terminating running pod still counts as scheduled",
            nodes: vec![(
                ssd().build(),
                vec![pod("p", "n1", "old").ready_since(0).terminating().build()],
            )],
            expected: totals(1, 1, 0, 1, 1, 0),
        },
        TotalsCase {
            name: "ready but within minReadySeconds is not available",
            nodes: vec![(
                ssd().build(),
                vec![pod("p", "n1", "new").ready_since(95).build()],
            )],
            expected: totals(1, 1, 1, 1, 0, 0),
        },
    ];
    let ds = daemonset("agent:2")
        .node_selector("disk", "ssd")
        .min_ready_seconds(10)
        .build();
    let revisions = index(&ds);
    for case in cases {
        let rows: Vec<NodeCoverage> = case
            .nodes
            .iter()
            .map(|(n, pods)| {
                let refs: Vec<&Pod> = pods.iter().collect();
                node_coverage(n, &ds, &refs, &revisions, at(100))
            })
            .collect();
        assert_eq!(Totals::from_rows(&rows), case.expected, "{}", case.name);
        // Counted straight from the pods (the embedded controller's status):
        // the same totals.
        let mut counted = Totals::default();
        for (n, pods) in &case.nodes {
            let refs: Vec<&Pod> = pods.iter().collect();
            let should_run = node_should_run_daemon_pod(n, &ds).should_run;
            let _ = counted.add_pods(should_run, &refs, &revisions, 10, at(100));
        }
        assert_eq!(counted, case.expected, "{} (from the pods)", case.name);
    }
}

fn arb_pod() -> impl Strategy<Value = PodCoverage> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(ready, available, updated)| {
        PodCoverage {
            name: "p".into(),
            uid: "u".into(),
            hash: None,
            revision: None,
            updated,
            phase: None,
            ready,
            available: ready && available,
            terminating: false,
            restarts: 0,
            problem: None,
            failure_detail: None,
            created: None,
            ready_since: None,
        }
    })
}

fn arb_row() -> impl Strategy<Value = NodeCoverage> {
    (any::<bool>(), prop::collection::vec(arb_pod(), 0..3)).prop_map(|(should_run, pods)| {
        NodeCoverage {
            node: "n".into(),
            verdict: NodeVerdict {
                should_run,
                should_continue_running: should_run,
                reasons: Vec::new(),
            },
            pods,
        }
    })
}

proptest! {
    #[test]
    fn totals_are_consistent(rows in prop::collection::vec(arb_row(), 0..40)) {
        let t = Totals::from_rows(&rows);
        prop_assert!(t.updated <= t.current);
        prop_assert!(t.current <= t.desired);
        prop_assert!(t.available <= t.ready);
        prop_assert!(t.ready <= t.current);
        prop_assert_eq!(t.unavailable, t.desired - t.available);
        prop_assert!(t.desired + t.misscheduled <= i32::try_from(rows.len()).unwrap_or(i32::MAX));
    }
}

/// Without the right to read nodes, the rows come from the pods: one per node
/// a controlled pod is bound to, eligibility unknown; the totals count those
/// nodes as desired (neither misscheduled nor missing a pod) and the plan
/// advances their old pods instead of skipping them as not Ready.
#[test]
fn unreadable_nodes_are_rows_from_pods_with_unknown_eligibility() {
    use crate::engine::rollout::{PlanOptions, plan_rollout};
    use crate::engine::vocabulary::Eligibility;
    let ds = daemonset("agent:2").on_delete().build();
    let pods = vec![
        pod("b-new", "n2", "new").ready_since(0).build(),
        pod("a-old", "n1", "old").ready_since(0).build(),
        pod("foreign", "n3", "old").owners(vec![]).build(),
        pod("unbound", "", "new").build(),
    ];
    let why = "cannot read nodes (forbidden)";
    let rows = unreadable_node_coverage(&ds, &pods, &index(&ds), at(100), why);
    let names: Vec<&str> = rows.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(names, ["n1", "n2"]);
    for row in &rows {
        assert_eq!(Eligibility::of(&row.verdict, true), Eligibility::Unknown);
        assert_eq!(row.verdict.headline(), Some(why));
    }
    assert_eq!(Totals::from_rows(&rows), totals(2, 2, 1, 2, 2, 0));
    let plan = plan_rollout(&rows, &[], &PlanOptions::default());
    let planned: Vec<&str> = plan.steps.iter().map(|s| s.node.as_str()).collect();
    assert_eq!(planned, ["n1"]);
    assert!(
        plan.skipped
            .iter()
            .all(|s| s.node == "n2"
                && s.reason == crate::engine::rollout::SkipReason::AlreadyUpdated),
        "{:?}",
        plan.skipped
    );
}
