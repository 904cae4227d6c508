//! The client-side rollout of an OnDelete DaemonSet: which nodes to move to the
//! current revision and in what order (canaries, then pool/zone groups, then
//! name), which nodes are skipped and why, the next batch, the rollback order, and
//! (in [`gate`]) whether a batch may be followed by the next.
//!
//! Pure: reads coverage rows and nodes, returns plans. It never deletes pods; the
//! operations layer does, with a UID precondition.

mod gate;

use std::collections::{BTreeSet, BinaryHeap, HashMap};

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

impl PlanOptions {
    /// Whether a node's facts under these options need its labels beyond
    /// the default pool and zone keys (a canary selector, other group keys):
    /// then a row cache that keeps Ready, cordoned, pool and zone cannot
    /// answer for the node.
    pub fn needs_node_labels(&self) -> bool {
        self.canary_selector.is_some() || !self.group_label_keys.iter().eq(default_group_keys())
    }
}

/// The default group label keys: pool first, then zone.
fn default_group_keys() -> impl Iterator<Item = &'static str> {
    POOL_LABEL_KEYS
        .iter()
        .chain(ZONE_LABEL_KEYS.iter())
        .copied()
}

/// What the plan reads about a node beside its coverage row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "four independent facts of a node, each a plain yes or no"
)]
pub struct NodeFacts<'a> {
    /// The Ready condition is `True`.
    pub ready: bool,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// A canary under the plan's options.
    pub canary: bool,
    /// The node's group label (key, value) under the plan's options.
    pub group: Option<(&'a str, &'a str)>,
    /// A control-plane node ([`is_control_plane`]): moved last, after every
    /// worker pool, so a bad revision meets the workers before the API server's nodes.
    pub control_plane: bool,
}

impl<'a> NodeFacts<'a> {
    /// The facts of `node` under `options`, read from the node.
    pub fn of(node: &'a Node, options: &'a PlanOptions) -> Self {
        Self {
            ready: node.is_ready(),
            unschedulable: node.spec.unschedulable,
            canary: is_canary(node, options),
            group: group_label(node, &options.group_label_keys),
            control_plane: is_control_plane(node),
        }
    }
}

/// The role labels kubeadm and most distributions put on control-plane nodes
/// (`master` before Kubernetes 1.20, `control-plane` since).
pub const CONTROL_PLANE_LABELS: [&str; 2] = [
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
];

/// Whether `node` carries a control-plane role label.
pub fn is_control_plane(node: &Node) -> bool {
    CONTROL_PLANE_LABELS
        .iter()
        .any(|key| node.label(key).is_some())
}

/// A coverage row and the facts of its node, learnt only when the plan
/// needs them (a lookup of the node costs more than the row).
pub trait PlanRow<'a> {
    /// The coverage row.
    fn coverage(&self) -> &'a NodeCoverage;
    /// The node's facts; `None` when the node is not known (unreadable).
    fn facts(&self) -> Option<NodeFacts<'a>>;
}

/// A row whose node's facts are already known (a row cache keeps them).
#[derive(Clone, Copy, Debug)]
pub struct KnownFacts<'a> {
    /// The coverage row.
    pub row: &'a NodeCoverage,
    /// Its node's facts (`None`: the node is not known).
    pub facts: Option<NodeFacts<'a>>,
}

impl<'a> PlanRow<'a> for KnownFacts<'a> {
    fn coverage(&self) -> &'a NodeCoverage {
        self.row
    }

    fn facts(&self) -> Option<NodeFacts<'a>> {
        self.facts
    }
}

/// A row whose node is looked up by name when its facts are needed.
struct LookedUp<'a, F> {
    row: &'a NodeCoverage,
    node_of: &'a F,
    options: &'a PlanOptions,
}

impl<'a, 'n: 'a, F: Fn(&str) -> Option<&'n Node>> PlanRow<'a> for LookedUp<'a, F> {
    fn coverage(&self) -> &'a NodeCoverage {
        self.row
    }

    fn facts(&self) -> Option<NodeFacts<'a>> {
        (self.node_of)(&self.row.node).map(|node| NodeFacts::of(node, self.options))
    }
}

