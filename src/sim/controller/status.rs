//! The DaemonSet status one sync computes (upstream `updateDaemonSetStatus`):
//! the engine's coverage totals per node, plus observedGeneration and
//! collisionCount. Written only when it differs from the stored status.

use std::collections::HashMap;

use k8s_openapi::api::apps::v1::DaemonSetStatus;

use crate::engine::coverage::{Totals, min_ready_seconds};
use crate::engine::eligibility::NodeVerdict;
use crate::engine::revision::RevisionIndex;
use crate::model::{DaemonSet, Node, Pod};

/// The status for `ds` given every node's verdict and the DaemonSet's pods.
/// Also reports whether some pod is Ready but not yet available (minReadySeconds),
/// so the caller can sync again when it becomes available.
pub fn compute_status(
    ds: &DaemonSet,
    verdicts: &[(&Node, NodeVerdict)],
    pods: &[Pod],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
) -> (DaemonSetStatus, bool) {
    // Looked up by name only, once per node of every sync: hashed, not ordered.
    let mut by_node: HashMap<&str, Vec<&Pod>, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(pods.len(), foldhash::fast::RandomState::default());
    for pod in pods {
        if let Some(node) = pod.node_name() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    let min_ready_seconds = min_ready_seconds(ds);
    let mut totals = Totals::default();
    let mut waiting_for_availability = false;
    for (node, verdict) in verdicts {
        let on_node = by_node
            .get(node.name())
            .map(Vec::as_slice)
            .unwrap_or_default();
        waiting_for_availability |= totals.add_pods(
            verdict.should_run,
            on_node,
            revisions,
            min_ready_seconds,
            now,
        );
    }
    let previous = ds.status.clone().unwrap_or_default();
    let status = DaemonSetStatus {
        collision_count: previous.collision_count,
        conditions: previous.conditions,
        current_number_scheduled: totals.current,
        desired_number_scheduled: totals.desired,
        number_available: Some(totals.available),
        number_misscheduled: totals.misscheduled,
        number_ready: totals.ready,
        number_unavailable: Some(totals.unavailable),
        observed_generation: ds.metadata.generation,
        updated_number_scheduled: Some(totals.updated),
    };
    (status, waiting_for_availability)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::eligibility::node_should_run_daemon_pod;
    use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};

    /// Upstream requeues a DaemonSet whose pods are Ready but not yet
    /// available (`minReadySeconds`): nothing else would tell it when they
    /// become available.
    #[test]
    fn a_ready_pod_within_min_ready_seconds_asks_for_a_later_sync() {
        let ds = daemonset("agent:2").min_ready_seconds(10).build();
        let revisions = RevisionIndex::new(&ds, &[revision_of(&ds, "new", 1)]);
        let (a, b) = (node("a").build(), node("b").build());
        let verdicts = vec![
            (&a, node_should_run_daemon_pod(&a, &ds)),
            (&b, node_should_run_daemon_pod(&b, &ds)),
        ];
        let pods = vec![
            pod("pa", "a", "new").ready_since(0).build(),
            pod("pb", "b", "new").ready_since(95).build(),
        ];
        let (status, waiting) = compute_status(&ds, &verdicts, &pods, &revisions, at(100));
        assert_eq!((status.number_ready, status.number_available), (2, Some(1)));
        assert!(waiting, "pod pb is Ready for 5 s of its 10");
        let (status, waiting) = compute_status(&ds, &verdicts, &pods, &revisions, at(106));
        assert_eq!(status.number_available, Some(2));
        assert!(!waiting, "every Ready pod is available");
    }
}
