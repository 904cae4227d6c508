//! The client-side rollout of an OnDelete DaemonSet: which nodes to move to the
//! current revision and in what order (canaries, then pool/zone groups, then
//! name), which nodes are skipped and why, the next batch, the rollback order, and
//! (in [`gate`]) whether a batch may be followed by the next.
//!
//! Pure: reads coverage rows and nodes, returns plans. It never deletes pods; the
//! operations layer does, with a UID precondition.

mod gate;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use gate::{BatchMember, GateFailure, GatePolicy, GateVerdict, WaitingFor, gate};

use super::coverage::{NodeCoverage, PodCoverage};
use super::selector::Selector;
use crate::model::Node;

/// Node labels that name a node pool, most specific first: common conventions
/// (the embedded cluster's scenarios use `node-pool`), then the keys of GKE, EKS,
/// Karpenter and AKS.
pub const POOL_LABEL_KEYS: [&str; 9] = [
    "node-pool",
    "node.kubernetes.io/pool",
    "pool",
    "nodepool",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
];

/// Node labels that name a node's zone, the well-known one first.
pub const ZONE_LABEL_KEYS: [&str; 2] = [
    "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/zone",
];

/// How to order a rollout.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanOptions {
    /// Canary nodes chosen by hand (node names).
    pub canaries: BTreeSet<String>,
    /// Canary nodes chosen by label selector.
    pub canary_selector: Option<Selector>,
    /// Label keys naming a node's group; the first present wins.
    pub group_label_keys: Vec<String>,
    /// Plan cordoned nodes too (the operator decided to move them anyway).
    pub include_cordoned: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            canaries: BTreeSet::new(),
            canary_selector: None,
            // Pool first, then zone.
            group_label_keys: POOL_LABEL_KEYS
                .iter()
                .chain(ZONE_LABEL_KEYS.iter())
                .map(|k| (*k).to_owned())
                .collect(),
            include_cordoned: false,
        }
    }
}

/// One node to move to the current revision.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// Node name.
    pub node: String,
    /// Chosen as a canary.
    pub canary: bool,
    /// `key=value` of the node's group label, empty when it has none.
    pub group: String,
    /// The old-revision pod to delete (the oldest live one not updated).
    pub pod: Option<PodCoverage>,
}

/// Why a node is not in the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SkipReason {
    /// The DaemonSet should not run here; a deleted pod would not come back.
    NotEligible {
        /// The eligibility reason, in words.
        message: String,
    },
    /// No live daemon pod on the node (nothing to replace).
    NoDaemonPod,
    /// Every live daemon pod here already runs the current revision.
    AlreadyUpdated,
    /// The node is cordoned (`spec.unschedulable`), probably being drained.
    Cordoned,
    /// The node is not Ready (or unknown), so a new pod could not start.
    NotReady,
}

/// A node left out of the plan, with the reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Node name.
    pub node: String,
    /// Why.
    pub reason: SkipReason,
}

/// The ordered rollout plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RolloutPlan {
    /// Nodes to update, in order.
    pub steps: Vec<PlanStep>,
    /// Nodes left out, in node-name order.
    pub skipped: Vec<Skipped>,
}

/// Orders the nodes of `rows` for an OnDelete rollout.
///
/// Invariants: every row ends up in exactly one of `steps` or `skipped`; a step
/// always has an old live pod to delete; canaries come first, then nodes grouped
/// by their first present group label (nodes without one last), then by name.
/// Skip reasons are checked in this order: not eligible, no daemon pod, already
/// updated, cordoned, NotReady (the first that applies is reported).
pub fn plan_rollout(rows: &[NodeCoverage], nodes: &[Node], options: &PlanOptions) -> RolloutPlan {
    let by_name: BTreeMap<&str, &Node> = nodes.iter().map(|n| (n.name(), n)).collect();
    let mut plan = RolloutPlan::default();
    for row in rows {
        let node = by_name.get(row.node.as_str()).copied();
        match skip_reason(row, node, options.include_cordoned) {
            Some(reason) => plan.skipped.push(Skipped {
                node: row.node.clone(),
                reason,
            }),
            None => plan.steps.push(PlanStep {
                node: row.node.clone(),
                canary: node.is_some_and(|n| is_canary(n, options)),
                group: node
                    .map(|n| group_of(n, &options.group_label_keys))
                    .unwrap_or_default(),
                pod: old_pod(row).cloned(),
            }),
        }
    }
    plan.steps.sort_by(|a, b| {
        (!a.canary, a.group.is_empty(), &a.group, &a.node).cmp(&(
            !b.canary,
            b.group.is_empty(),
            &b.group,
            &b.node,
        ))
    });
    plan.skipped.sort_by(|a, b| a.node.cmp(&b.node));
    plan
}

