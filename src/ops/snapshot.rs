//! One consistent view of a DaemonSet and everything the operations decide
//! from: its nodes, its pods (only those it controls), its ControllerRevisions
//! and the durable rollout state; loaded by listing (one-shot commands) or
//! copied out of the console's watch cache. Derives the engine's coverage rows
//! and rollout plan from it; decides nothing itself. Kinds the user may not
//! read (403) are recorded, not fatal: without nodes, the rows come from the
//! pods' node names with eligibility unknown.

use std::collections::{BTreeMap, BTreeSet};

use kube::api::{Api, ListParams};

use crate::cluster::access::NODES_UNREADABLE;
use crate::cluster::cache::Cache;
use crate::cluster::status::StreamKind;
use crate::engine::coverage::{NodeCoverage, Totals, node_coverage, unreadable_node_coverage};
use crate::engine::ownership::is_controlled_by;
use crate::engine::revision::RevisionIndex;
use crate::engine::rollout::{PlanOptions, RolloutPlan, plan_rollout};
use crate::engine::selector::Selector;
use crate::model::{ControllerRevision, DaemonSet, Node, Pod};
use crate::ops::error::{Attempt, OpsError, from_kube};
use crate::ops::state::RolloutState;

/// The DaemonSet an operation is about (the one identity, [`crate::model::Target`]).
pub use crate::model::Target;

/// Everything an operation decides from, read at one moment.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The DaemonSet.
    pub ds: DaemonSet,
    /// Every node of the cluster.
    pub nodes: Vec<Node>,
    /// The pods the DaemonSet controls.
    pub pods: Vec<Pod>,
    /// Its ControllerRevisions (others are ignored by the index).
    pub revisions: Vec<ControllerRevision>,
    /// The kinds the user may not read (403): their lists are empty.
    pub forbidden: BTreeSet<StreamKind>,
}

impl Snapshot {
    /// Lists the DaemonSet, nodes, its pods and revisions.
    pub async fn load(client: &kube::Client, target: &Target) -> Result<Self, OpsError> {
        let ns = target.namespace.as_str();
        let ds = Api::<DaemonSet>::namespaced(client.clone(), ns)
            .get(&target.name)
            .await
            .map_err(|e| from_kube(&e, &attempt("get", "daemonsets.apps", &target.key())))?;
        let labels = selector_labels(&ds)?;
        let params = ListParams::default().labels(&labels);
        let mut forbidden = BTreeSet::new();
        let nodes = Api::<Node>::all(client.clone())
            .list(&ListParams::default())
            .await;
        let nodes = unless_forbidden(nodes, StreamKind::Nodes, &mut forbidden)
            .map_err(|e| from_kube(&e, &attempt("list", "nodes", "")))?;
        let pods = Api::<Pod>::namespaced(client.clone(), ns)
            .list(&params)
            .await
            .map_err(|e| from_kube(&e, &attempt("list", "pods", ns)))?
            .items;
        let revisions = Api::<ControllerRevision>::namespaced(client.clone(), ns)
            .list(&params)
            .await;
        let revisions = unless_forbidden(revisions, StreamKind::Revisions, &mut forbidden)
            .map_err(|e| from_kube(&e, &attempt("list", "controllerrevisions.apps", ns)))?;
        Ok(Self::new(ds, nodes, pods, revisions).with_forbidden(forbidden))
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

    /// Copies the target out of the console's watch cache; `None` until the
    /// DaemonSet has been seen.
    pub fn from_cache(cache: &Cache, target: &Target) -> Option<Self> {
        let ds = cache.daemonset(&target.key())?.clone();
        let snapshot = Self::new(
            ds,
            cache.nodes().cloned().collect(),
            cache.pods().cloned().collect(),
            cache.revisions().cloned().collect(),
        );
        Some(snapshot.with_forbidden(cache.forbidden_kinds().into_iter().collect()))
    }

    /// Builds a snapshot, keeping only the pods the DaemonSet controls.
    pub fn new(
        ds: DaemonSet,
        nodes: Vec<Node>,
        pods: Vec<Pod>,
        revisions: Vec<ControllerRevision>,
    ) -> Self {
        let pods = pods
            .into_iter()
            .filter(|p| is_controlled_by(p, &ds))
            .collect();
        Self {
            ds,
            nodes,
            pods,
            revisions,
            forbidden: BTreeSet::new(),
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

    /// One coverage row per node, in node-name order; when the nodes cannot
    /// be read, one per node a pod is bound to, eligibility unknown.
    pub fn rows(&self, index: &RevisionIndex, now: jiff::Timestamp) -> Vec<NodeCoverage> {
        if self.nodes_unreadable() {
            return unreadable_node_coverage(&self.ds, &self.pods, index, now, NODES_UNREADABLE);
        }
        let mut by_node: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
        for pod in &self.pods {
            if let Some(node) = pod.node_name() {
                by_node.entry(node).or_default().push(pod);
            }
        }
        let mut nodes: Vec<&Node> = self.nodes.iter().collect();
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

    /// The totals, in the DaemonSet status fields' terms.
    pub fn totals(rows: &[NodeCoverage]) -> Totals {
        Totals::from_rows(rows)
    }

    /// The rollout plan with the canaries stored in `state`.
    pub fn plan(
        &self,
        rows: &[NodeCoverage],
        state: &RolloutState,
    ) -> Result<RolloutPlan, OpsError> {
        self.plan_with(rows, state, false)
    }

    /// The rollout plan, with cordoned nodes planned too when `include_cordoned`.
    pub fn plan_with(
        &self,
        rows: &[NodeCoverage],
        state: &RolloutState,
        include_cordoned: bool,
    ) -> Result<RolloutPlan, OpsError> {
        let options = PlanOptions {
            include_cordoned,
            ..plan_options(state)?
        };
        Ok(plan_rollout(rows, &self.nodes, &options))
    }
}

/// The engine's plan options from the durable state (hand-marked canaries and
/// the canary selector).
pub fn plan_options(state: &RolloutState) -> Result<PlanOptions, OpsError> {
    let canary_selector = state
        .canary_selector
        .as_deref()
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
fn unless_forbidden<K: Clone>(
    listed: Result<kube::api::ObjectList<K>, kube::Error>,
    kind: StreamKind,
    forbidden: &mut BTreeSet<StreamKind>,
) -> Result<Vec<K>, kube::Error> {
    match listed {
        Ok(list) => Ok(list.items),
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
