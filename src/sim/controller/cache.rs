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

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::node_change::same_answers;
use super::pod::pinned_node;
use crate::engine::ownership::controller_of;
use crate::model::{ControllerRevision, DaemonSet, Node, Pod};
use crate::sim::resources::ResourceKind;
use crate::sim::store::StoredObject;

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

/// Where a cached pod is kept: the DaemonSet it is filed under, its place in
/// that DaemonSet's list, and the resourceVersion it was read at.
#[derive(Clone, Debug)]
struct PodSlot {
    owner: DsKey,
    at: usize,
    rv: u64,
}

/// The caches. Each object is held once: nodes are shared (`Arc`) with the
/// node list a sync plans over, and each DaemonSet's pods sit in one
/// contiguous list that a sync borrows as the engine's `&[Pod]`, so a sync
/// copies neither (at 65,000 nodes those copies were most of the
/// controller's memory).
#[derive(Debug, Default)]
pub struct Cache {
    nodes: BTreeMap<String, Versioned<Arc<Node>>>,
    daemon_sets: BTreeMap<DsKey, Versioned<DaemonSet>>,
    /// Pods by the DaemonSet their controller reference names, in no
    /// particular order (the engine orders what it needs ordered).
    pods: HashMap<DsKey, Vec<Pod>>,
    /// Where each cached pod is.
    pod_slots: HashMap<PodKey, PodSlot>,
    revisions: BTreeMap<(String, String), Versioned<ControllerRevision>>,
    /// The node list as the engine wants it, rebuilt only after node changes.
    node_list: Option<Arc<Vec<Arc<Node>>>>,
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

/// Decodes a typed model straight from the JSON tree (no copy of the tree).
fn decode<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
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
    /// Whether the caches hold objects of `kind` (nodes, DaemonSets, pods,
    /// ControllerRevisions): a store event of any other kind, such as the
    /// Events the controller and the kubelets write, concerns no DaemonSet.
    pub fn holds(kind: ResourceKind) -> bool {
        matches!(
            kind,
            ResourceKind::Node
                | ResourceKind::DaemonSet
                | ResourceKind::Pod
                | ResourceKind::ControllerRevision
        )
    }

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

    /// Applies a created or changed object as a store event carries it:
    /// nodes and pods (the bulk) decode straight from the stored JSON, with
    /// no JSON tree in between; the other kinds go through [`Cache::upsert`].
    pub fn upsert_stored(&mut self, kind: ResourceKind, object: &StoredObject) -> Vec<DsKey> {
        let rv = object.resource_version;
        match kind {
            ResourceKind::Node => {
                let name = &object.key.name;
                if self.nodes.get(name).is_some_and(|n| n.rv >= rv) {
                    return Vec::new();
                }
                match object.decode::<Node>() {
                    Ok(node) => self.file_node(name.clone(), rv, node),
                    Err(_) => Vec::new(),
                }
            }
            ResourceKind::Pod => self.upsert_stored_pod(object),
            _ => self.upsert(kind, &object.value()),
        }
    }

    fn upsert_stored_pod(&mut self, object: &StoredObject) -> Vec<DsKey> {
        let rv = object.resource_version;
        let pod_key = (object.key.namespace.clone(), object.key.name.clone());
        // A stale version carries no news: nothing to file, nothing to sync.
        if self.pod_slots.get(&pod_key).is_some_and(|s| s.rv >= rv) {
            return Vec::new();
        }
        let Ok(mut pod) = object.decode::<Pod>() else {
            return Vec::new();
        };
        let owner = controller_of(Some(&pod.metadata.owner_references))
            .filter(|o| o.kind == "DaemonSet")
            .map(|o| DsKey::new(&pod_key.0, &o.name));
        let Some(owner) = owner else {
            return self.remove_pod(&pod_key, rv).into_iter().collect();
        };
        if pod.spec.node_name.is_none() {
            // As in `upsert_pod`: an unbound pod counts on its pinned node.
            pod.spec.node_name = pinned_node(&object.value()).map(Into::into);
        }
        self.file_pod(pod_key, rv, owner, pod)
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
        let name = text(value, "name");
        if self.nodes.get(name).is_some_and(|n| n.rv >= rv) {
            return Vec::new();
        }
        let Some(node) = decode::<Node>(value) else {
            return Vec::new();
        };
        self.file_node(name.to_owned(), rv, node)
    }

    fn file_node(&mut self, name: String, rv: u64, node: Node) -> Vec<DsKey> {
        let node = Arc::new(node);
        let previous = self.nodes.insert(
            name,
            Versioned {
                rv,
                object: Arc::clone(&node),
            },
        );
        self.node_list = None;
        match previous {
            // A new node may need a pod from every DaemonSet.
            None => self.all_daemon_sets(),
            Some(old) => self.concerned_by_node_change(&old.object, &node),
        }
    }

