//! The object store of the embedded cluster: every object by kind, namespace
//! and name, one global monotonically increasing resourceVersion (like an etcd
//! revision), and a bounded change history that watches replay from.
//!
//! This is the contract between the HTTP API and the in-process simulation
//! (DaemonSet controller, kubelets): both write through the same methods and
//! see the same events. Objects are kept as compact JSON (`Arc`'d, never
//! copied per reader) plus a small label/field index. The store is
//! synchronous and internally locked; nothing here awaits while holding the
//! lock, and nothing here speaks HTTP.
//!
//! Conventions: `namespace` is `""` for cluster-scoped kinds (nodes,
//! namespaces); `list*` take `None` for all namespaces. A new store already
//! holds the `default` and `kube-system` namespaces and the two system
//! PriorityClasses, and creating an object in
//! an unknown namespace creates that namespace. Writes follow the upstream
//! strategies (see `strategy.rs`, `daemonset.rs`): the server sets uid,
//! creationTimestamp and resourceVersion, DaemonSets get `generation` bumps,
//! `update` ignores status and `update_status` ignores everything else, a
//! non-empty resourceVersion in an update or patch result must match (else
//! `Conflict`). Pods on a node are deleted gracefully: `deletionTimestamp` is
//! set, and the pod is removed by a timer ([`PodTermination::After`], default
//! 1 s) or by the kubelet through [`Store::finish_termination`]
//! ([`PodTermination::External`]). At scale prefer [`Store::list_as`] (decodes
//! straight into slim types) or [`Store::list_objects`] (shared, no decode)
//! over [`Store::list`], which parses every object into a `Value`.
//!
//! Usage from the controller or a kubelet:
//!
//! ```no_run
//! # async fn demo(store: rollcall::sim::store::Store) -> Result<(), rollcall::sim::store::StoreError> {
//! use rollcall::sim::resources::ResourceKind;
//! let mut changes = store.subscribe();
//! let (nodes, _rv) = store.list_as::<rollcall::model::Node>(ResourceKind::Node, None)?;
//! while let Ok(event) = changes.recv().await {
//!     // enqueue event.kind / event.object.key, then sync
//! #   let _ = (&event, &nodes);
//! }
//! # Ok(()) }
//! ```

mod admission;
mod custom;
mod daemonset;
mod delete;
mod history;
mod inert;
pub mod managed;
mod mutate;
mod object;
mod optimistic;
mod priority_class;
mod strategy;
mod subscription;
#[cfg(test)]
mod tests;
mod types;

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use daemonset::TEMPLATE_GENERATION_ANNOTATION;
pub use history::{EventType, StoreEvent};
pub use mutate::now_rfc3339;
pub use object::{ObjectKey, StoredObject};
pub use priority_class::{HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_PRIORITY_CLASSES};
pub use strategy::{CreateMode, Subresource, is_dns_subdomain};
pub use subscription::Subscription;
pub use types::{
    DeleteOptions, DeleteOutcome, Page, PodTermination, Preconditions, StoreError, StoreOptions,
    WriteOptions,
};

use crate::sim::resources::{InertKind, ResourceKind};
use custom::CustomKinds;
use history::History;

type Objects = BTreeMap<ObjectKey, Arc<StoredObject>>;

/// What an inert kind without objects lists.
static NO_OBJECTS: Objects = BTreeMap::new();

pub(crate) struct State {
    resource_version: u64,
    /// The typed kinds' objects, by [`ResourceKind::ALL`] position: nodes and
    /// pods never pass through a map lookup.
    objects: [Objects; ResourceKind::ALL.len()],
    /// The inert kinds' objects (built-in and custom), by kind.
    inert: BTreeMap<InertKind, Objects>,
    /// The custom resource kinds registered by CRDs, by CRD name.
    custom: CustomKinds,
    history: History,
    /// For uids and generated names; uniqueness, not secrecy, is what counts.
    rng: rand::rngs::StdRng,
}

