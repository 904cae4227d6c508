//! [`PodScheduling`]: what the scheduler, the kubelet's admission and
//! preflight read of a pod's spec, computed once at decode and shared by
//! every pod with the same (the pods of one template): one pointer a pod.

use super::pod_requests::HostPort;
use super::shared::interning;
use super::{Interned, ResourceList};

/// The scheduling part of a pod spec, read through [`super::PodSpec`]
/// (`pod.spec.requests`, `pod.spec.host_ports`, `pod.spec.priority`, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PodScheduling {
    /// The pod's effective requests (upstream `PodRequests`: containers,
    /// init containers, sidecars, pod-level requests, overhead).
    pub requests: ResourceList,
    /// The host ports the pod holds on its node (`hostPort > 0`).
    pub host_ports: Box<[HostPort]>,
    /// `spec.priority` (set from the priority class at admission).
    pub priority: Option<i32>,
    /// `spec.priorityClassName`.
    pub priority_class_name: Option<Interned>,
    /// `spec.preemptionPolicy`: `PreemptLowerPriority` (the default) or `Never`.
    pub preemption_policy: Option<Interned>,
}

interning!(PodScheduling);
