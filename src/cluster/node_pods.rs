//! The target's pods by the node they are bound to.
//!
//! The index holds the pod store's own pointers, not the pods' keys: a pod
//! key (`namespace/name`) is usually longer than an inline string, so each
//! copy was a heap block, and a node's list of two keys another (about 160
//! bytes a node at 65,000 nodes). Nor does it copy the node's name: a node's
//! pods are found by the node name they hold, so a slot is one inline list
//! (16 bytes, where a map of names took 48).

use std::cmp::Ordering;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;
use smallvec::SmallVec;

use super::store::{Map, ObjectKey, object_key_bytes};
use crate::model::Pod;

/// Pods of one node (never none), in pod key order; a DaemonSet has one
/// pod a node but during a replacement.
type OnNode = SmallVec<[Arc<Pod>; 1]>;

/// Node name → the pods bound to it.
#[derive(Debug, Default)]
pub struct NodePods {
    lists: HashTable<OnNode>,
    hasher: foldhash::fast::RandomState,
}

impl NodePods {
    /// The index over a whole pod store.
    pub fn build(pods: &Map<ObjectKey, Arc<Pod>>) -> Self {
        let mut index = NodePods::default();
        for pod in pods.values() {
            index.insert(pod);
        }
        index
    }

    /// Adds `pod` under its node (replacing the pod of the same key there);
    /// a pod bound to no node is not indexed.
    pub fn insert(&mut self, pod: &Arc<Pod>) {
        let Some(node) = pod.target_node() else {
            return;
        };
        let hash = self.hasher.hash_one(node);
        let hasher = &self.hasher;
        let entry = self.lists.entry(
            hash,
            |pods| node_of(pods) == node,
            |pods| hasher.hash_one(node_of(pods)),
        );
        let pods = entry.or_insert_with(OnNode::new).into_mut();
        match pods.binary_search_by(|held| key_order(held, pod)) {
            Ok(at) => pods[at] = pod.clone(),
            Err(at) => pods.insert(at, pod.clone()),
        }
    }

    /// Removes the pod `key` (`namespace/name`) from `node`.
    pub fn remove(&mut self, node: &str, key: &str) {
        let hash = self.hasher.hash_one(node);
        let Ok(mut entry) = self.lists.find_entry(hash, |pods| node_of(pods) == node) else {
            return;
        };
        entry.get_mut().retain(|held| !has_key(held, key));
        if entry.get().is_empty() {
            entry.remove();
        }
    }

    /// The pods bound to `node`, in pod key order.
    pub fn on(&self, node: &str) -> impl Iterator<Item = &Pod> {
        let hash = self.hasher.hash_one(node);
        self.lists
            .find(hash, |pods| node_of(pods) == node)
            .into_iter()
            .flatten()
            .map(Arc::as_ref)
    }

    /// The names of the nodes that have pods.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.lists.iter().map(node_of)
    }

    /// Forgets every pod.
    pub fn clear(&mut self) {
        self.lists.clear();
    }
}

/// The node a list's pods are bound to (every pod of a list is bound to it).
fn node_of(pods: &OnNode) -> &str {
    pods.first()
        .and_then(|pod| pod.target_node())
        .unwrap_or_default()
}

fn key_order(a: &Pod, b: &Pod) -> Ordering {
    object_key_bytes(&a.metadata).cmp(object_key_bytes(&b.metadata))
}

fn has_key(pod: &Pod, key: &str) -> bool {
    object_key_bytes(&pod.metadata).eq(key.bytes())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap};

    use super::*;
    use crate::cluster::store::object_key;

    fn pod(namespace: &str, name: &str, node: &str) -> Arc<Pod> {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.namespace = (!namespace.is_empty()).then(|| namespace.into());
        pod.spec.node_name = (!node.is_empty()).then(|| node.into());
        Arc::new(pod)
    }

    fn names(index: &NodePods, node: &str) -> Vec<String> {
        index
            .on(node)
            .map(|p| object_key(&p.metadata).to_string())
            .collect()
    }

    #[test]
    fn keeps_a_nodes_pods_in_the_stores_key_order() {
        let mut index = NodePods::default();
        // "a-b/y" sorts before "a/x" as keys ('-' < '/'), not as (namespace, name).
        for p in [
            pod("a", "x", "n1"),
            pod("a-b", "y", "n1"),
            pod("", "z", "n1"),
        ] {
            index.insert(&p);
        }
        assert_eq!(names(&index, "n1"), ["a-b/y", "a/x", "z"]);
        let mut keys: Vec<String> = names(&index, "n1");
        keys.sort();
        assert_eq!(keys, names(&index, "n1"));
    }

    #[test]
    fn replaces_removes_and_skips_unbound_pods() {
        let mut index = NodePods::default();
        index.insert(&pod("ns", "p", "n1"));
        let mut newer = (*pod("ns", "p", "n1")).clone();
        newer.metadata.resource_version = Some("2".into());
        index.insert(&Arc::new(newer));
        assert_eq!(index.on("n1").count(), 1);
        assert_eq!(
            index
                .on("n1")
                .next()
                .and_then(|p| p.metadata.resource_version.clone()),
            Some("2".into())
        );
        index.insert(&pod("ns", "unbound", ""));
        assert_eq!(index.nodes().collect::<Vec<_>>(), ["n1"]);
        index.remove("n1", "ns/other");
        assert_eq!(index.on("n1").count(), 1);
        index.remove("n1", "ns/p");
        assert_eq!(index.nodes().count(), 0);
    }

    proptest::proptest! {
        /// Any sequence of binds and removals, applied as the cache applies
        /// them (a pod leaves its old node first), leaves the same lists as
        /// a map of node → sorted keys.
        #[test]
        fn matches_a_map_of_sorted_keys(
            steps in proptest::collection::vec((0..12usize, 0..5usize, proptest::bool::ANY), 0..80)
        ) {
            let mut index = NodePods::default();
            let mut model = BTreeMap::<String, BTreeSet<String>>::new();
            let mut placed = HashMap::<usize, usize>::new();
            for (pod_id, node_id, bind) in steps {
                let (namespace, name) = (["a", "a-b", ""][pod_id % 3], format!("p{pod_id}"));
                let key = object_key(&pod(namespace, &name, "n").metadata).to_string();
                if let Some(old) = placed.remove(&pod_id) {
                    index.remove(&format!("n{old}"), &key);
                    let keys = model.entry(format!("n{old}")).or_default();
                    keys.remove(&key);
                    if keys.is_empty() {
                        model.remove(&format!("n{old}"));
                    }
                }
                if bind {
                    index.insert(&pod(namespace, &name, &format!("n{node_id}")));
                    model.entry(format!("n{node_id}")).or_default().insert(key);
                    placed.insert(pod_id, node_id);
                }
            }
            let mut nodes: Vec<&str> = index.nodes().collect();
            nodes.sort_unstable();
            proptest::prop_assert_eq!(nodes, model.keys().map(String::as_str).collect::<Vec<_>>());
            for (node, keys) in &model {
                proptest::prop_assert_eq!(
                    names(&index, node),
                    keys.iter().cloned().collect::<Vec<_>>()
                );
            }
        }
    }
}
