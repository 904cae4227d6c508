//! One DaemonSet sync (upstream `syncDaemonSet`): read the caches, bring the
//! history up to date, plan with the engine, create and delete pods, then
//! write the status if it changed. Every write's result goes straight back
//! into the cache, so the next sync never acts twice on the same gap.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use super::ControllerError;
use super::backoff::{FailedPodBackoff, backoff_key};
use super::cache::{Cache, DsKey};
use super::events::{EventRecorder, EventType, ObjectRef, Source};
use super::history::{HistoryAction, HistoryPlan, adoptable_hash_in, plan_history_in};
use super::pod::DaemonPodTemplate;
use super::status::compute_status;
use super::verdicts::Verdicts;
use crate::engine::eligibility::NodeVerdict;
use crate::engine::ownership::is_controlled_by;
use crate::engine::reconcile::{DeleteReason, PodAction, plan_reconcile_with_verdicts};
use crate::engine::revision::RevisionIndex;
use crate::model::{ControllerRevision, DaemonSet, Node, Pod};
use crate::sim::kubelet::clock::SimClock;
use crate::sim::resources::ResourceKind;
use crate::sim::store::{Preconditions, Store, StoreError};

const SOURCE: Source = Source {
    component: "daemonset-controller",
    host: None,
};

/// What a sync asks of the loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncOutcome {
    /// Sync this DaemonSet again after this long (availability pending, or a conflict).
    pub requeue_after: Option<Duration>,
}

/// The controller's state: the store it writes, its caches, clock and recorder.
#[derive(Debug)]
pub struct Controller {
    pub(super) store: Store,
    pub(super) cache: Cache,
    clock: SimClock,
    recorder: EventRecorder,
    failed_pods_backoff: FailedPodBackoff,
    /// Eligibility verdicts of earlier syncs, for nodes that did not change.
    verdicts: Verdicts,
}

impl Controller {
    /// A controller over `store` with empty caches.
    pub fn new(store: Store, clock: SimClock) -> Controller {
        let recorder = EventRecorder::new(store.clone(), clock);
        Controller {
            store,
            cache: Cache::default(),
            clock,
            recorder,
            failed_pods_backoff: FailedPodBackoff::default(),
            verdicts: Verdicts::default(),
        }
    }

    /// Fills the caches from the store (the informers' initial list).
    pub fn list_all(&mut self) {
        self.cache = Cache::default();
        for kind in [
            ResourceKind::Node,
            ResourceKind::DaemonSet,
            ResourceKind::ControllerRevision,
            ResourceKind::Pod,
        ] {
            // One decoded object at a time, straight from its JSON: a Vec of
            // every pod as a JSON tree is what made large clusters peak at many GB.
            let (objects, _) = self.store.list_objects(kind, None);
            for object in &objects {
                self.cache.upsert_stored(kind, object);
            }
        }
    }

