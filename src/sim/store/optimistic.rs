//! A read-modify-write that does its work outside the store's write lock:
//! read the current object (a pointer copy under the read lock), parse it,
//! change it, check and serialize the result with nothing locked, then take
//! the write lock only to check that the object is still the one read and to
//! commit. Under a steady stream of writes (churn) the lock is held for the
//! commit alone, so readers (watches, the controller, the kubelets) and other
//! writers are not stalled behind every JSON parse and serialization.
//!
//! The outcome equals [`Store::modify_with`]'s: the same checks on the same
//! object, resourceVersions in commit order. When the object changed in
//! between, the work is redone on the new version (the change is a pure
//! `Fn`); when only other objects were written, the result is re-stamped with
//! the resourceVersion it commits at.

use std::sync::Arc;

use serde_json::{Value, json};

use super::mutate::{next_version, now_rfc3339};
use super::object::{ObjectKey, StoredObject};
use super::strategy::{Subresource, WriteStamp};
use super::{Store, StoreError, scope};
use crate::sim::resources::ResourceKind;

/// How often the object may change under a write before it gives up (a
/// Conflict, as for any client that loses such a race repeatedly).
const ATTEMPTS: usize = 8;

impl Store {
    /// As [`Store::modify_with`] without a manager or dry run, with `change`
    /// computed off the write lock (it may run more than once, so it must be
    /// a pure function of the object it is given).
    pub fn modify_off_lock(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
        sub: Subresource,
        change: impl Fn(&Value) -> Result<Value, StoreError>,
    ) -> Result<Arc<StoredObject>, StoreError> {
        let key = ObjectKey::new(scope(kind, namespace), name);
        for _ in 0..ATTEMPTS {
            let (current, guess) =
                {
                    let state = self.read();
                    let current = state.objects(kind).get(&key).cloned().ok_or_else(|| {
                        StoreError::NotFound {
                            kind,
                            name: name.to_owned(),
                        }
                    })?;
                    (current, state.resource_version + 1)
                };
            let now = now_rfc3339();
            let stamp = WriteStamp {
                resource_version: guess,
                now: &now,
                uid: "",
                manager: None,
            };
            let Some((mut next, mut stored)) =
                next_version(kind, &key, &current, sub, &stamp, &change)?
            else {
                return Ok(current);
            };
            let mut state = self.write();
            let unchanged = state
                .objects(kind)
                .get(&key)
                .is_some_and(|now| Arc::ptr_eq(now, &current));
            if !unchanged {
                // Someone wrote this object meanwhile: redo on their version.
                continue;
            }
            let rv = state.resource_version + 1;
            if rv != guess {
                // Other objects were written meanwhile: only the stamp moves.
                next["metadata"]["resourceVersion"] = json!(rv.to_string());
                stored = StoredObject::from_value_sized(kind, &next, stored.json.len())?;
            }
            let stored = Arc::new(stored);
            self.commit(&mut state, kind, super::EventType::Modified, &stored);
            return Ok(stored);
        }
        Err(StoreError::conflict(kind, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {}})
    }

    fn label(value: &str) -> impl Fn(&Value) -> Result<Value, StoreError> + '_ {
        move |current| {
            let mut next = current.clone();
            next["metadata"]["labels"] = json!({"k": value});
            Ok(next)
        }
    }

    #[test]
    fn writes_like_modify_with_in_resource_version_order() {
        let (a, b) = (Store::new(), Store::new());
        for store in [&a, &b] {
            store.create(ResourceKind::Node, node("n1")).unwrap();
            store.create(ResourceKind::Node, node("n2")).unwrap();
        }
        for (i, name) in ["n1", "n2", "n1"].iter().enumerate() {
            let value = i.to_string();
            let off = a
                .modify_off_lock(
                    ResourceKind::Node,
                    "",
                    name,
                    Subresource::Main,
                    label(&value),
                )
                .unwrap();
            let on = b
                .modify_with(
                    ResourceKind::Node,
                    "",
                    name,
                    Subresource::Main,
                    super::super::WriteOptions::default(),
                    label(&value),
                )
                .unwrap();
            assert_eq!(off.resource_version, a.resource_version());
            let strip = |v: Value| {
                let mut v = v;
                v["metadata"]["resourceVersion"] = Value::Null;
                v["metadata"]["creationTimestamp"] = Value::Null;
                v["metadata"]["uid"] = Value::Null;
                v
            };
            assert_eq!(strip(off.value()), strip(on.value()));
        }
        // No change, no write.
        let before = a.resource_version();
        a.modify_off_lock(ResourceKind::Node, "", "n1", Subresource::Main, label("2"))
            .unwrap();
        assert_eq!(a.resource_version(), before);
    }

    #[test]
    fn a_write_in_between_is_redone_or_restamped() {
        let store = Store::new();
        store.create(ResourceKind::Node, node("n1")).unwrap();
        store.create(ResourceKind::Node, node("n2")).unwrap();
        let calls = std::cell::Cell::new(0);
        let written = store
            .modify_off_lock(ResourceKind::Node, "", "n1", Subresource::Main, |current| {
                calls.set(calls.get() + 1);
                if calls.get() == 1 {
                    // Another writer changes this object, then another one.
                    store
                        .patch_merge(
                            ResourceKind::Node,
                            "",
                            "n1",
                            &json!({"metadata": {"labels": {"other": "x"}}}),
                        )
                        .unwrap();
                    store
                        .patch_merge(
                            ResourceKind::Node,
                            "",
                            "n2",
                            &json!({"metadata": {"labels": {"other": "y"}}}),
                        )
                        .unwrap();
                }
                let mut next = current.clone();
                next["metadata"]["labels"]["mine"] = json!("z");
                Ok(next)
            })
            .unwrap();
        assert_eq!(calls.get(), 2, "redone on the other writer's version");
        let value = written.value();
        assert_eq!(value["metadata"]["labels"]["other"], "x");
        assert_eq!(value["metadata"]["labels"]["mine"], "z");
        assert_eq!(written.resource_version, store.resource_version());
        assert_eq!(
            value["metadata"]["resourceVersion"],
            store.resource_version().to_string()
        );
    }
}
