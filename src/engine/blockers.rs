//! Why a rollout is not moving, in words and as a code: the RollingUpdate
//! budget spent (and which nodes hold its slots, and why), pods stuck
//! terminating on unreachable nodes, `minReadySeconds`, an OnDelete DaemonSet
//! waiting for an operator, or nothing left to do. The header, the plan
//! overlay, `status` and `auto`'s messages all show this one answer.
//!
//! Pure: reads coverage rows, the nodes and the DaemonSet's strategy; the
//! budget is upstream `rollingUpdate`'s (see [`super::rolling`]).

mod tally;

use std::collections::BTreeMap;

use serde::Serialize;

pub use tally::{BlockerTally, Share};

use super::coverage::{NodeCoverage, PodCoverage};
use super::health::{PodHealth, pod_health};
use super::rolling::{RollingBudget, UpdateStrategy, rolling_budget, update_strategy};
use crate::model::{DaemonSet, Node};

/// The kind of blocker, stable for scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BlockerCode {
    /// Every node the DaemonSet runs on is on the current revision and available.
    NothingToDo,
    /// RollingUpdate: the pods allowed to be unavailable at once already are.
    MaxUnavailableSpent,
    /// RollingUpdate with surge: every surge slot holds a new pod not yet available.
    MaxSurgeSpent,
    /// Old pods are stuck terminating on nodes that are not Ready.
    StuckTerminating,
    /// New pods are Ready but not yet available for `minReadySeconds`.
    WaitingForMinReadySeconds,
    /// OnDelete: nothing moves until someone advances nodes.
    WaitingForOperator,
    /// RollingUpdate: the controller is replacing pods within its budget.
    Progressing,
    /// The rollout is paused (set by the operations layer).
    Paused,
}

/// One node that holds the rollout up, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockingNode {
    /// The node.
    pub node: String,
    /// Why it holds a slot (`node NotReady`, `pod Pending`, `CrashLoopBackOff: …`).
    pub why: String,
}

/// Why the rollout is (not) moving.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Blocker {
    /// The kind.
    pub code: BlockerCode,
    /// The whole answer in words, naming the nodes (API text: sanitise to print).
    pub message: String,
    /// The nodes behind it.
    pub nodes: Vec<BlockingNode>,
}

impl Blocker {
    fn new(code: BlockerCode, message: String, nodes: Vec<BlockingNode>) -> Self {
        Self {
            code,
            message,
            nodes,
        }
    }

    /// Whether the rollout is held up (anything but progressing or done).
    pub fn is_blocking(&self) -> bool {
        !matches!(
            self.code,
            BlockerCode::NothingToDo | BlockerCode::Progressing
        )
    }
}

/// Names at most a few nodes with their reasons.
fn list(nodes: &[BlockingNode]) -> String {
    let mut parts: Vec<String> = nodes
        .iter()
        .take(3)
        .map(|n| format!("{} ({})", n.node, n.why))
        .collect();
    if nodes.len() > 3 {
        parts.push(format!("{} more", nodes.len() - 3));
    }
    parts.join(", ")
}

/// Why the node's pod is not available, in words (`node_ready`: the node's
/// Ready condition, `None` when unknown).
fn why_unavailable(pod: Option<&PodCoverage>, node_ready: Option<bool>) -> String {
    if node_ready == Some(false) {
        return "node NotReady".to_owned();
    }
    let Some(pod) = pod else {
        return "no daemon pod".to_owned();
    };
    match pod_health(pod) {
        PodHealth::Failing { reason, .. } => reason,
        PodHealth::Gone => "pod terminating".to_owned(),
        PodHealth::Ready => "Ready, not yet available (minReadySeconds)".to_owned(),
        PodHealth::Progressing => match pod.phase.as_deref() {
            Some("Pending") | None => "pod Pending".to_owned(),
            _ => "pod not Ready".to_owned(),
        },
    }
}

/// Why the rollout of `ds` over `rows` is not moving (or that it is), from
/// the nodes' Ready conditions as given by `node_ready`.
pub fn rollout_blocker(ds: &DaemonSet, rows: &[NodeCoverage], nodes: &[Node]) -> Blocker {
    let ready: BTreeMap<&str, bool> = nodes.iter().map(|n| (n.name(), n.is_ready())).collect();
    rollout_blocker_with(
        ds,
        rows.iter()
            .map(|r| (r, ready.get(r.node.as_str()).copied())),
    )
}

/// [`rollout_blocker`] over rows paired with their node's Ready condition
/// (the console's row cache holds both).
pub fn rollout_blocker_with<'a>(
    ds: &DaemonSet,
    rows: impl IntoIterator<Item = (&'a NodeCoverage, Option<bool>)>,
) -> Blocker {
    BlockerTally::of(rows).blocker(ds)
}

