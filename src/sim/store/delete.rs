//! Deletion: preconditions, graceful pod termination (mark with
//! `deletionTimestamp`, remove when the kubelet or the timer finishes it) and
//! the final removal with its DELETED event. Runs under the store's write lock
//! like every other write.

use std::sync::Arc;

use serde_json::{Value, json};

use super::history::EventType;
use super::mutate::now_rfc3339;
use super::object::{ObjectKey, StoredObject};
use super::{
    DeleteOptions, DeleteOutcome, PodTermination, Preconditions, State, Store, StoreError, scope,
};
use crate::sim::resources::ResourceKind;

impl Store {
    /// Deletes an object, checking preconditions (uid, resourceVersion).
    /// Pods are deleted gracefully (see [`DeleteOptions`]).
    pub fn delete(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
    ) -> Result<DeleteOutcome, StoreError> {
        let options = DeleteOptions {
            preconditions: preconditions.clone(),
            ..DeleteOptions::default()
        };
        self.delete_with(kind, namespace, name, &options)
    }

    /// Deletes with full options. A pod with a grace period above zero gets
    /// `deletionTimestamp` and `deletionGracePeriodSeconds` (a MODIFIED event)
    /// and is removed when its termination finishes (a DELETED event).
    pub fn delete_with(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<DeleteOutcome, StoreError> {
        super::priority_class::refuse_system_delete(kind, name)?;
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
        check_preconditions(kind, &current, &options.preconditions)?;
        if finalized(kind) {
            return self.finalize_later(state, kind, current, options.dry_run);
        }
        let mut value = current.value();
        let grace = grace_period(kind, &value, options.grace_period_seconds);
        let already_terminating = value["metadata"]["deletionTimestamp"].is_string();
        if grace > 0 && !already_terminating {
            value["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            value["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
            value["metadata"]["resourceVersion"] = json!((state.resource_version + 1).to_string());
            let stored = Arc::new(StoredObject::from_value(kind, &value)?);
            if !options.dry_run {
                self.commit(&mut state, kind, EventType::Modified, &stored);
                drop(state);
                self.schedule_termination(kind, &stored, grace);
            }
            return Ok(DeleteOutcome::Terminating(stored));
        }
        if grace > 0 {
            return Ok(DeleteOutcome::Terminating(current));
        }
        if options.dry_run {
            return Ok(DeleteOutcome::Removed(current));
        }
        // The value read for the grace period makes the last state: parsing
        // it again was half the cost of every Event's expiry.
        let removed = self.remove_parsed(&mut state, kind, value)?;
        Ok(DeleteOutcome::Removed(removed))
    }

    /// Marks a namespace or CRD as being deleted (`deletionTimestamp`; a
    /// namespace's phase `Terminating`, a CRD's `Terminating` condition) and
    /// has it finalized later: as upstream's namespace controller and CRD
    /// finalizer do, its contents go first, then the object. Until then it
    /// is still served, so `kubectl delete -f` of a manifest that holds a
    /// namespace and its objects deletes each as against a real cluster.
    fn finalize_later(
        &self,
        mut state: std::sync::RwLockWriteGuard<'_, State>,
        kind: ResourceKind,
        current: Arc<StoredObject>,
        dry_run: bool,
    ) -> Result<DeleteOutcome, StoreError> {
        let mut value = current.value();
        if value["metadata"]["deletionTimestamp"].is_string() || dry_run {
            return Ok(DeleteOutcome::Terminating(current));
        }
        let now = now_rfc3339();
        value["metadata"]["deletionTimestamp"] = json!(now);
        value["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        if kind == ResourceKind::Namespace {
            value["status"]["phase"] = json!("Terminating");
        } else if let Some(conditions) = value["status"]["conditions"].as_array_mut() {
            conditions.push(json!({"type": "Terminating", "status": "True",
                "lastTransitionTime": now, "reason": "InstanceDeletionInProgress",
                "message": "CustomResource deletion is in progress"}));
        }
        value["metadata"]["resourceVersion"] = json!((state.resource_version + 1).to_string());
        let stored = Arc::new(StoredObject::from_value(kind, &value)?);
        self.commit(&mut state, kind, EventType::Modified, &stored);
        drop(state);
        self.schedule_termination(kind, &stored, 1);
        Ok(DeleteOutcome::Terminating(stored))
    }

    /// What goes with a finalized namespace (every object in it) or CRD
    /// (every custom resource it registered).
    fn remove_contents(
        &self,
        state: &mut State,
        kind: ResourceKind,
        name: &str,
    ) -> Result<(), StoreError> {
        let doomed: Vec<(ResourceKind, ObjectKey)> = if kind == ResourceKind::Namespace {
            let kinds: Vec<ResourceKind> = ResourceKind::ALL
                .into_iter()
                .chain(state.inert.keys().copied().map(ResourceKind::Inert))
                .filter(|k| k.namespaced())
                .collect();
            kinds
                .into_iter()
                .flat_map(|k| {
                    state
                        .objects(k)
                        .keys()
                        .filter(|key| key.namespace == name)
                        .map(move |key| (k, key.clone()))
                        .collect::<Vec<_>>()
                })
                .collect()
        } else if let Some(custom) = state.custom_kind_of(kind, name) {
            let keys = state.objects(custom).keys().cloned();
            keys.map(|key| (custom, key)).collect()
        } else {
            Vec::new()
        };
        for (kind, key) in doomed {
            self.remove_locked(state, kind, &key)?;
        }
        Ok(())
    }

    /// Finishes a graceful pod deletion: removes the pod if it is still the
    /// one marked (same uid, when given). The simulated kubelet calls this
    /// when [`PodTermination::External`] is configured. Returns whether a pod
    /// was removed.
    pub fn finish_termination(
        &self,
        kind: ResourceKind,
        namespace: &str,
        name: &str,
        uid: Option<&str>,
    ) -> Result<bool, StoreError> {
        let key = ObjectKey::new(scope(kind, namespace), name);
        let mut state = self.write();
        let Some(current) = state.objects(kind).get(&key).cloned() else {
            return Ok(false);
        };
        if uid.is_some_and(|uid| uid != current.uid) {
            return Ok(false);
        }
        if finalized(kind) {
            self.remove_contents(&mut state, kind, name)?;
        }
        self.remove_locked(&mut state, kind, &key)?;
        Ok(true)
    }

    pub(super) fn remove_locked(
        &self,
        state: &mut State,
        kind: ResourceKind,
        key: &ObjectKey,
    ) -> Result<Arc<StoredObject>, StoreError> {
        let Some(current) = state.objects(kind).get(key).cloned() else {
            return Err(StoreError::NotFound {
                kind,
                name: key.name.clone(),
            });
        };
        self.remove_parsed(state, kind, current.value())
    }

    /// Removes the object `value` is the current state of (already parsed
    /// by the caller): its last state, at the deletion's resourceVersion, is
    /// what watchers get.
    fn remove_parsed(
        &self,
        state: &mut State,
        kind: ResourceKind,
        mut value: Value,
    ) -> Result<Arc<StoredObject>, StoreError> {
        value["metadata"]["resourceVersion"] = json!((state.resource_version + 1).to_string());
        let last = Arc::new(StoredObject::from_value(kind, &value)?);
        self.commit(state, kind, EventType::Deleted, &last);
        Ok(last)
    }

    fn schedule_termination(&self, kind: ResourceKind, stored: &Arc<StoredObject>, grace: i64) {
        let cap = match self.options().pod_termination {
            PodTermination::After(cap) => cap,
            // The kubelet finishes pods; namespaces and CRDs are the store's.
            PodTermination::External if finalized(kind) => std::time::Duration::from_secs(1),
            PodTermination::External => return,
        };
        let wait = std::time::Duration::from_secs(grace.unsigned_abs()).min(cap);
        let (store, key, uid) = (self.clone(), stored.key.clone(), stored.uid.clone());
        let finish = move || store.finish_termination(kind, &key.namespace, &key.name, Some(&uid));
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(wait).await;
                    let _ = finish();
                });
            }
            Err(_) => {
                let _ = finish();
            }
        }
    }
}

