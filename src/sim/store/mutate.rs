//! The write half of the store: create, update and patch (deletion is in
//! `delete.rs`), plus the commit every write ends with (`optimistic.rs` has
//! the one write that computes off the lock). Each write here runs under the store's write lock from read to
//! commit, so optimistic-concurrency checks and the resourceVersion bump are
//! atomic; a dry run goes through the same checks and commits nothing.

use std::fmt::Write as _;
use std::sync::Arc;

use rand::Rng;
use serde_json::{Value, json};

use super::admission;
use super::history::{EventType, StoreEvent};
use super::object::{ObjectKey, StoredObject};
use super::strategy::{self, CreateMode, Subresource, WriteStamp};
use super::{State, Store, StoreError, WriteOptions, scope};
use crate::sim::resources::ResourceKind;

/// The alphabet upstream uses for generated name suffixes.
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

impl Store {
    /// Creates an object; the server sets uid, creationTimestamp,
    /// resourceVersion (and generation for DaemonSets). `generateName` works.
    pub fn create(&self, kind: ResourceKind, obj: Value) -> Result<Value, StoreError> {
        self.create_inner(kind, obj, CreateMode::Api, WriteOptions::default())
            .map(|(_, value)| value)
    }

    /// Inserts an object from a snapshot, keeping its uid, creationTimestamp,
    /// generation and status.
    pub fn restore(&self, kind: ResourceKind, obj: Value) -> Result<Value, StoreError> {
        self.create_inner(kind, obj, CreateMode::Restore, WriteOptions::default())
            .map(|(_, value)| value)
    }

    /// Creates an object with explicit mode and options.
    pub fn create_with(
        &self,
        kind: ResourceKind,
        obj: Value,
        mode: CreateMode,
        options: WriteOptions,
    ) -> Result<Arc<StoredObject>, StoreError> {
        self.create_inner(kind, obj, mode, options)
            .map(|(stored, _)| stored)
    }

    /// Creates and answers both the stored form and the value it was made
    /// from, so callers wanting a `Value` need not parse the JSON back.
    fn create_inner(
        &self,
        kind: ResourceKind,
        mut obj: Value,
        mode: CreateMode,
        options: WriteOptions,
    ) -> Result<(Arc<StoredObject>, Value), StoreError> {
        let now = now_rfc3339();
        let mut state = self.write();
        let uid = new_uid(&mut state.rng);
        fill_generated_name(&mut state, kind, &mut obj);
        let stamp = WriteStamp {
            resource_version: state.resource_version + 1,
            now: &now,
            uid: &uid,
            manager: options.manager.as_deref(),
        };
        let mut obj = strategy::prepare_create(kind, obj, mode, &stamp)?;
        match mode {
            CreateMode::Api => {
                admission::admit_lifecycle(&state, kind, &obj)?;
                admission::admit_create(&state, kind, &mut obj)?;
            }
            CreateMode::Restore => admission::fill_restored(&state, kind, &mut obj),
        }
        let key = key_of(kind, &obj);
        if state.objects(kind).contains_key(&key) {
            return Err(StoreError::AlreadyExists {
                kind,
                name: key.name,
            });
        }
        let stored = Arc::new(StoredObject::from_value(kind, &obj)?);
        if options.dry_run {
            return Ok((stored, obj));
        }
        if kind.namespaced()
            && !state
                .objects(ResourceKind::Namespace)
                .contains_key(&ObjectKey::new("", &key.namespace))
        {
            // The sim has no namespace admission: namespaces appear on first use.
            drop(state);
            self.ensure_namespace(&key.namespace);
            return self.create_inner(kind, obj, CreateMode::Restore, options);
        }
        self.commit(&mut state, kind, EventType::Added, &stored);
        Ok((stored, obj))
    }

    /// Replaces an object (PUT). A non-empty `metadata.resourceVersion` must
    /// match the stored one (else Conflict); status changes are ignored.
    pub fn update(&self, kind: ResourceKind, obj: Value) -> Result<Value, StoreError> {
        self.update_with(kind, obj, Subresource::Main, WriteOptions::default())
            .map(|o| o.value())
    }

    /// Replaces an object's status (PUT `/status`); spec and metadata changes
    /// are ignored. Optimistic on resourceVersion like [`Store::update`].
    pub fn update_status(&self, kind: ResourceKind, obj: Value) -> Result<Value, StoreError> {
        self.update_with(kind, obj, Subresource::Status, WriteOptions::default())
            .map(|o| o.value())
    }

    /// Update with explicit subresource and options.
    pub fn update_with(
        &self,
        kind: ResourceKind,
        obj: Value,
        sub: Subresource,
        options: WriteOptions,
    ) -> Result<Arc<StoredObject>, StoreError> {
        let key = key_of(kind, &obj);
        self.modify_with(kind, &key.namespace, &key.name, sub, options, |_| Ok(obj))
    }

