//! Which pods belong to the audited DaemonSet, and their state as the audit counts it.
//!
//! Ownership is the controller owner reference only (the engine's rule: kind
//! DaemonSet, name and UID matching, `controller: true`, any group version),
//! never a label match:
//! a pod left over by a deleted-and-recreated DaemonSet of the same name, or one
//! that merely carries the right labels, must not count as coverage. Pure.

use serde::Serialize;

use crate::model::{DaemonSet, Pod};

/// Whether `pod` is controlled by `ds`: in its namespace, with a controller
/// owner reference of kind `DaemonSet` naming the DaemonSet's name and UID,
/// whatever its group version (the engine's rule, as upstream resolves it).
pub fn is_owned_by(pod: &Pod, ds: &DaemonSet) -> bool {
    pod.metadata.namespace.as_deref() == ds.metadata.namespace.as_deref()
        && crate::engine::ownership::is_controlled_by(pod, ds)
}

/// One owned pod as the audit reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OwnedPod {
    /// Pod name.
    pub name: String,
    /// Pod UID.
    pub uid: String,
    /// The node it is bound to; `None` while unscheduled.
    pub node: Option<String>,
    /// `status.phase`, if reported.
    pub phase: Option<String>,
    /// Running, Ready condition True and not terminating.
    pub ready: bool,
    /// Has a deletion timestamp.
    pub terminating: bool,
    /// The `controller-revision-hash` label.
    pub revision_hash: Option<String>,
    /// Why it is not ready, in words (absent when ready).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_ready_reason: Option<String>,
}

impl OwnedPod {
    /// The audit's view of a pod.
    pub fn from_pod(pod: &Pod) -> Self {
        let ready = pod.is_ready();
        Self {
            name: pod.name().to_owned(),
            uid: pod.uid().to_owned(),
            node: pod.node_name().map(str::to_owned),
            phase: pod.status.phase.as_deref().map(str::to_owned),
            ready,
            terminating: pod.is_terminating(),
            revision_hash: pod.revision_hash().map(str::to_owned),
            not_ready_reason: (!ready).then(|| not_ready_reason(pod)),
        }
    }
}

/// Why a pod is not ready, most telling fact first: terminating, the phase, a
/// waiting or terminated container reason, a Ready condition that is not True.
pub fn not_ready_reason(pod: &Pod) -> String {
    let mut parts = Vec::new();
    if pod.is_terminating() {
        parts.push("terminating".to_owned());
    }
    let phase = pod.status.phase.as_deref().unwrap_or("unknown");
    parts.push(format!("phase {phase}"));
    if let Some(reason) = pod.status.reason.as_deref() {
        parts.push(format!("reason {reason}"));
    }
    parts.extend(container_reasons(pod));
    match pod.ready_condition() {
        Some(c) if c.status == "True" => {}
        Some(c) => parts.push(format!("Ready condition {}", c.status)),
        None => parts.push("no Ready condition".to_owned()),
    }
    parts.join(", ")
}