/// `rows` with their nodes looked up through `node_of` when needed.
fn looked_up<'r: 'a, 'a, F>(
    rows: impl IntoIterator<Item = &'r NodeCoverage>,
    node_of: &'a F,
    options: &'a PlanOptions,
) -> impl Iterator<Item = LookedUp<'a, F>> {
    rows.into_iter().map(move |row| LookedUp {
        row,
        node_of,
        options,
    })
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
    /// A control-plane node: the plan puts it after every other node (but a
    /// node marked as a canary goes first all the same).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub control_plane: bool,
}

/// Why a node is not in the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SkipReason {
    /// The DaemonSet should not run here; a deleted pod would not come back.
    NotEligible {
        /// The node's eligibility word (`no`, or `keep` for a pod that may
        /// stay): the word the grid's ELIG column shows.
        eligibility: crate::engine::vocabulary::Eligibility,
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
    let by_name: HashMap<&str, &Node> = nodes.iter().map(|n| (n.name(), n)).collect();
    plan_rollout_with(rows, |name| by_name.get(name).copied(), options)
}

/// [`plan_rollout`] over any rows, with the nodes looked up by name (the
/// console's cache answers without a copy).
pub fn plan_rollout_with<'r, 'n>(
    rows: impl IntoIterator<Item = &'r NodeCoverage>,
    node_of: impl Fn(&str) -> Option<&'n Node>,
    options: &PlanOptions,
) -> RolloutPlan {
    plan_rows(looked_up(rows, &node_of, options), options)
}

/// [`plan_rollout`] over rows that know their nodes' facts.
pub fn plan_rows<'a, R: PlanRow<'a>>(
    rows: impl IntoIterator<Item = R>,
    options: &PlanOptions,
) -> RolloutPlan {
    let mut plan = RolloutPlan::default();
    for planned in rows {
        let row = planned.coverage();
        let facts = planned.facts();
        match skip_reason(row, facts, options.include_cordoned) {
            Some(reason) => plan.skipped.push(Skipped {
                node: row.node.to_string(),
                reason,
            }),
            None => plan.steps.push(step_of(row, facts)),
        }
    }
    plan.steps.sort_by(|a, b| {
        (
            !a.canary,
            a.control_plane && !a.canary,
            a.group.is_empty(),
            &a.group,
            &a.node,
        )
            .cmp(&(
                !b.canary,
                b.control_plane && !b.canary,
                b.group.is_empty(),
                &b.group,
                &b.node,
            ))
    });
    plan.skipped.sort_by(|a, b| a.node.cmp(&b.node));
    plan
}

fn step_of(row: &NodeCoverage, facts: Option<NodeFacts<'_>>) -> PlanStep {
    PlanStep {
        node: row.node.to_string(),
        canary: facts.is_some_and(|f| f.canary),
        group: facts
            .and_then(|f| f.group)
            .map(|(key, value)| format!("{key}={value}"))
            .unwrap_or_default(),
        pod: old_pod(row).cloned(),
        control_plane: facts.is_some_and(|f| f.control_plane),
    }
}

/// Where a step sorts in the plan, without allocating: not a canary, no
/// group, the group label (key, value) compared as `key=value`, the name.
#[derive(Clone, Copy, Debug)]
struct StepKey<'a> {
    not_canary: bool,
    /// A control-plane node that is not a canary: after every other node.
    last: bool,
    group: Option<(&'a str, &'a str)>,
    node: &'a str,
}

impl StepKey<'_> {
    fn group_bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let (key, value) = self.group.unwrap_or_default();
        let eq = self.group.map(|_| b'=');
        key.bytes().chain(eq).chain(value.bytes())
    }
}

impl Ord for StepKey<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.not_canary, self.last, self.group.is_none())
            .cmp(&(other.not_canary, other.last, other.group.is_none()))
            .then_with(|| match (self.group, other.group) {
                // The same key (the usual case): `key=a` against `key=b` is `a` against `b`.
                (Some((key, value)), Some((other_key, other_value))) if key == other_key => {
                    value.cmp(other_value)
                }
                _ => self.group_bytes().cmp(other.group_bytes()),
            })
            .then_with(|| self.node.cmp(other.node))
    }
}

