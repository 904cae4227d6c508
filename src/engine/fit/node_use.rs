//! [`NodeUse`]: a node's allocatable and the pods the scheduler counts on
//! it: every pod bound there that is not `Succeeded` or `Failed`,
//! terminating ones included until they are gone (upstream's NodeInfo).

use crate::model::{HostPort, Node, Pod, ResourceList, Stamp};

/// One pod counted on a node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundPod {
    /// UID (what `without` names).
    pub uid: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `spec.priority` (0 when unset).
    pub priority: i32,
    /// `status.startTime`: of two equal priorities, the earlier is more
    /// important (kept from preemption first).
    pub start_time: Option<Stamp>,
    /// Effective requests.
    pub requests: ResourceList,
    /// Host ports held.
    pub host_ports: Vec<HostPort>,
}

impl BoundPod {
    /// The counted form of `pod`.
    pub fn of(pod: &Pod) -> Self {
        BoundPod {
            uid: pod.uid().to_owned(),
            namespace: pod.namespace().to_owned(),
            name: pod.name().to_owned(),
            priority: pod.spec.priority.unwrap_or(0),
            start_time: pod.status.start_time,
            requests: pod.spec.requests.clone(),
            host_ports: pod.spec.host_ports.to_vec(),
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// A node's allocatable and the pods counted against it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeUse {
    /// `status.allocatable`.
    pub allocatable: ResourceList,
    /// The pods counted (see the module doc).
    pub pods: Vec<BoundPod>,
}

/// Whether the scheduler counts `pod` on its node: not Succeeded or Failed.
pub fn counts(pod: &Pod) -> bool {
    !matches!(pod.status.phase.as_deref(), Some("Succeeded" | "Failed"))
}

impl NodeUse {
    /// `node` and the pods of `pods` bound to it that count.
    pub fn new<'a>(node: &Node, pods: impl IntoIterator<Item = &'a Pod>) -> Self {
        NodeUse {
            allocatable: (*node.status.allocatable).clone(),
            pods: pods
                .into_iter()
                .filter(|p| p.node_name() == Some(node.name()) && counts(p))
                .map(BoundPod::of)
                .collect(),
        }
    }

    /// The summed requests of the counted pods.
    pub fn requested(&self) -> ResourceList {
        requested(self.pods.iter())
    }

    /// The counted pods but those whose UIDs are in `without` (as if gone).
    pub fn present(&self, without: &[&str]) -> Vec<&BoundPod> {
        self.pods
            .iter()
            .filter(|p| !without.contains(&p.uid.as_str()))
            .collect()
    }

    /// How many pods count.
    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    /// The host ports in use and the pod holding each.
    pub fn host_ports(&self) -> impl Iterator<Item = (&HostPort, &BoundPod)> {
        self.pods
            .iter()
            .flat_map(|p| p.host_ports.iter().map(move |port| (port, p)))
    }
}

/// The summed requests of `pods`.
pub fn requested<'a>(pods: impl Iterator<Item = &'a BoundPod>) -> ResourceList {
    let mut total = ResourceList::default();
    for pod in pods {
        total.add(&pod.requests);
    }
    total
}
