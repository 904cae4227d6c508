//! The filter checks, in the default profile's order: host ports
//! (NodePorts), then requests and the pod count (NodeResourcesFit's
//! `fitsRequest`: pods, cpu, memory, ephemeral storage, scalar resources).

use crate::model::resource_list::{CPU, EPHEMERAL_STORAGE, MEMORY, display_quantity};
use crate::model::{HostPort, ResourceList};

use super::node_use::{BoundPod, requested};
use super::{FitReason, PodDemand, ReasonCode};

/// Upstream's NodePorts reason.
pub const PORTS_REASON: &str = "node(s) didn't have free ports for the requested pod ports";
/// Upstream's reason for a full node.
pub const TOO_MANY_PODS: &str = "Too many pods";

/// The numbers behind a reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// Not enough of a resource (cpu in millicores).
    Resource {
        /// `cpu`, `memory`, `ephemeral-storage`, `nvidia.com/gpu`, ...
        name: String,
        /// What the pod requests.
        requested: i64,
        /// What the counted pods request already.
        used: i64,
        /// The node's allocatable.
        allocatable: i64,
    },
    /// The node holds `allowed` pods already.
    Pods {
        /// Pods counted.
        used: i64,
        /// `allocatable.pods`.
        allowed: i64,
    },
    /// A host port held by another pod.
    HostPort {
        /// The port the pod asks for.
        port: HostPort,
        /// `namespace/name` of the pod holding it.
        holder: String,
    },
}

impl Shortfall {
    /// Whether even an empty node could not hold the pod (upstream marks it
    /// unresolvable: preemption is not tried).
    pub fn is_unresolvable(&self) -> bool {
        matches!(self, Shortfall::Resource { requested, allocatable, .. } if requested > allocatable)
    }
}

/// Why `candidate` does not fit beside `present` on a node with
/// `allocatable`; empty when it fits.
pub fn shortfalls(
    candidate: &PodDemand,
    allocatable: &ResourceList,
    present: &[&BoundPod],
) -> Vec<FitReason> {
    let mut reasons = port_conflicts(candidate, present);
    let used = requested(present.iter().copied());
    let count = i64::try_from(present.len()).unwrap_or(i64::MAX);
    if count.saturating_add(1) > allocatable.pods {
        reasons.push(FitReason {
            code: ReasonCode::TooManyPods,
            message: format!(
                "{TOO_MANY_PODS}: {count} of {} pods already on the node",
                allocatable.pods
            ),
            shortfall: Some(Shortfall::Pods {
                used: count,
                allowed: allocatable.pods,
            }),
        });
    }
    // A pod that requests nothing is only counted (fitsRequest returns early).
    for (name, wanted) in candidate.requests.iter() {
        let (alloc, in_use) = (allocatable.get(name), used.get(name));
        if wanted <= 0 || wanted <= alloc.saturating_sub(in_use) {
            continue;
        }
        reasons.push(FitReason {
            code: resource_code(name),
            message: format!(
                "{}: needs {}, {} free of {}",
                insufficient(name),
                display_quantity(name, wanted),
                display_quantity(name, alloc.saturating_sub(in_use).max(0)),
                display_quantity(name, alloc)
            ),
            shortfall: Some(Shortfall::Resource {
                name: name.to_owned(),
                requested: wanted,
                used: in_use,
                allocatable: alloc,
            }),
        });
    }
    reasons
}

/// Upstream's words for a resource: `Insufficient cpu`.
pub fn insufficient(name: &str) -> String {
    format!("Insufficient {name}")
}

fn resource_code(name: &str) -> ReasonCode {
    match name {
        CPU => ReasonCode::InsufficientCpu,
        MEMORY => ReasonCode::InsufficientMemory,
        EPHEMERAL_STORAGE => ReasonCode::InsufficientEphemeralStorage,
        _ => ReasonCode::InsufficientResource,
    }
}

/// Upstream's `HostPortInfo.CheckConflict`: same protocol and port, and
/// either side binds every address or both bind the same one.
pub fn ports_conflict(wanted: &HostPort, held: &HostPort) -> bool {
    use crate::model::pod_requests::ALL_ADDRESSES;
    wanted.port == held.port
        && wanted.protocol == held.protocol
        && (wanted.host_ip == ALL_ADDRESSES
            || held.host_ip == ALL_ADDRESSES
            || wanted.host_ip == held.host_ip)
}

fn port_conflicts(candidate: &PodDemand, present: &[&BoundPod]) -> Vec<FitReason> {
    let mut reasons = Vec::new();
    for wanted in &candidate.host_ports {
        let holder = present.iter().find(|pod| {
            pod.host_ports
                .iter()
                .any(|held| ports_conflict(wanted, held))
        });
        if let Some(holder) = holder {
            let address = if wanted.host_ip == crate::model::pod_requests::ALL_ADDRESSES {
                String::new()
            } else {
                format!(" on {}", wanted.host_ip)
            };
            reasons.push(FitReason {
                code: ReasonCode::HostPortInUse,
                message: format!(
                    "{PORTS_REASON}: hostPort {}/{}{address} held by {}",
                    wanted.port,
                    wanted.protocol,
                    holder.key()
                ),
                shortfall: Some(Shortfall::HostPort {
                    port: wanted.clone(),
                    holder: holder.key(),
                }),
            });
        }
    }
    reasons
}

/// The upstream reason text of a fit reason (what FailedScheduling counts).
pub fn upstream_reason(reason: &FitReason) -> Option<String> {
    match &reason.shortfall {
        Some(Shortfall::Resource { name, .. }) => Some(insufficient(name)),
        Some(Shortfall::Pods { .. }) => Some(TOO_MANY_PODS.to_owned()),
        Some(Shortfall::HostPort { .. }) => Some(PORTS_REASON.to_owned()),
        None => None,
    }
}

/// The reasons the scheduler's first failing filter gives: NodePorts runs
/// before NodeResourcesFit and a node's filtering stops at the first
/// failure, so a port conflict hides resource shortfalls.
pub fn first_filter_reasons(reasons: &[FitReason]) -> Vec<String> {
    let mut words: Vec<String> = if reasons.iter().any(|r| r.code == ReasonCode::HostPortInUse) {
        vec![PORTS_REASON.to_owned()]
    } else {
        reasons.iter().filter_map(upstream_reason).collect()
    };
    words.dedup();
    words
}