impl PartialOrd for StepKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for StepKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for StepKey<'_> {}

/// Keeps the `size` smallest candidates in the max-heap `heap`.
fn keep_smallest<'a>(heap: &mut BinaryHeap<Candidate<'a>>, candidate: Candidate<'a>, size: usize) {
    if heap.len() < size {
        heap.push(candidate);
    } else if heap.peek().is_some_and(|top| candidate.key < top.key) {
        heap.pop();
        heap.push(candidate);
    }
}

/// A row that may be in the next batch, ordered by its key alone.
struct Candidate<'a> {
    key: StepKey<'a>,
    row: &'a NodeCoverage,
    facts: Option<NodeFacts<'a>>,
}

impl Ord for Candidate<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl PartialOrd for Candidate<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Candidate<'_> {}

/// The next batch of at most `size` steps, exactly as
/// `next_batch(&plan_rollout_with(rows, node_of, options), size, exclude)`
/// gives it, in one pass without building the plan: the cost of a key press
/// (`n`, the next auto-advance batch) is one look at each row, no sort, and
/// allocations only for the steps returned.
pub fn next_steps<'r, 'n>(
    rows: impl IntoIterator<Item = &'r NodeCoverage>,
    node_of: impl Fn(&str) -> Option<&'n Node>,
    options: &PlanOptions,
    size: usize,
    exclude: &BTreeSet<String>,
) -> Vec<PlanStep> {
    next_steps_of(looked_up(rows, &node_of, options), options, size, exclude)
}

/// [`next_steps`] over rows that know their nodes' facts.
pub fn next_steps_of<'a, R: PlanRow<'a>>(
    rows: impl IntoIterator<Item = R>,
    options: &PlanOptions,
    size: usize,
    exclude: &BTreeSet<String>,
) -> Vec<PlanStep> {
    if size == 0 {
        return Vec::new();
    }
    // The `size` smallest keys so far (a max-heap), canaries and others apart:
    // while a canary remains open, a batch holds only canaries.
    let mut canaries: BinaryHeap<Candidate<'_>> = BinaryHeap::new();
    let mut others: BinaryHeap<Candidate<'_>> = BinaryHeap::new();
    for planned in rows {
        let row = planned.coverage();
        if !may_step(row) {
            continue;
        }
        let facts = planned.facts();
        let canary = facts.is_some_and(|f| f.canary);
        if !canary && !canaries.is_empty() {
            continue;
        }
        let key = StepKey {
            not_canary: !canary,
            last: !canary && facts.is_some_and(|f| f.control_plane),
            group: facts.and_then(|f| f.group),
            node: row.node.as_str(),
        };
        let heap = if canary { &mut canaries } else { &mut others };
        // A row that would not enter the batch is not looked at further.
        let full = heap.len() >= size;
        if full && heap.peek().is_some_and(|top| key >= top.key) {
            continue;
        }
        if !node_allows(row, facts, options.include_cordoned) || exclude.contains(row.node.as_str())
        {
            continue;
        }
        keep_smallest(heap, Candidate { key, row, facts }, size);
    }
    let chosen = if canaries.is_empty() {
        others
    } else {
        canaries
    };
    chosen
        .into_sorted_vec()
        .into_iter()
        .map(|c| step_of(c.row, c.facts))
        .collect()
}

/// The head of a plan: its first steps and first skipped nodes, with how
/// many of each the whole plan holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanHead {
    /// The plan's first `limit` steps and first `limit` skipped nodes, in
    /// the plan's order.
    pub plan: RolloutPlan,
    /// Steps in the whole plan.
    pub steps: usize,
    /// Skipped nodes in the whole plan.
    pub skipped: usize,
}

/// The first `limit` steps and skipped nodes of
/// `plan_rollout_with(rows, node_of, options)` and its sizes, in one pass:
/// what a view that shows a page of the plan needs, at the cost of a look at
/// each row and allocations only for what it shows.
pub fn plan_head<'r, 'n>(
    rows: impl IntoIterator<Item = &'r NodeCoverage>,
    node_of: impl Fn(&str) -> Option<&'n Node>,
    options: &PlanOptions,
    limit: usize,
) -> PlanHead {
    plan_head_of(looked_up(rows, &node_of, options), options, limit)
}

