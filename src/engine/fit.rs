//! Will a pod fit on a node: requests against allocatable, the pod count,
//! host ports, and — with priority — which pods preemption would remove.
//! One rule for the embedded cluster's scheduler and kubelet, the console
//! and preflight (`fit` per node before a delete).
//!
//! Upstream, read and re-implemented (never the scheduler's other plugins):
//! `pkg/scheduler/framework/plugins/noderesources/fit.go` (`fitsRequest`),
//! `nodeports/node_ports.go`, `defaultpreemption/default_preemption.go`
//! (`SelectVictimsOnNode`, without PodDisruptionBudgets), the
//! `FitError` message of `pkg/scheduler/framework/types.go`, and the
//! kubelet's admission (`pkg/kubelet/lifecycle/predicate.go`). Pure: no
//! I/O, no clock.
//!
//! Reason codes (stable, camelCase, in `Fit.reasons[].code`):
//! `insufficientCpu`, `insufficientMemory`, `insufficientEphemeralStorage`,
//! `insufficientResource` (an extended resource, named in the message),
//! `tooManyPods`, `hostPortInUse`, and `preemptionCannotHelp` (the pod does
//! not fit and removing lower-priority pods would not make room, or its
//! `preemptionPolicy` is `Never`; the message is upstream's preemption words).

mod admit;
mod check;
mod demand;
mod message;
mod node_use;
mod preemption;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use admit::{Admission, admit};
pub use check::Shortfall;
pub use demand::PodDemand;
pub use message::{
    NODE_AFFINITY_MISMATCH, NODE_UNSCHEDULABLE, NodeOutcome, failed_scheduling_message,
    untolerated_taint,
};
pub use node_use::{BoundPod, NodeUse};
pub use preemption::Preemption;

/// The answer for one pod on one node, as `status -o json` gives it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fit {
    /// The pod fits as is, or once `preempts` are gone.
    pub fits: bool,
    /// Why it does not fit as is (empty when it does), then why preemption
    /// cannot help when it cannot.
    pub reasons: Vec<FitReason>,
    /// The pods preemption would remove, most important first (upstream's order).
    pub preempts: Vec<Victim>,
    /// What preemption found (for the FailedScheduling message).
    #[serde(skip)]
    pub preemption: Preemption,
}

/// One reason a pod does not fit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitReason {
    /// Stable code (see the module doc).
    pub code: ReasonCode,
    /// Upstream's words, then the numbers an operator needs.
    pub message: String,
    /// The numbers behind it, for the console's detail pane.
    #[serde(skip)]
    pub shortfall: Option<Shortfall>,
}

/// The reason codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasonCode {
    /// Not enough cpu.
    InsufficientCpu,
    /// Not enough memory.
    InsufficientMemory,
    /// Not enough ephemeral storage.
    InsufficientEphemeralStorage,
    /// Not enough of an extended resource (or hugepages).
    InsufficientResource,
    /// The node holds as many pods as it allows.
    TooManyPods,
    /// A host port the pod asks for is taken.
    HostPortInUse,
    /// Preemption cannot make room.
    PreemptionCannotHelp,
}

/// A pod preemption would remove.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Victim {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Its priority.
    pub priority: i32,
}

/// Does `candidate` fit on `node`, as if the pods whose UIDs are in
/// `without` were gone (the old daemon pod it replaces)? If not, would
/// preempting lower-priority pods make room (unless its policy is `Never`)?
pub fn fit(candidate: &PodDemand, node: &NodeUse, without: &[&str]) -> Fit {
    let present = node.present(without);
    let reasons = check::shortfalls(candidate, &node.allocatable, &present);
    if reasons.is_empty() {
        return Fit {
            fits: true,
            preemption: Preemption::NotNeeded,
            ..Fit::default()
        };
    }
    let outcome = preemption::select_victims(candidate, &node.allocatable, &present, &reasons);
    let mut reasons = reasons;
    if let Preemption::Victims(victims) = &outcome {
        return Fit {
            fits: true,
            reasons,
            preempts: victims.clone(),
            preemption: outcome,
        };
    }
    if let Some(message) = outcome.cannot_help_message() {
        reasons.push(FitReason {
            code: ReasonCode::PreemptionCannotHelp,
            message,
            shortfall: None,
        });
    }
    Fit {
        fits: false,
        reasons,
        preempts: Vec::new(),
        preemption: outcome,
    }
}