fn container_reasons(pod: &Pod) -> Vec<String> {
    pod.status
        .container_statuses
        .iter()
        .filter_map(|c| {
            if let Some(w) = &c.state.waiting {
                let reason = w.reason.as_deref().unwrap_or("waiting");
                return Some(format!("container {} waiting: {reason}", c.name));
            }
            if let Some(t) = &c.state.terminated {
                let reason = t.reason.as_deref().unwrap_or("terminated");
                return Some(format!("container {} terminated: {reason}", c.name));
            }
            (!c.ready).then(|| format!("container {} running but not ready", c.name))
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Small builders for audit tests.

    use crate::model::{
        ContainerState, ContainerStatus, DaemonSet, Node, NodeCondition, ObjectMeta, Owner, Pod,
        PodCondition, RunningState, StateDetail,
    };

    pub const DS_UID: &str = "ds-uid-1";

    pub fn daemonset() -> DaemonSet {
        DaemonSet {
            metadata: ObjectMeta {
                name: Some("agent".into()),
                namespace: Some("kube-system".into()),
                uid: Some(DS_UID.into()),
                generation: Some(3),
                ..ObjectMeta::default()
            },
            ..DaemonSet::default()
        }
    }

    pub fn node(name: &str, uid: &str, ready: &str) -> Node {
        let mut node = Node::default();
        node.metadata.name = Some(name.into());
        node.metadata.uid = Some(uid.into());
        node.status
            .conditions
            .push(NodeCondition::of("Ready", ready));
        node
    }

    pub fn owner(kind: &str, name: &str, uid: &str) -> Owner {
        Owner {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }

    /// A ready pod owned by [`daemonset`] on `node`.
    pub fn pod(name: &str, uid: &str, node: Option<&str>) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.namespace = Some("kube-system".into());
        pod.metadata.uid = Some(uid.into());
        pod.labels = [("app", "agent"), ("controller-revision-hash", "5d4f6b7c8")]
            .into_iter()
            .collect();
        pod.metadata.owner_references =
            crate::model::Owners::from(vec![owner("DaemonSet", "agent", DS_UID)]);
        pod.spec.node_name = node.map(Into::into);
        pod.status.phase = Some("Running".into());
        pod.status.conditions.push(PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            ..PodCondition::default()
        });
        pod.status.container_statuses.push(ContainerStatus {
            name: "agent".into(),
            ready: true,
            state: ContainerState {
                running: Some(RunningState::default()),
                ..ContainerState::default()
            },
            ..ContainerStatus::default()
        });
        pod
    }

    /// Makes `pod` Pending with its container waiting for `reason`.
    pub fn waiting(mut pod: Pod, reason: &str) -> Pod {
        pod.status.phase = Some("Pending".into());
        pod.status.conditions[0].status = "False".into();
        pod.status.container_statuses[0].ready = false;
        pod.status.container_statuses[0].state = ContainerState {
            waiting: Some(Box::new(StateDetail {
                reason: Some(reason.into()),
                ..StateDetail::default()
            })),
            ..ContainerState::default()
        };
        pod
    }

    /// Marks `pod` as being deleted.
    pub fn terminating(mut pod: Pod) -> Pod {
        pod.metadata.deletion_timestamp = Some(
            "2026-01-01T00:00:00Z"
                .parse::<jiff::Timestamp>()
                .unwrap()
                .into(),
        );
        pod
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    #[test]
    fn ownership_rules() {
        let ds = daemonset();
        let with_owner = |r| {
            let mut p = pod("p", "u", Some("n"));
            p.metadata.owner_references = crate::model::Owners::from(vec![r]);
            p
        };
        let not_controller = {
            let mut r = owner("DaemonSet", "agent", DS_UID);
            r.controller = Some(false);
            r
        };
        let wrong_api = {
            let mut r = owner("DaemonSet", "agent", DS_UID);
            r.api_version = "extensions/v1beta1".into();
            r
        };
        let other_namespace = {
            let mut p = pod("p", "u", Some("n"));
            p.metadata.namespace = Some("default".into());
            p
        };
        let no_refs = {
            let mut p = pod("p", "u", Some("n"));
            p.metadata.owner_references = crate::model::Owners::default();
            p
        };
        let cases: Vec<(&str, Pod, bool)> = vec![
            (
                "controller ref to this DaemonSet",
                pod("p", "u", Some("n")),
                true,
            ),
            (
                "right name, wrong UID (recreated DaemonSet)",
                with_owner(owner("DaemonSet", "agent", "old-uid")),
                false,
            ),
            (
                "right UID, wrong name",
                with_owner(owner("DaemonSet", "other", DS_UID)),
                false,
            ),
            (
                "kind ReplicaSet",
                with_owner(owner("ReplicaSet", "agent", DS_UID)),
                false,
            ),
            ("not the controller ref", with_owner(not_controller), false),
            (
                "older group version (extensions/v1beta1), same DaemonSet",
                with_owner(wrong_api),
                true,
            ),
            ("labels match but no ownerRef", no_refs, false),
            ("another namespace", other_namespace, false),
        ];
        for (name, pod, expected) in cases {
            assert_eq!(is_owned_by(&pod, &ds), expected, "{name}");
        }
    }

    #[test]
    fn daemonset_without_uid_owns_nothing() {
        let mut ds = daemonset();
        ds.metadata.uid = None;
        assert!(!is_owned_by(&pod("p", "u", Some("n")), &ds));
    }

    #[test]
    fn readiness_rule() {
        let ready = pod("p", "u", Some("n"));
        let mut ready_false = pod("p", "u", Some("n"));
        ready_false.status.conditions[0].status = "False".into();
        let mut no_condition = pod("p", "u", Some("n"));
        no_condition.status.conditions.clear();
        let mut succeeded = pod("p", "u", Some("n"));
        succeeded.status.phase = Some("Succeeded".into());
        let cases: Vec<(&str, Pod, bool)> = vec![
            ("running and ready", ready.clone(), true),
            ("terminating", terminating(ready), false),
            ("Ready False", ready_false, false),
            ("no Ready condition", no_condition, false),
            ("phase Succeeded with stale Ready", succeeded, false),
            (
                "pending image pull",
                waiting(pod("p", "u", Some("n")), "ImagePullBackOff"),
                false,
            ),
        ];
        for (name, pod, expected) in cases {
            let owned = OwnedPod::from_pod(&pod);
            assert_eq!(owned.ready, expected, "{name}");
            assert_eq!(owned.not_ready_reason.is_none(), expected, "{name}");
        }
    }

    #[test]
    fn not_ready_reason_names_phase_and_waiting_reason() {
        let pod = waiting(pod("p", "u", Some("n")), "ImagePullBackOff");
        assert_eq!(
            not_ready_reason(&pod),
            "phase Pending, container agent waiting: ImagePullBackOff, Ready condition False"
        );
        let gone = terminating(super::fixtures::pod("p", "u", Some("n")));
        assert_eq!(not_ready_reason(&gone), "terminating, phase Running");
    }
}
