//! Per-node results of the engine, cached: one [`NodeRow`] per node, holding
//! everything the grid sorts, filters, groups and shows, and what the
//! operations decide from. A row is recomputed only when its node, its pods or
//! their events changed (or, for all rows, when the DaemonSet or its revisions
//! did). Kept by the console and by the headless follower
//! (`ops::follow`), so both decide from the same rows. Reads the
//! cache; no I/O, no clock.

use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;

pub mod fit;
pub mod kubelets;
pub mod source;
mod store;

use crate::cluster::cache::{Cache, Changes};
use crate::cluster::status::{StreamKind, StreamState};
use crate::cluster::store::ObjectKey;
use crate::engine::blockers::{Blocker, BlockerTally, Share};
use crate::engine::coverage::{
    NodeCoverage, PodCoverage, min_ready_seconds, named_coverage, node_coverage,
};
use crate::engine::eligibility::NodeVerdict;
use crate::engine::ownership::is_controlled_by;
use crate::engine::revision::RevisionIndex;
use crate::engine::rollout::{NodeFacts, PlanOptions};
use crate::model::{ControllerRevision, DaemonSet, Event, Node, Target};
use store::{RowSet, Strings};

/// Labels that name a node's pool, most specific first (shared with the rollout plan).
pub const POOL_LABELS: &[&str] = &crate::engine::rollout::POOL_LABEL_KEYS;

/// Labels that name a node's zone.
pub const ZONE_LABELS: &[&str] = &crate::engine::rollout::ZONE_LABEL_KEYS;

/// The node's standing against the DaemonSet, worst first (the sort order of "state").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowState {
    /// Should run a daemon pod but has none.
    Missing,
    /// The pod is failing (crash loop, image pull error, failed phase).
    Failing,
    /// The pod exists but is not ready (starting, or unready).
    NotReady,
    /// A pod runs where none should be placed (upstream's `numberMisscheduled`,
    /// [`NodeCoverage::is_misscheduled`]), whether or not it may keep running.
    Misscheduled,
    /// Ready on an old revision.
    Old,
    /// Ready on the current revision.
    Updated,
    /// Not eligible and no pod: nothing to do.
    NotEligible,
}

impl RowState {
    /// The word shown in group headings.
    pub fn label(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Failing => "failing",
            Self::NotReady => "not ready",
            Self::Misscheduled => "misscheduled",
            Self::Old => "old revision",
            Self::Updated => "updated",
            Self::NotEligible => "not eligible",
        }
    }
}

/// The latest event about the node or its pod, in short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSummary {
    /// `BackOff`, `FailedScheduling`, ...
    pub reason: String,
    /// The message.
    pub message: String,
    /// When it last happened.
    pub at: Option<jiff::Timestamp>,
    /// Type `Warning`.
    pub warning: bool,
}

/// Everything the grid needs about one node (raw API text; sanitised when shown).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRow {
    /// The engine's answer: verdict and pods on the node.
    pub coverage: NodeCoverage,
    /// Worst-first classification.
    pub state: RowState,
    /// Node Ready condition: `Some(true)` Ready, `Some(false)` NotReady/Unknown, `None` unreported.
    pub node_ready: Option<bool>,
    /// `spec.unschedulable`.
    pub cordoned: bool,
    /// Taints as `key=value:Effect` (shared copies; most nodes have none).
    pub taints: Box<[Arc<str>]>,
    /// Pool label value (a shared copy).
    pub pool: Option<Arc<str>>,
    /// Zone label value (a shared copy).
    pub zone: Option<Arc<str>>,
    /// The key of the node's rollout group label: the pool's, else the
    /// zone's (the value is `pool`, else `zone`).
    pub group_key: Option<&'static str>,
    /// A control-plane node (moved last by the plan).
    pub control_plane: bool,
    /// The node's kubelet `(major, minor)`, when it reports a version.
    pub kubelet_minor: Option<kubelets::KubeletMinor>,
    /// The latest event about the node or its pod (boxed: most rows have none).
    pub event: Option<Box<EventSummary>>,
    /// Preflight: will the pod of the revision the rollout moves to fit on
    /// this node, and whom would it preempt ([`fit::node_fit`], the same
    /// answer `status` and `explain` give). `fits` false: nothing can make
    /// room (`reasons` say why, each with a stable `code`); `fits` true with
    /// `preempts`: it fits once those pods are gone; `fits` true and no
    /// `preempts`: it fits as is. `None` when there is nothing to ask (the
    /// node runs the update revision, or is not eligible) or usage is
    /// unknown (pods in all namespaces cannot be listed, or not yet).
    /// Boxed: most rows have none once a rollout is done.
    pub fit: Option<Box<crate::engine::fit::Fit>>,
}

