//! Keyed object stores with the reflector's relist semantics, and the event
//! store indexed by involved object. Pure data structures; no I/O.

use std::collections::{BTreeSet, HashMap};

use kube::runtime::watcher;

use crate::model::{Event, ObjectMeta};

/// How many recent events are kept per involved object (for the detail pane).
pub const EVENTS_PER_OBJECT: usize = 5;

/// `namespace/name` of a namespaced object, or `name` for cluster-scoped ones.
pub type ObjectKey = String;

/// The key the reflector would use: `namespace/name`, or `name` when cluster-scoped.
pub fn object_key(meta: &ObjectMeta) -> ObjectKey {
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

/// What applying one watcher event did to a store.
#[derive(Debug, PartialEq, Eq)]
pub enum Applied {
    /// One object was added, replaced or removed (its key).
    One(ObjectKey),
    /// A relist finished and replaced the whole store.
    Replaced,
    /// Nothing visible changed (a relist is in progress).
    Buffered,
}

/// The objects of one kind, keyed by [`ObjectKey`], with a relist buffer.
#[derive(Debug)]
pub struct KindStore<K> {
    /// The objects shown.
    pub objects: HashMap<ObjectKey, K>,
    /// Objects of a relist in progress (`Init` .. `InitDone`), swapped in at the
    /// end so a half-listed store is never shown as the truth.
    pub buffer: Option<HashMap<ObjectKey, K>>,
}

impl<K> Default for KindStore<K> {
    fn default() -> Self {
        Self {
            objects: HashMap::new(),
            buffer: None,
        }
    }
}

impl<K> KindStore<K>
where
    K: k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    /// The reflector's store semantics: `Apply`/`Delete` touch one object, `Init`
    /// opens a buffer, `InitApply` fills it, `InitDone` swaps it in.
    pub fn apply(&mut self, event: watcher::Event<K>) -> Applied {
        match event {
            watcher::Event::Apply(obj) => {
                let key = object_key(obj.metadata());
                self.objects.insert(key.clone(), obj);
                Applied::One(key)
            }
            watcher::Event::Delete(obj) => {
                let key = object_key(obj.metadata());
                self.objects.remove(&key);
                Applied::One(key)
            }
            watcher::Event::Init => {
                self.buffer = Some(HashMap::new());
                Applied::Buffered
            }
            watcher::Event::InitApply(obj) => {
                let key = object_key(obj.metadata());
                self.buffer
                    .get_or_insert_with(HashMap::new)
                    .insert(key, obj);
                Applied::Buffered
            }
            watcher::Event::InitDone => {
                self.objects = self.buffer.take().unwrap_or_default();
                Applied::Replaced
            }
        }
    }

    /// Whether a relist is in progress.
    pub fn listing(&self) -> bool {
        self.buffer.is_some()
    }

    /// Whether no object is held or being listed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Objects held, or being listed when that is more (progress of the first list).
    pub fn len(&self) -> usize {
        self.buffer
            .as_ref()
            .map_or(0, HashMap::len)
            .max(self.objects.len())
    }
}

/// Applies `f` to the object of an `Apply`/`InitApply` (to slim it before storing).
pub fn map_event<K>(event: watcher::Event<K>, f: impl FnOnce(K) -> K) -> watcher::Event<K> {
    match event {
        watcher::Event::Apply(k) => watcher::Event::Apply(f(k)),
        watcher::Event::InitApply(k) => watcher::Event::InitApply(f(k)),
        other => other,
    }
}

/// Builds `index value -> keys` over a store.
pub(super) fn index_by<K>(
    objects: &HashMap<ObjectKey, K>,
    index_of: impl Fn(&K) -> Option<String>,
) -> HashMap<String, BTreeSet<ObjectKey>> {
    let mut index: HashMap<String, BTreeSet<ObjectKey>> = HashMap::new();
    for (key, obj) in objects {
        if let Some(at) = index_of(obj) {
            index.entry(at).or_default().insert(key.clone());
        }
    }
    index
}

/// Removes `key` from the set at `at`, dropping empty sets.
pub(super) fn remove_from_index(
    index: &mut HashMap<String, BTreeSet<ObjectKey>>,
    at: &str,
    key: &str,
) {
    if let Some(keys) = index.get_mut(at) {
        keys.remove(key);
        if keys.is_empty() {
            index.remove(at);
        }
    }
}

/// The key of the object an event is about: `namespace/name` for a pod (as in
/// the pod store), the bare name for a node.
pub fn involved_key(event: &Event) -> ObjectKey {
    let object = &event.involved_object;
    let name = object.name.as_deref().unwrap_or_default();
    match object.namespace.as_deref() {
        Some(ns) if !ns.is_empty() && object.kind.as_deref() != Some("Node") => {
            format!("{ns}/{name}")
        }
        _ => name.to_owned(),
    }
}

/// Events of one stream, indexed by the object they are about, at most
/// [`EVENTS_PER_OBJECT`] per object so a noisy object cannot grow the cache.
#[derive(Debug, Default)]
pub struct EventStore {
    /// The events.
    pub store: KindStore<Event>,
    by_object: HashMap<ObjectKey, BTreeSet<ObjectKey>>,
}

impl EventStore {
    /// Applies a watcher event; `One` carries the involved object's key.
    pub fn apply(&mut self, event: watcher::Event<Event>) -> Applied {
        let previous = match &event {
            watcher::Event::Apply(ev) | watcher::Event::Delete(ev) => self
                .store
                .objects
                .get(&object_key(&ev.metadata))
                .map(involved_key),
            _ => None,
        };
        match self.store.apply(event) {
            Applied::One(key) => {
                if let Some(object) = &previous {
                    remove_from_index(&mut self.by_object, object, &key);
                }
                let Some(object) = self.store.objects.get(&key).map(involved_key) else {
                    return previous.map_or(Applied::Buffered, Applied::One);
                };
                self.by_object
                    .entry(object.clone())
                    .or_default()
                    .insert(key);
                self.trim(&object);
                Applied::One(object)
            }
            Applied::Replaced => {
                self.by_object = index_by(&self.store.objects, |e| Some(involved_key(e)));
                let objects: Vec<_> = self.by_object.keys().cloned().collect();
                for object in objects {
                    self.trim(&object);
                }
                Applied::Replaced
            }
            Applied::Buffered => Applied::Buffered,
        }
    }

    fn trim(&mut self, object: &str) {
        let Some(keys) = self.by_object.get(object) else {
            return;
        };
        if keys.len() <= EVENTS_PER_OBJECT {
            return;
        }
        let mut by_age: Vec<(Option<jiff::Timestamp>, ObjectKey)> = keys
            .iter()
            .map(|k| {
                let seen = self.store.objects.get(k).and_then(Event::last_seen);
                (seen, k.clone())
            })
            .collect();
        by_age.sort();
        let excess = by_age.len() - EVENTS_PER_OBJECT;
        for (_, key) in by_age.into_iter().take(excess) {
            self.store.objects.remove(&key);
            remove_from_index(&mut self.by_object, object, &key);
        }
    }

    /// The events about one object, newest first.
    pub fn for_object(&self, object: &str) -> Vec<&Event> {
        let mut events: Vec<&Event> = self
            .by_object
            .get(object)
            .into_iter()
            .flatten()
            .filter_map(|key| self.store.objects.get(key))
            .collect();
        events.sort_by_key(|e| std::cmp::Reverse(e.last_seen()));
        events
    }
}