    /// Applies a JSON merge patch (RFC 7386) to the main resource.
    pub fn patch_merge(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<Value, StoreError> {
        self.modify_with(
            kind,
            namespace,
            name,
            Subresource::Main,
            WriteOptions::default(),
            |current| {
                let mut next = current.clone();
                json_patch::merge(&mut next, patch);
                Ok(next)
            },
        )
        .map(|o| o.value())
    }

    /// Reads the current object, computes the new one with `change` and stores
    /// it, all under the write lock (so nothing can slip in between). The new
    /// object's resourceVersion, if it differs from the current one, is a
    /// Conflict. Every patch flavour of the HTTP API goes through here.
    pub fn modify_with(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
        sub: Subresource,
        options: WriteOptions,
        change: impl FnOnce(&Value) -> Result<Value, StoreError>,
    ) -> Result<Arc<StoredObject>, StoreError> {
        let WriteOptions { dry_run, manager } = options;
        let now = now_rfc3339();
        let key = ObjectKey::new(scope(kind, namespace), name);
        let mut state = self.write();
        let current =
            state
                .objects(kind)
                .get(&key)
                .cloned()
                .ok_or_else(|| StoreError::NotFound {
                    kind,
                    name: name.to_owned(),
                })?;
        let stamp = WriteStamp {
            resource_version: state.resource_version + 1,
            now: &now,
            uid: "",
            manager: manager.as_deref(),
        };
        let Some((next, stored)) = next_version(kind, &key, &current, sub, &stamp, change)? else {
            return Ok(current);
        };
        admission::admit_update(&state, kind, &next)?;
        let stored = Arc::new(stored);
        if !dry_run {
            self.commit(&mut state, kind, EventType::Modified, &stored);
        }
        Ok(stored)
    }

    /// Creates the namespace if it does not exist yet.
    pub fn ensure_namespace(&self, namespace: &str) {
        if namespace.is_empty()
            || self
                .get_object(ResourceKind::Namespace, "", namespace)
                .is_some()
        {
            return;
        }
        let obj = json!({"metadata": {"name": namespace}, "spec": {"finalizers": ["kubernetes"]}});
        // A clash means someone else just created it, which is what we want;
        // an invalid name is reported by the create that named it.
        let _ = self.create_with(
            ResourceKind::Namespace,
            obj,
            CreateMode::Api,
            WriteOptions::default(),
        );
    }

    /// Applies a change: bumps the resourceVersion, updates the map, records
    /// the event and wakes subscribers.
    pub(super) fn commit(
        &self,
        state: &mut State,
        kind: ResourceKind,
        event_type: EventType,
        stored: &Arc<StoredObject>,
    ) {
        state.resource_version = stored.resource_version;
        let objects = state.objects_mut(kind);
        let previous = if event_type == EventType::Deleted {
            objects.remove(&stored.key)
        } else {
            objects.insert(stored.key.clone(), Arc::clone(stored))
        };
        if kind.is_crd() {
            state.custom.follow(event_type, stored);
        }
        let event = StoreEvent::new(kind, event_type, Arc::clone(stored), previous);
        state.history.push(Arc::new(event));
        self.inner.changed.send_replace(state.resource_version);
    }
}

/// Fills `metadata.name` from `generateName` plus a random suffix not yet taken.
fn fill_generated_name(state: &mut State, kind: ResourceKind, obj: &mut Value) {
    let has_name = obj["metadata"]["name"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let Some(prefix) = obj["metadata"]["generateName"].as_str().map(str::to_owned) else {
        return;
    };
    if has_name || !obj["metadata"].is_object() {
        return;
    }
    let namespace = obj["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    loop {
        let suffix: String = (0..5)
            .map(|_| char::from(NAME_ALPHABET[state.rng.random_range(0..NAME_ALPHABET.len())]))
            .collect();
        let name = format!("{prefix}{suffix}");
        if !state
            .objects(kind)
            .contains_key(&ObjectKey::new(scope(kind, &namespace), &name))
        {
            obj["metadata"]["name"] = json!(name);
            return;
        }
    }
}

/// What `change` makes of `current` (stored under `key`), stamped as a write
/// at `stamp`: the object and its stored form, or `None` when nothing
/// changed. The one update step of [`Store::modify_with`] and
/// `Store::modify_off_lock`.
pub(super) fn next_version(
    kind: ResourceKind,
    key: &ObjectKey,
    current: &StoredObject,
    sub: Subresource,
    stamp: &WriteStamp,
    change: impl FnOnce(&Value) -> Result<Value, StoreError>,
) -> Result<Option<(Value, StoredObject)>, StoreError> {
    let old = current.value();
    let new = change(&old)?;
    if key_of(kind, &new).name != key.name && !strategy::object_name(&new).is_empty() {
        return Err(StoreError::BadRequest(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            strategy::object_name(&new),
            key.name
        )));
    }
    let Some(next) = strategy::prepare_update(kind, &old, new, sub, stamp)? else {
        return Ok(None);
    };
    // Room for a little growth: most updates change a few fields.
    let expected_len = current.json.len() + current.json.len() / 8;
    let stored = StoredObject::from_value_sized(kind, &next, expected_len)?;
    Ok(Some((next, stored)))
}

fn key_of(kind: ResourceKind, obj: &Value) -> ObjectKey {
    ObjectKey::new(
        scope(
            kind,
            obj["metadata"]["namespace"].as_str().unwrap_or_default(),
        ),
        obj["metadata"]["name"].as_str().unwrap_or_default(),
    )
}

/// Now, RFC 3339 to the second, as the server stamps objects.
pub fn now_rfc3339() -> String {
    crate::clock::now()
        .round(jiff::Unit::Second)
        .map_or_else(|_| crate::clock::now().to_string(), |t| t.to_string())
}

/// A random RFC 4122 version-4 uid.
fn new_uid(rng: &mut rand::rngs::StdRng) -> String {
    let mut bytes: [u8; 16] = rng.random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().fold(String::with_capacity(32), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    });
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