impl NodeRow {
    /// The node's name.
    pub fn name(&self) -> &str {
        &self.coverage.node
    }

    /// The pod shown in the row (the oldest non-terminal pod).
    pub fn pod(&self) -> Option<&PodCoverage> {
        self.coverage.pods.first()
    }

    /// The problem code of the row's pod while it fails (`unschedulable`,
    /// `evicted`, `rejected`, `sandboxFailed`, `crashLoop`, …: the one
    /// classification, [`crate::engine::health::ProblemCode`]); its reason
    /// is the pod's `problem`, its words the pod's `failure_detail`.
    pub fn problem_code(&self) -> Option<crate::engine::health::ProblemCode> {
        self.pod()
            .and_then(|pod| crate::engine::health::pod_health(pod).code())
    }

    /// What the rollout plan reads about the node, from the row alone:
    /// valid for `options` that do not need the node's labels
    /// ([`PlanOptions::needs_node_labels`]). `None` for a node known only
    /// from its pods (nodes unreadable), as a plan over the nodes has it.
    pub fn plan_facts<'a>(&'a self, options: &PlanOptions) -> Option<NodeFacts<'a>> {
        if self.coverage.verdict.is_unknown() {
            return None;
        }
        Some(NodeFacts {
            ready: self.node_ready == Some(true),
            unschedulable: self.cordoned,
            canary: options.canaries.contains(self.name()),
            group: self
                .group_key
                .zip(self.pool.as_deref().or(self.zone.as_deref())),
            control_plane: self.control_plane,
        })
    }

    /// The fields any sort order or grouping reads.
    fn order_key(
        &self,
    ) -> (
        RowState,
        Option<i64>,
        Option<crate::model::Stamp>,
        Option<&str>,
        Option<&str>,
    ) {
        let pod = self.pod();
        (
            self.state,
            pod.and_then(|p| p.revision),
            pod.and_then(|p| p.created),
            self.pool.as_deref(),
            self.zone.as_deref(),
        )
    }

    /// Computes the row for `node` from the cache and the engine.
    pub fn compute(
        node: &Node,
        ds: &DaemonSet,
        revisions: &RevisionIndex,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Self {
        let target = fit::FitTarget::of(ds, cache.pods());
        let mut strings = Strings::default();
        Self::compute_shared(
            node,
            ds,
            revisions,
            cache,
            now,
            target.as_ref(),
            &mut strings,
        )
    }

    /// [`NodeRow::compute`], with repeated strings taken from `strings`.
    fn compute_shared(
        node: &Node,
        ds: &DaemonSet,
        revisions: &RevisionIndex,
        cache: &Cache,
        now: jiff::Timestamp,
        fit_target: Option<&fit::FitTarget>,
        strings: &mut Strings,
    ) -> Self {
        // Only pods the DaemonSet controls count (upstream getDaemonPods adopts
        // by ownerReference; a selector match alone is not ownership).
        let mut pods = cache.pods_on(node.name());
        pods.retain(|pod| is_controlled_by(pod, ds));
        let mut coverage = node_coverage(node, ds, &pods, revisions, now);
        note_sandbox_failures(&mut coverage, cache, ds.metadata.namespace.as_deref());
        share_pod_strings(&mut coverage, strings);
        let event = latest_event(cache, node.name(), &pods);
        let usage = cache.usage_known().then(|| cache.usage_on(node.name()));
        let fit = fit_target
            .and_then(|target| fit::node_fit(target, node, &coverage, usage))
            .map(Box::new);
        let pool = first_label(node, POOL_LABELS);
        let zone = first_label(node, ZONE_LABELS);
        Self {
            state: classify(&coverage),
            node_ready: node.condition("Ready").map(|c| c.status == "True"),
            cordoned: node.spec.unschedulable,
            taints: node
                .spec
                .taints
                .iter()
                .map(|taint| strings.get(&grid_taint(taint)))
                .collect(),
            pool: pool.map(|(_, value)| strings.get(value)),
            zone: zone.map(|(_, value)| strings.get(value)),
            group_key: pool.or(zone).map(|(key, _)| key),
            control_plane: crate::engine::rollout::is_control_plane(node),
            kubelet_minor: node
                .status
                .node_info
                .kubelet_version
                .as_deref()
                .and_then(crate::ops::status_kubelets::minor_numbers),
            event,
            fit,
            coverage,
        }
    }

    /// The row of a node the user may not read (nodes are forbidden), known
    /// only from the daemon pods bound to it: eligibility unknown, no node
    /// state. `None` when no pod of the DaemonSet is bound there.
    pub fn compute_unreadable(
        node: &str,
        ds: &DaemonSet,
        revisions: &RevisionIndex,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Option<Self> {
        Self::compute_unreadable_shared(node, ds, revisions, cache, now, &mut Strings::default())
    }

    /// [`NodeRow::compute_unreadable`], with repeated strings taken from `strings`.
    fn compute_unreadable_shared(
        node: &str,
        ds: &DaemonSet,
        revisions: &RevisionIndex,
        cache: &Cache,
        now: jiff::Timestamp,
        strings: &mut Strings,
    ) -> Option<Self> {
        let mut pods = cache.pods_on(node);
        pods.retain(|pod| is_controlled_by(pod, ds));
        if pods.is_empty() {
            return None;
        }
        let verdict = NodeVerdict::unknown(crate::cluster::access::NODES_UNREADABLE);
        let mut coverage = named_coverage(node, verdict, ds, &pods, revisions, now);
        note_sandbox_failures(&mut coverage, cache, ds.metadata.namespace.as_deref());
        share_pod_strings(&mut coverage, strings);
        Some(Self {
            state: classify(&coverage),
            node_ready: None,
            cordoned: false,
            taints: Box::default(),
            pool: None,
            zone: None,
            group_key: None,
            control_plane: false,
            kubelet_minor: None,
            event: latest_event(cache, node, &pods),
            fit: None,
            coverage,
        })
    }
}

/// Below this many nodes every row is computed on one thread: the threads
/// would cost more than they save.
pub(crate) const PARALLEL_FLOOR: usize = 4096;

/// Every row of `nodes`, computed on every core the machine has when there
/// are many (a full recompute at 65,000 nodes took ~300 ms on one, the last
/// step of the console's load). The other threads hand their rows over in
/// small batches as they go, taken in between the calling thread's own: a
/// whole part held back until the end (5 MB at 65,000 nodes) stayed in the
/// process's RSS after it was freed. Each thread shares repeated strings
/// through its own table; the calling thread's is `strings`.
fn compute_all(
    nodes: &[&Node],
    strings: &mut Strings,
    compute: impl Fn(&Node, &mut Strings) -> NodeRow + Sync,
) -> RowSet {
    const BATCH: usize = 256;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if threads < 2 || nodes.len() < PARALLEL_FLOOR {
        return nodes.iter().map(|node| compute(node, strings)).collect();
    }
    let mut parts = nodes.chunks(nodes.len().div_ceil(threads));
    let own = parts.next().unwrap_or_default();
    let compute = &compute;
    let mut rows = RowSet::with_capacity(nodes.len());
    std::thread::scope(|scope| {
        let (batches, arrived) = std::sync::mpsc::channel::<Vec<NodeRow>>();
        for part in parts {
            let batches = batches.clone();
            scope.spawn(move || {
                let mut own_strings = Strings::default();
                for chunk in part.chunks(BATCH) {
                    let batch = chunk.iter().map(|n| compute(n, &mut own_strings)).collect();
                    if batches.send(batch).is_err() {
                        return;
                    }
                }
            });
        }
        drop(batches);
        for chunk in own.chunks(BATCH) {
            for node in chunk {
                rows.insert(compute(node, strings));
            }
            for row in arrived.try_iter().flatten() {
                rows.insert(row);
            }
        }
        // A thread that panicked ends the iteration; the scope re-raises it.
        for row in arrived.into_iter().flatten() {
            rows.insert(row);
        }
    });
    rows
}

/// Marks the pods whose latest event says the kubelet cannot create their
/// sandbox ([`crate::engine::health::note_sandbox_failure`]): only the
/// events tell, and only the watch has them.
fn note_sandbox_failures(coverage: &mut NodeCoverage, cache: &Cache, namespace: Option<&str>) {
    let Some(namespace) = namespace else {
        return;
    };
    for pod in &mut coverage.pods {
        let key = format!("{namespace}/{}", pod.name);
        let latest = cache.pod_events(&key).into_iter().next();
        let latest = latest.map(|e| {
            (
                e.reason.as_deref().unwrap_or_default(),
                e.message.as_deref().unwrap_or_default(),
            )
        });
        crate::engine::health::note_sandbox_failure(pod, latest);
    }
}

/// Replaces the pods' repeated strings (hash, phase, problem) by shared copies.
fn share_pod_strings(coverage: &mut NodeCoverage, strings: &mut Strings) {
    for pod in &mut coverage.pods {
        strings.share(&mut pod.hash);
        strings.share(&mut pod.phase);
        strings.share(&mut pod.problem);
    }
}

/// The latest event about the node or one of its daemon pods.
fn latest_event(
    cache: &Cache,
    node: &str,
    pods: &[&crate::model::Pod],
) -> Option<Box<EventSummary>> {
    let pod_events = pods
        .iter()
        .flat_map(|p| cache.pod_events(&format!("{}/{}", p.namespace(), p.name())));
    pod_events
        .chain(cache.node_events(node))
        .max_by_key(|e| e.last_seen())
        .map(|event| Box::new(summarize_event(event)))
}

/// Prefixes of the well-known taint keys, dropped in the grid so the part that
/// matters fits (`unreachable:NoExecute`, `control-plane:NoSchedule`); the detail
/// pane shows taints whole.
const WELL_KNOWN_TAINT_PREFIXES: [&str; 2] = ["node.kubernetes.io/", "node-role.kubernetes.io/"];

/// A taint as the grid shows it: as kubectl writes it
/// ([`crate::engine::taints::format_taint`]) without a well-known key prefix.
pub fn grid_taint(taint: &crate::model::Taint) -> String {
    let full = crate::engine::taints::format_taint(taint);
    WELL_KNOWN_TAINT_PREFIXES
        .iter()
        .find_map(|prefix| full.strip_prefix(prefix))
        .map_or_else(|| full.clone(), str::to_owned)
}

/// The first of `keys` the node carries, with its value.
fn first_label<'n>(node: &'n Node, keys: &[&'static str]) -> Option<(&'static str, &'n str)> {
    keys.iter()
        .find_map(|k| node.label(k).map(|value| (*k, value)))
}

fn summarize_event(event: &Event) -> EventSummary {
    EventSummary {
        reason: event.reason.clone().unwrap_or_default(),
        message: event.message.clone().unwrap_or_default(),
        at: event.last_seen(),
        warning: event.type_.as_deref() == Some("Warning"),
    }
}

/// Classifies a node's coverage, worst first.
pub fn classify(coverage: &NodeCoverage) -> RowState {
    let verdict = &coverage.verdict;
    let Some(pod) = coverage.pods.first() else {
        return if verdict.should_run {
            RowState::Missing
        } else {
            RowState::NotEligible
        };
    };
    if crate::engine::health::pod_health(pod).is_failing() {
        RowState::Failing
    } else if coverage.is_misscheduled() {
        RowState::Misscheduled
    } else if !pod.ready {
        RowState::NotReady
    } else if pod.updated {
        RowState::Updated
    } else {
        RowState::Old
    }
}

/// When `row` changes by the clock alone: its earliest Ready pod that turns
/// available once `min_ready` seconds pass.
fn turns_available_at(
    row: &NodeRow,
    min_ready: i32,
) -> Option<Reverse<(jiff::Timestamp, ObjectKey)>> {
    let at = row
        .coverage
        .pods
        .iter()
        .filter_map(|pod| pod.turns_available_at(min_ready))
        .min()?;
    Some(Reverse((at, row.coverage.node.clone())))
}

/// Whether a stream the rows are made of is still getting its first list
/// (a stream that failed, forbidden or unreachable, holds nothing back: the
/// rows show what the other streams have).
fn first_lists_pending(cache: &Cache) -> bool {
    let streams = cache.streams();
    [
        StreamKind::Nodes,
        StreamKind::DaemonSets,
        StreamKind::Pods,
        StreamKind::Revisions,
    ]
    .iter()
    .any(|kind| {
        streams
            .get(kind)
            .is_some_and(|s| matches!(s.state(), StreamState::Loading))
    })
}

/// The rows of the target DaemonSet, kept in step with the cache.
#[derive(Default)]
pub struct RowCache {
    rows: RowSet,
    /// The shared copies of the strings the rows repeat.
    strings: Strings,
    /// Node names in natural order, rebuilt when nodes come or go.
    name_order: Vec<compact_str::CompactString>,
    revisions: Option<RevisionIndex>,
    /// What every row's fit asks: the update revision's pod (made with the
    /// revisions, from the DaemonSet's template).
    fit_target: Option<fit::FitTarget>,
    target: Option<Target>,
    /// The rollout blocker's inputs over the rows, kept with them.
    tally: BlockerTally,
    /// The blocker, computed on first use after the tally changed or a
    /// starting holder ran out of time.
    blocker: OnceCell<Blocker>,
    /// The kubelet minors of the DaemonSet's nodes, kept with the rows.
    kubelets: kubelets::KubeletTally,
    /// Their skew, worked out on first use after the tally changed.
    kubelet_skew: OnceCell<Option<crate::ops::status_kubelets::KubeletSkew>>,
    /// The instant of the last refresh: the rows' and the blocker's `now`.
    at: jiff::Timestamp,
    /// Changes arrived while first lists were pending: recompute every row.
    deferred: bool,
    /// Rows that change with no event: nodes whose Ready pod turns available
    /// once `minReadySeconds` pass (upstream requeues the DaemonSet for
    /// then), earliest first. An entry may be stale (its row recomputed
    /// since): recomputing it again is harmless.
    turning_available: BinaryHeap<Reverse<(jiff::Timestamp, ObjectKey)>>,
}

/// What a refresh changed, for deciding whether the sorted index is stale.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowChanges {
    /// Rows were added or removed, or everything was recomputed.
    pub membership: bool,
    /// Nodes whose row changed.
    pub nodes: HashSet<ObjectKey>,
    /// A changed row moved in some sort order or group (state, revision, age, pool, zone).
    pub reorder: bool,
}

