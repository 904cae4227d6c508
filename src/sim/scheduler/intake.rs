//! What the scheduler learns from the store: nodes into the cache (a change
//! that matters to scheduling wakes the pods parked on that node), bound
//! pods counted on their node (and uncounted when they finish or go, which
//! wakes the pods parked there), unbound pods of the default scheduler into
//! the queue.
//!
//! A pod event is first read through a small head (uid, node, scheduler,
//! phase, deletion mark); the whole slim pod is decoded only for a pod the
//! cache or the queue does not know yet, so the kubelets' stream of status
//! writes costs little.

use std::sync::Arc;

use serde::Deserialize;
use tokio::time::Instant;

use super::Scheduler;
use super::placement::Placement;
use super::queue::PodKey;
use super::writes::SCHEDULER_NAME;
use crate::model::{Node, Pod};
use crate::sim::resources::ResourceKind;
use crate::sim::store::{EventType, StoreEvent, StoredObject};

/// The fields of a pod that route its event.
#[derive(Default, Deserialize)]
#[serde(default)]
struct PodHead {
    metadata: HeadMeta,
    spec: HeadSpec,
    status: HeadStatus,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HeadMeta {
    uid: String,
    deletion_timestamp: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HeadSpec {
    node_name: Option<String>,
    scheduler_name: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HeadStatus {
    phase: Option<String>,
    nominated_node_name: Option<String>,
}

/// Decodes an unbound pod for an attempt: the slim pod and its placement.
pub fn pending_pod(object: &StoredObject) -> Option<(Pod, Placement)> {
    #[derive(Deserialize)]
    struct SpecOnly {
        #[serde(default)]
        spec: Option<Placement>,
    }
    let pod: Pod = object.decode().ok()?;
    let placement = object
        .decode::<SpecOnly>()
        .ok()
        .and_then(|s| s.spec)
        .unwrap_or_default();
    Some((pod, placement))
}

fn key_of(object: &StoredObject) -> PodKey {
    (object.key.namespace.clone(), object.key.name.clone())
}

/// Whether the default scheduler serves a pod naming `scheduler` (upstream
/// defaults an empty `schedulerName` to it).
pub fn is_ours(scheduler: Option<&str>) -> bool {
    scheduler.is_none_or(|name| name.is_empty() || name == SCHEDULER_NAME)
}

fn is_terminal(phase: Option<&str>) -> bool {
    matches!(phase, Some("Succeeded" | "Failed"))
}

impl Scheduler {
    /// Learns every node, then every pod (a re-list after a lost watch
    /// starts from an empty cache and queue).
    pub fn list_all(&mut self, now: Instant) {
        self.cache = super::cache::ClusterCache::new();
        self.queue = super::queue::SchedulingQueue::new();
        let (nodes, _) = self.store.list_objects(ResourceKind::Node, None);
        for node in &nodes {
            if let Ok(node) = node.decode::<Node>() {
                self.cache.upsert_node(node);
            }
        }
        drop(nodes);
        let (pods, _) = self.store.list_objects(ResourceKind::Pod, None);
        for pod in &pods {
            self.on_pod(pod, now);
        }
    }

    /// Whether [`Scheduler::apply`] acts on changes of `kind` (pods and
    /// nodes; the rest, Events above all, pass by).
    pub fn takes_in(kind: ResourceKind) -> bool {
        matches!(kind, ResourceKind::Pod | ResourceKind::Node)
    }

    /// Applies one store event.
    pub fn apply(&mut self, event: &Arc<StoreEvent>, now: Instant) {
        match (event.kind, event.event_type) {
            (ResourceKind::Pod, EventType::Deleted) => self.on_pod_gone(&event.object, now),
            (ResourceKind::Pod, _) => self.on_pod(&event.object, now),
            (ResourceKind::Node, EventType::Deleted) => {
                self.cache.remove_node(&event.object.key.name);
            }
            (ResourceKind::Node, _) => {
                if let Ok(node) = event.object.decode::<Node>() {
                    let name = node.name().to_owned();
                    if self.cache.upsert_node(node) {
                        self.queue.node_changed(&name, now);
                    }
                }
            }
            _ => {}
        }
    }

    fn on_pod_gone(&mut self, object: &StoredObject, now: Instant) {
        let key = key_of(object);
        self.queue.remove(&key);
        self.cache.forget_nomination(&key);
        if self
            .cache
            .placed(&key)
            .is_some_and(|(_, uid)| uid == object.uid)
            && let Some(node) = self.cache.uncount(&key)
        {
            self.queue.node_changed(&node, now);
        }
    }

    fn on_pod(&mut self, object: &StoredObject, now: Instant) {
        let Ok(head) = object.decode::<PodHead>() else {
            return;
        };
        let key = key_of(object);
        let bound = head.spec.node_name.as_deref().filter(|n| !n.is_empty());
        let nominated = head
            .status
            .nominated_node_name
            .as_deref()
            .filter(|n| !n.is_empty());
        let waiting = bound.is_none()
            && !is_terminal(head.status.phase.as_deref())
            && head.metadata.deletion_timestamp.is_none()
            && is_ours(head.spec.scheduler_name.as_deref());
        self.note_nomination(object, &key, nominated.filter(|_| waiting));
        if is_terminal(head.status.phase.as_deref()) {
            self.queue.remove(&key);
            if let Some(node) = self.cache.uncount(&key) {
                self.queue.node_changed(&node, now);
            }
            return;
        }
        if let Some(node) = bound {
            self.queue.remove(&key);
            self.on_bound(object, &key, node, now);
            return;
        }
        if head.metadata.deletion_timestamp.is_some()
            || !is_ours(head.spec.scheduler_name.as_deref())
        {
            self.queue.remove(&key);
            return;
        }
        if self.queue.contains(&key) {
            return;
        }
        let Some((pod, placement)) = pending_pod(object) else {
            return;
        };
        let pinned = placement
            .named_nodes()
            .and_then(|names| <[String; 1]>::try_from(names).ok())
            .map(|[only]| only);
        let delay = self.scaled(self.options.first_attempt_after);
        self.queue
            .add(&key, pod.spec.priority.unwrap_or(0), pinned, delay, now);
    }

    /// Keeps the cache's nomination of a pod in step with its
    /// `status.nominatedNodeName` while it waits (the pod is decoded only
    /// when its nomination changes).
    fn note_nomination(&mut self, object: &StoredObject, key: &PodKey, nominated: Option<&str>) {
        match nominated {
            None => self.cache.forget_nomination(key),
            Some(node) if self.cache.nominated_to(key) == Some(node) => {}
            Some(node) => {
                if let Ok(pod) = object.decode::<Pod>() {
                    self.cache.nominate(key, &pod, node);
                }
            }
        }
    }

    fn on_bound(&mut self, object: &StoredObject, key: &PodKey, node: &str, now: Instant) {
        if self
            .cache
            .placed(key)
            .is_some_and(|(known_node, uid)| uid == object.uid && known_node == node)
        {
            return;
        }
        // A namesake that was counted elsewhere (or an earlier binding of
        // this pod) frees its room first.
        if let Some(freed) = self.cache.uncount(key) {
            self.queue.node_changed(&freed, now);
        }
        let Ok(pod) = object.decode::<Pod>() else {
            return;
        };
        self.cache.count(key, &pod, node);
    }
}
