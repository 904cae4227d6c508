//! The kubelet's admission of a pod bound without the scheduler
//! (`spec.nodeName` set): upstream's `predicateAdmitHandler.Admit`
//! (`pkg/kubelet/lifecycle/predicate.go`) over the same checks, reporting
//! the first failure as the kubelet does: `OutOfcpu`, `OutOfmemory`,
//! `OutOfephemeral-storage`, `OutOfpods`, `OutOf<extended>`, or `NodePorts`.

use crate::model::ResourceList;
use crate::model::resource_list::{PODS, is_scalar_resource};

use super::check::{PORTS_REASON, Shortfall, shortfalls};
use super::{NodeUse, PodDemand};

/// A pod the kubelet rejects: it goes `Failed` with this reason, and
/// [`Admission::status_message`] as its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admission {
    /// `OutOfcpu`, `OutOfmemory`, `OutOfpods`, `OutOfnvidia.com/gpu`, `NodePorts`, ...
    pub reason: String,
    /// The kubelet's words (also the event's message).
    pub message: String,
}

impl Admission {
    /// The pod's `status.message`: `Pod was rejected: ` and the words.
    pub fn status_message(&self) -> String {
        format!("Pod was rejected: {}", self.message)
    }
}

/// Admits `pod` on `node` (as if the pods in `without` were gone), or the
/// kubelet's rejection. The kubelet drops requests for extended resources
/// the node does not list before checking (cluster-level resources).
pub fn admit(pod: &PodDemand, node: &NodeUse, without: &[&str]) -> Result<(), Admission> {
    let present = node.present(without);
    let mut demand = pod.clone();
    demand.requests = known_to_node(&pod.requests, &node.allocatable);
    let reasons = shortfalls(&demand, &node.allocatable, &present);
    // The kubelet checks resources before ports and reports the first.
    let first = reasons
        .iter()
        .filter_map(|r| r.shortfall.as_ref())
        .min_by_key(|s| matches!(s, Shortfall::HostPort { .. }));
    match first {
        None => Ok(()),
        Some(Shortfall::HostPort { .. }) => Err(Admission {
            reason: "NodePorts".to_owned(),
            message: format!("Predicate NodePorts failed: {PORTS_REASON}"),
        }),
        Some(Shortfall::Pods { used, allowed }) => Err(out_of(PODS, 1, *used, *allowed)),
        Some(Shortfall::Resource {
            name,
            requested,
            used,
            allocatable,
        }) => Err(out_of(name, *requested, *used, *allocatable)),
    }
}

fn out_of(name: &str, requested: i64, used: i64, capacity: i64) -> Admission {
    Admission {
        reason: format!("OutOf{name}"),
        message: format!(
            "Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"
        ),
    }
}

fn known_to_node(requests: &ResourceList, allocatable: &ResourceList) -> ResourceList {
    let mut kept = requests.clone();
    for (name, _) in requests.iter() {
        // Extended resources are the domain-qualified scalar ones.
        if name.contains('/') && is_scalar_resource(name) && allocatable.get(name) == 0 {
            kept.set(name, 0);
        }
    }
    kept
}
