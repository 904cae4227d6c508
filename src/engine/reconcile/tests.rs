use super::*;
use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

fn index(ds: &DaemonSet) -> RevisionIndex {
    let old = daemonset("agent:1").build();
    RevisionIndex::new(
        ds,
        &[revision_of(&old, "old", 1), revision_of(ds, "new", 2)],
    )
}

/// One row: a fleet and the plan expected from one sync.
struct Case {
    name: &'static str,
    ds: DaemonSet,
    nodes: Vec<Node>,
    pods: Vec<Pod>,
    creates: Vec<(&'static str, CreateReason)>,
    deletes: Vec<(&'static str, DeleteReason)>,
}

fn run(case: &Case) -> ReconcilePlan {
    plan_reconcile(&case.ds, &case.nodes, &case.pods, &index(&case.ds), at(100))
}

type Creates<'a> = Vec<(&'a str, CreateReason)>;
type Deletes<'a> = Vec<(&'a str, DeleteReason)>;

/// The plan's creates by node and deletes by pod name, with their reasons.
fn summary(plan: &ReconcilePlan) -> (Creates<'_>, Deletes<'_>) {
    let creates = plan
        .create_on
        .iter()
        .map(|a| (a.node.as_str(), a.reason))
        .collect();
    let deletes = plan
        .delete
        .iter()
        .map(|a| (a.name.as_str(), a.reason))
        .collect();
    (creates, deletes)
}

fn check(case: &Case) {
    let plan = run(case);
    let (creates, deletes) = summary(&plan);
    assert_eq!(creates, case.creates, "{}: creates", case.name);
    assert_eq!(deletes, case.deletes, "{}: deletes", case.name);
}

fn on_delete() -> DaemonSet {
    daemonset("agent:2").on_delete().build()
}

fn surge() -> DaemonSet {
    daemonset("agent:2")
        .rolling(IntOrString::Int(0), IntOrString::Int(1))
        .build()
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one table of named cases reads best in one place"
)]
fn manage_follows_pods_should_be_on_node() {
    let ready = |name: &str, n: &str, hash: &str| pod(name, n, hash).ready_since(0);
    let cases = vec![
        Case {
            name: "creates on an eligible node without a pod",
            ds: on_delete(),
            nodes: vec![node("n1").build()],
            pods: vec![],
            creates: vec![("n1", CreateReason::MissingPod)],
            deletes: vec![],
        },
        Case {
            name: "no create where the nodeSelector excludes the node",
            ds: daemonset("agent:2")
                .on_delete()
                .node_selector("disk", "ssd")
                .build(),
            nodes: vec![node("n1").build()],
            pods: vec![],
            creates: vec![],
            deletes: vec![],
        },
        Case {
            name: "NoExecute taint: the pod may not continue running",
            ds: on_delete(),
            nodes: vec![node("n1").taint("maint", "x", "NoExecute").build()],
            pods: vec![ready("p1", "n1", "new").build()],
            creates: vec![],
            deletes: vec![("p1", DeleteReason::ShouldNotContinueRunning)],
        },
        Case {
            name: "NoSchedule taint: the running pod stays, no new one",
            ds: on_delete(),
            nodes: vec![node("n1").taint("maint", "x", "NoSchedule").build()],
            pods: vec![ready("p1", "n1", "new").build()],
            creates: vec![],
            deletes: vec![],
        },
        Case {
            name: "excess pods: the oldest is kept",
            ds: on_delete(),
            nodes: vec![node("n1").build()],
            pods: vec![
                ready("b", "n1", "new").created(20).build(),
                ready("a", "n1", "old").created(10).build(),
                ready("c", "n1", "new").created(30).build(),
            ],
            creates: vec![],
            deletes: vec![
                ("b", DeleteReason::ExcessPod),
                ("c", DeleteReason::ExcessPod),
            ],
        },
        Case {
            name: "failed pod is deleted and not replaced in the same sync",
            ds: on_delete(),
            nodes: vec![node("n1").build()],
            pods: vec![pod("p1", "n1", "new").phase("Failed").build()],
            creates: vec![],
            deletes: vec![("p1", DeleteReason::Failed)],
        },
        Case {
            name: "succeeded pod is deleted",
            ds: on_delete(),
            nodes: vec![node("n1").build()],
            pods: vec![pod("p1", "n1", "new").phase("Succeeded").build()],
            creates: vec![],
            deletes: vec![("p1", DeleteReason::Succeeded)],
        },
        Case {
            name: "a terminating pod blocks the create until it is gone",
            ds: on_delete(),
            nodes: vec![node("n1").build()],
            pods: vec![ready("p1", "n1", "old").terminating().build()],
            creates: vec![],
            deletes: vec![],
        },
        Case {
            name: "a deleted failed pod is ignored, so the node gets a new pod",
            ds: on_delete(),
            nodes: vec![node("n1").build()],
            pods: vec![pod("p1", "n1", "old").phase("Failed").terminating().build()],
            creates: vec![("n1", CreateReason::MissingPod)],
            deletes: vec![],
        },
        Case {
            name: "OnDelete never deletes old pods for the update",
            ds: on_delete(),
            nodes: vec![node("n1").build(), node("n2").build()],
            pods: vec![
                ready("p1", "n1", "old").build(),
                ready("p2", "n2", "old").build(),
            ],
            creates: vec![],
            deletes: vec![],
        },
        Case {
            name: "surge: with only a terminating pod left, a live one is created",
            ds: surge(),
            nodes: vec![node("n1").build()],
            pods: vec![ready("p1", "n1", "old").terminating().build()],
            creates: vec![("n1", CreateReason::NoLivePod)],
            deletes: vec![],
        },
        Case {
            name: "surge: old and new kept while the new one is not yet available",
            ds: surge(),
            nodes: vec![node("n1").build()],
            pods: vec![
                ready("a", "n1", "old").created(10).build(),
                pod("b", "n1", "new")
                    .created(20)
                    .running_not_ready(20)
                    .build(),
            ],
            creates: vec![],
            deletes: vec![],
        },
        Case {
            name: "surge: old pod deleted once it is not Ready",
            ds: surge(),
            nodes: vec![node("n1").build()],
            pods: vec![
                pod("a", "n1", "old")
                    .created(10)
                    .running_not_ready(50)
                    .build(),
                pod("b", "n1", "new")
                    .created(20)
                    .running_not_ready(20)
                    .build(),
            ],
            creates: vec![],
            deletes: vec![("a", DeleteReason::OldPodNotReady)],
        },
        Case {
            name: "surge: old pod deleted once the new one is available",
            ds: surge(),
            nodes: vec![node("n1").build()],
            pods: vec![
                ready("a", "n1", "old").created(10).build(),
                ready("b", "n1", "new").created(20).build(),
            ],
            creates: vec![],
            deletes: vec![("a", DeleteReason::NewPodAvailable)],
        },
    ];
    for case in &cases {
        check(case);
    }
}

