//! One consistent view of a DaemonSet and everything the operations decide
//! from: its nodes, its pods (only those it controls), its ControllerRevisions
//! and the durable rollout state; loaded by listing (one-shot commands) or
//! copied out of the console's watch cache. Derives the engine's coverage rows
//! and rollout plan from it; decides nothing itself. Kinds the user may not
//! read (403) are recorded, not fatal: without nodes, the rows come from the
//! pods' node names with eligibility unknown.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use kube::api::{Api, ListParams};

use crate::cluster::request::{ListProgress, collection_url, list_all};

use crate::cluster::access::NODES_UNREADABLE;
use crate::cluster::cache::Cache;
use crate::cluster::status::{StreamKind, still_loading};
use crate::cluster::usage::{NodeUsage, UsageByNode, UsageStore};
use crate::engine::coverage::{
    NodeCoverage, Totals, named_coverage, node_coverage, unreadable_node_coverage,
};
use crate::engine::health::SANDBOX_FAILED;
use crate::engine::ownership::is_controlled_by;
use crate::engine::revision::RevisionIndex;
use crate::engine::rollout::{
    KnownFacts, PlanHead, PlanOptions, RolloutPlan, next_steps, next_steps_of, plan_head,
    plan_head_of, plan_rollout_with,
};
use crate::engine::selector::Selector;
use crate::model::{ControllerRevision, DaemonSet, Event, Node, Pod, UsagePod};
use crate::ops::error::{Attempt, OpsError, from_kube};
use crate::ops::state::RolloutState;
pub use crate::rows::source::RowSource;

/// How often a command still loading its first lists says how far they are.
pub const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Objects per list page (as the console's streams ask).
const LIST_PAGE_SIZE: u32 = 500;

/// The DaemonSet an operation is about (the one identity, [`crate::model::Target`]).
pub use crate::model::Target;

/// Everything an operation decides from, read at one moment.
///
/// Listed (one-shot commands) or copied (the headless follower), it owns its
/// nodes and pods and computes the coverage rows from them. Made by the
/// console ([`Snapshot::live`]), it borrows the watch cache's nodes and pods
/// and the console's row cache's coverage rows: a key costs pointers, never
/// a copy of the cluster under the cache lock.
#[derive(Clone, Debug)]
pub struct Snapshot<'a> {
    /// The DaemonSet.
    pub ds: DaemonSet,
    /// Its ControllerRevisions (others are ignored by the index).
    pub revisions: Vec<ControllerRevision>,
    /// The kinds the user may not read (403): their lists are empty.
    pub forbidden: BTreeSet<StreamKind>,
    objects: Objects<'a>,
}

/// Where the nodes, pods and coverage rows come from.
#[derive(Clone)]
enum Objects<'a> {
    /// Owned: every node of the cluster and the pods the DaemonSet controls,
    /// shared with the watch cache they were taken from (a copy costs a
    /// pointer per object, never a deep copy under the cache lock).
    Owned {
        nodes: Vec<Arc<Node>>,
        pods: Vec<Arc<Pod>>,
        /// Every counted pod of the cluster by node (fit's input); `None`
        /// when unknown (not listed, forbidden, failed).
        usage: Option<Arc<UsageByNode>>,
        /// The message of each daemon pod's kubelet sandbox failure, by pod
        /// name: only events tell, so the rows learn it from here.
        sandbox_failures: BTreeMap<String, String>,
    },
    /// Borrowed from the console: its watch cache and its row cache.
    Live {
        cache: &'a Cache,
        rows: &'a dyn RowSource,
    },
}

impl std::fmt::Debug for Objects<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Owned { nodes, pods, .. } => f
                .debug_struct("Owned")
                .field("nodes", &nodes.len())
                .field("pods", &pods.len())
                .finish(),
            Self::Live { cache, .. } => f
                .debug_struct("Live")
                .field("nodes", &cache.count(StreamKind::Nodes))
                .finish_non_exhaustive(),
        }
    }
}