fn skip_reason(
    row: &NodeCoverage,
    node: Option<&Node>,
    include_cordoned: bool,
) -> Option<SkipReason> {
    if !row.verdict.should_run {
        let reasons: Vec<&str> = row
            .verdict
            .reasons
            .iter()
            .map(|r| r.message.as_str())
            .collect();
        let message = if reasons.is_empty() {
            "the DaemonSet should not run here".to_owned()
        } else {
            reasons.join("; ")
        };
        return Some(SkipReason::NotEligible { message });
    }
    let mut live = row.pods.iter().filter(|p| !p.terminating).peekable();
    if live.peek().is_none() {
        return Some(SkipReason::NoDaemonPod);
    }
    if old_pod(row).is_none() {
        return Some(SkipReason::AlreadyUpdated);
    }
    match node {
        Some(n) if n.spec.unschedulable && !include_cordoned => Some(SkipReason::Cordoned),
        Some(n) if n.is_ready() => None,
        // A node the user may not read: its pod is all there is to go by
        // (the gate judges the replacement pod, as for any node).
        None if row.verdict.is_unknown() => None,
        _ => Some(SkipReason::NotReady),
    }
}

/// The oldest live pod on the row that does not run the current revision.
fn old_pod(row: &NodeCoverage) -> Option<&PodCoverage> {
    row.pods.iter().find(|p| !p.terminating && !p.updated)
}

fn is_canary(node: &Node, options: &PlanOptions) -> bool {
    options.canaries.contains(node.name())
        || options
            .canary_selector
            .as_ref()
            .is_some_and(|s| s.matches(Some(&node.labels)))
}

/// `key=value` of the first of `keys` the node carries, or empty.
pub fn group_of(node: &Node, keys: &[String]) -> String {
    keys.iter()
        .find_map(|k| node.label(k).map(|v| format!("{k}={v}")))
        .unwrap_or_default()
}

/// The next batch of at most `size` steps, leaving out nodes in `exclude` (in
/// flight or already done). While canaries remain, a batch holds only canaries,
/// so the canary stage is gated on its own.
pub fn next_batch<'a>(
    plan: &'a RolloutPlan,
    size: usize,
    exclude: &BTreeSet<String>,
) -> Vec<&'a PlanStep> {
    let mut open = plan
        .steps
        .iter()
        .filter(|s| !exclude.contains(&s.node))
        .peekable();
    let canary_stage = open.peek().is_some_and(|s| s.canary);
    open.take_while(|s| !canary_stage || s.canary)
        .take(size)
        .collect()
}

/// Nodes whose live daemon pod runs revision `hash`, most recently updated first
/// (newest pod creation time first, then by name): the order a rollback walks.
pub fn rollback_order(rows: &[NodeCoverage], hash: &str) -> Vec<String> {
    let mut at_revision: Vec<(Option<jiff::Timestamp>, &str)> = rows
        .iter()
        .filter_map(|row| {
            row.pods
                .iter()
                .filter(|p| !p.terminating && p.hash.as_deref() == Some(hash))
                .map(|p| p.created)
                .max()
                .map(|created| (created, row.node.as_str()))
        })
        .collect();
    at_revision.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    at_revision
        .into_iter()
        .map(|(_, node)| node.to_owned())
        .collect()
}

#[cfg(test)]
mod tests;
