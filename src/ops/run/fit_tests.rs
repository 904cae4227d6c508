//! A run and fit: a batch whose node will not fit pauses the run (unless
//! despite fit), fit is checked again before every batch, a delete whose
//! replacement preempts names the victims in its journal record, and an
//! unknown fit refuses nothing and is said once, at the start.

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::json;

use super::*;
use crate::cluster::usage::{UsageByNode, UsageStore};
use crate::engine::fixtures::{node, revision_of};
use crate::model::{DaemonSet, Pod, ResourceList, Shared, UsagePod};
use crate::ops::auto::AutoPolicy;
use crate::ops::testing::{NEW, OLD, all_old, ds, ready_pod, replace, t};

const NODES: [&str; 3] = ["n1", "n2", "n3"];

/// The fixture DaemonSet, its template requesting `cpu`.
fn agent(cpu: &str) -> DaemonSet {
    let mut ds = ds(false, &[]);
    if let Some(spec) = ds.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
        spec.containers[0].resources = Some(ResourceRequirements {
            requests: Some([("cpu".to_owned(), Quantity(cpu.into()))].into()),
            ..ResourceRequirements::default()
        });
    }
    ds
}

/// A pod counted on a node: (node, namespace, name, cpu, priority).
fn usage_pod((node, namespace, name, cpu, priority): (&str, &str, &str, &str, i32)) -> UsagePod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
        "spec": {"nodeName": node, "priority": priority,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Running"}
    }))
    .expect("a usage pod")
}

/// The old daemon pod of every node, 100m each, plus `others`.
fn usage(others: &[(&str, &str, &str, &str, i32)]) -> UsageByNode {
    let daemon_pods = NODES
        .iter()
        .map(|n| (*n, "kube-system", format!("agent-{n}-{OLD}")))
        .collect::<Vec<_>>();
    let mut pods: Vec<UsagePod> = daemon_pods
        .iter()
        .map(|(n, ns, name)| usage_pod((n, ns, name, "100m", 0)))
        .collect();
    pods.extend(others.iter().copied().map(usage_pod));
    UsageStore::of_list(pods)
}

/// A snapshot of `ds` over nodes of 1 cpu and 110 pods, with `usage`
/// (`None`: unknown).
fn fit_snapshot(ds: DaemonSet, pods: Vec<Pod>, usage: Option<UsageByNode>) -> Snapshot<'static> {
    let old = revision_of(&crate::engine::fixtures::daemonset("v1").build(), OLD, 1);
    let new = revision_of(&ds, NEW, 2);
    let nodes = NODES.iter().map(|n| {
        let mut allocatable = ResourceList::default();
        allocatable.set("cpu", 1000);
        allocatable.set("pods", 110);
        let mut node = node(n).build();
        node.status.allocatable = Shared::new(allocatable);
        node
    });
    Snapshot::new(ds, nodes, pods, vec![old, new]).with_usage(usage)
}

fn settings(despite_fit: bool) -> RunSettings {
    RunSettings {
        despite_fit,
        ..RunSettings::auto(AutoPolicy {
            batch: 1,
            soak: std::time::Duration::ZERO,
            timeout: std::time::Duration::from_secs(60),
        })
    }
}

/// The run's next turn past any heartbeat that fell due.
fn next_turn(run: &mut Run, snapshot: &Snapshot<'_>, now: jiff::Timestamp) -> Turn {
    loop {
        match run.turn(snapshot, now).expect("decides") {
            Turn::Renewed(_) => {}
            turn => return turn,
        }
    }
}

/// Upstream NodeResourcesFit: 900m asked, 1000m allocatable, 500m taken by
/// `shop/web` once the old 100m pod is gone: 500m free, it will not fit.
#[test]
fn a_batch_whose_node_will_not_fit_pauses_the_run_unless_despite_fit() {
    let full = || Some(usage(&[("n1", "shop", "web", "500m", 0)]));
    let snap = fit_snapshot(agent("900m"), all_old(&NODES), full());
    let (mut run, started) = Run::start(&snap, settings(false), "ana", t(0)).expect("starts");
    assert!(
        started.notes.is_empty(),
        "usage is known: {:?}",
        started.notes
    );
    match next_turn(&mut run, &snap, t(1)) {
        Turn::Finished(RunEnd::Paused { node, reason, .. }) => {
            assert_eq!(node, "n1");
            assert_eq!(
                reason,
                "won't fit: Insufficient cpu: needs 900m, 500m free of 1; \
                 preemption: No preemption victims found for incoming pod"
            );
        }
        other => panic!("expected a pause before any delete, got {other:?}"),
    }
    let (mut run, _) = Run::start(&snap, settings(true), "ana", t(0)).expect("starts");
    match next_turn(&mut run, &snap, t(1)) {
        Turn::BatchChosen { deletes, .. } => assert_eq!(deletes[0].0.node, "n1"),
        other => panic!("despite fit: expected the delete, got {other:?}"),
    }
}