impl std::fmt::Debug for RowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowCache")
            .field("rows", &self.rows.len())
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl RowCache {
    /// The row of a node.
    pub fn get(&self, node: &str) -> Option<&NodeRow> {
        self.rows.get(node)
    }

    /// All rows, unordered.
    pub fn iter(&self) -> impl Iterator<Item = &NodeRow> {
        self.rows.values()
    }

    /// The rows in natural name order.
    pub fn in_name_order(&self) -> impl Iterator<Item = &NodeRow> {
        self.name_order
            .iter()
            .filter_map(|name| self.rows.get(name))
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Why the rollout of `ds` (the target) is (not) moving, before the stored
    /// pause is taken into account: computed once per change of its inputs,
    /// at the cost of the nodes that block.
    pub fn blocker(&self, ds: &DaemonSet) -> &Blocker {
        self.blocker.get_or_init(|| self.tally.blocker(ds, self.at))
    }

    /// When the DaemonSet's nodes run more than one kubelet minor: how many
    /// nodes run each, and which lag behind the newest (as `status` says it).
    pub fn kubelet_skew(&self) -> Option<&crate::ops::status_kubelets::KubeletSkew> {
        self.kubelet_skew
            .get_or_init(|| self.kubelets.skew(self.rows.values()))
            .as_ref()
    }

    /// The revision index of the target (after the first refresh with its DaemonSet).
    pub fn revisions(&self) -> Option<&RevisionIndex> {
        self.revisions.as_ref()
    }

    /// When a row or the blocker next changes by the clock alone (a pod
    /// turning available, a starting pod running out of time): the loops
    /// that keep the rows refresh then, with or without a change.
    pub fn next_due(&self) -> Option<jiff::Timestamp> {
        let row = self.turning_available.peek().map(|Reverse((at, _))| *at);
        let blocker = self.tally.next_deadline(self.at);
        row.into_iter().chain(blocker).min()
    }

    /// Whether a row or the blocker changed by the clock alone by `now`: a refresh is due
    /// even with no change from the cache.
    pub fn due(&self, now: jiff::Timestamp) -> bool {
        self.next_due().is_some_and(|at| at < now)
    }

    /// Brings the rows up to date with `changes` for the DaemonSet `target`;
    /// recomputes only dirty nodes unless everything changed.
    pub fn refresh(
        &mut self,
        cache: &Cache,
        target: Option<&Target>,
        changes: &Changes,
        now: jiff::Timestamp,
    ) -> RowChanges {
        if self
            .tally
            .next_deadline(self.at)
            .is_some_and(|at| at <= now)
        {
            self.blocker = OnceCell::new();
        }
        let out = self.refresh_rows(cache, target, changes, now);
        self.at = now;
        if out.membership {
            self.update_name_order();
        }
        out
    }

    /// Re-sorts the names when the set of nodes changed (a full recompute with
    /// the same nodes keeps the order it has).
    fn update_name_order(&mut self) {
        let same = self.name_order.len() == self.rows.len()
            && self.name_order.iter().all(|n| self.rows.contains(n));
        if same {
            return;
        }
        self.name_order = self.rows.values().map(|row| row.name().into()).collect();
        self.name_order.sort_by_cached_key(|name| natural_key(name));
    }

    fn refresh_rows(
        &mut self,
        cache: &Cache,
        target: Option<&Target>,
        changes: &Changes,
        now: jiff::Timestamp,
    ) -> RowChanges {
        let retarget = self.target.as_ref() != target;
        if first_lists_pending(cache) {
            // The grid shows "loading" until then: compute every row once,
            // when the lists are in, not once per list that completes.
            self.deferred = true;
            let membership = retarget && !self.rows.is_empty();
            if retarget {
                *self = Self {
                    deferred: true,
                    ..Self::default()
                };
            }
            return RowChanges {
                membership,
                ..RowChanges::default()
            };
        }
        // Taken whether or not this change set recomputes everything anyway:
        // left set, it made the next one-node change recompute every row.
        let deferred = std::mem::take(&mut self.deferred);
        let all_nodes = changes.all_nodes || deferred;
        let ds = target.and_then(|key| cache.daemonset(key));
        let Some(ds) = ds else {
            let membership = !self.rows.is_empty() || retarget;
            *self = Self {
                target: target.cloned(),
                ..Self::default()
            };
            return RowChanges {
                membership,
                ..RowChanges::default()
            };
        };
        if retarget || all_nodes || self.revisions.is_none() {
            let revisions: Vec<ControllerRevision> = cache.revisions().cloned().collect();
            let index = RevisionIndex::new(ds, &revisions);
            // The template (and so the demand) changes only with the spec,
            // which recomputes every row: the target is made here, once.
            self.fit_target = fit::FitTarget::of(ds, cache.pods());
            let fit_target = self.fit_target.as_ref();
            let strings = &mut self.strings;
            self.rows = if cache.forbidden(StreamKind::Nodes) {
                cache
                    .pod_node_names()
                    .filter_map(|name| {
                        NodeRow::compute_unreadable_shared(name, ds, &index, cache, now, strings)
                    })
                    .collect()
            } else {
                let nodes: Vec<&Node> = cache.nodes().collect();
                compute_all(&nodes, strings, |node, strings| {
                    NodeRow::compute_shared(node, ds, &index, cache, now, fit_target, strings)
                })
            };
            self.revisions = Some(index);
            self.target = target.cloned();
            self.tally = BlockerTally::of(self.rows.values().map(|r| (&r.coverage, r.node_ready)));
            self.blocker = OnceCell::new();
            self.kubelets = kubelets::KubeletTally::of(self.rows.values());
            self.kubelet_skew = OnceCell::new();
            let min_ready = min_ready_seconds(ds);
            self.turning_available = self
                .rows
                .values()
                .filter_map(|row| turns_available_at(row, min_ready))
                .collect();
            return RowChanges {
                membership: true,
                ..RowChanges::default()
            };
        }
        let mut due = Vec::new();
        while let Some(Reverse((at, _))) = self.turning_available.peek()
            && *at < now
        {
            if let Some(Reverse((_, node))) = self.turning_available.pop()
                && !changes.nodes.contains(&node)
            {
                due.push(node);
            }
        }
        self.refresh_nodes(cache, ds, changes.nodes.iter().chain(&due), now)
    }

    fn refresh_nodes<'n>(
        &mut self,
        cache: &Cache,
        ds: &DaemonSet,
        nodes: impl Iterator<Item = &'n ObjectKey>,
        now: jiff::Timestamp,
    ) -> RowChanges {
        let mut out = RowChanges::default();
        let Some(index) = self.revisions.as_ref() else {
            return out;
        };
        let unreadable = cache.forbidden(StreamKind::Nodes);
        let min_ready = min_ready_seconds(ds);
        let fit_target = self.fit_target.as_ref();
        let strings = &mut self.strings;
        for name in nodes {
            let row = match cache.node(name) {
                Some(node) => Some(NodeRow::compute_shared(
                    node, ds, index, cache, now, fit_target, strings,
                )),
                None if unreadable => {
                    NodeRow::compute_unreadable_shared(name, ds, index, cache, now, strings)
                }
                None => None,
            };
            match row {
                Some(row) => {
                    self.turning_available
                        .extend(turns_available_at(&row, min_ready));
                    let old = self.rows.insert(row);
                    let Some(new) = self.rows.get(name) else {
                        continue;
                    };
                    let share = Share::of(&new.coverage, new.node_ready);
                    if old.as_ref().map(NodeRow::counted_kubelet) != Some(new.counted_kubelet()) {
                        if let Some(old) = &old {
                            self.kubelets.remove(old);
                        }
                        self.kubelets.add(new);
                        self.kubelet_skew = OnceCell::new();
                    }
                    match old {
                        None => {
                            self.tally.add(name, share);
                            self.blocker = OnceCell::new();
                            out.membership = true;
                        }
                        // A change the row does not show (a label no column
                        // reads, a heartbeat): nothing to redo.
                        Some(old) if &old == new => {}
                        Some(old) => {
                            let old_share = Share::of(&old.coverage, old.node_ready);
                            if old_share != share {
                                self.tally.remove(name, &old_share);
                                self.tally.add(name, share);
                                self.blocker = OnceCell::new();
                            }
                            out.nodes.insert(name.clone());
                            out.reorder |= new.order_key() != old.order_key();
                        }
                    }
                }
                None => {
                    if let Some(old) = self.rows.remove(name) {
                        self.kubelets.remove(&old);
                        self.kubelet_skew = OnceCell::new();
                        self.tally
                            .remove(name, &Share::of(&old.coverage, old.node_ready));
                        self.blocker = OnceCell::new();
                        out.membership = true;
                    }
                }
            }
        }
        out
    }
}