    /// The caches (tests and the loop read them).
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Syncs one DaemonSet.
    pub fn sync(&mut self, key: &DsKey) -> Result<SyncOutcome, ControllerError> {
        let Some(ds) = self.cache.daemon_set(key).cloned() else {
            self.collect_garbage(key);
            self.verdicts.forget(key);
            return Ok(SyncOutcome::default());
        };
        if ds.metadata.deletion_timestamp.is_some() {
            return Ok(SyncOutcome::default());
        }
        let revisions = self.cache.revisions_in(key.namespace.as_str());
        // Indexed once for every step that reads the revisions; again only
        // after this sync wrote some.
        let index = RevisionIndex::new(&ds, &revisions);
        let (live, adopt) = {
            let pods = controlled(self.cache.pods_of(key), &ds);
            // Distinct hashes first: a few revisions among thousands of pods.
            let mut distinct: Vec<&str> = Vec::new();
            for hash in pods.iter().filter_map(Pod::revision_hash) {
                if !distinct.contains(&hash) {
                    distinct.push(hash);
                }
            }
            let live: BTreeSet<String> = distinct.into_iter().map(str::to_owned).collect();
            let adopt = adoptable_hash_in(&index, &pods);
            (live, adopt)
        };
        let (hash, wrote_history) =
            match plan_history_in(&ds, &revisions, &index, &live, adopt.as_deref()) {
                HistoryPlan::Collision => {
                    self.bump_collision_count(&ds)?;
                    return Ok(SyncOutcome {
                        requeue_after: Some(Duration::ZERO),
                    });
                }
                HistoryPlan::Apply {
                    current_hash,
                    actions,
                } => {
                    self.apply_history(key, &actions)?;
                    (current_hash, !actions.is_empty())
                }
            };
        let index = if wrote_history {
            RevisionIndex::new(&ds, &self.cache.revisions_in(key.namespace.as_str()))
        } else {
            index
        };
        let nodes = self.cache.nodes();
        let verdicts: Vec<(&Node, NodeVerdict)> = self.verdicts.of(key, &ds, &nodes);
        let now = self.clock.now();
        let key_of = |node: &str| backoff_key(ds_uid(&ds), observed_generation(&ds), node);
        self.failed_pods_backoff.forget_expired(now);
        let backoff = &self.failed_pods_backoff;
        let plan = plan_reconcile_with_verdicts(
            &ds,
            &verdicts,
            &controlled(self.cache.pods_of(key), &ds),
            &index,
            now,
            // A key a node: built only when some node is backing off.
            &|node| !backoff.is_empty() && backoff.in_backoff(&key_of(node), now),
        );
        // Upstream requeues the DaemonSet after the delay of a node in backoff.
        let backoff_requeue = plan
            .failed_in_backoff
            .iter()
            .map(|held| self.failed_pods_backoff.delay(&key_of(&held.node)))
            .min();
        // One pod template and one event reference per sync, not per pod: a
        // rollout of 65,000 nodes creates as many pods in one sync.
        let ds_ref = ds_object_ref(&ds);
        if !plan.create_on.is_empty() {
            let template = DaemonPodTemplate::new(&ds, &hash);
            for action in &plan.create_on {
                self.create_pod(&ds_ref, template.for_node(&action.node));
            }
        }
        for action in &plan.delete {
            self.record_finished_pod(&ds_ref, action, &key_of(&action.node));
            self.delete_pod(&ds_ref, &action.namespace, &action.name, &action.uid);
        }
        let (status, waiting) = compute_status(
            &ds,
            &verdicts,
            &controlled(self.cache.pods_of(key), &ds),
            &index,
            now,
        );
        self.store_status(&ds, &status)?;
        let waiting = waiting.then_some(Duration::from_secs(1));
        Ok(SyncOutcome {
            requeue_after: waiting.into_iter().chain(backoff_requeue).min(),
        })
    }

    /// Upstream `podsShouldBeOnNode`'s events for a failed or succeeded pod
    /// it deletes; a failed one also ticks the node's failed-pod backoff.
    fn record_finished_pod(&mut self, ds_ref: &ObjectRef, action: &PodAction, backoff_key: &str) {
        let (ns, name, node) = (&action.namespace, &action.name, &action.node);
        match action.reason {
            DeleteReason::Failed => {
                self.failed_pods_backoff.next(backoff_key, self.clock.now());
                let message = format!(
                    "Found failed daemon pod {ns}/{name} on node {node}, will try to kill it"
                );
                self.recorder.record(
                    ds_ref,
                    EventType::Warning,
                    "FailedDaemonPod",
                    &message,
                    &SOURCE,
                );
            }
            DeleteReason::Succeeded => {
                let message = format!(
                    "Found succeeded daemon pod {ns}/{name} on node {node}, will try to delete it"
                );
                self.recorder.record(
                    ds_ref,
                    EventType::Normal,
                    "SucceededDaemonPod",
                    &message,
                    &SOURCE,
                );
            }
            _ => {}
        }
    }