/// Fit is checked before every batch, not once at the start: `n2` filled
/// up while `n1` moved.
#[test]
fn fit_is_checked_again_before_each_batch() {
    let snap = fit_snapshot(agent("600m"), all_old(&NODES), Some(usage(&[])));
    let (mut run, _) = Run::start(&snap, settings(false), "ana", t(0)).expect("starts");
    let Turn::BatchChosen { deletes, .. } = next_turn(&mut run, &snap, t(1)) else {
        panic!("the first batch fits")
    };
    assert_eq!(deletes[0].0.node, "n1");
    run.deleted("n1", Ok(()), t(1));
    // n1 runs the new revision, Ready; n2 now holds a 700m workload.
    let pods = replace(all_old(&NODES), vec![ready_pod("n1", NEW, 2)]);
    let filled = usage(&[("n2", "shop", "cache", "700m", 0)]);
    let snap = fit_snapshot(agent("600m"), pods, Some(filled));
    match next_turn(&mut run, &snap, t(10)) {
        Turn::Finished(RunEnd::Paused { node, reason, .. }) => {
            assert_eq!(node, "n2");
            assert!(
                reason.starts_with("won't fit: Insufficient cpu"),
                "{reason}"
            );
        }
        other => panic!("expected the second batch refused, got {other:?}"),
    }
}

/// Upstream DefaultPreemption: a lower-priority pod whose removal makes room
/// is a victim; the delete's journal record names it before it happens.
#[test]
fn a_delete_that_preempts_names_its_victims() {
    let snap = fit_snapshot(
        agent("900m"),
        all_old(&NODES),
        Some(usage(&[("n1", "batch", "job", "600m", -10)])),
    );
    let (mut run, _) = Run::start(&snap, settings(false), "ana", t(0)).expect("starts");
    let Turn::BatchChosen { deletes, .. } = next_turn(&mut run, &snap, t(1)) else {
        panic!("it fits by preempting")
    };
    let (victim, request) = &deletes[0];
    assert_eq!(victim.node, "n1");
    assert_eq!(
        request.record.note.as_deref(),
        Some("preempts batch/job (priority -10)")
    );
    assert_eq!(
        fit::preemption_of(request),
        Some("preempts batch/job (priority -10)")
    );
}

/// Without usage (the pods of all namespaces cannot be listed) nothing is
/// refused, and the start says so once.
#[test]
fn unknown_fit_refuses_nothing_and_is_said_at_the_start() {
    let snap = fit_snapshot(agent("64"), all_old(&NODES), None);
    let (mut run, started) = Run::start(&snap, settings(false), "ana", t(0)).expect("starts");
    assert_eq!(started.notes, vec![fit::UNKNOWN_FIT.to_owned()]);
    assert!(matches!(
        next_turn(&mut run, &snap, t(1)),
        Turn::BatchChosen { .. }
    ));
}

/// A rollback whose revision asks for more than a node has once its pod is
/// gone is refused before the template patch; `--despite-fit` lets it start.
#[test]
fn a_rollback_that_will_not_fit_is_refused_before_anything_changes() {
    use crate::ops::run::rollback::{RollbackOptions, start_rollback};
    let current = agent("100m");
    let back = revision_of(&agent("950m"), OLD, 1);
    let now = revision_of(&current, NEW, 2);
    let pods: Vec<Pod> = NODES.iter().map(|n| ready_pod(n, NEW, 10)).collect();
    let mut counted: Vec<UsagePod> = NODES
        .iter()
        .map(|n| usage_pod((n, "kube-system", &format!("agent-{n}-{NEW}"), "100m", 0)))
        .collect();
    counted.push(usage_pod(("n2", "batch", "job", "500m", 0)));
    let nodes = NODES.iter().map(|n| {
        let mut allocatable = ResourceList::default();
        allocatable.set("cpu", 1000);
        allocatable.set("pods", 110);
        let mut node = node(n).build();
        node.status.allocatable = Shared::new(allocatable);
        node
    });
    let snapshot = Snapshot::new(current, nodes, pods, vec![back, now])
        .with_usage(Some(UsageStore::of_list(counted)));
    let plan = crate::ops::rollback::plan(&snapshot, Some(1)).expect("a plan");
    let patch = plan.request.expect("a patch");
    let options = |despite_fit| RollbackOptions {
        timeout: std::time::Duration::from_secs(60),
        include_cordoned: false,
        despite_fit,
        fleet_run: None,
    };
    let refused = start_rollback(&snapshot, patch.clone(), 1, options(false), "me", t(100))
        .expect_err("n2 has 500m left for 950m");
    let text = refused.to_string();
    assert!(
        text.contains("rollback to revision 1 refused, nothing changed: n2: won't fit: "),
        "{text}"
    );
    assert!(text.contains("Insufficient cpu"), "{text}");
    assert!(!text.contains("n1") && !text.contains("n3"), "{text}");
    let started = start_rollback(&snapshot, patch, 1, options(true), "me", t(100));
    assert!(started.is_ok(), "{started:?}");
}
