//! The target's pods by the node they are bound to.
//!
//! The index holds the pod store's own pointers, not the pods' keys: a pod
//! key (`namespace/name`) is usually longer than an inline string, so each
//! copy was a heap block, and a node's list of two keys another (about 160
//! bytes a node at 65,000 nodes). A node's pods, almost always one or two,
//! sit inline.

use std::cmp::Ordering;
use std::sync::Arc;

use smallvec::SmallVec;

use super::store::{Map, ObjectKey};
use crate::model::{MetaFields, Pod};

/// Pods of one node, in pod key order.
type OnNode = SmallVec<[Arc<Pod>; 2]>;

/// Node name → the pods bound to it.
#[derive(Debug, Default)]
pub struct NodePods(Map<ObjectKey, OnNode>);

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
        let Some(node) = pod.node_name() else {
            return;
        };
        let pods = self.0.entry(node.into()).or_default();
        match pods.binary_search_by(|held| key_order(held, pod)) {
            Ok(at) => pods[at] = pod.clone(),
            Err(at) => pods.insert(at, pod.clone()),
        }
    }

    /// Removes the pod `key` (`namespace/name`) from `node`.
    pub fn remove(&mut self, node: &str, key: &str) {
        let Some(pods) = self.0.get_mut(node) else {
            return;
        };
        pods.retain(|held| !has_key(held, key));
        if pods.is_empty() {
            self.0.remove(node);
        }
    }

    /// The pods bound to `node`, in pod key order.
    pub fn on(&self, node: &str) -> impl Iterator<Item = &Pod> {
        self.0.get(node).into_iter().flatten().map(Arc::as_ref)
    }

    /// The names of the nodes that have pods.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(ObjectKey::as_str)
    }

    /// Forgets every pod.
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// A pod's key (as [`super::store::object_key`] writes it), byte by byte,
/// without building it.
fn key_bytes(pod: &Pod) -> impl Iterator<Item = u8> + '_ {
    let namespace = pod.metadata.namespace().unwrap_or_default();
    let separator = (!namespace.is_empty()).then_some(b'/');
    namespace.bytes().chain(separator).chain(pod.name().bytes())
}

fn key_order(a: &Pod, b: &Pod) -> Ordering {
    key_bytes(a).cmp(key_bytes(b))
}

fn has_key(pod: &Pod, key: &str) -> bool {
    key_bytes(pod).eq(key.bytes())
}

#[cfg(test)]
mod tests {
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
}
