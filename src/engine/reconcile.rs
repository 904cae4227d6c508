//! What one DaemonSet controller sync would do: nodes to create a daemon pod on
//! and pods to delete, each with a reason, plus the RollingUpdate budgets used.
//!
//! Follows upstream `manage`/`podsShouldBeOnNode` and `updateDaemonSet`. Unlike
//! upstream it emits no events, keeps no failed-pod backoff clock and never
//! calls the API: the caller says which nodes are in their failed-pod backoff,
//! and the plan is a value for the console to explain and the embedded
//! controller to execute.

use std::collections::HashMap;

use serde::Serialize;

use super::coverage::{
    is_deleted_terminal, is_pod_available, is_pod_ready, min_ready_seconds, sort_oldest_first,
};
use super::eligibility::{NodeVerdict, node_should_run_daemon_pod};
use super::revision::RevisionIndex;
use super::rolling::{
    Judge, NodeSlot, RollingBudget, RollingReason, allows_surge, plan_rolling_step, rolling_budget,
};
use crate::model::{DaemonSet, Node, Pod};

/// A node that needs a daemon pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeAction {
    /// Node name.
    pub node: String,
    /// Why.
    pub reason: CreateReason,
}

/// Why a pod is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CreateReason {
    /// The node should run the daemon pod and has none.
    MissingPod,
    /// Surge: only terminating or failed pods remain; a live one is needed.
    NoLivePod,
    /// Surge: a new pod beside an old one (see [`RollingReason`]).
    Rolling(RollingReason),
}

/// A pod to delete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodAction {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID, to be sent as the delete precondition.
    pub uid: String,
    /// The node it is bound to.
    pub node: String,
    /// Why.
    pub reason: DeleteReason,
}

/// Why a pod is deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum DeleteReason {
    /// Phase Failed, and the node is not in its failed-pod backoff (upstream
    /// records a `FailedDaemonPod` event and ticks that backoff).
    Failed,
    /// Phase Succeeded: a daemon pod must not exit.
    Succeeded,
    /// The node may no longer keep a daemon pod (e.g. an untolerated NoExecute taint).
    ShouldNotContinueRunning,
    /// More than one live pod on the node; the oldest is kept.
    ExcessPod,
    /// Surge: the old pod is no longer Ready, the new one replaces it.
    OldPodNotReady,
    /// Surge: the new pod is available, the old one goes.
    NewPodAvailable,
    /// RollingUpdate deletes an old pod (see [`RollingReason`]).
    Rolling(RollingReason),
}

/// One sync's plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcilePlan {
    /// Nodes to create a daemon pod on, in node-name order.
    pub create_on: Vec<NodeAction>,
    /// Pods to delete.
    pub delete: Vec<PodAction>,
    /// RollingUpdate budgets (None for OnDelete or when they cannot be computed).
    pub budget: Option<RollingBudget>,
    /// Why the budgets could not be computed, if so.
    pub budget_error: Option<String>,
    /// The manage step planned actions, so the rolling step waits for the next
    /// sync (upstream runs `rollingUpdate` only when expectations are satisfied).
    pub rolling_deferred: bool,
    /// Daemon pods bound to no node: they cannot be placed in the plan.
    pub unassigned: Vec<String>,
    /// Failed pods not deleted this sync because their node is in its
    /// failed-pod backoff (upstream requeues the DaemonSet after the delay).
    pub failed_in_backoff: Vec<PodAction>,
}

impl ReconcilePlan {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.create_on.is_empty() && self.delete.is_empty()
    }
}

/// Plans one sync of `ds` over `nodes` and `pods` (the pods controlled by `ds`).
///
/// Assumptions: `pods` are already filtered to those the DaemonSet controls;
/// deleted terminal pods are ignored as upstream `getNodesToDaemonPods(…, false)`.
/// Invariants: the manage part (`podsShouldBeOnNode` per node) comes first; the
/// RollingUpdate part runs only when manage plans nothing, as the upstream
/// controller only rolls once its create/delete expectations are met; OnDelete
/// never plans a delete for an update. Order is by node name, so the same input
/// always gives the same plan.
pub fn plan_reconcile(
    ds: &DaemonSet,
    nodes: &[Node],
    pods: &[Pod],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
) -> ReconcilePlan {
    let verdicts: Vec<(&Node, NodeVerdict)> = nodes
        .iter()
        .map(|n| (n, node_should_run_daemon_pod(n, ds)))
        .collect();
    plan_reconcile_with_verdicts(ds, &verdicts, pods, revisions, now, &|_| false)
}

