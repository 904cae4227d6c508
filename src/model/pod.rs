//! The slim Pod: owner, node, revision label, phase, readiness, container
//! states, and what scheduling reads (effective requests, host ports,
//! priority), computed once at decode (see [`super::pod_requests`]).

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::meta::{JoinedMeta, Meta, WireMeta, joined};
use super::pod_scheduling::PodScheduling;
use super::pod_spec_wire::{WirePodSpecIn, WirePodSpecOut};
use super::shared::Shared;
use super::{Interned, Labels, REVISION_HASH_LABEL, Stamp};

/// A pod's containers, their statuses and its kept conditions: almost always
/// one each, held inline (three heap blocks a pod fewer, about 90 bytes a pod
/// at 130,000 pods); more spill to the heap.
pub type Few<T> = SmallVec<[T; 1]>;

/// A pod as rollcall sees it. Like [`super::Node`], its labels live in
/// [`Pod::labels`] (interned) and only the metadata fields rollcall reads are
/// kept; on the wire it is the API's shape.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(from = "WirePodIn", into = "WirePodOut")]
pub struct Pod {
    /// Name, namespace, UID, owner references, timestamps (labels: see `labels`).
    pub metadata: Meta,
    /// The pod's labels (the revision hash among them).
    pub labels: Labels,
    /// The node the pod is bound to and its containers.
    pub spec: PodSpec,
    /// Phase, conditions and container states.
    pub status: PodStatus,
}

/// The pod as decoded.
#[derive(Default, Deserialize)]
#[serde(default)]
struct WirePodIn {
    metadata: WireMeta,
    spec: PodSpec,
    status: PodStatus,
}

/// The pod as encoded.
#[derive(Serialize)]
struct WirePodOut {
    metadata: JoinedMeta,
    spec: PodSpec,
    status: PodStatus,
}

impl From<WirePodIn> for Pod {
    fn from(wire: WirePodIn) -> Self {
        let (metadata, labels) = wire.metadata.split();
        let spec = wire.spec;
        let mut status = wire.status;
        // Of the conditions only Ready is read (readiness and availability)
        // and PodScheduled while it is not True (the scheduler's reason); the
        // others (Initialized, ...) are True on every running pod and would
        // cost a quarter of it.
        status
            .conditions
            .retain(|c| c.type_ == "Ready" || (c.type_ == POD_SCHEDULED && c.status != "True"));
        for condition in status
            .conditions
            .iter_mut()
            .filter(|c| c.type_ != POD_SCHEDULED)
        {
            condition.reason = None;
            condition.message = None;
        }
        // serde leaves room for four; a pod's lists are read, never grown.
        status.conditions.shrink_to_fit();
        status.container_statuses.shrink_to_fit();
        Pod {
            metadata,
            labels,
            spec,
            status,
        }
    }
}

impl From<Pod> for WirePodOut {
    fn from(pod: Pod) -> Self {
        WirePodOut {
            metadata: joined(pod.metadata, &pod.labels),
            spec: pod.spec,
            status: pod.status,
        }
    }
}

/// The condition type the scheduler writes (`False`, reason
/// `Unschedulable`, while it cannot place the pod).
pub const POD_SCHEDULED: &str = "PodScheduled";

/// The parts of `PodSpec` rollcall reads. On the wire it is the API's shape
/// (see [`super::pod_spec_wire`] for what encoding writes back).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(from = "WirePodSpecIn", into = "WirePodSpecOut")]
pub struct PodSpec {
    /// `spec.nodeName`; `None` while unscheduled.
    pub node_name: Option<compact_str::CompactString>,
    /// While unbound: the node a DaemonSet pinned the pod to by its required
    /// node affinity (`matchFields metadata.name In [node]`); `None` once
    /// bound or when the pod names no single node. Boxed: most pods are
    /// bound, and `None` costs 16 bytes where an inline string took 24.
    pub pinned_node: Option<Box<str>>,
    /// Container names and images.
    pub containers: Few<PodContainer>,
    /// Requests, host ports and priority, shared with every pod that has
    /// the same; read them through `Deref` (`spec.requests`, ...).
    pub scheduling: Shared<PodScheduling>,
}

impl std::ops::Deref for PodSpec {
    type Target = PodScheduling;
    fn deref(&self) -> &PodScheduling {
        &self.scheduling
    }
}

/// A container of the pod spec.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodContainer {
    /// Container name.
    pub name: Interned,
    /// Image reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Interned>,
}