/// A DaemonSet that is not there gets a hint: the namespaces where one of
/// that name exists, else the nearest name (best effort: a list that fails,
/// e.g. forbidden across namespaces, falls back to the namespace asked).
pub async fn with_not_found_hint(
    client: &kube::Client,
    target: &Target,
    error: OpsError,
) -> OpsError {
    let OpsError::NotFound { what, message } = error else {
        return error;
    };
    let params = ListParams::default();
    let all = Api::<DaemonSet>::all(client.clone());
    let listed = match all.list_metadata(&params).await {
        Ok(list) => Some(list),
        Err(_) => Api::<DaemonSet>::namespaced(client.clone(), &target.namespace)
            .list_metadata(&params)
            .await
            .ok(),
    };
    let existing: Vec<Target> = listed
        .map(|list| {
            list.items
                .into_iter()
                .map(|ds| Target {
                    namespace: ds.metadata.namespace.unwrap_or_default(),
                    name: ds.metadata.name.unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    let message = match super::not_found::hint(target, &existing) {
        Some(hint) => format!("{message}; {hint}"),
        None => message,
    };
    OpsError::NotFound { what, message }
}

impl Snapshot<'static> {
    /// Lists the DaemonSet, nodes, its pods and revisions.
    pub async fn load(client: &kube::Client, target: &Target) -> Result<Self, OpsError> {
        Self::load_saying(client, target, |_| {}).await
    }

    /// As [`Snapshot::load`], and says through `say` every
    /// [`PROGRESS_EVERY`] while the lists are still coming how far they are
    /// (over a slow link a large cluster's lists take minutes).
    pub async fn load_saying(
        client: &kube::Client,
        target: &Target,
        say: impl Fn(&str),
    ) -> Result<Self, OpsError> {
        Self::load_lists(client, target, say, false).await
    }

    /// As [`Snapshot::load_saying`], and every pod of the cluster as node
    /// usage, for fit ([`Snapshot::usage_on`]): a list as long as the
    /// cluster's pods, so only the commands that show or decide fit ask for
    /// it. Optional: forbidden or failing, fit is unknown and nothing else
    /// changes.
    pub async fn load_with_usage(
        client: &kube::Client,
        target: &Target,
        say: impl Fn(&str),
    ) -> Result<Self, OpsError> {
        Self::load_lists(client, target, say, true).await
    }

    async fn load_lists(
        client: &kube::Client,
        target: &Target,
        say: impl Fn(&str),
        with_usage: bool,
    ) -> Result<Self, OpsError> {
        let ns = target.namespace.as_str();
        let ds = match Api::<DaemonSet>::namespaced(client.clone(), ns)
            .get(&target.name)
            .await
        {
            Ok(ds) => ds,
            Err(e) => {
                let error = from_kube(&e, &attempt("get", "daemonsets.apps", &target.key()));
                return Err(with_not_found_hint(client, target, error).await);
            }
        };
        let labels = selector_labels(&ds)?;
        let params = ListParams::default().labels(&labels);
        // Nodes, pods and revisions at once: at scale the node list alone
        // takes seconds, and the pod list need not wait for it.
        let node_url = collection_url::<Node>(None);
        let pod_url = collection_url::<Pod>(Some(ns));
        let node_pages = ListParams::default().limit(LIST_PAGE_SIZE);
        let pod_pages = params.clone().limit(LIST_PAGE_SIZE);
        let revision_api = Api::<ControllerRevision>::namespaced(client.clone(), ns);
        let (node_progress, pod_progress) = (ListProgress::default(), ListProgress::default());
        // Every pod of the cluster, for fit: optional, so its failure
        // never fails the snapshot (fit is unknown instead).
        let usage_url = collection_url::<UsagePod>(None);
        // The kubelet's sandbox failures: only events tell (optional, as
        // usage: a failure leaves the pods as their status shows them).
        let event_url = collection_url::<Event>(Some(ns));
        let sandbox_events = ListParams::default()
            .fields(&format!("involvedObject.kind=Pod,reason={SANDBOX_FAILED}"))
            .limit(LIST_PAGE_SIZE);
        let lists = async {
            tokio::join!(
                list_all::<Event>(client, &event_url, &sandbox_events, None),
                list_all::<Node>(client, &node_url, &node_pages, Some(&node_progress)),
                list_all::<Pod>(client, &pod_url, &pod_pages, Some(&pod_progress)),
                revision_api.list(&params),
                async {
                    if with_usage {
                        Some(list_all::<UsagePod>(client, &usage_url, &node_pages, None).await)
                    } else {
                        None
                    }
                },
            )
        };
        tokio::pin!(lists);
        let (events, nodes, pods, revisions, usage) = loop {
            tokio::select! {
                listed = &mut lists => break listed,
                () = tokio::time::sleep(PROGRESS_EVERY) => {
                    let loading = [(StreamKind::Nodes, &node_progress), (StreamKind::Pods, &pod_progress)]
                        .into_iter()
                        .filter(|(_, progress)| !progress.complete())
                        .map(|(kind, progress)| (kind, progress.listed(), progress.expected()));
                    if let Some(notice) = still_loading(loading) {
                        say(&notice);
                    }
                }
            }
        };
        let mut forbidden = BTreeSet::new();
        let nodes = unless_forbidden(nodes, StreamKind::Nodes, &mut forbidden)
            .map_err(|e| from_kube(&e, &attempt("list", "nodes", "")))?;
        let pods = pods.map_err(|e| from_kube(&e, &attempt("list", "pods", ns)))?;
        let revisions = unless_forbidden(
            revisions.map(|list| list.items),
            StreamKind::Revisions,
            &mut forbidden,
        )
        .map_err(|e| from_kube(&e, &attempt("list", "controllerrevisions.apps", ns)))?;
        let usage = match usage.map(|u| unless_forbidden(u, StreamKind::NodeUsage, &mut forbidden))
        {
            None => None,
            Some(Ok(_)) if forbidden.contains(&StreamKind::NodeUsage) => None,
            Some(Ok(pods)) => Some(UsageStore::of_list(pods)),
            Some(Err(error)) => {
                tracing::warn!(%error, "listing pods in all namespaces failed: fit unknown");
                None
            }
        };
        let events = events.unwrap_or_else(|error| {
            tracing::warn!(%error, "listing sandbox failure events failed: not shown");
            Vec::new()
        });
        Ok(Self::new(ds, nodes, pods, revisions)
            .with_forbidden(forbidden)
            .with_usage(usage)
            .with_sandbox_failures(sandbox_failures(&events)))
    }

    /// Copies the target out of a watch cache (the headless follower, which
    /// keeps it across awaits); `None` until the DaemonSet has been seen.
    pub fn from_cache(cache: &Cache, target: &Target) -> Option<Self> {
        let ds = cache.daemonset(target)?.clone();
        let pods = cache
            .shared_pods()
            .filter(|pod| is_controlled_by(pod, &ds))
            .cloned()
            .collect::<Vec<_>>();
        let snapshot = Self::new(
            ds,
            cache.shared_nodes().cloned().collect::<Vec<_>>(),
            pods,
            cache.revisions().cloned().collect(),
        );
        // As the row cache decides it: a pod whose latest event is the
        // kubelet's sandbox failure.
        let namespace = target.namespace.as_str();
        let latest: Vec<(String, &crate::model::Event)> = snapshot
            .pods()
            .filter_map(|pod| {
                let key = format!("{namespace}/{}", pod.name());
                let event = cache.pod_events(&key).into_iter().next()?;
                Some((pod.name().to_owned(), event))
            })
            .collect();
        let failures = latest
            .iter()
            .filter(|(_, event)| event.reason.as_deref() == Some(SANDBOX_FAILED))
            .map(|(pod, event)| (pod.as_str(), event.message.as_deref().unwrap_or_default()));
        Some(
            snapshot
                .with_forbidden(cache.forbidden_kinds().into_iter().collect())
                .with_usage(cache.usage_copy())
                .with_sandbox_failures(failures),
        )
    }

    /// Builds a snapshot, keeping only the pods the DaemonSet controls.
    pub fn new<N: Into<Arc<Node>>, P: Into<Arc<Pod>>>(
        ds: DaemonSet,
        nodes: impl IntoIterator<Item = N>,
        pods: impl IntoIterator<Item = P>,
        revisions: Vec<ControllerRevision>,
    ) -> Self {
        let nodes = nodes.into_iter().map(Into::into).collect();
        let pods = pods
            .into_iter()
            .map(Into::into)
            .filter(|p: &Arc<Pod>| is_controlled_by(p, &ds))
            .collect();
        Self {
            ds,
            revisions,
            forbidden: BTreeSet::new(),
            objects: Objects::Owned {
                nodes,
                pods,
                usage: None,
                sandbox_failures: BTreeMap::new(),
            },
        }
    }

    /// Gives an owned snapshot the cluster's usage by node (`None`: unknown).
    #[must_use]
    pub fn with_usage(mut self, known: Option<UsageByNode>) -> Self {
        if let Objects::Owned { usage, .. } = &mut self.objects {
            *usage = known.map(Arc::new);
        }
        self
    }

    /// Gives an owned snapshot the kubelet's sandbox failures of its pods:
    /// `(pod name, message)`, a later one for the same pod replacing an
    /// earlier one.
    #[must_use]
    pub fn with_sandbox_failures<'e>(
        mut self,
        failures: impl IntoIterator<Item = (&'e str, &'e str)>,
    ) -> Self {
        if let Objects::Owned {
            sandbox_failures, ..
        } = &mut self.objects
        {
            for (pod, message) in failures {
                sandbox_failures.insert(pod.to_owned(), message.to_owned());
            }
        }
        self
    }
}

impl<'a> Snapshot<'a> {
    /// The console's view of the target: the DaemonSet and its revisions
    /// copied (a few objects), the nodes and pods borrowed from `cache`, the
    /// coverage rows from `rows` (refreshed from the same cache). `None`
    /// until the DaemonSet has been seen. When the rows were computed for
    /// another current revision (the cache changed since the last refresh),
    /// the rows are computed afresh from the cache instead.
    pub fn live(cache: &'a Cache, target: &Target, rows: &'a dyn RowSource) -> Option<Self> {
        let ds = cache.daemonset(target)?.clone();
        let revisions: Vec<ControllerRevision> = cache.revisions().cloned().collect();
        let forbidden = cache.forbidden_kinds().into_iter().collect();
        let index = RevisionIndex::new(&ds, &revisions);
        let current = |index: &RevisionIndex| index.current().map(|c| (c.hash.clone(), c.number));
        let in_step = rows
            .index()
            .is_some_and(|held| current(held) == current(&index));
        if !in_step {
            tracing::debug!("row cache behind the DaemonSet: computing the rows afresh");
            return Snapshot::from_cache(cache, target);
        }
        Some(Self {
            ds,
            revisions,
            forbidden,
            objects: Objects::Live { cache, rows },
        })
    }

    /// Whether the snapshot borrows the console's caches (else it owns its objects).
    pub fn is_live(&self) -> bool {
        matches!(self.objects, Objects::Live { .. })
    }

    /// Records the kinds the user may not read (their lists are empty).
    #[must_use]
    pub fn with_forbidden(mut self, forbidden: BTreeSet<StreamKind>) -> Self {
        self.forbidden = forbidden;
        self
    }

    /// Whether the nodes could not be read (rows come from the pods).
    pub fn nodes_unreadable(&self) -> bool {
        self.forbidden.contains(&StreamKind::Nodes)
    }

    /// Every node of the cluster, in any order.
    pub fn nodes(&self) -> Box<dyn Iterator<Item = &Node> + '_> {
        match &self.objects {
            Objects::Owned { nodes, .. } => Box::new(nodes.iter().map(Arc::as_ref)),
            Objects::Live { cache, .. } => Box::new(cache.nodes()),
        }
    }

    /// The pods the DaemonSet controls, in any order.
    pub fn pods(&self) -> Box<dyn Iterator<Item = &Pod> + '_> {
        match &self.objects {
            Objects::Owned { pods, .. } => Box::new(pods.iter().map(Arc::as_ref)),
            Objects::Live { cache, .. } => {
                Box::new(cache.pods().filter(|pod| is_controlled_by(pod, &self.ds)))
            }
        }
    }

    /// What counts against `node` (fit's input): `None` when usage is
    /// unknown, `Some(None)` when no pod counts there.
    pub fn usage_on(&self, node: &str) -> Option<Option<&NodeUsage>> {
        match &self.objects {
            Objects::Owned { usage, .. } => usage.as_ref().map(|u| u.get(node)),
            Objects::Live { cache, .. } => cache.usage_known().then(|| cache.usage_on(node)),
        }
    }

    /// Whether fit can be judged: what counts against the nodes is known.
    pub fn usage_known(&self) -> bool {
        match &self.objects {
            Objects::Owned { usage, .. } => usage.is_some(),
            Objects::Live { cache, .. } => cache.usage_known(),
        }
    }

    /// Looks nodes up by name (an index over owned nodes, the cache's own
    /// map for a live snapshot).
    pub fn node_lookup(&self) -> NodeLookup<'_> {
        match &self.objects {
            Objects::Owned { nodes, .. } => {
                NodeLookup::Map(nodes.iter().map(|n| (n.name(), n.as_ref())).collect())
            }
            Objects::Live { cache, .. } => NodeLookup::Cache(cache),
        }
    }

    /// The target this snapshot is about.
    pub fn target(&self) -> Target {
        Target {
            namespace: self.ds.metadata.namespace.clone().unwrap_or_default(),
            name: self.ds.metadata.name.clone().unwrap_or_default(),
        }
    }

    /// The DaemonSet's resourceVersion (the precondition for state writes).
    pub fn resource_version(&self) -> Option<&str> {
        self.ds.metadata.resource_version.as_deref()
    }

    /// The durable rollout state from the annotations (malformed values ignored).
    pub fn state(&self) -> Result<RolloutState, OpsError> {
        RolloutState::from_annotations(self.ds.metadata.annotations.as_ref())
    }

    /// One warning per malformed `rollcall.dev/...` annotation that
    /// [`Snapshot::state`] ignored.
    pub fn state_warnings(&self) -> Vec<String> {
        RolloutState::read(self.ds.metadata.annotations.as_ref()).1
    }

    /// The update strategy with the apps/v1 defaults (RollingUpdate when unset).
    pub fn update_strategy(&self) -> crate::engine::rolling::UpdateStrategy {
        crate::engine::rolling::update_strategy(&self.ds)
    }

    /// The revision index.
    pub fn index(&self) -> RevisionIndex {
        RevisionIndex::new(&self.ds, &self.revisions)
    }

    /// One coverage row per node (computed: in node-name order; live: in the
    /// row cache's order, see [`Rows::iter`]); when the nodes cannot
    /// be read, one per node a pod is bound to, eligibility unknown. A live
    /// snapshot hands out the console's rows (computed when their node last
    /// changed) and computes nothing until asked.
    pub fn rows(&self, index: &RevisionIndex, now: jiff::Timestamp) -> Rows<'_> {
        match &self.objects {
            Objects::Owned {
                nodes,
                pods,
                sandbox_failures,
                ..
            } => {
                let mut rows = self.computed_rows(nodes, pods, index, now);
                note_sandbox_failures(&mut rows, sandbox_failures);
                Rows::Computed(rows)
            }
            Objects::Live { cache, rows } => Rows::Live {
                cache,
                source: *rows,
                ds: &self.ds,
                revisions: &self.revisions,
                now,
                index: std::cell::OnceCell::new(),
            },
        }
    }

    fn computed_rows(
        &self,
        nodes: &[Arc<Node>],
        pods: &[Arc<Pod>],
        index: &RevisionIndex,
        now: jiff::Timestamp,
    ) -> Vec<NodeCoverage> {
        if self.nodes_unreadable() {
            return unreadable_node_coverage(&self.ds, pods, index, now, NODES_UNREADABLE);
        }
        let mut by_node: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
        for pod in pods {
            if let Some(node) = pod.target_node() {
                by_node.entry(node).or_default().push(pod);
            }
        }
        let mut nodes: Vec<&Node> = nodes.iter().map(Arc::as_ref).collect();
        nodes.sort_by(|a, b| a.name().cmp(b.name()));
        nodes
            .into_iter()
            .map(|node| {
                let pods = by_node
                    .get(node.name())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                node_coverage(node, &self.ds, pods, index, now)
            })
            .collect()
    }

    /// Why the rollout is (not) moving at `now`, before the stored pause is
    /// taken into account: the one rollout blocker over these rows.
    pub fn blocker(
        &self,
        rows: &Rows<'_>,
        now: jiff::Timestamp,
    ) -> crate::engine::blockers::Blocker {
        let nodes = self.node_lookup();
        crate::engine::blockers::rollout_blocker_with(
            &self.ds,
            rows.iter()
                .map(|row| (row, nodes.get(&row.node).map(Node::is_ready))),
            now,
        )
    }

    /// The totals, in the DaemonSet status fields' terms.
    pub fn totals<'r>(rows: impl IntoIterator<Item = &'r NodeCoverage>) -> Totals {
        Totals::from_rows(rows)
    }

    /// The rollout plan with the canaries stored in `state`.
    pub fn plan<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r NodeCoverage>,
        state: &RolloutState,
    ) -> Result<RolloutPlan, OpsError> {
        self.plan_with(rows, state, false)
    }

    /// The rollout plan, with cordoned nodes planned too when `include_cordoned`.
    pub fn plan_with<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r NodeCoverage>,
        state: &RolloutState,
        include_cordoned: bool,
    ) -> Result<RolloutPlan, OpsError> {
        let options = PlanOptions {
            include_cordoned,
            ..plan_options(state)?
        };
        let nodes = self.node_lookup();
        Ok(plan_rollout_with(rows, |name| nodes.get(name), &options))
    }

    /// The plan's first `limit` steps and skipped nodes, and its sizes
    /// (a view showing a page of it).
    pub fn plan_head(
        &self,
        rows: &Rows<'_>,
        state: &RolloutState,
        limit: usize,
    ) -> Result<PlanHead, OpsError> {
        let options = plan_options(state)?;
        if let Some(known) = rows.with_facts(&options) {
            return Ok(plan_head_of(known, &options, limit));
        }
        let nodes = self.node_lookup();
        Ok(plan_head(
            rows.iter(),
            |name| nodes.get(name),
            &options,
            limit,
        ))
    }

    /// The part of the plan that `target` needs, equal to what
    /// `advance::choose` would pick from the whole plan:
    /// for the next `k` nodes only the next batch (one pass, no sort), for
    /// named nodes only their rows; the whole plan when nothing is left (its
    /// skipped nodes say why).
    pub fn plan_for(
        &self,
        rows: &Rows<'_>,
        state: &RolloutState,
        target: &crate::ops::advance_target::AdvanceTarget,
        exclude: &BTreeSet<String>,
        include_cordoned: bool,
    ) -> Result<RolloutPlan, OpsError> {
        use crate::ops::advance_target::AdvanceTarget;
        let options = PlanOptions {
            include_cordoned,
            ..plan_options(state)?
        };
        let nodes = self.node_lookup();
        let part = match target {
            AdvanceTarget::Next(k) => RolloutPlan {
                steps: match rows.with_facts(&options) {
                    Some(known) => next_steps_of(known, &options, *k, exclude),
                    None => next_steps(rows.iter(), |name| nodes.get(name), &options, *k, exclude),
                },
                skipped: Vec::new(),
            },
            AdvanceTarget::Nodes(names) => {
                let their_rows: Vec<&NodeCoverage> =
                    names.iter().filter_map(|name| rows.get(name)).collect();
                if their_rows.len() < names.len() {
                    // A name without a row: the whole plan says it is not in the cluster.
                    return Ok(plan_rollout_with(
                        rows.iter(),
                        |name| nodes.get(name),
                        &options,
                    ));
                }
                plan_rollout_with(their_rows, |name| nodes.get(name), &options)
            }
        };
        if part.steps.is_empty() && part.skipped.is_empty() {
            return Ok(plan_rollout_with(
                rows.iter(),
                |name| nodes.get(name),
                &options,
            ));
        }
        Ok(part)
    }
}

