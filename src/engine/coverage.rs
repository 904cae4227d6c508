//! Per-node coverage of a DaemonSet and the totals in `DaemonSetStatus` terms.
//!
//! One row per node: the eligibility verdict and the daemon pods on it, each with
//! revision, readiness, availability and the problem kubectl would show. The
//! totals count exactly as upstream `updateDaemonSetStatus` does. Pure: `now` is
//! an argument; this module never plans actions (see `reconcile`, `rollout`).

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::eligibility::{NodeVerdict, node_should_run_daemon_pod};
use super::ownership::is_controlled_by;
use super::revision::RevisionIndex;
use crate::model::{DaemonSet, Node, Pod, Stamp};

/// One daemon pod as the grid shows it.
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent facts of one pod, named as the contract and the grid use them"
)]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodCoverage {
    /// Pod name (inline up to 24 bytes, as in the pod's metadata).
    pub name: compact_str::CompactString,
    /// Pod UID (the precondition of a delete).
    pub uid: crate::model::Uid,
    /// The `controller-revision-hash` label (shared: one copy per revision
    /// in the console's row cache).
    pub hash: Option<Arc<str>>,
    /// The revision number behind `hash`, if that revision still exists.
    pub revision: Option<i64>,
    /// Runs the current template (upstream `IsPodUpdated`).
    pub updated: bool,
    /// `status.phase` (shared, as `hash`).
    pub phase: Option<Arc<str>>,
    /// The Ready condition is True (upstream `IsPodReady`).
    pub ready: bool,
    /// Ready for at least `minReadySeconds` (upstream `IsPodAvailable`).
    pub available: bool,
    /// Has a deletion timestamp.
    pub terminating: bool,
    /// Container restarts so far.
    pub restarts: i32,
    /// The waiting/terminated reason kubectl shows (`CrashLoopBackOff`,
    /// `ImagePullBackOff`, `Evicted`, ...), if any (shared, as `hash`).
    pub problem: Option<Arc<str>>,
    /// Why the containers of a failing pod fail, in their own words (last
    /// termination, waiting message): see [`super::health::failure_detail`];
    /// `None` while the pod is not failing. Unsanitised API text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_detail: Option<String>,
    /// Creation time.
    pub created: Option<Stamp>,
    /// Since when the Ready condition has had its current status.
    pub ready_since: Option<Stamp>,
}

/// One node's coverage: the verdict and its daemon pods, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeCoverage {
    /// Node name (inline up to 24 bytes: a row's own copy of it was a heap
    /// block a node).
    pub node: compact_str::CompactString,
    /// Should a daemon pod run here, may an existing one stay, and why not.
    pub verdict: NodeVerdict,
    /// Daemon pods bound to the node, ordered as upstream
    /// `podByCreationTimestampAndPhase` (oldest first, then by name). Pods that are
    /// both terminal and deleted are left out, as the controller ignores them.
    pub pods: Vec<PodCoverage>,
}

impl NodeCoverage {
    /// The pod the DaemonSet status counts for this node: the oldest.
    pub fn primary(&self) -> Option<&PodCoverage> {
        self.pods.first()
    }

    /// More than one daemon pod is bound here (surge, or a stuck terminating pod).
    pub fn has_multiple_pods(&self) -> bool {
        self.pods.len() > 1
    }

    /// Whether a daemon pod runs where none should be placed: upstream's
    /// `numberMisscheduled` counts exactly these nodes (`shouldRun` false, a
    /// pod scheduled), whether or not the pod may keep running (`keep`). The
    /// one definition the status counts, the grid's `!` and its grouping read.
    pub fn is_misscheduled(&self) -> bool {
        !self.verdict.should_run && self.primary().is_some()
    }
}

/// DaemonSet status counts, with `DaemonSetStatus` meanings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// `desiredNumberScheduled`: nodes that should run the daemon pod.
    pub desired: i32,
    /// `currentNumberScheduled`: of those, nodes with at least one daemon pod.
    pub current: i32,
    /// `updatedNumberScheduled`: of those, nodes whose oldest pod is updated.
    pub updated: i32,
    /// `numberReady`: of those, nodes whose oldest pod is Ready.
    pub ready: i32,
    /// `numberAvailable`: of those, nodes whose oldest pod is available.
    pub available: i32,
    /// `numberUnavailable`: `desired - available`.
    pub unavailable: i32,
    /// `numberMisscheduled`: nodes that should not run a daemon pod but have one.
    pub misscheduled: i32,
}