/// As [`plan_reconcile`], with the verdicts already computed (one per node)
/// and `in_backoff` answering whether a node's failed daemon pods must wait
/// out the controller's failed-pod backoff (upstream `failedPodsBackoff`
/// `IsInBackOffSinceUpdate`): such a pod is neither deleted nor counted as
/// live, and is listed in [`ReconcilePlan::failed_in_backoff`].
pub fn plan_reconcile_with_verdicts(
    ds: &DaemonSet,
    verdicts: &[(&Node, NodeVerdict)],
    pods: &[Pod],
    revisions: &RevisionIndex,
    now: jiff::Timestamp,
    in_backoff: &dyn Fn(&str) -> bool,
) -> ReconcilePlan {
    let mut plan = ReconcilePlan::default();
    let by_node = group_by_node(pods, &mut plan.unassigned);
    let judge = Judge {
        revisions,
        min_ready_seconds: min_ready_seconds(ds),
        now,
    };
    let surge = allows_surge(ds);
    let mut sorted: Vec<&(&Node, NodeVerdict)> = verdicts.iter().collect();
    sorted.sort_by(|a, b| a.0.name().cmp(b.0.name()));
    for (node, verdict) in &sorted {
        let on_node = by_node.get(node.name()).map(Vec::as_slice);
        let held = in_backoff(node.name());
        let node = NodeTurn {
            name: node.name(),
            verdict,
            failed_held: held,
        };
        pods_should_be_on_node(&node, on_node, surge, judge, &mut plan);
    }
    let desired = sorted.iter().filter(|(_, v)| v.should_run).count();
    match rolling_budget(ds, i32::try_from(desired).unwrap_or(i32::MAX)) {
        Ok(Some(budget)) => rolling_part(&sorted, &by_node, budget, judge, &mut plan),
        Ok(None) => {}
        Err(err) => plan.budget_error = Some(err.to_string()),
    }
    plan
}

fn group_by_node<'a>(
    pods: &'a [Pod],
    unassigned: &mut Vec<String>,
) -> HashMap<&'a str, Vec<&'a Pod>> {
    // Looked up by name only (whoever walks it sorts the names first): a
    // hash map, not an ordered one, on every sync of thousands of nodes.
    let mut by_node: HashMap<&str, Vec<&Pod>> = HashMap::with_capacity(pods.len());
    for pod in pods.iter().filter(|p| !is_deleted_terminal(p)) {
        match pod.target_node() {
            Some(node) => by_node.entry(node).or_default().push(pod),
            None => unassigned.push(pod.name().to_owned()),
        }
    }
    for list in by_node.values_mut() {
        sort_oldest_first(list);
    }
    by_node
}

/// The rolling step, or only the budget when manage already planned actions.
fn rolling_part(
    sorted: &[&(&Node, NodeVerdict)],
    by_node: &HashMap<&str, Vec<&Pod>>,
    budget: RollingBudget,
    judge: Judge<'_>,
    plan: &mut ReconcilePlan,
) {
    let slots = rolling_slots(sorted, by_node);
    let step = plan_rolling_step(&slots, budget, judge);
    plan.budget = Some(step.budget.clone());
    if !plan.is_empty() {
        plan.rolling_deferred = true;
        return;
    }
    for (node, reason) in step.create_on {
        plan.create_on.push(NodeAction {
            node,
            reason: CreateReason::Rolling(reason),
        });
    }
    for (pod, node, reason) in step.delete {
        plan.delete
            .push(delete_action(pod, &node, DeleteReason::Rolling(reason)));
    }
}

/// Every node that should run plus every node with daemon pods (upstream
/// `updatedDesiredNodeCounts` adds the former to the node→pods map).
fn rolling_slots<'a>(
    sorted: &[&(&Node, NodeVerdict)],
    by_node: &HashMap<&str, Vec<&'a Pod>>,
) -> Vec<NodeSlot<'a>> {
    let should_run: HashMap<&str, bool> = sorted
        .iter()
        .map(|(n, v)| (n.name(), v.should_run))
        .collect();
    let mut names: Vec<&str> = by_node.keys().copied().collect();
    names.extend(
        should_run
            .iter()
            .filter(|(_, run)| **run)
            .map(|(name, _)| *name),
    );
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| NodeSlot {
            node: name.to_owned(),
            should_run: should_run.get(name).copied().unwrap_or(false),
            pods: by_node.get(name).cloned().unwrap_or_default(),
        })
        .collect()
}