/// The parts of `PodStatus` rollcall reads.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Interned>,
    /// Pod-level reason (e.g. `Evicted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Interned>,
    /// Pod-level message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `status.conditions`: of a decoded pod, only `Ready`.
    #[serde(default, skip_serializing_if = "SmallVec::is_empty")]
    pub conditions: Few<PodCondition>,
    /// When the kubelet accepted the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Stamp>,
    /// Per-container state.
    #[serde(default, skip_serializing_if = "SmallVec::is_empty")]
    pub container_statuses: Few<ContainerStatus>,
    /// The node the scheduler nominated after preempting pods there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominated_node_name: Option<Interned>,
    /// `Guaranteed`, `Burstable` or `BestEffort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos_class: Option<Interned>,
}

/// One pod condition.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodCondition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: Interned,
    /// `True`, `False` or `Unknown`.
    pub status: Interned,
    /// When the status last changed; the start of "available" for `Ready`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Stamp>,
    /// Why (kept for `PodScheduled` only, e.g. `Unschedulable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Interned>,
    /// The scheduler's message (kept for `PodScheduled` only; pods pending
    /// for the same reason share it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Interned>,
}

/// One container's status.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    /// Container name.
    pub name: Interned,
    /// Readiness probe result.
    #[serde(default)]
    pub ready: bool,
    /// Restarts so far.
    #[serde(default)]
    pub restart_count: i32,
    /// Image the container runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Interned>,
    /// Current state.
    #[serde(default)]
    pub state: ContainerState,
    /// Previous state (why it last stopped).
    #[serde(default)]
    pub last_state: ContainerState,
}

/// A container state: at most one of waiting, running, terminated (waiting
/// and terminated boxed: they are rare, and running holds only a time).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    /// Waiting (ContainerCreating, ImagePullBackOff, CrashLoopBackOff, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Box<StateDetail>>,
    /// Running since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<RunningState>,
    /// Terminated (Error, Completed, OOMKilled, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Box<StateDetail>>,
}

/// A running container: only when it started (as in the API).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningState {
    /// When the container started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Stamp>,
}

/// The fields of a waiting or terminated container that rollcall shows.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StateDetail {
    /// Reason, e.g. `CrashLoopBackOff`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Interned>,
    /// Message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Exit code of a terminated container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// When a terminated container had started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Stamp>,
}

impl Pod {
    /// The pod's name (empty if none).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The pod's namespace (empty if none).
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// The pod's UID (empty if none).
    pub fn uid(&self) -> &str {
        self.metadata.uid.as_deref().unwrap_or_default()
    }

    /// The node the pod is bound to.
    pub fn node_name(&self) -> Option<&str> {
        self.spec.node_name.as_deref().filter(|n| !n.is_empty())
    }

    /// The node the pod is for: the one it is bound to, else the one its
    /// node affinity pins it to (upstream `GetTargetNodeName`, which the
    /// DaemonSet controller uses to file its pods by node: a daemon pod the
    /// scheduler cannot place is still that node's pod).
    pub fn target_node(&self) -> Option<&str> {
        self.node_name()
            .or_else(|| self.spec.pinned_node.as_deref().filter(|n| !n.is_empty()))
    }

    /// The `controller-revision-hash` label.
    pub fn revision_hash(&self) -> Option<&str> {
        self.labels.get(REVISION_HASH_LABEL)
    }

    /// Whether the pod has a deletion timestamp.
    pub fn is_terminating(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// The `PodScheduled` condition while it is not `True` (the scheduler's
    /// reason and message), if reported.
    pub fn unscheduled_condition(&self) -> Option<&PodCondition> {
        self.status
            .conditions
            .iter()
            .find(|c| c.type_ == POD_SCHEDULED && c.status != "True")
    }

    /// The `Ready` condition, if reported.
    pub fn ready_condition(&self) -> Option<&PodCondition> {
        self.status.conditions.iter().find(|c| c.type_ == "Ready")
    }

    /// Ready as the audit and the DaemonSet controller count it: phase Running,
    /// Ready condition True, not terminating.
    pub fn is_ready(&self) -> bool {
        self.status.phase.as_deref() == Some("Running")
            && self.ready_condition().is_some_and(|c| c.status == "True")
            && !self.is_terminating()
    }

    /// Total container restarts.
    pub fn restarts(&self) -> i32 {
        self.status
            .container_statuses
            .iter()
            .map(|c| c.restart_count)
            .sum()
    }

    /// The first waiting or terminated reason among the containers, as kubectl's
    /// STATUS column shows it (e.g. `CrashLoopBackOff`).
    pub fn container_problem(&self) -> Option<&str> {
        self.status.container_statuses.iter().find_map(|c| {
            c.state
                .waiting
                .as_ref()
                .and_then(|w| w.reason.as_deref())
                .or_else(|| {
                    c.state
                        .terminated
                        .as_ref()
                        .and_then(|t| t.reason.as_deref())
                })
        })
    }
}
