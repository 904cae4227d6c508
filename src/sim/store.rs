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

mod history;
mod mutate;
mod object;
mod strategy;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use history::{EventType, StoreEvent};
pub use object::{ObjectKey, StoredObject};
pub use strategy::{CreateMode, Subresource, TEMPLATE_GENERATION_ANNOTATION, is_dns_subdomain};

use crate::sim::resources::ResourceKind;
use history::History;

/// Why a store operation failed. The HTTP layer maps each variant to a
/// Kubernetes `Status` with the matching code and reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// 404 NotFound.
    #[error("{kind} \"{name}\" not found")]
    NotFound {
        /// The kind looked up.
        kind: ResourceKind,
        /// The name looked up.
        name: String,
    },
    /// 409 AlreadyExists.
    #[error("{kind} \"{name}\" already exists")]
    AlreadyExists {
        /// The kind created.
        kind: ResourceKind,
        /// The clashing name.
        name: String,
    },
    /// 409 Conflict: stale resourceVersion or failed precondition.
    #[error("Operation cannot be fulfilled on {kind} \"{name}\": {message}")]
    Conflict {
        /// The kind written.
        kind: ResourceKind,
        /// The object name.
        name: String,
        /// Upstream wording of what conflicted.
        message: String,
    },
    /// 422 Invalid: the object fails validation.
    #[error("{} \"{name}\" is invalid: {field}: {message}", qualified_kind(*kind))]
    Invalid {
        /// The kind written.
        kind: ResourceKind,
        /// The object name.
        name: String,
        /// The offending field path.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// 410 Expired: the resourceVersion is older than the history window.
    #[error("too old resource version: {requested} ({oldest})")]
    Gone {
        /// The version asked for.
        requested: u64,
        /// The oldest version still replayable.
        oldest: u64,
    },
    /// 400 BadRequest: the request itself is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// A stored object does not decode into the requested type.
    #[error("cannot decode stored object: {0}")]
    Decode(String),
    /// An internal failure (serialization); 500.
    #[error("internal error: {0}")]
    Internal(String),
}

impl StoreError {
    /// The upstream "object has been modified" conflict.
    pub fn conflict(kind: ResourceKind, name: &str) -> StoreError {
        StoreError::Conflict {
            kind,
            name: name.to_owned(),
            message: "the object has been modified; please apply your changes to the latest version and try again".to_owned(),
        }
    }

    /// A validation failure on `field`.
    pub fn invalid(kind: ResourceKind, name: &str, field: &str, message: &str) -> StoreError {
        StoreError::Invalid {
            kind,
            name: name.to_owned(),
            field: field.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// `DaemonSet.apps`, `Pod`: how upstream names a kind in validation errors.
fn qualified_kind(kind: ResourceKind) -> String {
    match kind.group() {
        "" => kind.kind().to_owned(),
        group => format!("{}.{group}", kind.kind()),
    }
}

/// Delete preconditions (`DeleteOptions.preconditions`); a mismatch is a Conflict.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// The uid the object must have.
    pub uid: Option<String>,
    /// The resourceVersion the object must have.
    pub resource_version: Option<String>,
}

/// Options shared by every write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and answer, persist nothing, emit no event.
    pub dry_run: bool,
}

/// Options of a delete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// uid / resourceVersion the object must still have.
    pub preconditions: Preconditions,
    /// Overrides the pod's `terminationGracePeriodSeconds`; 0 removes at once.
    pub grace_period_seconds: Option<i64>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

/// What a delete did.
#[derive(Clone, Debug)]
pub enum DeleteOutcome {
    /// The object is gone; this was its last state.
    Removed(Arc<StoredObject>),
    /// A pod was marked for graceful deletion (`deletionTimestamp` set) and
    /// stays until its termination finishes.
    Terminating(Arc<StoredObject>),
}

impl DeleteOutcome {
    /// The object as answered to the client.
    pub fn object(&self) -> &Arc<StoredObject> {
        match self {
            DeleteOutcome::Removed(o) | DeleteOutcome::Terminating(o) => o,
        }
    }
}

/// Who finishes a graceful pod deletion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodTermination {
    /// The store removes the pod after `min(grace period, cap)` on a tokio
    /// timer (at once when no runtime is running).
    After(Duration),
    /// Someone else (the simulated kubelet) calls [`Store::finish_termination`].
    External,
}

/// Store tuning.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// How many past events watches can replay (older versions get 410).
    pub history_limit: usize,
    /// Graceful pod deletion policy.
    pub pod_termination: PodTermination,
    /// Seed for uids and generated names (tests fix it; the default mixes in the clock).
    pub seed: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            history_limit: 20_000,
            pod_termination: PodTermination::After(Duration::from_secs(1)),
            seed: clock_seed(),
        }
    }
}