    fn apply_history(
        &mut self,
        key: &DsKey,
        actions: &[HistoryAction],
    ) -> Result<(), ControllerError> {
        let ns = key.namespace.as_str();
        let kind = ResourceKind::ControllerRevision;
        for action in actions {
            let written = match action {
                HistoryAction::Create(revision) => {
                    self.store.create(kind, revision.clone()).map(Some)
                }
                HistoryAction::Renumber { name, revision } => self
                    .store
                    .patch_merge(kind, ns, name, &json!({"revision": revision}))
                    .map(Some),
                HistoryAction::Delete { name, uid } => {
                    let preconditions = Preconditions {
                        uid: Some(uid.clone()),
                        resource_version: None,
                    };
                    match self.store.delete(kind, ns, name, &preconditions) {
                        Ok(outcome) => {
                            self.cache.remove(kind, &outcome.object().value());
                            Ok(None)
                        }
                        Err(StoreError::NotFound { .. }) => Ok(None),
                        Err(err) => Err(err),
                    }
                }
            };
            if let Some(value) = written.map_err(|source| ControllerError::Write {
                what: "controllerrevision",
                source,
            })? {
                self.cache.upsert(kind, &value);
            }
        }
        Ok(())
    }

    fn create_pod(&mut self, ds_ref: &ObjectRef, pod: Value) {
        match self.store.create(ResourceKind::Pod, pod) {
            Ok(pod) => {
                let name = pod["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                self.cache.upsert(ResourceKind::Pod, &pod);
                self.recorder.record(
                    ds_ref,
                    EventType::Normal,
                    "SuccessfulCreate",
                    &format!("Created pod: {name}"),
                    &SOURCE,
                );
            }
            Err(err) => {
                self.recorder.record(
                    ds_ref,
                    EventType::Warning,
                    "FailedCreate",
                    &format!("Error creating: {err}"),
                    &SOURCE,
                );
            }
        }
    }

    fn delete_pod(&mut self, ds_ref: &ObjectRef, namespace: &str, name: &str, uid: &str) {
        let preconditions = Preconditions {
            uid: Some(uid.to_owned()),
            resource_version: None,
        };
        match self
            .store
            .delete(ResourceKind::Pod, namespace, name, &preconditions)
        {
            Ok(outcome) => {
                let value = outcome.object().value();
                match outcome {
                    crate::sim::store::DeleteOutcome::Removed(_) => {
                        self.cache.remove(ResourceKind::Pod, &value)
                    }
                    crate::sim::store::DeleteOutcome::Terminating(_) => {
                        self.cache.upsert(ResourceKind::Pod, &value)
                    }
                };
                self.recorder.record(
                    ds_ref,
                    EventType::Normal,
                    "SuccessfulDelete",
                    &format!("Deleted pod: {name}"),
                    &SOURCE,
                );
            }
            Err(StoreError::NotFound { .. }) => {}
            Err(err) => {
                self.recorder.record(
                    ds_ref,
                    EventType::Warning,
                    "FailedDelete",
                    &format!("Error deleting: {err}"),
                    &SOURCE,
                );
            }
        }
    }

    fn store_status(
        &mut self,
        ds: &DaemonSet,
        status: &k8s_openapi::api::apps::v1::DaemonSetStatus,
    ) -> Result<(), ControllerError> {
        if ds.status.as_ref() == Some(status) {
            return Ok(());
        }
        let mut value = ds_json(ds);
        value["status"] = serde_json::to_value(status).unwrap_or(Value::Null);
        // Like upstream storeDaemonSetStatus, a stale read conflicts; the
        // store event that made it stale requeues this DaemonSet anyway.
        match self.store.update_status(ResourceKind::DaemonSet, value) {
            Ok(written) => {
                self.cache.upsert(ResourceKind::DaemonSet, &written);
                Ok(())
            }
            Err(StoreError::Conflict { .. } | StoreError::NotFound { .. }) => Ok(()),
            Err(source) => Err(ControllerError::Write {
                what: "daemonset status",
                source,
            }),
        }
    }

    fn bump_collision_count(&mut self, ds: &DaemonSet) -> Result<(), ControllerError> {
        let mut value = ds_json(ds);
        let count = ds
            .status
            .as_ref()
            .and_then(|s| s.collision_count)
            .unwrap_or(0)
            + 1;
        value["status"]["collisionCount"] = json!(count);
        let written = self
            .store
            .update_status(ResourceKind::DaemonSet, value)
            .map_err(|source| ControllerError::Write {
                what: "daemonset status",
                source,
            })?;
        self.cache.upsert(ResourceKind::DaemonSet, &written);
        Ok(())
    }

    /// The DaemonSet is gone: delete its pods and revisions, as the garbage
    /// collector does for dependents with a controller reference.
    fn collect_garbage(&mut self, key: &DsKey) {
        let pods: Vec<(String, String, String)> = self
            .cache
            .pods_of(key)
            .iter()
            .map(|p| {
                (
                    p.namespace().to_owned(),
                    p.name().to_owned(),
                    p.uid().to_owned(),
                )
            })
            .collect();
        for (namespace, name, uid) in pods {
            let preconditions = Preconditions {
                uid: Some(uid),
                resource_version: None,
            };
            if let Ok(outcome) =
                self.store
                    .delete(ResourceKind::Pod, &namespace, &name, &preconditions)
            {
                self.cache
                    .upsert(ResourceKind::Pod, &outcome.object().value());
            }
        }
        let revisions: Vec<ControllerRevision> = self.cache.revisions_in(&key.namespace);
        for revision in revisions {
            let owned = revision
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.kind == "DaemonSet" && o.name == key.name);
            if owned {
                let name = revision.metadata.name.clone().unwrap_or_default();
                if let Ok(outcome) = self.store.delete(
                    ResourceKind::ControllerRevision,
                    &key.namespace,
                    &name,
                    &Preconditions::default(),
                ) {
                    self.cache
                        .remove(ResourceKind::ControllerRevision, &outcome.object().value());
                }
            }
        }
    }
}

