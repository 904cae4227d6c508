//! What every node gives away: the pods of all namespaces that count against
//! it ([`UsagePod::counts`]) and their summed requests, kept per watch event
//! (a pod's requests are added to or subtracted from its node's total; no
//! node is re-summed). What the rows' fit reads, fed by the node usage
//! stream. Pods that do not count (unbound, `Succeeded`, `Failed`)
//! are not held at all.
//!
//! Synchronous and clock-free, like the rest of the cache.

use std::sync::Arc;

use kube::runtime::watcher;

use super::store::{Applied, KindStore, Map, ObjectKey, object_key, object_key_bytes};
use crate::model::{Interned, ResourceList, UsagePod};

/// One node's counted pods and their summed requests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeUsage {
    /// The pods that count against the node (any order).
    pub pods: Vec<Arc<UsagePod>>,
    /// Their summed requests (kept per event).
    pub requested: ResourceList,
}

/// Counted pods by node, as a snapshot owns them; keyed by the node name
/// the node's pods share (no copy of it per node).
pub type UsageByNode = Map<Interned, NodeUsage>;

/// What applying one event changed.
#[derive(Debug, PartialEq, Eq)]
pub enum UsageChange {
    /// Nothing visible (a relist in progress, or a pod that does not count
    /// came and went).
    None,
    /// These nodes' usage changed.
    Nodes(Vec<ObjectKey>),
    /// Most nodes changed (the first list): recompute them all.
    All,
}

/// The counted pods of the cluster, by node.
#[derive(Debug, Default)]
pub struct UsageStore {
    pods: KindStore<UsagePod>,
    by_node: UsageByNode,
}

impl UsageStore {
    /// Applies one watcher event of the node usage stream.
    pub fn apply(&mut self, event: watcher::Event<UsagePod>) -> UsageChange {
        // A pod that stops counting leaves the store as if deleted; one that
        // never counted never enters it.
        let event = match event {
            watcher::Event::Apply(pod) if !pod.counts() => watcher::Event::Delete(pod),
            watcher::Event::InitApply(pod) if !pod.counts() => return UsageChange::None,
            other => other,
        };
        let previous = match &event {
            watcher::Event::Apply(pod) | watcher::Event::Delete(pod) => {
                self.pods.objects.get(&object_key(&pod.metadata)).cloned()
            }
            _ => None,
        };
        match self.pods.apply(event) {
            Applied::Buffered => UsageChange::None,
            Applied::One(key) => {
                let mut changed = Vec::new();
                if let Some(old) = previous {
                    changed.extend(self.take_out(&key, &old));
                }
                if let Some(new) = self.pods.objects.get(&key).cloned() {
                    changed.extend(self.put_in(&new));
                }
                changed.dedup();
                if changed.is_empty() {
                    UsageChange::None
                } else {
                    UsageChange::Nodes(changed)
                }
            }
            Applied::Replaced => self.relisted(),
        }
    }

    /// Re-indexes what a relist changed, or everything when most changed.
    fn relisted(&mut self) -> UsageChange {
        let relisted = self.pods.take_relisted();
        if relisted.len() > self.pods.objects.len() / 2 {
            self.by_node = Map::default();
            let pods: Vec<Arc<UsagePod>> = self.pods.objects.values().cloned().collect();
            for pod in &pods {
                self.put_in(pod);
            }
            return UsageChange::All;
        }
        let mut changed = Vec::new();
        for (key, old) in relisted {
            if let Some(old) = old {
                changed.extend(self.take_out(&key, &old));
            }
            if let Some(new) = self.pods.objects.get(&key).cloned() {
                changed.extend(self.put_in(&new));
            }
        }
        changed.sort();
        changed.dedup();
        UsageChange::Nodes(changed)
    }

