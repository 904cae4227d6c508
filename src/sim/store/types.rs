//! The store's value types: errors, write and delete options, tuning, pages.
//! Plain data; the behaviour is in the store itself.

use std::sync::Arc;
use std::time::Duration;

use super::object::{ObjectKey, StoredObject};
use crate::sim::resources::ResourceKind;

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
    /// 403 Forbidden: an admission plugin or the registry refuses the write
    /// (upstream `admission.NewForbidden`, `apierrors.NewForbidden`).
    #[error("{} \"{name}\" is forbidden: {message}", kind.qualified_plural())]
    Forbidden {
        /// The kind written.
        kind: ResourceKind,
        /// The object name.
        name: String,
        /// Why, in upstream's words.
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

    /// A refusal by admission or the registry.
    pub fn forbidden(kind: ResourceKind, name: &str, message: &str) -> StoreError {
        StoreError::Forbidden {
            kind,
            name: name.to_owned(),
            message: message.to_owned(),
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and answer, persist nothing, emit no event.
    pub dry_run: bool,
    /// The field manager recorded in `metadata.managedFields`; `None` for the
    /// simulation's own writes, which leave managed fields as they are.
    pub manager: Option<Arc<str>>,
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
    /// The resourceVersion the store starts at (its first write gets the next
    /// one); watches from below it get 410 Gone. `rollcall sim` starts above
    /// any earlier run so versions never go backwards for its clients.
    pub first_resource_version: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            history_limit: 10_000,
            pod_termination: PodTermination::After(Duration::from_secs(1)),
            seed: clock_seed(),
            first_resource_version: 0,
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
    /// How many objects of the kind the store holds (for a list across
    /// every namespace, an `O(1)` count), else `None`.
    pub of_kind: Option<usize>,
}