/// The DaemonSet's pods as the engine wants them: borrowed from the cache
/// when the DaemonSet controls them all (the usual case), else only the
/// controlled ones, copied.
fn controlled<'a>(pods: &'a [Pod], ds: &DaemonSet) -> Cow<'a, [Pod]> {
    if pods.iter().all(|p| is_controlled_by(p, ds)) {
        Cow::Borrowed(pods)
    } else {
        Cow::Owned(
            pods.iter()
                .filter(|p| is_controlled_by(p, ds))
                .cloned()
                .collect(),
        )
    }
}

fn ds_uid(ds: &DaemonSet) -> &str {
    ds.metadata.uid.as_deref().unwrap_or_default()
}

fn observed_generation(ds: &DaemonSet) -> i64 {
    ds.status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .unwrap_or(0)
}

/// The DaemonSet as its events name it (read from the typed object: a
/// JSON tree of the whole DaemonSet per sync only to read three fields).
fn ds_object_ref(ds: &DaemonSet) -> ObjectRef {
    ObjectRef {
        kind: ResourceKind::DaemonSet.kind(),
        api_version: ResourceKind::DaemonSet.api_version(),
        namespace: ds.metadata.namespace.clone().unwrap_or_default(),
        name: ds.metadata.name.clone().unwrap_or_default(),
        uid: ds_uid(ds).to_owned(),
        field_path: None,
    }
}

fn ds_json(ds: &DaemonSet) -> Value {
    let mut value = serde_json::to_value(ds).unwrap_or(Value::Null);
    value["apiVersion"] = json!("apps/v1");
    value["kind"] = json!("DaemonSet");
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemonset_reference_is_the_one_its_json_gives() {
        let ds: DaemonSet = serde_json::from_value(json!({
            "metadata": {"name": "agent", "namespace": "kube-system", "uid": "u-1"},
            "spec": {"selector": {"matchLabels": {"app": "a"}},
                "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}}}
        }))
        .unwrap();
        assert_eq!(
            ds_object_ref(&ds),
            ObjectRef::of(ResourceKind::DaemonSet, &ds_json(&ds))
        );
        assert_eq!(ds_object_ref(&ds).uid, "u-1");
    }
}