/// The row cache hands its rows to the operations as they are.
impl source::RowSource for RowCache {
    fn row(&self, node: &str) -> Option<&NodeCoverage> {
        self.get(node).map(|row| &row.coverage)
    }

    fn all(&self) -> Box<dyn Iterator<Item = &NodeCoverage> + '_> {
        Box::new(self.iter().map(|row| &row.coverage))
    }

    fn index(&self) -> Option<&RevisionIndex> {
        self.revisions()
    }

    fn with_facts<'s>(
        &'s self,
        options: &'s PlanOptions,
    ) -> Option<Box<dyn Iterator<Item = crate::engine::rollout::KnownFacts<'s>> + 's>> {
        if options.needs_node_labels() {
            return None;
        }
        Some(Box::new(self.iter().map(|row| {
            crate::engine::rollout::KnownFacts {
                row: &row.coverage,
                facts: row.plan_facts(options),
            }
        })))
    }
}

/// A key whose byte order is the natural order of names: every run of digits
/// is left-padded with zeros to 20 digits (`node-2` < `node-10`).
pub fn natural_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len() + 16);
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        push_digits(&mut key, &mut digits);
        key.push(c);
    }
    push_digits(&mut key, &mut digits);
    key
}

fn push_digits(key: &mut String, digits: &mut String) {
    if digits.is_empty() {
        return;
    }
    let significant = digits.trim_start_matches('0');
    for _ in significant.len()..20 {
        key.push('0');
    }
    key.push_str(significant);
    digits.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Taint;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint::new(key, value.unwrap_or_default(), effect)
    }

    #[test]
    fn grid_taint_drops_only_well_known_prefixes() {
        let cases = [
            (
                taint("node.kubernetes.io/unreachable", None, "NoExecute"),
                "unreachable:NoExecute",
            ),
            (
                taint("node-role.kubernetes.io/control-plane", None, "NoSchedule"),
                "control-plane:NoSchedule",
            ),
            (
                taint("dedicated", Some("gpu"), "NoSchedule"),
                "dedicated=gpu:NoSchedule",
            ),
            (
                taint("example.com/node.kubernetes.io/x", None, "NoSchedule"),
                "example.com/node.kubernetes.io/x:NoSchedule",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(grid_taint(&input), expected);
        }
    }
}