#[test]
fn rolling_update_runs_only_when_manage_is_idle() {
    let ds = daemonset("agent:2").build();
    let nodes = vec![node("n1").build(), node("n2").build(), node("n3").build()];
    let old = |name: &str, n: &str| pod(name, n, "old").ready_since(0).build();
    // Manage has work (n3 has no pod): the rolling step waits for the next sync.
    let busy = Case {
        name: "busy",
        ds: ds.clone(),
        nodes: nodes.clone(),
        pods: vec![old("p1", "n1"), old("p2", "n2")],
        creates: vec![("n3", CreateReason::MissingPod)],
        deletes: vec![],
    };
    check(&busy);
    let plan = run(&busy);
    assert!(plan.rolling_deferred);
    let budget = plan.budget.expect("rolling budget");
    assert_eq!(
        (
            budget.desired,
            budget.max_unavailable,
            budget.unavailable_now
        ),
        (3, 1, 1)
    );
    // Idle: one old pod goes (maxUnavailable 1), in node order.
    let idle = Case {
        name: "idle",
        ds,
        nodes,
        pods: vec![old("p1", "n1"), old("p2", "n2"), old("p3", "n3")],
        creates: vec![],
        deletes: vec![("p1", DeleteReason::Rolling(RollingReason::ReplaceOld))],
    };
    check(&idle);
    assert!(!run(&idle).rolling_deferred);
}

#[test]
fn surge_rolling_creates_beside_old_pods() {
    let ds = daemonset("agent:2")
        .rolling(IntOrString::Int(0), IntOrString::String("50%".into()))
        .build();
    let nodes = vec![node("n1").build(), node("n2").build(), node("n3").build()];
    let pods: Vec<Pod> = ["n1", "n2", "n3"]
        .iter()
        .map(|n| pod(&format!("p-{n}"), n, "old").ready_since(0).build())
        .collect();
    let case = Case {
        name: "50% of 3 rounds up to 2 surge pods",
        ds,
        nodes,
        pods,
        creates: vec![
            ("n1", CreateReason::Rolling(RollingReason::Surge)),
            ("n2", CreateReason::Rolling(RollingReason::Surge)),
        ],
        deletes: vec![],
    };
    check(&case);
}