impl State {
    fn objects(&self, kind: ResourceKind) -> &Objects {
        match kind {
            ResourceKind::Inert(inert) => self.inert.get(&inert).unwrap_or(&NO_OBJECTS),
            typed => &self.objects[kind_index(typed)],
        }
    }
    fn objects_mut(&mut self, kind: ResourceKind) -> &mut Objects {
        match kind {
            ResourceKind::Inert(inert) => self.inert.entry(inert).or_default(),
            typed => &mut self.objects[kind_index(typed)],
        }
    }
}

fn kind_index(kind: ResourceKind) -> usize {
    ResourceKind::ALL
        .iter()
        .position(|k| *k == kind)
        .unwrap_or_default()
}

struct Inner {
    state: RwLock<State>,
    changed: tokio::sync::watch::Sender<u64>,
    options: StoreOptions,
}

/// The object store. Cheap to clone; all clones share the same objects.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

impl Default for Store {
    fn default() -> Self {
        Store::new()
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("resource_version", &self.resource_version())
            .finish_non_exhaustive()
    }
}

impl Store {
    /// An empty store with default options and the `default` and
    /// `kube-system` namespaces.
    pub fn new() -> Store {
        Store::with_options(StoreOptions::default())
    }

    /// An empty store (plus the `default` and `kube-system` namespaces).
    pub fn with_options(options: StoreOptions) -> Store {
        let mut history = History::new(options.history_limit);
        history.compact_through(options.first_resource_version);
        let state = State {
            resource_version: options.first_resource_version,
            objects: Default::default(),
            inert: BTreeMap::new(),
            custom: CustomKinds::default(),
            history,
            rng: rand::SeedableRng::seed_from_u64(options.seed),
        };
        let (changed, _) = tokio::sync::watch::channel(options.first_resource_version);
        let store = Store {
            inner: Arc::new(Inner {
                state: RwLock::new(state),
                changed,
                options,
            }),
        };
        for namespace in ["default", "kube-system"] {
            store.ensure_namespace(namespace);
        }
        for class in priority_class::system_priority_classes() {
            // A fresh store cannot hold them yet, and they are valid.
            let _ = store.create(ResourceKind::PriorityClass, class);
        }
        store
    }

    /// The store's options.
    pub fn options(&self) -> &StoreOptions {
        &self.inner.options
    }