/// Nodes by name, for the plan.
pub enum NodeLookup<'s> {
    /// An index over owned nodes.
    Map(HashMap<&'s str, &'s Node>),
    /// The watch cache's own map.
    Cache(&'s Cache),
}

impl NodeLookup<'_> {
    /// The node called `name`.
    pub fn get(&self, name: &str) -> Option<&Node> {
        match self {
            Self::Map(map) => map.get(name).copied(),
            Self::Cache(cache) => cache.node(name),
        }
    }
}

/// The coverage rows of a snapshot: computed (owned, in node-name order), or
/// the console's, borrowed as they are.
pub enum Rows<'s> {
    /// Computed from owned nodes and pods, in node-name order.
    Computed(Vec<NodeCoverage>),
    /// The console's row cache.
    Live {
        /// The watch cache the rows were refreshed from.
        cache: &'s Cache,
        /// The row cache.
        source: &'s dyn RowSource,
        /// The DaemonSet.
        ds: &'s DaemonSet,
        /// Its revisions.
        revisions: &'s [ControllerRevision],
        /// The time of the decision.
        now: jiff::Timestamp,
        /// The revision index, on first use (for a fresh row).
        index: std::cell::OnceCell<RevisionIndex>,
    },
}

impl<'r> IntoIterator for &'r Rows<'_> {
    type Item = &'r NodeCoverage;
    type IntoIter = Box<dyn Iterator<Item = &'r NodeCoverage> + 'r>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Rows<'_> {
    /// Every row: computed rows in node-name order, live rows in the row
    /// cache's own order (every reader is order-free: the plan sorts, the
    /// failing nodes come sorted, the rest count).
    pub fn iter(&self) -> Box<dyn Iterator<Item = &NodeCoverage> + '_> {
        match self {
            Self::Computed(rows) => Box::new(rows.iter()),
            Self::Live { source, .. } => source.all(),
        }
    }

    /// Every row with its node's facts when the rows keep them (see
    /// [`RowSource::with_facts`]); `None` for computed rows.
    pub fn with_facts<'s>(
        &'s self,
        options: &'s PlanOptions,
    ) -> Option<Box<dyn Iterator<Item = KnownFacts<'s>> + 's>> {
        match self {
            Self::Computed(_) => None,
            Self::Live { source, .. } => source.with_facts(options),
        }
    }

    /// The row of `node`.
    pub fn get(&self, node: &str) -> Option<&NodeCoverage> {
        match self {
            Self::Computed(rows) => rows
                .binary_search_by(|row| row.node.as_str().cmp(node))
                .ok()
                .and_then(|at| rows.get(at))
                .or_else(|| rows.iter().find(|row| row.node == node)),
            Self::Live { source, .. } => source.row(node),
        }
    }

    /// The row of `node` as of the decision's `now`. A live row whose node
    /// has no change pending in the cache is the row cache's own, its pods'
    /// availability (the one part that moves with the clock) judged again at
    /// `now`: a gate judging its batch on every wake costs a copy per node,
    /// not a recompute. A node with a change the rows have not taken yet is
    /// computed again from the cache, at the cost of one node.
    pub fn fresh(&self, node: &str) -> Option<NodeCoverage> {
        match self {
            Self::Computed(_) => self.get(node).cloned(),
            Self::Live {
                cache,
                source,
                ds,
                revisions,
                now,
                index,
                ..
            } => {
                let pending = cache.changes();
                if !pending.all_nodes
                    && !pending.nodes.contains(node)
                    && let Some(row) = source.row(node)
                {
                    let min_ready = crate::engine::coverage::min_ready_seconds(ds);
                    let mut row = row.clone();
                    for pod in &mut row.pods {
                        pod.available = pod.available_at(min_ready, *now);
                    }
                    return Some(row);
                }
                let index = index.get_or_init(|| RevisionIndex::new(ds, revisions));
                let mut pods = cache.pods_on(node);
                pods.retain(|pod| is_controlled_by(pod, ds));
                match cache.node(node) {
                    Some(found) => Some(node_coverage(found, ds, &pods, index, *now)),
                    None => source.row(node).map(|row| {
                        named_coverage(node, row.verdict.clone(), ds, &pods, index, *now)
                    }),
                }
            }
        }
    }
}