    /// The DaemonSets whose sync a node's change can alter: those for which
    /// "should run" or "should keep running" differs between the two versions
    /// (upstream `updateNode`). A sync reads a node only through its name and
    /// those two answers, so for every other DaemonSet it would decide and
    /// write exactly what it did before; a label, condition or
    /// `PreferNoSchedule` taint edit (churn's) concerns none.
    fn concerned_by_node_change(&self, old: &Node, new: &Node) -> Vec<DsKey> {
        self.daemon_sets
            .iter()
            .filter(|(_, ds)| !same_answers(old, new, &ds.object))
            .map(|(key, _)| key.clone())
            .collect()
    }

    fn upsert_daemon_set(&mut self, rv: u64, value: &Value) -> Vec<DsKey> {
        let key = DsKey::new(text(value, "namespace"), text(value, "name"));
        if self.daemon_sets.get(&key).is_some_and(|d| d.rv >= rv) {
            return Vec::new();
        }
        if let Some(ds) = decode::<DaemonSet>(value) {
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
        // Whoever it is filed under, an older version never overwrites a newer one.
        if self.pod_slots.get(&pod_key).is_some_and(|s| s.rv >= rv) {
            return Vec::new();
        }
        let Some(mut pod) = decode::<Pod>(value) else {
            return Vec::new();
        };
        if pod.spec.node_name.is_none() {
            // Not yet bound: count it on the node it is pinned to, as upstream
            // GetTargetNodeName does, so the node is not given a second pod.
            pod.spec.node_name = pinned_node(value).map(Into::into);
        }
        self.file_pod(pod_key, rv, owner, pod)
    }

    /// Files a decoded pod under `owner` (the caller checked it is newer
    /// than the cached one).
    fn file_pod(&mut self, pod_key: PodKey, rv: u64, owner: DsKey, pod: Pod) -> Vec<DsKey> {
        let mut keys = Vec::new();
        if let Some(previous) = self
            .pod_slots
            .get(&pod_key)
            .filter(|s| s.owner != owner)
            .map(|s| s.owner.clone())
        {
            self.remove_pod(&pod_key, rv);
            keys.push(previous);
        }
        let pods = self.pods.entry(owner.clone()).or_default();
        if let Some(slot) = self.pod_slots.get_mut(&pod_key) {
            pods[slot.at] = pod;
            slot.rv = rv;
        } else {
            pods.push(pod);
            let slot = PodSlot {
                owner: owner.clone(),
                at: pods.len() - 1,
                rv,
            };
            self.pod_slots.insert(pod_key, slot);
        }
        keys.push(owner);
        keys
    }

    /// Forgets a pod unless the cached one is newer than `rv`; the DaemonSet
    /// it was filed under, if any.
    fn remove_pod(&mut self, pod_key: &PodKey, rv: u64) -> Option<DsKey> {
        let slot = self.pod_slots.get(pod_key)?;
        let owner = slot.owner.clone();
        if slot.rv > rv {
            return Some(owner);
        }
        let at = slot.at;
        self.pod_slots.remove(pod_key);
        let pods = self.pods.get_mut(&owner)?;
        pods.swap_remove(at);
        // The last pod moved into the freed place: file it there.
        if let Some(moved) = pods.get(at) {
            let moved_key = (moved.namespace().to_owned(), moved.name().to_owned());
            if let Some(slot) = self.pod_slots.get_mut(&moved_key) {
                slot.at = at;
            }
        }
        if pods.is_empty() {
            self.pods.remove(&owner);
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
        if let Some(revision) = decode::<ControllerRevision>(value) {
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

    /// All nodes in name order, as one shared list (rebuilt only after node
    /// changes; the nodes themselves are shared, not copied).
    pub fn nodes(&mut self) -> Arc<Vec<Arc<Node>>> {
        let nodes = &self.nodes;
        self.node_list
            .get_or_insert_with(|| Arc::new(nodes.values().map(|n| n.object.clone()).collect()))
            .clone()
    }

    /// Whether a node exists.
    pub fn has_node(&self, name: &str) -> bool {
        self.nodes.contains_key(name)
    }

    /// The pods whose controller reference names `key`, in no particular
    /// order (callers still check the uid).
    pub fn pods_of(&self, key: &DsKey) -> &[Pod] {
        self.pods.get(key).map_or(&[], Vec::as_slice)
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
            self.pod_slots.len(),
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
    fn node_changes_concern_the_daemon_sets_whose_answers_change() {
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
        // A change that alters no answer concerns no DaemonSet, but is cached.
        let keys = cache.upsert(
            ResourceKind::Node,
            &json!({"metadata": {"name": "n1", "resourceVersion": "4", "labels": {"x": "y"}}}),
        );
        assert!(keys.is_empty());
        assert_eq!(cache.nodes()[0].label("x"), Some("y"));
        // A NoExecute taint stops the pod: the DaemonSet must sync.
        let keys = cache.upsert(
            ResourceKind::Node,
            &json!({"metadata": {"name": "n1", "resourceVersion": "5"},
                "spec": {"taints": [{"key": "k", "effect": "NoExecute"}]}}),
        );
        assert_eq!(keys, vec![DsKey::new("ns", "a")]);
    }

    #[test]
    fn pod_lists_stay_consistent_through_random_changes() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        let owned = |name: &str, rv: u64, ds: &str, node: &str| {
            json!({
                "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv.to_string(),
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds, "uid": "u", "controller": true}]},
                "spec": {"nodeName": node},
            })
        };
        let mut rng = StdRng::seed_from_u64(11);
        let mut cache = Cache::default();
        // What the cache must hold: pod name -> (owner, node).
        let mut expected: BTreeMap<String, (String, String)> = BTreeMap::new();
        for rv in 1..2_000_u64 {
            let name = format!("p{}", rng.random_range(0..40));
            let ds = ["a", "b"][rng.random_range(0..2)];
            let node = format!("n{rv}");
            if rng.random_bool(0.3) {
                cache.remove(ResourceKind::Pod, &owned(&name, rv, ds, &node));
                expected.remove(&name);
            } else {
                cache.upsert(ResourceKind::Pod, &owned(&name, rv, ds, &node));
                expected.insert(name, (ds.to_owned(), node));
            }
            if rv % 50 == 0 {
                // A stale write changes nothing.
                let (name, (ds, node)) = expected.iter().next().expect("some pods");
                cache.upsert(ResourceKind::Pod, &owned(name, 1, "other", "stale"));
                assert_eq!(
                    cache
                        .pods_of(&DsKey::new("ns", ds))
                        .iter()
                        .find(|p| p.name() == name)
                        .and_then(|p| p.node_name()),
                    Some(node.as_str())
                );
            }
            let mut seen: BTreeMap<String, (String, String)> = BTreeMap::new();
            for ds in ["a", "b", "other"] {
                for pod in cache.pods_of(&DsKey::new("ns", ds)) {
                    let node = pod.node_name().unwrap_or_default().to_owned();
                    assert!(
                        seen.insert(pod.name().to_owned(), (ds.to_owned(), node))
                            .is_none()
                    );
                }
            }
            assert_eq!(seen, expected, "after rv {rv}");
            assert_eq!(cache.sizes().2, expected.len());
        }
    }

    #[test]
    fn stored_objects_file_like_their_json() {
        let stored =
            |kind: ResourceKind, value: &Value| StoredObject::from_value(kind, value).unwrap();
        let (mut from_json, mut from_stored) = (Cache::default(), Cache::default());
        let objects = [
            (
                ResourceKind::Node,
                json!({"metadata": {"name": "n1", "resourceVersion": "1"}}),
            ),
            (ResourceKind::Pod, pod("bound", 2, Some("n1"))),
            (ResourceKind::Pod, pod("unbound", 3, None)),
            (
                ResourceKind::Pod,
                json!({"metadata": {"name": "orphan", "namespace": "ns", "resourceVersion": "4"}}),
            ),
            (ResourceKind::Pod, pod("bound", 1, Some("stale"))),
        ];
        for (kind, value) in &objects {
            let expected = from_json.upsert(*kind, value);
            let got = from_stored.upsert_stored(*kind, &stored(*kind, value));
            assert_eq!(got, expected, "{value}");
        }
        let key = DsKey::new("ns", "ds");
        let nodes = |cache: &Cache| {
            let mut pods: Vec<(String, Option<String>)> = cache
                .pods_of(&key)
                .iter()
                .map(|p| (p.name().to_owned(), p.node_name().map(str::to_owned)))
                .collect();
            pods.sort();
            pods
        };
        assert_eq!(nodes(&from_stored), nodes(&from_json));
        assert_eq!(
            nodes(&from_stored),
            [
                ("bound".to_owned(), Some("n1".to_owned())),
                ("unbound".to_owned(), Some("pinned".to_owned()))
            ]
        );
        assert_eq!(from_stored.sizes(), from_json.sizes());
    }
}