    /// Sets how many past events watches can replay (see
    /// [`StoreOptions::history_limit`]): a watcher further behind gets 410
    /// Gone and re-lists. Under churn at R changes/s the default 10,000 is
    /// 10,000/R seconds, so a churning cluster sizes it to the rate.
    pub fn set_history_limit(&self, limit: usize) {
        self.write().history.set_limit(limit);
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, State> {
        self.inner
            .state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.inner
            .state
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The current (latest) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.read().resource_version
    }

    /// One object as JSON. `namespace` is `""` for cluster-scoped kinds.
    pub fn get(&self, kind: ResourceKind, namespace: &str, name: &str) -> Option<Value> {
        self.get_object(kind, namespace, name).map(|o| o.value())
    }

    /// One stored object (shared, not copied).
    pub fn get_object(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<StoredObject>> {
        let key = ObjectKey::new(scope(kind, namespace), name);
        self.read().objects(kind).get(&key).cloned()
    }

    /// One object decoded into a typed model (`model::Node`, `DaemonSet`, …).
    pub fn get_as<T: DeserializeOwned>(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
    ) -> Result<Option<T>, StoreError> {
        self.get_object(kind, namespace, name)
            .map(|o| o.decode())
            .transpose()
    }

    /// Every object of a kind (in one namespace, or all when `None`) as JSON,
    /// with the resourceVersion the list was read at.
    pub fn list(&self, kind: ResourceKind, namespace: Option<&str>) -> (Vec<Value>, u64) {
        let (objects, rv) = self.list_objects(kind, namespace);
        (objects.iter().map(|o| o.value()).collect(), rv)
    }

    /// Every object of a kind (shared, not copied), with the list's resourceVersion.
    pub fn list_objects(
        &self,
        kind: ResourceKind,
        namespace: Option<&str>,
    ) -> (Vec<Arc<StoredObject>>, u64) {
        let page = self.list_page(kind, namespace, None, usize::MAX, |_| true);
        (page.items, page.resource_version)
    }

    /// Every object of a kind decoded into a typed model.
    pub fn list_as<T: DeserializeOwned>(
        &self,
        kind: ResourceKind,
        namespace: Option<&str>,
    ) -> Result<(Vec<T>, u64), StoreError> {
        let (objects, rv) = self.list_objects(kind, namespace);
        let items = objects
            .iter()
            .map(|o| o.decode())
            .collect::<Result<_, _>>()?;
        Ok((items, rv))
    }

    /// A page of matching objects after `after` (exclusive), at most `limit`,
    /// in O(page): it does not count what follows. Pages are read from the current state; the caller keeps the first
    /// page's resourceVersion so that a watch from it replays every change
    /// made while paging.
    pub fn list_page(
        &self,
        kind: ResourceKind,
        namespace: Option<&str>,
        after: Option<&ObjectKey>,
        limit: usize,
        matches: impl Fn(&StoredObject) -> bool,
    ) -> Page {
        let state = self.read();
        let objects = state.objects(kind);
        let start = match (after, namespace) {
            (Some(key), _) => std::ops::Bound::Excluded(key.clone()),
            (None, Some(ns)) => std::ops::Bound::Included(ObjectKey::new(scope(kind, ns), "")),
            (None, None) => std::ops::Bound::Unbounded,
        };
        let in_scope =
            |key: &ObjectKey| namespace.is_none_or(|ns| key.namespace == scope(kind, ns));
        let mut matching = objects
            .range((start, std::ops::Bound::Unbounded))
            .take_while(|(key, _)| in_scope(key))
            .filter(|(_, object)| matches(object))
            .map(|(_, o)| o);
        let items: Vec<_> = matching.by_ref().take(limit).map(Arc::clone).collect();
        // Peek at one more match rather than counting them all, so a page
        // costs O(page), not O(remaining).
        let more = items.len() == limit && matching.next().is_some();
        Page {
            next: more.then(|| items.last().map(|o| o.key.clone())).flatten(),
            items,
            resource_version: state.resource_version,
            of_kind: namespace.is_none().then_some(objects.len()),
        }
    }

    /// Live changes from now on.
    pub fn subscribe(&self) -> Subscription {
        let state = self.read();
        Subscription::new(
            self.clone(),
            state.resource_version,
            self.inner.changed.subscribe(),
        )
    }

    /// Changes after `resource_version`, replayed from the history window and
    /// then live; `Gone` when the window no longer reaches back that far.
    pub fn subscribe_from(&self, resource_version: u64) -> Result<Subscription, StoreError> {
        let state = self.read();
        let oldest = state.history.oldest_replayable();
        if resource_version < oldest {
            return Err(StoreError::Gone {
                requested: resource_version,
                oldest,
            });
        }
        let cursor = resource_version.min(state.resource_version);
        Ok(Subscription::new(
            self.clone(),
            cursor,
            self.inner.changed.subscribe(),
        ))
    }

    /// Forgets the whole change history, so every watch from an older
    /// resourceVersion gets 410 Gone (tests use it to exercise re-lists).
    pub fn compact(&self) {
        let mut state = self.write();
        let rv = state.resource_version;
        state.history.compact_through(rv);
    }

    /// The oldest resourceVersion a watch can still start from.
    pub fn oldest_replayable(&self) -> u64 {
        self.read().history.oldest_replayable()
    }
}

/// `""` for cluster-scoped kinds whatever the caller passed.
fn scope(kind: ResourceKind, namespace: &str) -> &str {
    if kind.namespaced() { namespace } else { "" }
}