impl BlockerTally {
    /// Why the rollout of `ds` is not moving (or that it is), from the summed
    /// shares of its nodes: what [`rollout_blocker`] answers over the same rows.
    pub fn blocker(&self, ds: &DaemonSet) -> Blocker {
        let outdated = self.outdated;
        if outdated == 0 {
            if self.unavailable.is_empty() {
                return Blocker::new(
                    BlockerCode::NothingToDo,
                    "nothing to do: every node runs the current revision".to_owned(),
                    Vec::new(),
                );
            }
            let waiting_min_ready = self
                .unavailable
                .values()
                .all(|why| why.starts_with("Ready, not yet available"));
            if waiting_min_ready {
                let nodes = tally::nodes(&self.unavailable);
                return Blocker::new(
                    BlockerCode::WaitingForMinReadySeconds,
                    format!("waiting for minReadySeconds: {}", list(&nodes)),
                    nodes,
                );
            }
        }
        if !self.stuck.is_empty() {
            let stuck = tally::nodes(&self.stuck);
            return Blocker::new(
                BlockerCode::StuckTerminating,
                format!(
                    "{} pod(s) stuck terminating on unreachable nodes: {}",
                    stuck.len(),
                    list(&stuck)
                ),
                stuck,
            );
        }
        match update_strategy(ds) {
            UpdateStrategy::OnDelete => Blocker::new(
                BlockerCode::WaitingForOperator,
                format!("{outdated} node(s) on old revisions wait for an operator (OnDelete)"),
                Vec::new(),
            ),
            UpdateStrategy::RollingUpdate { .. } => {
                let desired = i32::try_from(self.eligible).unwrap_or(i32::MAX);
                match rolling_budget(ds, desired) {
                    Ok(Some(budget)) => self.rolling_blocker(&budget),
                    Ok(None) => {
                        Blocker::new(BlockerCode::Progressing, "rolling".to_owned(), Vec::new())
                    }
                    Err(err) => Blocker::new(
                        BlockerCode::MaxUnavailableSpent,
                        format!("the controller cannot roll: {err}"),
                        Vec::new(),
                    ),
                }
            }
        }
    }

    /// RollingUpdate: is a budget spent, and by whom.
    fn rolling_blocker(&self, budget: &RollingBudget) -> Blocker {
        let outdated = self.outdated;
        let held = i32::try_from(self.unavailable.len()).unwrap_or(i32::MAX);
        if budget.max_surge > 0 {
            let slots = i32::try_from(self.surging.len()).unwrap_or(i32::MAX);
            if slots >= budget.max_surge {
                let surging = tally::nodes(&self.surging);
                return Blocker::new(
                    BlockerCode::MaxSurgeSpent,
                    format!(
                        "rolling update stopped at {outdated} old node(s): all {} maxSurge slot(s) are held by new pods not yet available: {}",
                        budget.max_surge,
                        list(&surging)
                    ),
                    surging,
                );
            }
        } else if held >= budget.max_unavailable {
            let unavailable = tally::nodes(&self.unavailable);
            return Blocker::new(
                BlockerCode::MaxUnavailableSpent,
                format!(
                    "rolling update stopped at {outdated} old node(s): maxUnavailable={} is spent by {}",
                    budget.max_unavailable,
                    list(&unavailable)
                ),
                unavailable,
            );
        }
        Blocker::new(
            BlockerCode::Progressing,
            format!(
                "rolling: the controller is replacing pods ({outdated} node(s) on old revisions)"
            ),
            Vec::new(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::coverage::node_coverage;
    use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
    use crate::engine::revision::RevisionIndex;

    fn rows_of(ds: &DaemonSet, nodes: &[Node], pods: &[crate::model::Pod]) -> Vec<NodeCoverage> {
        let revisions = vec![
            revision_of(&daemonset("a:v1").build(), "h1", 1),
            revision_of(ds, "h2", 2),
        ];
        let index = RevisionIndex::new(ds, &revisions);
        nodes
            .iter()
            .map(|n| {
                let on: Vec<&crate::model::Pod> = pods
                    .iter()
                    .filter(|p| p.node_name() == Some(n.name()))
                    .collect();
                node_coverage(n, ds, &on, &index, at(3600))
            })
            .collect()
    }

    #[test]
    fn rolling_update_blocked_by_a_new_pod_on_a_not_ready_node_names_it() {
        // Upstream: with maxUnavailable=1, a new pod that cannot become
        // available holds the only slot, so no other old pod is deleted.
        let ds = daemonset("a:v2").build();
        let nodes = vec![
            node("n1").build(),
            node("n2").build(),
            node("n6").not_ready().build(),
        ];
        let pods = vec![
            pod("p1", "n1", "h1").ready_since(0).build(),
            pod("p2", "n2", "h1").ready_since(0).build(),
            pod("p6", "n6", "h2").build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes);
        assert_eq!(
            blocker.code,
            BlockerCode::MaxUnavailableSpent,
            "{blocker:?}"
        );
        assert!(
            blocker.message.contains("n6 (node NotReady)"),
            "{}",
            blocker.message
        );
    }

    #[test]
    fn on_delete_waits_for_an_operator_and_done_is_nothing_to_do() {
        let ds = daemonset("a:v2").on_delete().build();
        let nodes = vec![node("n1").build(), node("n2").build()];
        let old = vec![
            pod("p1", "n1", "h1").ready_since(0).build(),
            pod("p2", "n2", "h2").ready_since(0).build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &old), &nodes);
        assert_eq!(blocker.code, BlockerCode::WaitingForOperator);
        let done = vec![
            pod("p1", "n1", "h2").ready_since(0).build(),
            pod("p2", "n2", "h2").ready_since(0).build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &done), &nodes);
        assert_eq!(blocker.code, BlockerCode::NothingToDo);
    }

    #[test]
    fn stuck_terminating_on_an_unreachable_node() {
        let ds = daemonset("a:v2").build();
        let nodes = vec![node("n1").build(), node("n2").not_ready().build()];
        let pods = vec![
            pod("p1", "n1", "h2").ready_since(0).build(),
            pod("p2", "n2", "h1").ready_since(0).terminating().build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes);
        assert_eq!(blocker.code, BlockerCode::StuckTerminating, "{blocker:?}");
        assert!(blocker.message.contains("n2"));
    }
}
