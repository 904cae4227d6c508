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
        let before = totals;
        totals.add_pods(
            verdict.should_run,
            on_node,
            revisions,
            min_ready_seconds,
            now,
        );
        // A counted oldest pod Ready but not yet available (minReadySeconds).
        waiting_for_availability |=
            totals.ready > before.ready && totals.available == before.available;
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