impl Totals {
    /// Counts one node as upstream `updateDaemonSetStatus` does: only the oldest
    /// pod of a should-run node counts towards ready/available/updated.
    pub fn add(&mut self, row: &NodeCoverage) {
        let primary = row.primary().map(|pod| Counted {
            ready: pod.ready,
            available: pod.available,
            updated: pod.updated,
        });
        self.count(row.verdict.should_run, primary);
    }

    /// [`Totals::add`] straight from a node's pods, without describing them
    /// (the embedded controller's status on every sync): the same oldest
    /// pod ([`oldest_first`]), judged by the same rules as [`pod_coverage`].
    /// True when that pod counts, is Ready and not yet available (within
    /// `minReadySeconds`): the status changes later with no event to say so.
    pub fn add_pods(
        &mut self,
        should_run: bool,
        pods_on_node: &[&Pod],
        revisions: &RevisionIndex,
        min_ready_seconds: i32,
        now: jiff::Timestamp,
    ) -> bool {
        let primary = pods_on_node
            .iter()
            .copied()
            .filter(|p| !is_deleted_terminal(p))
            .min_by(|a, b| oldest_first(a, b))
            .map(|pod| Counted {
                ready: is_pod_ready(pod),
                available: is_pod_available(pod, min_ready_seconds, now),
                updated: revisions.is_pod_updated(pod),
            });
        self.count(should_run, primary);
        should_run && primary.is_some_and(|pod| pod.ready && !pod.available)
    }

    /// One node: whether it should run, and its oldest pod's state. A node
    /// that should not run but has a pod is misscheduled
    /// ([`NodeCoverage::is_misscheduled`]).
    fn count(&mut self, should_run: bool, primary: Option<Counted>) {
        if should_run {
            self.desired += 1;
            if let Some(pod) = primary {
                self.current += 1;
                if pod.ready {
                    self.ready += 1;
                    if pod.available {
                        self.available += 1;
                    }
                }
                if pod.updated {
                    self.updated += 1;
                }
            }
        } else if primary.is_some() {
            self.misscheduled += 1;
        }
        self.unavailable = self.desired - self.available;
    }

    /// The totals over all rows.
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = &'a NodeCoverage>) -> Self {
        let mut totals = Self::default();
        for row in rows {
            totals.add(row);
        }
        totals
    }
}

/// What the totals count of a node's oldest pod.
#[derive(Clone, Copy)]
struct Counted {
    ready: bool,
    available: bool,
    updated: bool,
}

/// Coverage of one node: computes the verdict and describes `pods_on_node` (the
/// DaemonSet's pods bound to this node).
pub fn node_coverage(
    node: &Node,
    ds: &DaemonSet,
    pods_on_node: &[&Pod],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
) -> NodeCoverage {
    coverage_with_verdict(
        node,
        node_should_run_daemon_pod(node, ds),
        ds,
        pods_on_node,
        revisions,
        now,
    )
}

/// Coverage rows for every node of `nodes`, in the given order: `pods` may be
/// any pods; only those controlled by `ds` are placed, by `spec.nodeName`. Pods on
/// nodes missing from `nodes` appear in no row, as in upstream status counting.
pub fn fleet_coverage(
    ds: &DaemonSet,
    nodes: &[Node],
    pods: &[Pod],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
) -> Vec<NodeCoverage> {
    let by_node = controlled_by_node(ds, pods);
    nodes
        .iter()
        .map(|node| {
            let on_node = by_node.get(node.name()).map_or(&[][..], Vec::as_slice);
            node_coverage(node, ds, on_node, revisions, now)
        })
        .collect()
}