/// Kinds whose deletion waits for their contents to go (upstream: the
/// namespace controller, the CRD's `customresourcecleanup` finalizer).
fn finalized(kind: ResourceKind) -> bool {
    kind == ResourceKind::Namespace || kind.is_crd()
}

fn check_preconditions(
    kind: ResourceKind,
    current: &StoredObject,
    pre: &Preconditions,
) -> Result<(), StoreError> {
    let conflict = |message: String| StoreError::Conflict {
        kind,
        name: current.key.name.clone(),
        message,
    };
    if let Some(uid) = pre.uid.as_deref().filter(|u| *u != current.uid) {
        return Err(conflict(format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            current.uid
        )));
    }
    if let Some(rv) = pre
        .resource_version
        .as_deref()
        .filter(|rv| *rv != current.resource_version.to_string())
    {
        return Err(conflict(format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            current.resource_version
        )));
    }
    Ok(())
}

/// Only pods terminate gracefully; their default is the pod's
/// `terminationGracePeriodSeconds` (30 when unset).
fn grace_period(kind: ResourceKind, pod: &Value, requested: Option<i64>) -> i64 {
    if kind != ResourceKind::Pod {
        return 0;
    }
    // An unscheduled pod has no kubelet to wait for (upstream deletes it at once).
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        return 0;
    }
    requested
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(30)
        .max(0)
}
