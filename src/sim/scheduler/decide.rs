//! One scheduling attempt as a value (upstream `schedulingCycle`): the nodes
//! worth filtering (the nominated node first; NodeAffinity's PreFilter
//! narrows a daemon pod to its node, never a scan of every node), each
//! filtered by the placement rules then by the fit engine, the least
//! requested fitting node chosen; when none fits, the FitError message and
//! what preemption (DefaultPreemption's PostFilter) does about it.
//!
//! Pure: reads the cache, writes nothing.

use crate::engine::fit::{NodeUse, PodDemand, Preemption, fit};
use crate::model::Pod;

use super::cache::{ClusterCache, NodeState};
use super::diagnosis::{Diagnosis, Outcome};
use super::placement::Placement;
use super::preempt::preempt;
use super::queue::PodKey;

/// What to do with the pod.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Bind it to this node.
    Bind(String),
    /// It fits nowhere now.
    Unschedulable {
        /// The FitError message, preemption's part included.
        message: String,
        /// What becomes of `status.nominatedNodeName`.
        nomination: Nomination,
        /// The pods to preempt on the nominated node (key, uid).
        victims: Vec<(PodKey, String)>,
    },
}

impl Nomination {
    /// The node nominated now, if any.
    pub fn node(&self) -> Option<&str> {
        match self {
            Nomination::Set(node) => Some(node),
            Nomination::Keep | Nomination::Clear => None,
        }
    }
}

/// What becomes of a pod's `status.nominatedNodeName` after a failed attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Nomination {
    /// Set to this node (preemption makes room there).
    Set(String),
    /// Left as it is (preemption waits for its victims, or was not tried).
    Keep,
    /// Cleared (preemption cannot help anywhere).
    Clear,
}

/// Decides one attempt for `pod` with `placement`.
pub fn decide(pod: &Pod, placement: &Placement, cache: &ClusterCache) -> Decision {
    let demand = PodDemand::of_pod(pod);
    let key = (pod.namespace().to_owned(), pod.name().to_owned());
    let outcome = |state: &NodeState| {
        let usage = cache.use_for(state, &key, demand.priority);
        outcome(&demand, placement, state, &usage)
    };
    let nominated = pod
        .status
        .nominated_node_name
        .as_deref()
        .and_then(|name| cache.node(name));
    // Upstream `evaluateNominatedNode`: after preemption the nominated node
    // is likely the only fit, so it is tried first.
    if let Some(state) = nominated
        && outcome(state).is_none()
    {
        return Decision::Bind(state.node.name().to_owned());
    }
    let mut diagnosis = Diagnosis::new(cache.node_count());
    let narrowed = placement.named_nodes();
    let candidates: Box<dyn Iterator<Item = &NodeState>> = match &narrowed {
        Some(names) => Box::new(names.iter().filter_map(|name| cache.node(name))),
        None => Box::new(cache.nodes()),
    };
    let mut best: Option<(i64, &NodeState)> = None;
    for state in candidates {
        match outcome(state) {
            None => {
                let score = least_requested_score(&demand, &state.usage);
                // Ties keep the first in name order.
                if best.is_none_or(|(kept, _)| score > kept) {
                    best = Some((score, state));
                }
            }
            Some(rejected) => diagnosis
                .outcomes
                .push((state.node.name().to_owned(), rejected)),
        }
    }
    if let Some((_, state)) = best {
        return Decision::Bind(state.node.name().to_owned());
    }
    preempt(pod, &demand, &diagnosis, cache)
}

/// The filters on one node, in upstream's order: placement, then host ports
/// and resources on `usage` (the fit engine, which also finds preemption's
/// victims; nominated pods of higher priority are never among them).
/// `None` when the pod fits as is.
fn outcome(
    demand: &PodDemand,
    placement: &Placement,
    state: &NodeState,
    usage: &NodeUse,
) -> Option<Outcome> {
    if let Some(reason) = placement.rejection(&state.node) {
        return Some(Outcome::Rejected(reason));
    }
    let answer = fit(demand, usage, &[]);
    (answer.preemption != Preemption::NotNeeded).then_some(Outcome::Fit(answer))
}

/// Among the nodes that fit, the scheduler takes the least requested: the
/// average free share of cpu and memory once the pod is placed, in
/// hundredths (a stand-in for upstream's scoring, which is not modelled).
fn least_requested_score(demand: &PodDemand, usage: &NodeUse) -> i64 {
    let requested = usage.requested();
    let free_share = |allocatable: i64, used: i64, wanted: i64| {
        if allocatable <= 0 {
            0
        } else {
            allocatable
                .saturating_sub(used)
                .saturating_sub(wanted)
                .saturating_mul(100)
                / allocatable
        }
    };
    let cpu = free_share(usage.allocatable.cpu, requested.cpu, demand.requests.cpu);
    let memory = free_share(
        usage.allocatable.memory,
        requested.memory,
        demand.requests.memory,
    );
    i64::midpoint(cpu, memory)
}

#[cfg(test)]
mod tests;
