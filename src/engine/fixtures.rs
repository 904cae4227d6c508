//! Small builders for engine tests: nodes, daemon pods, DaemonSets and
//! ControllerRevisions with only the fields a case needs.
//!
//! Test-only (`#[cfg(test)]`). Builders never read the clock: every timestamp is
//! an offset in seconds from [`T0`], so cases stay deterministic.

use std::collections::BTreeMap;

use smallvec::smallvec;

use k8s_openapi::api::apps::v1::{
    DaemonSetSpec, DaemonSetStatus, DaemonSetUpdateStrategy, RollingUpdateDaemonSet,
};
use k8s_openapi::api::core::v1::{Container, PodSpec as TemplatePodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::model::{
    ContainerState, ContainerStatus, ControllerRevision, DaemonSet, Few, Meta, Node, NodeCondition,
    ObjectMeta, Owner, OwnerReference, Pod, PodCondition, REVISION_HASH_LABEL, StateDetail, Taint,
    Time,
};

/// The fixed instant all fixture times are relative to (2026-01-01T00:00:00Z).
pub const T0: i64 = 1_767_225_600;

/// The UID every fixture DaemonSet carries unless changed.
pub const DS_UID: &str = "ds-uid-1";

/// `T0 + seconds` as a timestamp.
pub fn at(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(T0 + seconds).expect("fixture time in range")
}

/// Builds a [`Node`].
#[derive(Clone, Debug)]
#[must_use]
pub struct NodeBuilder(Node);

/// Starts a Ready, schedulable node called `name`.
pub fn node(name: &str) -> NodeBuilder {
    NodeBuilder(Node {
        metadata: Meta {
            name: Some(name.into()),
            uid: Some(format!("uid-{name}").into()),
            ..Meta::default()
        },
        status: crate::model::NodeStatus {
            conditions: vec![NodeCondition::of("Ready", "True")],
            ..crate::model::NodeStatus::default()
        },
        ..Node::default()
    })
}

impl NodeBuilder {
    /// Adds a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        let labels = self.0.labels.iter().chain([(key, value)]).collect();
        self.0.labels = labels;
        self
    }

    /// Marks the node cordoned (`spec.unschedulable`).
    pub fn cordoned(mut self) -> Self {
        self.0.spec.unschedulable = true;
        self
    }

    /// Sets the Ready condition to `False`.
    pub fn not_ready(mut self) -> Self {
        for c in &mut self.0.status.conditions {
            if c.type_ == "Ready" {
                *c = c.with_status("False");
            }
        }
        self
    }

    /// Adds a taint.
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        self.0.spec.taints.push(Taint::new(key, value, effect));
        self
    }

    /// The node.
    pub fn build(self) -> Node {
        self.0
    }
}

/// Builds a daemon [`Pod`] controlled by the fixture DaemonSet.
#[derive(Clone, Debug)]
#[must_use]
pub struct PodBuilder(Pod);

/// Starts a pending pod `name` on `node` with revision hash `hash`, created at `T0`.
pub fn pod(name: &str, node: &str, hash: &str) -> PodBuilder {
    PodBuilder(Pod {
        labels: [("app", "agent"), (REVISION_HASH_LABEL, hash)]
            .into_iter()
            .collect(),
        metadata: Meta {
            name: Some(name.into()),
            namespace: Some("kube-system".into()),
            uid: Some(format!("uid-{name}").into()),
            creation_timestamp: Some(at(0).into()),
            owner_references: crate::model::Owners::from(vec![controller_ref(DS_UID).into()]),
            ..Meta::default()
        },
        spec: crate::model::PodSpec {
            node_name: Some(node.into()),
            containers: Few::new(),
            ..crate::model::PodSpec::default()
        },
        status: crate::model::PodStatus {
            phase: Some("Pending".into()),
            ..crate::model::PodStatus::default()
        },
    })
}