    /// Adds `pod` to its node's pods and total; returns the node.
    fn put_in(&mut self, pod: &Arc<UsagePod>) -> Option<ObjectKey> {
        let node = pod.node.as_ref().filter(|n| !n.is_empty())?;
        let usage = self.by_node.entry(node.clone()).or_default();
        usage.requested.add(pod.requests());
        usage.pods.push(Arc::clone(pod));
        Some(ObjectKey::from(node.as_str()))
    }

    /// Takes the pod held under `key` (`old`) out of its node; returns the node.
    fn take_out(&mut self, key: &str, old: &UsagePod) -> Option<ObjectKey> {
        let node = old.node_name()?;
        let usage = self.by_node.get_mut(node)?;
        let at = usage
            .pods
            .iter()
            .position(|p| object_key_bytes(&p.metadata).eq(key.bytes()))?;
        let gone = usage.pods.swap_remove(at);
        usage.requested.sub(gone.requests());
        if usage.pods.is_empty() {
            self.by_node.remove(node);
        }
        Some(ObjectKey::from(node))
    }

    /// The usage of `node`; `None` when no counted pod is bound there.
    pub fn on(&self, node: &str) -> Option<&NodeUsage> {
        self.by_node.get(node)
    }

    /// Pods held (or listed so far during a list).
    pub fn len(&self) -> usize {
        self.pods.len()
    }

    /// Whether no pod is held.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// While a relist is in progress: the pods it has listed so far.
    pub fn relisted_so_far(&self) -> Option<usize> {
        self.pods.relisted_so_far()
    }

    /// Whether a relist is in progress.
    pub fn listing(&self) -> bool {
        self.pods.listing()
    }

    /// A copy of the index (pointers to the pods, the totals): what a
    /// snapshot taken from the watch cache owns.
    pub fn by_node(&self) -> UsageByNode {
        self.by_node.clone()
    }

    /// The index of a one-shot list of every pod of the cluster.
    pub fn of_list(pods: Vec<UsagePod>) -> UsageByNode {
        let mut store = UsageStore::default();
        store.apply(watcher::Event::Init);
        for pod in pods {
            store.apply(watcher::Event::InitApply(pod));
        }
        store.apply(watcher::Event::InitDone);
        store.by_node
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, node: Option<&str>, cpu: &str, phase: &str, rv: &str) -> UsagePod {
        let mut spec =
            json!({"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]});
        if let Some(node) = node {
            spec["nodeName"] = node.into();
        }
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": name, "resourceVersion": rv},
            "spec": spec, "status": {"phase": phase}
        }))
        .unwrap()
    }

    fn cpu(store: &UsageStore, node: &str) -> (i64, usize) {
        store
            .on(node)
            .map_or((0, 0), |u| (u.requested.cpu, u.pods.len()))
    }

    fn list(store: &mut UsageStore, pods: Vec<UsagePod>) -> UsageChange {
        store.apply(watcher::Event::Init);
        for pod in pods {
            store.apply(watcher::Event::InitApply(pod));
        }
        store.apply(watcher::Event::InitDone)
    }

    #[test]
    fn totals_follow_each_event() {
        let mut store = UsageStore::default();
        let first = list(
            &mut store,
            vec![
                pod("a", Some("n1"), "100m", "Running", "1"),
                pod("b", Some("n1"), "200m", "Running", "1"),
                pod("done", Some("n1"), "900m", "Succeeded", "1"),
                pod("pending", None, "900m", "Pending", "1"),
            ],
        );
        assert_eq!(first, UsageChange::All);
        assert_eq!(cpu(&store, "n1"), (300, 2));
        assert_eq!(store.len(), 2, "pods that do not count are not held");
        // Resized in place.
        let change = store.apply(watcher::Event::Apply(pod(
            "a",
            Some("n1"),
            "500m",
            "Running",
            "2",
        )));
        assert_eq!(change, UsageChange::Nodes(vec!["n1".into()]));
        assert_eq!(cpu(&store, "n1"), (700, 2));
        // Bound: the scheduler placed a pending pod.
        store.apply(watcher::Event::Apply(pod(
            "pending",
            Some("n2"),
            "900m",
            "Pending",
            "2",
        )));
        assert_eq!(cpu(&store, "n2"), (900, 1));
        // Finished: no longer counted.
        let change = store.apply(watcher::Event::Apply(pod(
            "b",
            Some("n1"),
            "200m",
            "Failed",
            "2",
        )));
        assert_eq!(change, UsageChange::Nodes(vec!["n1".into()]));
        assert_eq!(cpu(&store, "n1"), (500, 1));
        store.apply(watcher::Event::Delete(pod(
            "a",
            Some("n1"),
            "500m",
            "Running",
            "3",
        )));
        assert_eq!(cpu(&store, "n1"), (0, 0));
        assert!(store.on("n1").is_none());
        // Unknown deletes change nothing.
        assert_eq!(
            store.apply(watcher::Event::Delete(pod(
                "ghost",
                Some("n9"),
                "1",
                "Running",
                "1"
            ))),
            UsageChange::None
        );
    }

    #[test]
    fn a_small_relist_names_only_the_nodes_it_changed() {
        let mut store = UsageStore::default();
        let pods: Vec<UsagePod> = (0..10)
            .map(|i| {
                pod(
                    &format!("p{i}"),
                    Some(&format!("n{i}")),
                    "100m",
                    "Running",
                    "1",
                )
            })
            .collect();
        list(&mut store, pods.clone());
        let mut again = pods;
        again[3] = pod("p3", Some("n3"), "400m", "Running", "2");
        again.remove(7);
        let change = list(&mut store, again);
        assert_eq!(change, UsageChange::Nodes(vec!["n3".into(), "n7".into()]));
        assert_eq!(cpu(&store, "n3"), (400, 1));
        assert_eq!(cpu(&store, "n7"), (0, 0));
        assert_eq!(cpu(&store, "n4"), (100, 1));
    }
}