/// [`plan_head`] over rows that know their nodes' facts.
pub fn plan_head_of<'a, R: PlanRow<'a>>(
    rows: impl IntoIterator<Item = R>,
    options: &PlanOptions,
    limit: usize,
) -> PlanHead {
    let mut head = PlanHead::default();
    let mut steps: BinaryHeap<Candidate<'_>> = BinaryHeap::new();
    // Skipped nodes by name, with the facts their reason needs (none when
    // the row alone gives the reason).
    let mut skipped: BinaryHeap<Candidate<'_>> = BinaryHeap::new();
    for planned in rows {
        let row = planned.coverage();
        let facts = may_step(row).then(|| planned.facts());
        let Some(facts) = facts.filter(|f| node_allows(row, *f, options.include_cordoned)) else {
            head.skipped += 1;
            let key = StepKey {
                not_canary: false,
                last: false,
                group: None,
                node: row.node.as_str(),
            };
            keep_smallest(
                &mut skipped,
                Candidate {
                    key,
                    row,
                    facts: facts.flatten(),
                },
                limit,
            );
            continue;
        };
        head.steps += 1;
        let canary = facts.is_some_and(|f| f.canary);
        let key = StepKey {
            not_canary: !canary,
            last: !canary && facts.is_some_and(|f| f.control_plane),
            group: facts.and_then(|f| f.group),
            node: row.node.as_str(),
        };
        keep_smallest(&mut steps, Candidate { key, row, facts }, limit);
    }
    head.plan.steps = steps
        .into_sorted_vec()
        .into_iter()
        .map(|c| step_of(c.row, c.facts))
        .collect();
    head.plan.skipped = skipped
        .into_sorted_vec()
        .into_iter()
        .filter_map(|c| {
            let reason = skip_reason(c.row, c.facts, options.include_cordoned)?;
            Some(Skipped {
                node: c.key.node.to_owned(),
                reason,
            })
        })
        .collect();
    head
}

/// Whether the row, on its own, may be a step (eligible, an old live pod):
/// the node is looked up only when it may.
fn may_step(row: &NodeCoverage) -> bool {
    row.verdict.should_run && old_pod(row).is_some()
}

/// Whether the node lets a row that [`may_step`] be a step (not cordoned,
/// Ready; unknown when the nodes cannot be read): with `may_step`, exactly
/// when [`skip_reason`] gives none.
fn node_allows(row: &NodeCoverage, facts: Option<NodeFacts<'_>>, include_cordoned: bool) -> bool {
    match facts {
        Some(f) if f.unschedulable && !include_cordoned => false,
        Some(f) => f.ready,
        None => row.verdict.is_unknown(),
    }
}

/// Why the plan leaves `row` out, if it does (see [`plan_rows`] for the
/// order the reasons are checked in): the one decision the plan, `status`
/// and the grid's WHY read.
pub fn skip_reason(
    row: &NodeCoverage,
    facts: Option<NodeFacts<'_>>,
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
        let has_pod = row.primary().is_some();
        return Some(SkipReason::NotEligible {
            eligibility: crate::engine::vocabulary::Eligibility::of(&row.verdict, has_pod),
            message,
        });
    }
    let mut live = row.pods.iter().filter(|p| !p.terminating).peekable();
    if live.peek().is_none() {
        return Some(SkipReason::NoDaemonPod);
    }
    if old_pod(row).is_none() {
        return Some(SkipReason::AlreadyUpdated);
    }
    match facts {
        Some(f) if f.unschedulable && !include_cordoned => Some(SkipReason::Cordoned),
        Some(f) if f.ready => None,
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

/// The first of `keys` the node carries, with its value.
fn group_label<'a>(node: &'a Node, keys: &'a [String]) -> Option<(&'a str, &'a str)> {
    keys.iter()
        .find_map(|k| node.label(k).map(|v| (k.as_str(), v)))
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
pub fn rollback_order<'r>(
    rows: impl IntoIterator<Item = &'r NodeCoverage>,
    hash: &str,
) -> Vec<String> {
    let mut at_revision: Vec<(Option<crate::model::Stamp>, &str)> = rows
        .into_iter()
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