/// A seed from the wall clock, so two stores in one process differ.
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            u64::try_from(d.as_nanos() & u128::from(u64::MAX)).unwrap_or_default()
        })
}

/// One page of a list.
#[derive(Clone, Debug)]
pub struct Page {
    /// The matching objects, in key order.
    pub items: Vec<Arc<StoredObject>>,
    /// The store's resourceVersion when the page was read.
    pub resource_version: u64,
    /// Where the next page starts, when more matching objects remain.
    pub next: Option<ObjectKey>,
    /// How many matching objects follow this page.
    pub remaining: usize,
}

type Objects = BTreeMap<ObjectKey, Arc<StoredObject>>;

pub(crate) struct State {
    resource_version: u64,
    objects: [Objects; ResourceKind::ALL.len()],
    history: History,
    /// For uids and generated names; uniqueness, not secrecy, is what counts.
    rng: rand::rngs::StdRng,
}

impl State {
    fn objects(&self, kind: ResourceKind) -> &Objects {
        &self.objects[kind_index(kind)]
    }
    fn objects_mut(&mut self, kind: ResourceKind) -> &mut Objects {
        &mut self.objects[kind_index(kind)]
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
        let state = State {
            resource_version: 0,
            objects: Default::default(),
            history: History::new(options.history_limit),
            rng: rand::SeedableRng::seed_from_u64(options.seed),
        };
        let (changed, _) = tokio::sync::watch::channel(0);
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
        store
    }

    /// The store's options.
    pub fn options(&self) -> &StoreOptions {
        &self.inner.options
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

    /// A page of matching objects after `after` (exclusive), at most `limit`.
    /// Pages are read from the current state; the caller keeps the first
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
            .filter(|(_, object)| matches(object));
        let items: Vec<_> = matching
            .by_ref()
            .take(limit)
            .map(|(_, o)| Arc::clone(o))
            .collect();
        let remaining = matching.count();
        Page {
            next: (remaining > 0)
                .then(|| items.last().map(|o| o.key.clone()))
                .flatten(),
            items,
            resource_version: state.resource_version,
            remaining,
        }
    }

    /// Live changes from now on.
    pub fn subscribe(&self) -> Subscription {
        let state = self.read();
        Subscription {
            store: self.clone(),
            cursor: state.resource_version,
            changed: self.inner.changed.subscribe(),
            buffer: std::collections::VecDeque::new(),
        }
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
        Ok(Subscription {
            store: self.clone(),
            cursor: resource_version.min(state.resource_version),
            changed: self.inner.changed.subscribe(),
            buffer: std::collections::VecDeque::new(),
        })
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

/// A stream of store changes for one reader. Readers share the events; a
/// reader that falls behind the history window gets `Gone` and must re-list.
pub struct Subscription {
    store: Store,
    cursor: u64,
    changed: tokio::sync::watch::Receiver<u64>,
    buffer: std::collections::VecDeque<Arc<StoreEvent>>,
}

impl Subscription {
    /// The resourceVersion of the last event handed out (or the start point).
    pub fn resource_version(&self) -> u64 {
        self.cursor
    }

    /// The next change, waiting for one if needed. `Err(Gone)` means this
    /// reader fell behind the history window; re-list and subscribe again.
    pub async fn recv(&mut self) -> Result<Arc<StoreEvent>, StoreError> {
        loop {
            if let Some(event) = self.buffer.pop_front() {
                return Ok(event);
            }
            let batch = self.next_batch().await?;
            self.buffer.extend(batch);
        }
    }

    /// Every change not yet seen (at least one), waiting if there is none.
    pub async fn next_batch(&mut self) -> Result<Vec<Arc<StoreEvent>>, StoreError> {
        if !self.buffer.is_empty() {
            return Ok(self.buffer.drain(..).collect());
        }
        loop {
            let batch = self.try_batch()?;
            if !batch.is_empty() {
                return Ok(batch);
            }
            if self.changed.changed().await.is_err() {
                // The store is gone; nothing will ever change again.
                return std::future::pending().await;
            }
        }
    }

    /// Changes not yet seen, without waiting (possibly none).
    pub fn try_batch(&mut self) -> Result<Vec<Arc<StoreEvent>>, StoreError> {
        // Mark the notification seen before reading, so a write racing with
        // this read still wakes the next `changed()`.
        self.changed.borrow_and_update();
        let state = self.store.read();
        let oldest = state.history.oldest_replayable();
        let batch = state.history.since(self.cursor).ok_or(StoreError::Gone {
            requested: self.cursor,
            oldest,
        })?;
        if let Some(last) = batch.last() {
            self.cursor = last.resource_version;
        }
        Ok(batch)
    }
}
