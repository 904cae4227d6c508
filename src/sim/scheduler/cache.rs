//! The scheduler's cache (upstream `internal/cache`, reduced): every node
//! with the pods counted on it as the fit engine reads them ([`NodeUse`]:
//! every pod bound there that is not `Succeeded` or `Failed`, terminating
//! ones until they are gone). Kept change by change from store events, and
//! "assumed" at once when the scheduler binds (the event that follows finds
//! the pod counted), so no decision reads the store's pods.
//!
//! Pods nominated to a node by preemption and not bound yet are kept too
//! (upstream's nominator): a pod of lower or equal priority filtered on that
//! node sees them as if bound, so the room preemption made is kept for its
//! preemptor (upstream `addGENominatedPods`).
//!
//! Nodes iterate in name order, which makes every choice deterministic.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::queue::PodKey;
use crate::engine::fit::{BoundPod, NodeUse};
use crate::model::{Node, Pod};

/// A node and the pods counted on it.
#[derive(Clone, Debug, Default)]
pub struct NodeState {
    /// The node (labels, taints, cordon, allocatable).
    pub node: Node,
    /// Its allocatable and counted pods, the fit engine's input.
    pub usage: NodeUse,
}

/// The cache.
#[derive(Debug, Default)]
pub struct ClusterCache {
    nodes: BTreeMap<String, NodeState>,
    /// Each counted pod's node and uid.
    placed: HashMap<PodKey, (String, String)>,
    /// The pods the scheduler preempted that are still counted.
    preempted: HashSet<PodKey>,
    /// Unbound pods nominated to a node, by node.
    nominated: HashMap<String, Vec<(PodKey, BoundPod)>>,
    /// The node each nominated pod is nominated to.
    nominated_to: HashMap<PodKey, String>,
}

impl ClusterCache {
    /// An empty cache.
    pub fn new() -> ClusterCache {
        ClusterCache::default()
    }

    /// A node added or changed; true when what scheduling reads changed (a
    /// new node, its labels, taints, cordon or allocatable).
    pub fn upsert_node(&mut self, node: Node) -> bool {
        let name = node.name().to_owned();
        let allocatable = (*node.status.allocatable).clone();
        if let Some(state) = self.nodes.get_mut(&name) {
            let relevant = state.node.labels != node.labels
                || state.node.spec != node.spec
                || state.usage.allocatable != allocatable;
            state.node = node;
            state.usage.allocatable = allocatable;
            return relevant;
        }
        let state = NodeState {
            node,
            usage: NodeUse {
                allocatable,
                pods: Vec::new(),
            },
        };
        self.nodes.insert(name, state);
        true
    }

    /// A node deleted: its pods are no longer counted anywhere (their
    /// deletions, by the kubelets' garbage collection, follow as events).
    pub fn remove_node(&mut self, name: &str) {
        if let Some(state) = self.nodes.remove(name) {
            for pod in &state.usage.pods {
                let key = (pod.namespace.clone(), pod.name.clone());
                self.placed.remove(&key);
                self.preempted.remove(&key);
            }
        }
    }

    /// One node.
    pub fn node(&self, name: &str) -> Option<&NodeState> {
        self.nodes.get(name)
    }

    /// Every node, in name order.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeState> {
        self.nodes.values()
    }

    /// How many nodes there are.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The node and uid of a counted pod.
    pub fn placed(&self, key: &PodKey) -> Option<(&str, &str)> {
        self.placed
            .get(key)
            .map(|(node, uid)| (node.as_str(), uid.as_str()))
    }

    /// Counts `pod` on `node` (a record under the same key is replaced). A
    /// pod whose node is unknown is not counted: nothing is scheduled there.
    pub fn count(&mut self, key: &PodKey, pod: &Pod, node: &str) {
        self.uncount(key);
        let Some(state) = self.nodes.get_mut(node) else {
            return;
        };
        state.usage.pods.push(BoundPod::of(pod));
        self.placed
            .insert(key.clone(), (node.to_owned(), pod.uid().to_owned()));
    }

    /// Stops counting a pod (deleted, or Succeeded/Failed); returns the node
    /// it freed room on.
    pub fn uncount(&mut self, key: &PodKey) -> Option<String> {
        let (node, _) = self.placed.remove(key)?;
        self.preempted.remove(key);
        if let Some(state) = self.nodes.get_mut(&node) {
            state
                .usage
                .pods
                .retain(|p| p.namespace != key.0 || p.name != key.1);
        }
        Some(node)
    }

    /// The node an unbound pod is nominated to, as the cache knows it.
    pub fn nominated_to(&self, key: &PodKey) -> Option<&str> {
        self.nominated_to.get(key).map(String::as_str)
    }

    /// Records that unbound `pod` is nominated to `node` (replacing an
    /// earlier nomination).
    pub fn nominate(&mut self, key: &PodKey, pod: &Pod, node: &str) {
        self.forget_nomination(key);
        self.nominated
            .entry(node.to_owned())
            .or_default()
            .push((key.clone(), BoundPod::of(pod)));
        self.nominated_to.insert(key.clone(), node.to_owned());
    }

    /// Forgets a pod's nomination (bound, cleared, finished or gone).
    pub fn forget_nomination(&mut self, key: &PodKey) {
        let Some(node) = self.nominated_to.remove(key) else {
            return;
        };
        if let Some(pods) = self.nominated.get_mut(&node) {
            pods.retain(|(nominee, _)| nominee != key);
            if pods.is_empty() {
                self.nominated.remove(&node);
            }
        }
    }

    /// The node's use as the filters see it for pod `key` of `priority`:
    /// the pods counted there, and the pods nominated there of equal or
    /// higher priority (the pod itself aside), as if bound.
    pub fn use_for<'s>(
        &self,
        state: &'s NodeState,
        key: &PodKey,
        priority: i32,
    ) -> Cow<'s, NodeUse> {
        let ahead: Vec<&BoundPod> = self
            .nominated
            .get(state.node.name())
            .into_iter()
            .flatten()
            .filter(|(nominee, pod)| nominee != key && pod.priority >= priority)
            .map(|(_, pod)| pod)
            .collect();
        if ahead.is_empty() {
            return Cow::Borrowed(&state.usage);
        }
        let mut usage = state.usage.clone();
        usage.pods.extend(ahead.into_iter().cloned());
        Cow::Owned(usage)
    }

    /// Marks a pod the scheduler preempted (it terminates to make room).
    pub fn mark_preempted(&mut self, key: &PodKey) {
        if self.placed.contains_key(key) {
            self.preempted.insert(key.clone());
        }
    }

    /// Whether a pod of lower priority than `priority` that the scheduler
    /// preempted is still counted on the node (upstream
    /// `podTerminatingByPreemption`: a preemptor nominated there waits for it
    /// instead of preempting again).
    pub fn preempted_below(&self, node: &NodeState, priority: i32) -> bool {
        node.usage.pods.iter().any(|p| {
            p.priority < priority
                && self
                    .preempted
                    .contains(&(p.namespace.clone(), p.name.clone()))
        })
    }
}
