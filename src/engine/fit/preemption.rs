//! Preemption on one node, as upstream's `SelectVictimsOnNode` (without
//! PodDisruptionBudgets): remove every pod of lower priority; if the pod
//! still does not fit, preemption cannot help; otherwise give pods back,
//! most important first (higher priority, then earlier start), while the
//! pod still fits. The rest are the victims, most important first.

use std::cmp::Reverse;

use crate::model::ResourceList;

use super::check::{Shortfall, first_filter_reasons, shortfalls};
use super::node_use::BoundPod;
use super::{FitReason, PodDemand, Victim};

/// Upstream's per-node preemption words.
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";
/// For a node where removing pods cannot help (the pod exceeds its allocatable).
pub const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// For a pod with `preemptionPolicy: Never` (the whole message, not per node).
pub const NEVER: &str = "not eligible due to preemptionPolicy=Never.";

/// What preemption found on a node.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Preemption {
    /// The pod fits as is.
    #[default]
    NotNeeded,
    /// Removing these pods makes room.
    Victims(Vec<Victim>),
    /// The pod never preempts (`preemptionPolicy: Never`).
    NotEligible,
    /// No pod of lower priority on the node.
    NoVictims,
    /// The pod exceeds what the node could ever hold.
    NotHelpful,
    /// Even without every lower-priority pod it does not fit: these reasons.
    StillUnfit(Vec<String>),
}

impl Preemption {
    /// The per-node words upstream's preemption message counts, if any.
    pub fn upstream_reasons(&self) -> Vec<String> {
        match self {
            Preemption::NoVictims => vec![NO_VICTIMS.to_owned()],
            Preemption::NotHelpful => vec![NOT_HELPFUL.to_owned()],
            Preemption::StillUnfit(reasons) => reasons.clone(),
            _ => Vec::new(),
        }
    }

    /// Why preemption cannot make room, for a [`super::Fit`]'s reasons.
    pub fn cannot_help_message(&self) -> Option<String> {
        match self {
            Preemption::NotEligible => Some(format!("preemption: {NEVER}")),
            Preemption::NoVictims => Some(format!("preemption: {NO_VICTIMS}")),
            Preemption::NotHelpful => Some(format!(
                "preemption: {NOT_HELPFUL} (the pod requests more than the node's allocatable)"
            )),
            Preemption::StillUnfit(reasons) => Some(format!(
                "preemption: removing every lower-priority pod still leaves {}",
                reasons.join(", ")
            )),
            Preemption::NotNeeded | Preemption::Victims(_) => None,
        }
    }
}

/// Preemption for `candidate`, which does not fit beside `present` for `reasons`.
pub fn select_victims(
    candidate: &PodDemand,
    allocatable: &ResourceList,
    present: &[&BoundPod],
    reasons: &[FitReason],
) -> Preemption {
    if candidate.never_preempts {
        return Preemption::NotEligible;
    }
    if reasons
        .iter()
        .any(|r| r.shortfall.as_ref().is_some_and(Shortfall::is_unresolvable))
    {
        return Preemption::NotHelpful;
    }
    let (mut lower, mut kept): (Vec<&BoundPod>, Vec<&BoundPod>) = present
        .iter()
        .copied()
        .partition(|p| p.priority < candidate.priority);
    if lower.is_empty() {
        return Preemption::NoVictims;
    }
    let still = shortfalls(candidate, allocatable, &kept);
    if !still.is_empty() {
        return Preemption::StillUnfit(first_filter_reasons(&still));
    }
    // Most important first: higher priority, then the earlier start (a pod
    // without a start time counts as started last).
    lower.sort_by_key(|p| (Reverse(p.priority), p.start_time.is_none(), p.start_time));
    let mut victims = Vec::new();
    for pod in lower {
        kept.push(pod);
        if !shortfalls(candidate, allocatable, &kept).is_empty() {
            kept.pop();
            victims.push(Victim {
                namespace: pod.namespace.clone(),
                name: pod.name.clone(),
                priority: pod.priority,
            });
        }
    }
    Preemption::Victims(victims)
}