/// One node as [`pods_should_be_on_node`] sees it.
struct NodeTurn<'a> {
    name: &'a str,
    verdict: &'a NodeVerdict,
    /// The node is in its failed-pod backoff: failed pods stay this sync.
    failed_held: bool,
}

/// Upstream `podsShouldBeOnNode` for one node (`pods` oldest first).
///
/// Invariants: a node that should run and has no pod at all (terminating ones
/// included) gets one; where pods may continue running, failed pods are deleted
/// unless the node is in its failed-pod backoff (then they stay, and count as
/// neither deleted nor live), succeeded pods are deleted, and of the live ones
/// the oldest is kept (with surge: the oldest old and the oldest new, the old
/// one deleted once it is not Ready or the new one is available); where pods may
/// not continue, every non-terminating pod goes.
fn pods_should_be_on_node(
    turn: &NodeTurn<'_>,
    pods: Option<&[&Pod]>,
    surge: bool,
    judge: Judge<'_>,
    plan: &mut ReconcilePlan,
) {
    let (node, verdict) = (turn.name, turn.verdict);
    let Some(pods) = pods.filter(|p| !p.is_empty()) else {
        if verdict.should_run {
            plan.create_on.push(NodeAction {
                node: node.to_owned(),
                reason: CreateReason::MissingPod,
            });
        }
        return;
    };
    if !verdict.should_continue_running {
        for pod in pods.iter().filter(|p| !p.is_terminating()) {
            plan.delete.push(delete_action(
                pod,
                node,
                DeleteReason::ShouldNotContinueRunning,
            ));
        }
        return;
    }
    let live = live_pods_deleting_finished(node, pods, turn.failed_held, plan);
    if !surge {
        for pod in live.iter().skip(1) {
            plan.delete
                .push(delete_action(pod, node, DeleteReason::ExcessPod));
        }
    } else if live.is_empty() && verdict.should_run {
        plan.create_on.push(NodeAction {
            node: node.to_owned(),
            reason: CreateReason::NoLivePod,
        });
    } else if live.len() > 1 {
        prune_surged_node(node, &live, judge, plan);
    }
}

/// Plans deletion of the node's failed (unless `failed_held`) and succeeded
/// pods and returns the other non-terminating ones, oldest first.
fn live_pods_deleting_finished<'a>(
    node: &str,
    pods: &[&'a Pod],
    failed_held: bool,
    plan: &mut ReconcilePlan,
) -> Vec<&'a Pod> {
    let mut live = Vec::new();
    for pod in pods.iter().copied().filter(|p| !p.is_terminating()) {
        let reason = match pod.status.phase.as_deref() {
            Some("Failed") if failed_held => {
                plan.failed_in_backoff
                    .push(delete_action(pod, node, DeleteReason::Failed));
                continue;
            }
            Some("Failed") => DeleteReason::Failed,
            Some("Succeeded") => DeleteReason::Succeeded,
            _ => {
                live.push(pod);
                continue;
            }
        };
        plan.delete.push(delete_action(pod, node, reason));
    }
    live
}

/// With surge, two live pods may share a node only while the oldest new one is
/// not yet available and the oldest old one is still Ready. Note upstream compares
/// the hash label only here (not the legacy generation label).
fn prune_surged_node(node: &str, live: &[&Pod], judge: Judge<'_>, plan: &mut ReconcilePlan) {
    let (mut oldest_new, mut oldest_old) = (None, None);
    for pod in live.iter().copied() {
        let is_new = pod
            .revision_hash()
            .is_some_and(|h| judge.revisions.is_current_hash(h));
        let slot = if is_new {
            &mut oldest_new
        } else {
            &mut oldest_old
        };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            plan.delete
                .push(delete_action(pod, node, DeleteReason::ExcessPod));
        }
    }
    if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
        if !is_pod_ready(old) {
            plan.delete
                .push(delete_action(old, node, DeleteReason::OldPodNotReady));
        } else if is_pod_available(new, judge.min_ready_seconds, judge.now) {
            plan.delete
                .push(delete_action(old, node, DeleteReason::NewPodAvailable));
        }
    }
}

fn delete_action(pod: &Pod, node: &str, reason: DeleteReason) -> PodAction {
    PodAction {
        namespace: pod.namespace().to_owned(),
        name: pod.name().to_owned(),
        uid: pod.uid().to_owned(),
        node: node.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod properties;
