//! core/v1 Events as the controller and kubelets record them (upstream
//! client-go `record` with its aggregation): an event names its
//! involvedObject, reason, message, type and source component; a repeat of
//! the same (object, reason, message) bumps `count` and `lastTimestamp` on the
//! existing Event instead of creating another, like the upstream correlator.
//! The correlator remembers the last [`REMEMBERED`] distinct events, as
//! upstream's LRU cache does; before, every event ever recorded stayed in
//! memory (2.4 MB per 1,000-node cluster rolled once).

use std::hash::{Hash, Hasher};
use std::num::NonZeroUsize;

use lru::LruCache;

use serde_json::{Value, json};

use crate::sim::kubelet::clock::{SimClock, rfc3339};
use crate::sim::resources::ResourceKind;
use crate::sim::store::Store;

/// `Normal` or `Warning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Something expected happened.
    Normal,
    /// Something went wrong.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// The object an event is about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// `Pod`, `Node`, `DaemonSet`.
    pub kind: &'static str,
    /// `v1` or `apps/v1`.
    pub api_version: &'static str,
    /// Namespace (`""` for nodes).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID (describe matches on it).
    pub uid: String,
    /// `spec.containers{name}` for container events.
    pub field_path: Option<String>,
}

impl ObjectRef {
    /// A reference to a stored object of `kind`.
    pub fn of(kind: ResourceKind, object: &Value) -> ObjectRef {
        let meta = &object["metadata"];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        ObjectRef {
            kind: kind.kind(),
            api_version: kind.api_version(),
            namespace: text(&meta["namespace"]),
            name: text(&meta["name"]),
            uid: text(&meta["uid"]),
            field_path: None,
        }
    }

    /// The same reference narrowed to one container.
    #[must_use]
    pub fn container(mut self, name: &str) -> ObjectRef {
        self.field_path = Some(format!("spec.containers{{{name}}}"));
        self
    }
}

/// Who reports: the component and, for kubelets, the node.
#[derive(Clone, Debug)]
pub struct Source {
    /// `kubelet`, `daemonset-controller`, `default-scheduler`, `node-controller`.
    pub component: &'static str,
    /// The node, for kubelet events.
    pub host: Option<String>,
}

/// What makes two events the same for aggregation (uid, field path,
/// reason, message), kept as their hash: most events never repeat (each
/// names its own pod), and four strings per remembered event were most of
/// the cache's memory. Two events confused need equal 64-bit hashes while
/// both are among the last [`REMEMBERED`].
type EventKey = u64;

fn event_key(object: &ObjectRef, reason: &str, message: &str) -> EventKey {
    let mut hasher = std::hash::DefaultHasher::new();
    (&object.uid, &object.field_path, reason, message).hash(&mut hasher);
    hasher.finish()
}

/// How many distinct events a recorder remembers to bump on a repeat
/// (client-go `tools/record` `maxLruCacheEntries`). One recorder serves a
/// cluster's whole kubelet fleet, so its cache is one kubelet's: a repeat
/// only ever concerns one pod, and a pod's repeating events (back-off,
/// probe failures) stay fresh in it as they recur.
pub const REMEMBERED: NonZeroUsize = NonZeroUsize::new(4096).unwrap();

/// Records Events into the store, aggregating repeats.
#[derive(Debug)]
pub struct EventRecorder {
    store: Store,
    clock: SimClock,
    /// (uid, field path, reason, message) → (namespace, event name), the
    /// most recently recorded first.
    seen: LruCache<EventKey, (String, String)>,
    counter: u64,
}

impl EventRecorder {
    /// A recorder writing to `store`, stamping times from `clock`.
    pub fn new(store: Store, clock: SimClock) -> EventRecorder {
        EventRecorder {
            store,
            clock,
            seen: LruCache::new(REMEMBERED),
            counter: 0,
        }
    }