/// The engine's plan options from the durable state: hand-marked canaries,
/// and the canary selector of the auto run in progress. A selector is a run's
/// own setting: one left by a run that ended without clearing it (a crash) is
/// not a plan for anyone else, so it counts only while the mode says `auto`.
pub fn plan_options(state: &RolloutState) -> Result<PlanOptions, OpsError> {
    let canary_selector = state
        .canary_selector
        .as_deref()
        .filter(|_| state.mode == crate::ops::state::Mode::Auto && !state.is_paused())
        .map(|text| {
            Selector::parse(text)
                .map_err(|e| OpsError::Invalid(format!("bad canary selector {text:?}: {e}")))
        })
        .transpose()?;
    Ok(PlanOptions {
        canaries: state.canaries.clone(),
        canary_selector,
        ..PlanOptions::default()
    })
}

/// The DaemonSet's selector as a label-selector query string.
pub fn selector_labels(ds: &DaemonSet) -> Result<String, OpsError> {
    let selector = ds
        .spec
        .as_ref()
        .map(|s| s.selector.clone())
        .unwrap_or_default();
    kube::core::Selector::try_from(selector)
        .map(|s| s.to_string())
        .map_err(|e| OpsError::Invalid(format!("the DaemonSet's selector cannot be used: {e}")))
}

