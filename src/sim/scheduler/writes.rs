//! What the scheduler writes, in upstream's words: the binding (`spec.nodeName`,
//! PodScheduled True, the nomination cleared, a `Scheduled` event), a failed
//! attempt (PodScheduled False `Unschedulable` with the FitError message, the
//! nomination, a Warning `FailedScheduling` event from `default-scheduler`,
//! repeats counted on one Event), and preemption (the victim's
//! `DisruptionTarget` condition, a `Preempted` event, its graceful delete).
//!
//! Every write is checked against the pod's uid, so a namesake created since
//! the decision is never touched.

use serde_json::{Value, json};

use super::decide::Nomination;
use crate::sim::controller::events::{EventRecorder, EventType, ObjectRef, Source};
use crate::sim::kubelet::clock::{SimClock, rfc3339};
use crate::sim::kubelet::pod_status;
use crate::sim::resources::ResourceKind;
use crate::sim::store::{
    DeleteOptions, Preconditions, Store, StoreError, Subresource, WriteOptions,
};

/// The scheduler's name: its events' source, and the `schedulerName` it serves.
pub const SCHEDULER_NAME: &str = "default-scheduler";

/// A pod the scheduler writes about.
#[derive(Clone, Debug)]
pub struct PodRef<'a> {
    /// Namespace.
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// UID.
    pub uid: &'a str,
}

impl PodRef<'_> {
    fn object(&self) -> ObjectRef {
        ObjectRef {
            kind: "Pod",
            api_version: "v1",
            namespace: self.namespace.to_owned(),
            name: self.name.to_owned(),
            uid: self.uid.to_owned(),
            field_path: None,
        }
    }
}

/// The scheduler's writer.
#[derive(Debug)]
pub struct Writes {
    store: Store,
    clock: SimClock,
    recorder: EventRecorder,
}

impl Writes {
    /// A writer on `store`, stamping times from `clock`.
    pub fn new(store: Store, clock: SimClock) -> Writes {
        let recorder = EventRecorder::new(store.clone(), clock);
        Writes {
            store,
            clock,
            recorder,
        }
    }

    /// Binds the pod to `node` (upstream's binding: nodeName set only if
    /// still unset, nominatedNodeName cleared, PodScheduled True).
    pub fn bind(&mut self, pod: &PodRef<'_>, node: &str) -> Result<(), StoreError> {
        let now = rfc3339(self.clock.now());
        self.store.modify_with(
            ResourceKind::Pod,
            pod.namespace,
            pod.name,
            Subresource::Binding,
            WriteOptions::default(),
            |current| {
                bindable(current, pod.uid)?;
                let mut next = current.clone();
                next["spec"]["nodeName"] = json!(node);
                pod_status::scheduled(&mut next, node, &now);
                if let Some(status) = next["status"].as_object_mut() {
                    status.remove("nominatedNodeName");
                }
                Ok(next)
            },
        )?;
        let message = format!(
            "Successfully assigned {}/{} to {node}",
            pod.namespace, pod.name
        );
        self.event(pod, EventType::Normal, "Scheduled", &message);
        Ok(())
    }

    /// Records a failed attempt: PodScheduled False `Unschedulable` with
    /// `message`, the nomination set, kept or cleared, and a
    /// `FailedScheduling` event.
    pub fn unschedulable(
        &mut self,
        pod: &PodRef<'_>,
        message: &str,
        nomination: &Nomination,
    ) -> Result<(), StoreError> {
        self.write_status(pod, |next, now| {
            pod_status::set_condition(
                next,
                "PodScheduled",
                "False",
                Some("Unschedulable"),
                Some(message),
                now,
            );
            match nomination {
                Nomination::Set(node) => next["status"]["nominatedNodeName"] = json!(node),
                Nomination::Keep => {}
                Nomination::Clear => {
                    if let Some(status) = next["status"].as_object_mut() {
                        status.remove("nominatedNodeName");
                    }
                }
            }
        })?;
        self.event(pod, EventType::Warning, "FailedScheduling", message);
        Ok(())
    }

    /// Preempts `victim` for `preemptor` on `node` (upstream
    /// `prepareCandidate`): the DisruptionTarget condition, the graceful
    /// delete (the victim's own grace period), then the `Preempted` event.
    pub fn preempt(
        &mut self,
        victim: &PodRef<'_>,
        preemptor: &PodRef<'_>,
        node: &str,
    ) -> Result<(), StoreError> {
        let reason = format!("{SCHEDULER_NAME}: preempting to accommodate a higher priority pod");
        self.write_status(victim, |next, now| {
            pod_status::set_condition(
                next,
                "DisruptionTarget",
                "True",
                Some("PreemptionByScheduler"),
                Some(&reason),
                now,
            );
        })?;
        let options = DeleteOptions {
            preconditions: Preconditions {
                uid: Some(victim.uid.to_owned()),
                resource_version: None,
            },
            ..DeleteOptions::default()
        };
        self.store
            .delete_with(ResourceKind::Pod, victim.namespace, victim.name, &options)?;
        let message = format!("Preempted by pod {} on node {node}", preemptor.uid);
        self.event(victim, EventType::Normal, "Preempted", &message);
        Ok(())
    }

    fn write_status(
        &mut self,
        pod: &PodRef<'_>,
        edit: impl FnOnce(&mut Value, &str),
    ) -> Result<(), StoreError> {
        let now = rfc3339(self.clock.now());
        self.store
            .modify_with(
                ResourceKind::Pod,
                pod.namespace,
                pod.name,
                Subresource::Status,
                WriteOptions::default(),
                |current| {
                    same_pod(current, pod.uid)?;
                    let mut next = current.clone();
                    edit(&mut next, &now);
                    Ok(next)
                },
            )
            .map(drop)
    }

    fn event(&mut self, pod: &PodRef<'_>, type_: EventType, reason: &'static str, message: &str) {
        let source = Source {
            component: SCHEDULER_NAME,
            host: None,
        };
        self.recorder
            .record(&pod.object(), type_, reason, message, &source);
    }
}

fn same_pod(pod: &Value, uid: &str) -> Result<(), StoreError> {
    if pod["metadata"]["uid"].as_str() == Some(uid) {
        Ok(())
    } else {
        Err(StoreError::Internal("pod was replaced".to_owned()))
    }
}

/// Upstream's binding refuses a pod being deleted or already assigned.
fn bindable(pod: &Value, uid: &str) -> Result<(), StoreError> {
    same_pod(pod, uid)?;
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let conflict = |message: String| StoreError::Conflict {
        kind: ResourceKind::Pod,
        name: name.to_owned(),
        message,
    };
    if pod["metadata"]["deletionTimestamp"].is_string() {
        return Err(conflict(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    match pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        Some(bound) => Err(conflict(format!(
            "pod {name} is already assigned to node \"{bound}\""
        ))),
        None => Ok(()),
    }
}
