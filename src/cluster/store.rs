//! Keyed object stores with the reflector's relist semantics, and the event
//! store indexed by involved object. Pure data structures; no I/O.

use std::collections::HashMap;
use std::sync::Arc;

use kube::runtime::watcher;

use crate::model::{Event, MetaFields};

/// How many recent events are kept per involved object (for the detail pane).
pub const EVENTS_PER_OBJECT: usize = 5;

/// The stores' maps: keyed by names, hashed with foldhash (SipHash's
/// flooding resistance buys nothing for names the API server chose, and cost
/// 2% of the load's CPU at 65,000 nodes).
pub type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// `namespace/name` of a namespaced object, or `name` for cluster-scoped ones.
pub type ObjectKey = compact_str::CompactString;

/// The key the reflector would use: `namespace/name`, or `name` when cluster-scoped.
pub fn object_key(meta: &impl MetaFields) -> ObjectKey {
    let name = meta.name().unwrap_or_default();
    match key_namespace(meta) {
        Some(ns) => compact_str::format_compact!("{ns}/{name}"),
        None => name.into(),
    }
}

/// [`object_key`]'s bytes, without building the key (to compare and order
/// objects by key where they are held without one).
pub fn object_key_bytes(meta: &impl MetaFields) -> impl Iterator<Item = u8> + '_ {
    let namespace = key_namespace(meta).unwrap_or_default();
    let separator = (!namespace.is_empty()).then_some(b'/');
    namespace
        .bytes()
        .chain(separator)
        .chain(meta.name().unwrap_or_default().bytes())
}

/// The namespace a key starts with: none for a cluster-scoped object.
fn key_namespace(meta: &impl MetaFields) -> Option<&str> {
    meta.namespace().filter(|ns| !ns.is_empty())
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
    /// The objects shown, shared: a reader keeps one past a change by
    /// cloning the pointer, never the object.
    pub objects: Map<ObjectKey, Arc<K>>,
    /// Objects of a relist in progress (`Init` .. `InitDone`), swapped in at the
    /// end so a half-listed store is never shown as the truth.
    pub buffer: Option<Map<ObjectKey, Arc<K>>>,
    /// What the last relist changed (see [`KindStore::take_relisted`]).
    relisted: Vec<Relisted<K>>,
}

/// One object a relist added, removed or changed: its key and the object
/// held before (`None` when it is new).
pub type Relisted<K> = (ObjectKey, Option<Arc<K>>);

impl<K> Default for KindStore<K> {
    fn default() -> Self {
        Self {
            objects: Map::default(),
            buffer: None,
            relisted: Vec::new(),
        }
    }
}