/// A list's items; a 403 records `kind` as forbidden and gives an empty list.
fn unless_forbidden<K>(
    listed: Result<Vec<K>, kube::Error>,
    kind: StreamKind,
    forbidden: &mut BTreeSet<StreamKind>,
) -> Result<Vec<K>, kube::Error> {
    match listed {
        Ok(items) => Ok(items),
        Err(kube::Error::Api(status)) if status.code == 403 => {
            tracing::info!(kind = kind.label(), "forbidden: going without it");
            forbidden.insert(kind);
            Ok(Vec::new())
        }
        Err(error) => Err(error),
    }
}

fn attempt(verb: &'static str, resource: &'static str, name: &str) -> Attempt {
    Attempt {
        verb,
        resource,
        name: name.to_owned(),
    }
}

/// The latest sandbox failure of each pod among `events` (pod name, message).
fn sandbox_failures(events: &[Event]) -> impl Iterator<Item = (&str, &str)> {
    let mut latest: BTreeMap<&str, &Event> = BTreeMap::new();
    for event in events {
        if event.reason.as_deref() != Some(SANDBOX_FAILED) {
            continue;
        }
        let Some(pod) = event.involved_object.name.as_deref() else {
            continue;
        };
        let newer = latest
            .get(pod)
            .is_none_or(|seen| seen.last_seen() <= event.last_seen());
        if newer {
            latest.insert(pod, event);
        }
    }
    latest
        .into_iter()
        .map(|(pod, event)| (pod, event.message.as_deref().unwrap_or_default()))
}

