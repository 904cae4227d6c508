//! The controller's informer caches: slim nodes, DaemonSets, their pods
//! (indexed by owning DaemonSet and by node) and ControllerRevisions, kept
//! current from store events and from the controller's own write results.
//! Applying an object older than what is cached is a no-op, so a write's
//! result and the later store event for it can arrive in any order.
//!
//! Answers "which DaemonSets does this change concern" (the enqueue side of
//! the loop); decides nothing else.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::pod::pinned_node;
use crate::model::{ControllerRevision, DaemonSet, Node, Pod};
use crate::sim::resources::ResourceKind;

/// A DaemonSet's namespace and name: the unit of work.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DsKey {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl DsKey {
    /// A key.
    pub fn new(namespace: &str, name: &str) -> DsKey {
        DsKey {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for DsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A cached object with the resourceVersion it was read at.
#[derive(Clone, Debug)]
struct Versioned<T> {
    rv: u64,
    object: T,
}

/// Pod identity: namespace and name.
type PodKey = (String, String);

/// The caches.
#[derive(Debug, Default)]
pub struct Cache {
    nodes: BTreeMap<String, Versioned<Node>>,
    daemon_sets: BTreeMap<DsKey, Versioned<DaemonSet>>,
    /// Pods by the DaemonSet their controller reference names.
    pods: HashMap<DsKey, BTreeMap<PodKey, Versioned<Pod>>>,
    /// Which DaemonSet each cached pod is filed under.
    pod_owner: HashMap<PodKey, DsKey>,
    revisions: BTreeMap<(String, String), Versioned<ControllerRevision>>,
    /// The node list as the engine wants it, rebuilt only after node changes.
    node_list: Option<Arc<Vec<Node>>>,
}

/// The resourceVersion of a JSON object.
pub fn resource_version(value: &Value) -> u64 {
    value["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value["metadata"][field].as_str().unwrap_or_default()
}

/// The DaemonSet a pod or revision's controller reference names.
fn owning_daemon_set(value: &Value) -> Option<DsKey> {
    let owners = value["metadata"]["ownerReferences"].as_array()?;
    let owner = owners.iter().find(|o| o["controller"] == true)?;
    (owner["kind"] == "DaemonSet").then(|| {
        DsKey::new(
            text(value, "namespace"),
            owner["name"].as_str().unwrap_or_default(),
        )
    })
}

impl Cache {
    /// Applies one object (created or changed); returns the DaemonSets to sync.
    pub fn upsert(&mut self, kind: ResourceKind, value: &Value) -> Vec<DsKey> {
        let rv = resource_version(value);
        match kind {
            ResourceKind::Node => self.upsert_node(rv, value),
            ResourceKind::DaemonSet => self.upsert_daemon_set(rv, value),
            ResourceKind::Pod => self.upsert_pod(rv, value),
            ResourceKind::ControllerRevision => self.upsert_revision(rv, value),
            _ => Vec::new(),
        }
    }

    /// Removes one object; returns the DaemonSets to sync.
    pub fn remove(&mut self, kind: ResourceKind, value: &Value) -> Vec<DsKey> {
        let rv = resource_version(value);
        let (namespace, name) = (
            text(value, "namespace").to_owned(),
            text(value, "name").to_owned(),
        );
        match kind {
            ResourceKind::Node => {
                if self.nodes.get(&name).is_some_and(|n| n.rv <= rv) {
                    self.nodes.remove(&name);
                    self.node_list = None;
                }
                self.all_daemon_sets()
            }
            ResourceKind::DaemonSet => {
                let key = DsKey::new(&namespace, &name);
                if self.daemon_sets.get(&key).is_some_and(|d| d.rv <= rv) {
                    self.daemon_sets.remove(&key);
                }
                vec![key]
            }
            ResourceKind::Pod => self
                .remove_pod(&(namespace, name), rv)
                .into_iter()
                .collect(),
            ResourceKind::ControllerRevision => {
                let key = (namespace, name);
                if self.revisions.get(&key).is_some_and(|r| r.rv <= rv) {
                    self.revisions.remove(&key);
                }
                owning_daemon_set(value).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }

    fn upsert_node(&mut self, rv: u64, value: &Value) -> Vec<DsKey> {
        let name = text(value, "name").to_owned();
        if self.nodes.get(&name).is_some_and(|n| n.rv >= rv) {
            return Vec::new();
        }
        let Ok(node) = serde_json::from_value::<Node>(value.clone()) else {
            return Vec::new();
        };
        self.nodes.insert(name, Versioned { rv, object: node });
        self.node_list = None;
        self.all_daemon_sets()
    }

    fn upsert_daemon_set(&mut self, rv: u64, value: &Value) -> Vec<DsKey> {
        let key = DsKey::new(text(value, "namespace"), text(value, "name"));
        if self.daemon_sets.get(&key).is_some_and(|d| d.rv >= rv) {
            return Vec::new();
        }
        if let Ok(ds) = serde_json::from_value::<DaemonSet>(value.clone()) {
            self.daemon_sets
                .insert(key.clone(), Versioned { rv, object: ds });
        }
        vec![key]
    }

    fn upsert_pod(&mut self, rv: u64, value: &Value) -> Vec<DsKey> {
        let pod_key = (
            text(value, "namespace").to_owned(),
            text(value, "name").to_owned(),
        );
        let Some(owner) = owning_daemon_set(value) else {
            return self.remove_pod(&pod_key, rv).into_iter().collect();
        };
        let current = self.pods.get(&owner).and_then(|pods| pods.get(&pod_key));
        if current.is_some_and(|p| p.rv >= rv) {
            return Vec::new();
        }
        let Ok(mut pod) = serde_json::from_value::<Pod>(value.clone()) else {
            return Vec::new();
        };
        if pod.spec.node_name.is_none() {
            // Not yet bound: count it on the node it is pinned to, as upstream
            // GetTargetNodeName does, so the node is not given a second pod.
            pod.spec.node_name = pinned_node(value).map(str::to_owned);
        }
        let mut keys = Vec::new();
        if let Some(previous) = self
            .pod_owner
            .get(&pod_key)
            .filter(|o| **o != owner)
            .cloned()
        {
            keys.extend(self.remove_pod(&pod_key, rv));
            keys.push(previous);
        }
        self.pods
            .entry(owner.clone())
            .or_default()
            .insert(pod_key.clone(), Versioned { rv, object: pod });
        self.pod_owner.insert(pod_key, owner.clone());
        keys.push(owner);
        keys
    }

    fn remove_pod(&mut self, pod_key: &PodKey, rv: u64) -> Option<DsKey> {
        let owner = self.pod_owner.get(pod_key)?.clone();
        let pods = self.pods.get_mut(&owner)?;
        if pods.get(pod_key).is_some_and(|p| p.rv <= rv) {
            pods.remove(pod_key);
            self.pod_owner.remove(pod_key);
        }
        Some(owner)
    }

    fn upsert_revision(&mut self, rv: u64, value: &Value) -> Vec<DsKey> {
        let key = (
            text(value, "namespace").to_owned(),
            text(value, "name").to_owned(),
        );
        if self.revisions.get(&key).is_some_and(|r| r.rv >= rv) {
            return Vec::new();
        }
        if let Ok(revision) = serde_json::from_value::<ControllerRevision>(value.clone()) {
            self.revisions.insert(
                key,
                Versioned {
                    rv,
                    object: revision,
                },
            );
        }
        owning_daemon_set(value).into_iter().collect()
    }

    /// Every cached DaemonSet's key.
    pub fn all_daemon_sets(&self) -> Vec<DsKey> {
        self.daemon_sets.keys().cloned().collect()
    }

    /// A DaemonSet.
    pub fn daemon_set(&self, key: &DsKey) -> Option<&DaemonSet> {
        self.daemon_sets.get(key).map(|d| &d.object)
    }

    /// All nodes, as one shared list (rebuilt only after node changes).
    pub fn nodes(&mut self) -> Arc<Vec<Node>> {
        let nodes = &self.nodes;
        self.node_list
            .get_or_insert_with(|| Arc::new(nodes.values().map(|n| n.object.clone()).collect()))
            .clone()
    }

    /// Whether a node exists.
    pub fn has_node(&self, name: &str) -> bool {
        self.nodes.contains_key(name)
    }

    /// The pods whose controller reference names `key` (callers still check the uid).
    pub fn pods_of(&self, key: &DsKey) -> Vec<Pod> {
        self.pods
            .get(key)
            .map(|pods| pods.values().map(|p| p.object.clone()).collect())
            .unwrap_or_default()
    }

    /// The ControllerRevisions in a namespace.
    pub fn revisions_in(&self, namespace: &str) -> Vec<ControllerRevision> {
        self.revisions
            .range((namespace.to_owned(), String::new())..)
            .take_while(|((ns, _), _)| ns == namespace)
            .map(|(_, r)| r.object.clone())
            .collect()
    }

    /// Counts for logs and tests: (nodes, DaemonSets, pods, revisions).
    pub fn sizes(&self) -> (usize, usize, usize, usize) {
        (
            self.nodes.len(),
            self.daemon_sets.len(),
            self.pod_owner.len(),
            self.revisions.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, rv: u64, node: Option<&str>) -> Value {
        let mut pod = json!({
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv.to_string(),
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "u", "controller": true}]},
            "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["pinned"]}]}]}}}},
        });
        if let Some(node) = node {
            pod["spec"]["nodeName"] = json!(node);
        }
        pod
    }

    #[test]
    fn older_versions_never_overwrite_newer_ones() {
        let mut cache = Cache::default();
        let key = DsKey::new("ns", "ds");
        assert_eq!(
            cache.upsert(ResourceKind::Pod, &pod("p", 5, Some("n1"))),
            vec![key.clone()]
        );
        assert!(
            cache
                .upsert(ResourceKind::Pod, &pod("p", 4, Some("n2")))
                .is_empty()
        );
        assert_eq!(cache.pods_of(&key)[0].node_name(), Some("n1"));
        cache.remove(ResourceKind::Pod, &pod("p", 3, None));
        assert_eq!(
            cache.pods_of(&key).len(),
            1,
            "a stale delete keeps the newer pod"
        );
        cache.remove(ResourceKind::Pod, &pod("p", 6, None));
        assert!(cache.pods_of(&key).is_empty());
    }

    #[test]
    fn unbound_pods_count_on_their_pinned_node() {
        let mut cache = Cache::default();
        cache.upsert(ResourceKind::Pod, &pod("p", 1, None));
        assert_eq!(
            cache.pods_of(&DsKey::new("ns", "ds"))[0].node_name(),
            Some("pinned")
        );
    }

    #[test]
    fn node_changes_concern_every_daemon_set_and_refresh_the_list() {
        let mut cache = Cache::default();
        cache.upsert(
            ResourceKind::DaemonSet,
            &json!({"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "1"}}),
        );
        let keys = cache.upsert(
            ResourceKind::Node,
            &json!({"metadata": {"name": "n1", "resourceVersion": "2"}}),
        );
        assert_eq!(keys, vec![DsKey::new("ns", "a")]);
        assert_eq!(cache.nodes().len(), 1);
        cache.upsert(
            ResourceKind::Node,
            &json!({"metadata": {"name": "n2", "resourceVersion": "3"}}),
        );
        assert_eq!(cache.nodes().len(), 2);
    }
}