#[cfg(test)]
mod cache_tests {
    use super::super::cache::{Cache, WatchUpdate};
    use super::super::status::StreamKind;
    use super::*;

    fn at() -> jiff::Timestamp {
        jiff::Timestamp::UNIX_EPOCH
    }

    fn pod(name: &str, node: &str) -> UsagePod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
            "spec": {"nodeName": node, "containers": [{"name": "c",
                "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Running"}
        }))
        .unwrap()
    }

    #[test]
    fn usage_is_known_once_listed_and_marks_only_its_nodes() {
        let mut cache = Cache::new();
        cache.stream_started(StreamKind::NodeUsage);
        assert!(!cache.usage_known(), "not before the first list");
        for event in [
            watcher::Event::Init,
            watcher::Event::InitApply(pod("a", "n1")),
            watcher::Event::InitDone,
        ] {
            cache.apply(WatchUpdate::Usage(event), at());
        }
        assert!(cache.usage_known());
        assert!(
            cache.take_changes().all_nodes,
            "the first list touches every row"
        );
        cache.apply(
            WatchUpdate::Usage(watcher::Event::Apply(pod("b", "n2"))),
            at(),
        );
        let changes = cache.take_changes();
        assert!(!changes.all_nodes);
        assert!(
            changes.nodes.contains("n2") && changes.nodes.len() == 1,
            "{changes:?}"
        );
        assert_eq!(cache.usage_on("n2").map(|u| u.requested.cpu), Some(100));
    }

    #[test]
    fn forbidden_usage_is_unknown_and_recomputes_the_rows_once() {
        let mut cache = Cache::new();
        cache.stream_started(StreamKind::NodeUsage);
        cache.apply(
            WatchUpdate::Forbidden(StreamKind::NodeUsage, "403 Forbidden".into()),
            at(),
        );
        assert!(!cache.usage_known());
        assert!(cache.take_changes().all_nodes);
        assert_eq!(cache.forbidden_kinds(), [StreamKind::NodeUsage]);
    }
}