impl<K> KindStore<K>
where
    K: k8s_openapi::Metadata<Ty: MetaFields>,
{
    /// The reflector's store semantics: `Apply`/`Delete` touch one object, `Init`
    /// opens a buffer, `InitApply` fills it, `InitDone` swaps it in.
    pub fn apply(&mut self, event: watcher::Event<K>) -> Applied {
        match event {
            watcher::Event::Apply(obj) => {
                let key = object_key(obj.metadata());
                self.objects.insert(key.clone(), Arc::new(obj));
                Applied::One(key)
            }
            watcher::Event::Delete(obj) => {
                let key = object_key(obj.metadata());
                self.objects.remove(&key);
                Applied::One(key)
            }
            watcher::Event::Init => {
                self.buffer = Some(Map::default());
                Applied::Buffered
            }
            watcher::Event::InitApply(obj) => {
                let key = object_key(obj.metadata());
                self.buffer
                    .get_or_insert_with(Map::default)
                    .insert(key, Arc::new(obj));
                Applied::Buffered
            }
            watcher::Event::InitDone => {
                let listed = self.buffer.take().unwrap_or_default();
                let mut before = std::mem::replace(&mut self.objects, listed);
                self.relisted = relist_changes(&self.objects, &mut before);
                Applied::Replaced
            }
        }
    }

    /// The objects the last relist ([`Applied::Replaced`]) added, removed or
    /// changed, with what was held before: a relist after a dropped watch
    /// usually changes a few objects, and only their rows need recomputing.
    pub fn take_relisted(&mut self) -> Vec<Relisted<K>> {
        std::mem::take(&mut self.relisted)
    }

    /// Whether a relist is in progress.
    pub fn listing(&self) -> bool {
        self.buffer.is_some()
    }

    /// While a relist is in progress: the objects it has listed so far.
    pub fn relisted_so_far(&self) -> Option<usize> {
        self.buffer.as_ref().map(HashMap::len)
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

/// The objects of `after` that are not in `before` or differ from it, and
/// those of `before` that are gone (taken out of `before`). Objects with the
/// same `resourceVersion` are the same; without one, they are taken as changed.
fn relist_changes<K>(
    after: &Map<ObjectKey, Arc<K>>,
    before: &mut Map<ObjectKey, Arc<K>>,
) -> Vec<Relisted<K>>
where
    K: k8s_openapi::Metadata<Ty: MetaFields>,
{
    let mut changed = Vec::new();
    for (key, object) in after {
        let old = before.remove(key);
        let same = old.as_ref().is_some_and(|old| {
            let version = old.metadata().resource_version();
            version.is_some() && version == object.metadata().resource_version()
        });
        if !same {
            changed.push((key.clone(), old));
        }
    }
    changed.extend(before.drain().map(|(key, old)| (key, Some(old))));
    changed
}

/// Applies `f` to the object of an `Apply`/`InitApply` (to slim it before storing).
pub fn map_event<K>(event: watcher::Event<K>, f: impl FnOnce(K) -> K) -> watcher::Event<K> {
    match event {
        watcher::Event::Apply(k) => watcher::Event::Apply(f(k)),
        watcher::Event::InitApply(k) => watcher::Event::InitApply(f(k)),
        other => other,
    }
}

/// The keys of an index entry, in order: a sorted list at its length (most
/// entries hold one key, so a tree's node or a list's spare room would cost
/// more than the key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys(Vec<ObjectKey>);

impl Keys {
    /// Adds `key` (once).
    pub fn insert(&mut self, key: ObjectKey) {
        if let Err(at) = self.0.binary_search(&key) {
            self.0.reserve_exact(1);
            self.0.insert(at, key);
        }
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        if let Ok(at) = self.0.binary_search_by(|k| k.as_str().cmp(key)) {
            self.0.remove(at);
            self.0.shrink_to_fit();
        }
    }

    /// The keys in order.
    pub fn iter(&self) -> std::slice::Iter<'_, ObjectKey> {
        self.0.iter()
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> IntoIterator for &'a Keys {
    type Item = &'a ObjectKey;
    type IntoIter = std::slice::Iter<'a, ObjectKey>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Builds `index value -> keys` over a store.
pub(super) fn index_by<K>(
    objects: &Map<ObjectKey, Arc<K>>,
    index_of: impl Fn(&K) -> Option<ObjectKey>,
) -> Map<ObjectKey, Keys> {
    let mut index: Map<ObjectKey, Keys> = Map::default();
    for (key, obj) in objects {
        if let Some(at) = index_of(obj.as_ref()) {
            index.entry(at).or_default().insert(key.clone());
        }
    }
    index
}

/// Removes `key` from the set at `at`, dropping empty sets.
pub(super) fn remove_from_index(index: &mut Map<ObjectKey, Keys>, at: &str, key: &str) {
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
            compact_str::format_compact!("{ns}/{name}")
        }
        _ => name.into(),
    }
}

/// Events of one stream, indexed by the object they are about, at most
/// [`EVENTS_PER_OBJECT`] per object so a noisy object cannot grow the cache.
#[derive(Debug, Default)]
pub struct EventStore {
    /// The events.
    pub store: KindStore<Event>,
    by_object: Map<ObjectKey, Keys>,
}

impl EventStore {
    /// Applies a watcher event; `One` carries the involved object's key.
    pub fn apply(&mut self, event: watcher::Event<Event>) -> Applied {
        let previous = match &event {
            watcher::Event::Apply(ev) | watcher::Event::Delete(ev) => self
                .store
                .objects
                .get(&object_key(&ev.metadata))
                .map(|e| involved_key(e)),
            _ => None,
        };
        let applied = self.store.apply(event);
        // The events' own relist is handled by involved object below.
        drop(self.store.take_relisted());
        match applied {
            Applied::One(key) => {
                if let Some(object) = &previous {
                    remove_from_index(&mut self.by_object, object, &key);
                }
                let Some(object) = self.store.objects.get(&key).map(|e| involved_key(e)) else {
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
                let seen = self.store.objects.get(k).and_then(|e| e.last_seen());
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

    /// The objects that have events, unordered.
    pub fn objects(&self) -> Vec<ObjectKey> {
        self.by_object.keys().cloned().collect()
    }

    /// The events about one object, newest first.
    pub fn for_object(&self, object: &str) -> Vec<&Event> {
        let mut events: Vec<&Event> = self
            .by_object
            .get(object)
            .into_iter()
            .flatten()
            .filter_map(|key| self.store.objects.get(key).map(Arc::as_ref))
            .collect();
        events.sort_by_key(|e| std::cmp::Reverse(e.last_seen()));
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Meta;

    #[test]
    fn key_bytes_spell_the_key() {
        for (namespace, name) in [
            (Some("kube-system"), "agent-x"),
            (Some(""), "n1"),
            (None, "n2"),
        ] {
            let meta = Meta {
                name: Some(name.into()),
                namespace: namespace.map(Into::into),
                ..Meta::default()
            };
            let bytes: Vec<u8> = object_key_bytes(&meta).collect();
            assert_eq!(bytes, object_key(&meta).as_bytes(), "{namespace:?} {name}");
        }
    }
}