/// The pods `ds` controls, by the node they are bound to (unbound ones left out).
fn controlled_by_node<'a, P: Borrow<Pod>>(
    ds: &DaemonSet,
    pods: &'a [P],
) -> BTreeMap<&'a str, Vec<&'a Pod>> {
    let mut by_node: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
    for pod in pods
        .iter()
        .map(Borrow::borrow)
        .filter(|p| is_controlled_by(p, ds))
    {
        if let Some(node) = pod.target_node() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    by_node
}

/// As [`node_coverage`], with a verdict already computed.
pub fn coverage_with_verdict(
    node: &Node,
    verdict: NodeVerdict,
    ds: &DaemonSet,
    pods_on_node: &[&Pod],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
) -> NodeCoverage {
    named_coverage(node.name(), verdict, ds, pods_on_node, revisions, now)
}

/// Coverage rows when the nodes cannot be read (the user may not list them):
/// one row per node named by a controlled pod's `spec.nodeName`, in name
/// order, each with [`NodeVerdict::unknown`] (`why` says why). Nodes without a
/// daemon pod cannot be known and have no row; unbound pods have none either.
pub fn unreadable_node_coverage<P: Borrow<Pod>>(
    ds: &DaemonSet,
    pods: &[P],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
    why: &str,
) -> Vec<NodeCoverage> {
    let by_node = controlled_by_node(ds, pods);
    by_node
        .into_iter()
        .map(|(node, on_node)| {
            named_coverage(
                node,
                NodeVerdict::unknown(why),
                ds,
                &on_node,
                revisions,
                now,
            )
        })
        .collect()
}

/// The coverage of the node called `node`.
pub fn named_coverage(
    node: &str,
    verdict: NodeVerdict,
    ds: &DaemonSet,
    pods_on_node: &[&Pod],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
) -> NodeCoverage {
    let min_ready_seconds = min_ready_seconds(ds);
    let mut pods: Vec<&Pod> = pods_on_node
        .iter()
        .copied()
        .filter(|p| !is_deleted_terminal(p))
        .collect();
    sort_oldest_first(&mut pods);
    NodeCoverage {
        node: node.into(),
        verdict,
        pods: pods
            .into_iter()
            .map(|p| pod_coverage(p, revisions, min_ready_seconds, now))
            .collect(),
    }
}

/// Describes one pod.
pub fn pod_coverage(
    pod: &Pod,
    revisions: &RevisionIndex,
    min_ready_seconds: i32,
    now: jiff::Timestamp,
) -> PodCoverage {
    let hash = pod.revision_hash().map(Arc::from);
    let problem = pod_problem(pod);
    // Only a failing pod's detail is ever shown ([`super::health::pod_health`]);
    // a Ready pod that restarted once kept "exit code 137 (Error)" for good,
    // 3 MB at 65,000 nodes under churn.
    let failing = super::health::failing_reason(problem.as_deref(), pod.status.phase.as_deref());
    PodCoverage {
        name: pod.name().into(),
        uid: pod.uid().into(),
        revision: hash.as_deref().and_then(|h| revisions.number_for_hash(h)),
        hash,
        updated: revisions.is_pod_updated(pod),
        phase: pod.status.phase.as_deref().map(Arc::from),
        ready: is_pod_ready(pod),
        available: is_pod_available(pod, min_ready_seconds, now),
        terminating: pod.is_terminating(),
        restarts: pod.restarts(),
        failure_detail: failing.and_then(|_| super::health::failure_detail(pod)),
        problem,
        created: pod.metadata.creation_timestamp,
        ready_since: pod.ready_condition().and_then(|c| c.last_transition_time),
    }
}

/// `spec.minReadySeconds` (0 when unset or negative).
pub fn min_ready_seconds(ds: &DaemonSet) -> i32 {
    ds.spec
        .as_ref()
        .and_then(|s| s.min_ready_seconds)
        .unwrap_or(0)
        .max(0)
}

/// Upstream `podutil.IsPodReady`: the Ready condition is True (phase and deletion
/// are not consulted).
pub fn is_pod_ready(pod: &Pod) -> bool {
    pod.ready_condition().is_some_and(|c| c.status == "True")
}

/// Upstream `podutil.IsPodAvailable`: Ready, and either `minReadySeconds` is 0 or
/// the Ready condition turned True strictly more than `minReadySeconds` before `now`.
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: jiff::Timestamp) -> bool {
    if !is_pod_ready(pod) {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    pod.ready_condition()
        .and_then(|c| c.last_transition_time)
        .and_then(|t| available_from(t.timestamp(), min_ready_seconds))
        .is_some_and(|available_at| available_at < now)
}

/// When a pod Ready since `ready_since` counts as available: `minReadySeconds`
/// later (available strictly after that instant, as [`is_pod_available`]).
pub fn available_from(
    ready_since: jiff::Timestamp,
    min_ready_seconds: i32,
) -> Option<jiff::Timestamp> {
    ready_since
        .checked_add(jiff::SignedDuration::from_secs(i64::from(
            min_ready_seconds.max(0),
        )))
        .ok()
}

impl PodCoverage {
    /// Whether the pod is available at `now`, from what the row keeps: the
    /// same answer [`is_pod_available`] gives on the pod (its Ready
    /// condition and when it turned True are all that answer reads), so a
    /// row computed earlier can be judged as of `now` without its pod.
    pub fn available_at(&self, min_ready_seconds: i32, now: jiff::Timestamp) -> bool {
        if !self.ready {
            return false;
        }
        if min_ready_seconds <= 0 {
            return true;
        }
        self.ready_since
            .and_then(|t| available_from(t.timestamp(), min_ready_seconds))
            .is_some_and(|available_at| available_at < now)
    }

    /// When this Ready pod turns available with no change to it (its Ready
    /// condition is older than `minReadySeconds` then): `None` when it is
    /// available already, not Ready, or never will be by the clock alone.
    pub fn turns_available_at(&self, min_ready_seconds: i32) -> Option<jiff::Timestamp> {
        if !self.ready || self.available || min_ready_seconds <= 0 {
            return None;
        }
        available_from(self.ready_since?.timestamp(), min_ready_seconds)
    }
}

/// Phase `Succeeded` or `Failed` (upstream `podutil.IsPodTerminal`).
pub fn is_terminal(pod: &Pod) -> bool {
    matches!(pod.status.phase.as_deref(), Some("Succeeded" | "Failed"))
}

/// Terminal and already being deleted: upstream `getNodesToDaemonPods(…, false)`
/// drops these, the controller has nothing left to do with them.
pub fn is_deleted_terminal(pod: &Pod) -> bool {
    is_terminal(pod) && pod.is_terminating()
}

/// The pod's creation time.
pub fn created(pod: &Pod) -> Option<jiff::Timestamp> {
    pod.metadata.creation_timestamp.map(Stamp::timestamp)
}

/// Sorts as upstream `podByCreationTimestampAndPhase`: pods bound to a node first,
/// then by creation time (missing sorts first, as Go's zero time), then by name.
pub fn sort_oldest_first(pods: &mut [&Pod]) {
    pods.sort_by(|a, b| oldest_first(a, b));
}

/// The order of [`sort_oldest_first`]: `Less` when `a` comes first.
pub fn oldest_first(a: &Pod, b: &Pod) -> std::cmp::Ordering {
    b.node_name()
        .is_some()
        .cmp(&a.node_name().is_some())
        .then_with(|| created(a).cmp(&created(b)))
        .then_with(|| a.name().cmp(b.name()))
}

/// The reason a human should look at this pod, kubectl-style: a pod-level
/// problem first (a failed pod's own reason, `Evicted`, `OutOfcpu`; or
/// `Unschedulable`: [`super::health::pod_level_problem`]), else a container's
/// waiting/terminated reason, else the pod-level reason, else a failed phase.
fn pod_problem(pod: &Pod) -> Option<Arc<str>> {
    if let Some(reason) = super::health::pod_level_problem(pod) {
        return Some(Arc::from(reason));
    }
    let running_ok = |reason: &str| {
        matches!(
            reason,
            "ContainerCreating" | "PodInitializing" | "Completed"
        )
    };
    pod.container_problem()
        .filter(|r| !running_ok(r))
        .or(pod.status.reason.as_deref())
        .or_else(|| (pod.status.phase.as_deref() == Some("Failed")).then_some("Failed"))
        .or_else(|| restarted_after_failure(pod).then_some(CRASH_LOOP))
        .map(Arc::from)
}

/// The kubelet's reason for a container it restarts in a loop.
const CRASH_LOOP: &str = "CrashLoopBackOff";

/// Whether a container runs again after it failed and has not been Ready
/// since: between two back-offs of a crash loop the kubelet reports it
/// `running` (no waiting reason), yet the pod is failing the whole time — the
/// grid's `!` and the gate must not come and go with the restarts. A
/// container that failed once and is Ready again is not in a loop.
fn restarted_after_failure(pod: &Pod) -> bool {
    pod.status.container_statuses.iter().any(|c| {
        c.state.running.is_some()
            && !c.ready
            && c.restart_count > 0
            && c.last_state
                .terminated
                .as_ref()
                .is_some_and(|t| t.exit_code.is_some_and(|code| code != 0))
    })
}

#[cfg(test)]
mod tests;