#[test]
fn invalid_budget_is_reported_not_fatal() {
    let ds = daemonset("agent:2")
        .rolling(IntOrString::String("one".into()), IntOrString::Int(0))
        .build();
    let plan = plan_reconcile(&ds, &[node("n1").build()], &[], &index(&ds), at(0));
    assert_eq!(plan.create_on.len(), 1, "manage still plans");
    assert!(plan.budget.is_none());
    assert!(
        plan.budget_error
            .as_deref()
            .is_some_and(|e| e.contains("maxUnavailable"))
    );
}

#[test]
fn unassigned_pods_are_listed() {
    let ds = on_delete();
    let mut p = pod("floating", "n1", "new").build();
    p.spec.node_name = None;
    let plan = plan_reconcile(&ds, &[], &[p], &index(&ds), at(0));
    assert_eq!(plan.unassigned, vec!["floating".to_owned()]);
    assert!(plan.is_empty());
}

/// Upstream `podsShouldBeOnNode`: a failed daemon pod on a node in its
/// `failedPodsBackoff` is skipped (`continue`: neither deleted nor counted as
/// running, the DaemonSet requeued after the delay); out of backoff it is
/// deleted (`FailedDaemonPod`) and the node gets a new pod once it is gone.
#[test]
fn failed_pods_wait_out_the_failed_pod_backoff() {
    struct Row {
        name: &'static str,
        ds: DaemonSet,
        pods: Vec<Pod>,
        in_backoff: bool,
        creates: Vec<(&'static str, CreateReason)>,
        deletes: Vec<(&'static str, DeleteReason)>,
        held: Vec<&'static str>,
    }
    let failed = || pod("p1", "n1", "new").phase("Failed").build();
    let rows = vec![
        Row {
            name: "out of backoff: the failed pod is deleted",
            ds: on_delete(),
            pods: vec![failed()],
            in_backoff: false,
            creates: vec![],
            deletes: vec![("p1", DeleteReason::Failed)],
            held: vec![],
        },
        Row {
            name: "in backoff: the failed pod stays, nothing is created",
            ds: on_delete(),
            pods: vec![failed()],
            in_backoff: true,
            creates: vec![],
            deletes: vec![],
            held: vec!["p1"],
        },
        Row {
            name: "in backoff with surge: no live pod, so one is created beside it",
            ds: surge(),
            pods: vec![failed()],
            in_backoff: true,
            creates: vec![("n1", CreateReason::NoLivePod)],
            deletes: vec![],
            held: vec!["p1"],
        },
        Row {
            name: "in backoff: a succeeded pod is still deleted",
            ds: on_delete(),
            pods: vec![pod("p2", "n1", "new").phase("Succeeded").build()],
            in_backoff: true,
            creates: vec![],
            deletes: vec![("p2", DeleteReason::Succeeded)],
            held: vec![],
        },
        Row {
            name: "in backoff: a deleted failed pod is ignored, the node gets a new pod",
            ds: on_delete(),
            pods: vec![pod("p1", "n1", "new").phase("Failed").terminating().build()],
            in_backoff: true,
            creates: vec![("n1", CreateReason::MissingPod)],
            deletes: vec![],
            held: vec![],
        },
    ];
    for row in rows {
        let nodes = [node("n1").build()];
        let verdicts: Vec<(&Node, NodeVerdict)> = nodes
            .iter()
            .map(|n| (n, node_should_run_daemon_pod(n, &row.ds)))
            .collect();
        let index = index(&row.ds);
        let in_backoff = |n: &str| row.in_backoff && n == "n1";
        let plan = plan_reconcile_with_verdicts(
            &row.ds,
            &verdicts,
            &row.pods,
            &index,
            at(100),
            &in_backoff,
        );
        let (creates, deletes) = summary(&plan);
        let held: Vec<&str> = plan
            .failed_in_backoff
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(creates, row.creates, "{}: creates", row.name);
        assert_eq!(deletes, row.deletes, "{}: deletes", row.name);
        assert_eq!(held, row.held, "{}: held", row.name);
    }
}