/// A controller ownerReference to a DaemonSet with `uid`.
pub fn controller_ref(uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "DaemonSet".into(),
        name: "agent".into(),
        uid: uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

impl From<Pod> for PodBuilder {
    fn from(pod: Pod) -> Self {
        Self(pod)
    }
}

impl PodBuilder {
    /// Sets the creation time to `T0 + seconds`.
    pub fn created(mut self, seconds: i64) -> Self {
        self.0.metadata.creation_timestamp = Some(at(seconds).into());
        self
    }

    /// Running with the Ready condition True since `T0 + seconds`.
    pub fn ready_since(mut self, seconds: i64) -> Self {
        self.0.status.phase = Some("Running".into());
        self.set_ready("True", seconds);
        self
    }

    /// Running but the Ready condition False since `T0 + seconds`.
    pub fn running_not_ready(mut self, seconds: i64) -> Self {
        self.0.status.phase = Some("Running".into());
        self.set_ready("False", seconds);
        self
    }

    fn set_ready(&mut self, status: &str, seconds: i64) {
        self.0.status.conditions.retain(|c| c.type_ != "Ready");
        self.0.status.conditions.push(PodCondition {
            type_: "Ready".into(),
            status: status.into(),
            last_transition_time: Some(at(seconds).into()),
            ..PodCondition::default()
        });
    }

    /// Sets the phase.
    pub fn phase(mut self, phase: &str) -> Self {
        self.0.status.phase = Some(phase.into());
        self
    }

    /// Marks the pod terminating (deletion timestamp at `T0`).
    pub fn terminating(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(at(0).into());
        self
    }

    /// One container `main` waiting with `reason` and `restarts` restarts.
    pub fn waiting(mut self, reason: &str, restarts: i32) -> Self {
        self.0.status.container_statuses = smallvec![ContainerStatus {
            name: "main".into(),
            restart_count: restarts,
            state: ContainerState {
                waiting: Some(Box::new(StateDetail {
                    reason: Some(reason.into()),
                    ..StateDetail::default()
                })),
                ..ContainerState::default()
            },
            ..ContainerStatus::default()
        }];
        self
    }

    /// Records the first container's last termination (exit code, reason, message).
    pub fn last_terminated(mut self, exit_code: i32, reason: &str, message: &str) -> Self {
        if let Some(c) = self.0.status.container_statuses.first_mut() {
            c.last_state.terminated = Some(Box::new(StateDetail {
                reason: Some(reason.into()),
                message: Some(message.into()),
                exit_code: Some(exit_code),
                ..StateDetail::default()
            }));
        }
        self
    }

    /// One container `main` running again (not Ready) after `restarts`
    /// restarts: a crash loop between two back-offs.
    pub fn running_again(mut self, restarts: i32) -> Self {
        self.0.status.container_statuses = smallvec![ContainerStatus {
            name: "main".into(),
            restart_count: restarts,
            state: ContainerState {
                running: Some(crate::model::RunningState::default()),
                ..ContainerState::default()
            },
            ..ContainerStatus::default()
        }];
        self
    }

    /// One running container `main` with `restarts` restarts.
    pub fn restarts(mut self, restarts: i32) -> Self {
        self.0.status.container_statuses = smallvec![ContainerStatus {
            name: "main".into(),
            ready: true,
            restart_count: restarts,
            ..ContainerStatus::default()
        }];
        self
    }

    /// Adds or replaces a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        let labels = self
            .0
            .labels
            .iter()
            .filter(|(k, _)| *k != key)
            .chain([(key, value)])
            .collect();
        self.0.labels = labels;
        self
    }

    /// Drops the `controller-revision-hash` label.
    pub fn without_hash(mut self) -> Self {
        let labels = self
            .0
            .labels
            .iter()
            .filter(|(k, _)| *k != REVISION_HASH_LABEL)
            .collect();
        self.0.labels = labels;
        self
    }

    /// Replaces the owner references.
    pub fn owners(mut self, owners: Vec<OwnerReference>) -> Self {
        self.0.metadata.owner_references = owners.into_iter().map(Owner::from).collect();
        self
    }

    /// The pod.
    pub fn build(self) -> Pod {
        self.0
    }
}

/// Builds a [`DaemonSet`].
#[derive(Clone, Debug)]
#[must_use]
pub struct DaemonSetBuilder(DaemonSet);

/// A DaemonSet `kube-system/agent` running `image`, RollingUpdate with the
/// apps/v1 defaults (maxUnavailable 1, maxSurge 0).
pub fn daemonset(image: &str) -> DaemonSetBuilder {
    let mut labels = BTreeMap::new();
    labels.insert("app".to_owned(), "agent".to_owned());
    DaemonSetBuilder(DaemonSet {
        metadata: ObjectMeta {
            name: Some("agent".into()),
            namespace: Some("kube-system".into()),
            uid: Some(DS_UID.into()),
            ..ObjectMeta::default()
        },
        spec: Some(DaemonSetSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                match_expressions: None,
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(TemplatePodSpec {
                    containers: vec![Container {
                        name: "main".into(),
                        image: Some(image.into()),
                        ..Container::default()
                    }],
                    ..TemplatePodSpec::default()
                }),
            },
            update_strategy: Some(DaemonSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateDaemonSet {
                    max_unavailable: Some(IntOrString::Int(1)),
                    max_surge: Some(IntOrString::Int(0)),
                }),
            }),
            ..DaemonSetSpec::default()
        }),
        status: Some(DaemonSetStatus::default()),
    })
}

impl DaemonSetBuilder {
    /// Switches to `OnDelete`.
    pub fn on_delete(mut self) -> Self {
        if let Some(spec) = self.0.spec.as_mut() {
            spec.update_strategy = Some(DaemonSetUpdateStrategy {
                type_: Some("OnDelete".into()),
                rolling_update: None,
            });
        }
        self
    }

    /// RollingUpdate with the given budgets.
    pub fn rolling(mut self, max_unavailable: IntOrString, max_surge: IntOrString) -> Self {
        if let Some(spec) = self.0.spec.as_mut() {
            spec.update_strategy = Some(DaemonSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateDaemonSet {
                    max_unavailable: Some(max_unavailable),
                    max_surge: Some(max_surge),
                }),
            });
        }
        self
    }

    /// Sets `spec.minReadySeconds`.
    pub fn min_ready_seconds(mut self, seconds: i32) -> Self {
        if let Some(spec) = self.0.spec.as_mut() {
            spec.min_ready_seconds = Some(seconds);
        }
        self
    }

    /// Sets an annotation.
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.0
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// Sets the template's nodeSelector.
    pub fn node_selector(mut self, key: &str, value: &str) -> Self {
        if let Some(spec) = self.0.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
            spec.node_selector
                .get_or_insert_with(BTreeMap::new)
                .insert(key.into(), value.into());
        }
        self
    }

    /// The DaemonSet.
    pub fn build(self) -> DaemonSet {
        self.0
    }
}

/// A ControllerRevision of the fixture DaemonSet holding `ds`'s current
/// template, with `hash` and revision `number`.
pub fn revision_of(ds: &DaemonSet, hash: &str, number: i64) -> ControllerRevision {
    let template = ds
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let mut labels = BTreeMap::new();
    labels.insert(REVISION_HASH_LABEL.to_owned(), hash.to_owned());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(format!("agent-{hash}")),
            namespace: Some("kube-system".into()),
            labels: Some(labels),
            owner_references: Some(vec![controller_ref(DS_UID)]),
            creation_timestamp: Some(Time(at(number))),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(super::revision::revision_data(&template))),
        revision: number,
    }
}