/// Marks the rows' pods the kubelet cannot create a sandbox for, as the row
/// cache does ([`crate::engine::health::note_sandbox_failure`]).
fn note_sandbox_failures(rows: &mut [NodeCoverage], failures: &BTreeMap<String, String>) {
    if failures.is_empty() {
        return;
    }
    for pod in rows.iter_mut().flat_map(|row| row.pods.iter_mut()) {
        let failure = failures.get(pod.name.as_str());
        crate::engine::health::note_sandbox_failure(
            pod,
            failure.map(|message| (SANDBOX_FAILED, message.as_str())),
        );
    }
}

#[cfg(test)]
mod match_tests {
    use k8s_openapi::api::core::v1::PodSecurityContext;

    use crate::ops::testing::{all_old, ds, snapshot};

    /// Regression: a template with an empty struct (`securityContext: {}`, as the
    /// API server defaults it) must still match its own ControllerRevision, or
    /// every operation refuses to act ("controller has not yet recorded...").
    #[test]
    fn template_with_empty_security_context_matches_its_revision() {
        let mut daemonset = ds(false, &[]);
        if let Some(pod) = daemonset
            .spec
            .as_mut()
            .and_then(|s| s.template.spec.as_mut())
        {
            pod.security_context = Some(PodSecurityContext::default());
        }
        let snap = snapshot(daemonset, &["n1"], all_old(&["n1"]));
        assert!(snap.index().current_matches_template());
    }
}