    /// Records one occurrence. Failures are logged, never returned: an event
    /// that cannot be written must not stop the controller or a kubelet.
    pub fn record(
        &mut self,
        object: &ObjectRef,
        type_: EventType,
        reason: &str,
        message: &str,
        source: &Source,
    ) {
        let now = rfc3339(self.clock.now());
        let key = event_key(object, reason, message);
        if let Some((namespace, name)) = self.seen.get(&key)
            && bump(&self.store, namespace, name, &now)
        {
            return;
        }
        let namespace = if object.namespace.is_empty() {
            "default".to_owned()
        } else {
            object.namespace.clone()
        };
        self.counter += 1;
        let name = format!(
            "{}.{:x}",
            object.name,
            self.clock.now().as_nanosecond().unsigned_abs() + u128::from(self.counter)
        );
        let event = event_object(
            object, type_, reason, message, source, &namespace, &name, &now,
        );
        match self.store.create(ResourceKind::Event, event) {
            Ok(_) => {
                self.seen.put(key, (namespace, name));
            }
            Err(err) => tracing::debug!(%err, reason, "cannot record event"),
        }
    }
}

/// Bumps an existing event; false when it is gone.
fn bump(store: &Store, namespace: &str, name: &str, now: &str) -> bool {
    let Some(current) = store.get(ResourceKind::Event, namespace, name) else {
        return false;
    };
    let count = current["count"].as_i64().unwrap_or(1) + 1;
    let patch = json!({"count": count, "lastTimestamp": now});
    store
        .patch_merge(ResourceKind::Event, namespace, name, &patch)
        .is_ok()
}

#[allow(
    clippy::too_many_arguments,
    reason = "the fields of one Event, each distinct"
)]
fn event_object(
    object: &ObjectRef,
    type_: EventType,
    reason: &str,
    message: &str,
    source: &Source,
    namespace: &str,
    name: &str,
    now: &str,
) -> Value {
    let mut involved = json!({
        "kind": object.kind,
        "apiVersion": object.api_version,
        "name": object.name,
        "uid": object.uid,
    });
    if !object.namespace.is_empty() {
        involved["namespace"] = json!(object.namespace);
    }
    if let Some(path) = &object.field_path {
        involved["fieldPath"] = json!(path);
    }
    let mut source_json = json!({"component": source.component});
    if let Some(host) = &source.host {
        source_json["host"] = json!(host);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": type_.as_str(),
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": source_json,
        "reportingComponent": source.component,
        "reportingInstance": source.host.clone().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> ObjectRef {
        ObjectRef {
            kind: "Pod",
            api_version: "v1",
            namespace: "kube-system".to_owned(),
            name: name.to_owned(),
            uid: format!("uid-{name}"),
            field_path: None,
        }
    }

    fn kubelet() -> Source {
        Source {
            component: "kubelet",
            host: Some("node-1".to_owned()),
        }
    }

    fn counts(store: &Store, pod_name: &str) -> Vec<i64> {
        let (events, _) = store.list(ResourceKind::Event, Some("kube-system"));
        events
            .iter()
            .filter(|e| e["involvedObject"]["name"] == pod_name)
            .map(|e| e["count"].as_i64().unwrap_or_default())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_repeat_bumps_the_count_of_the_same_event() {
        let store = Store::new();
        let mut recorder = EventRecorder::new(store.clone(), SimClock::start());
        for _ in 0..3 {
            recorder.record(
                &pod("a"),
                EventType::Warning,
                "BackOff",
                "back-off",
                &kubelet(),
            );
        }
        assert_eq!(counts(&store, "a"), vec![3]);
    }

    /// client-go's correlator forgets the least recently seen events past
    /// its cache size: a repeat of a forgotten one is a new Event.
    #[tokio::test(start_paused = true)]
    async fn past_the_cache_size_the_oldest_event_is_forgotten_and_a_repeat_is_new() {
        let store = Store::new();
        let mut recorder = EventRecorder::new(store.clone(), SimClock::start());
        let first = pod("first");
        recorder.record(&first, EventType::Normal, "Pulled", "pulled", &kubelet());
        for i in 0..REMEMBERED.get() {
            recorder.record(
                &pod(&format!("p{i}")),
                EventType::Normal,
                "Pulled",
                "pulled",
                &kubelet(),
            );
        }
        recorder.record(&first, EventType::Normal, "Pulled", "pulled", &kubelet());
        assert_eq!(counts(&store, "first"), vec![1, 1]);
        // The most recent one is still remembered.
        let last = pod(&format!("p{}", REMEMBERED.get() - 1));
        recorder.record(&last, EventType::Normal, "Pulled", "pulled", &kubelet());
        assert_eq!(counts(&store, &last.name), vec![2]);
    }
}
