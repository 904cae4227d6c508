//! DefaultPreemption's PostFilter (upstream `preemption.Evaluator.Preempt`)
//! for a pod no node takes as is: the fit engine has already chosen the
//! victims on each node (`SelectVictimsOnNode`, fewest and least important);
//! this module decides whether the pod may preempt now, which node to take
//! (upstream `pickOneNodeForPreemption`) and what becomes of its nomination.
//!
//! Not modelled: PodDisruptionBudgets (no victim ever violates one), the
//! random sample of candidate nodes (every node is a candidate), and the last
//! tie-break on victims' start times (the first node by name wins instead).

use crate::engine::fit::{PodDemand, Preemption, Victim};
use crate::model::Pod;

use super::cache::ClusterCache;
use super::decide::{Decision, Nomination};
use super::diagnosis::{Diagnosis, Outcome};

/// Upstream's words when a preemptor's victims are still terminating.
const WAITING: &str = "not eligible due to a terminating pod on the nominated node.";

/// The decision for `pod`, which no node takes as is (`diagnosis`).
pub fn preempt(
    pod: &Pod,
    demand: &PodDemand,
    diagnosis: &Diagnosis,
    cache: &ClusterCache,
) -> Decision {
    if waits_for_victims(pod, demand, diagnosis, cache) {
        return Decision::Unschedulable {
            message: with_post_filter(&diagnosis.message(false), WAITING),
            nomination: Nomination::Keep,
            victims: Vec::new(),
        };
    }
    let candidates = diagnosis
        .outcomes
        .iter()
        .filter_map(|(node, outcome)| match outcome {
            Outcome::Fit(fit) => match &fit.preemption {
                Preemption::Victims(victims) => Some((node.as_str(), victims.as_slice())),
                _ => None,
            },
            Outcome::Rejected(_) => None,
        });
    let message = diagnosis.message(demand.never_preempts);
    let Some((node, victims)) = pick_one_node(candidates) else {
        // Upstream keeps a `Never` pod's nomination as is (it has none) and
        // clears the nomination of a pod preemption cannot help.
        let nomination = if demand.never_preempts {
            Nomination::Keep
        } else {
            Nomination::Clear
        };
        return Decision::Unschedulable {
            message,
            nomination,
            victims: Vec::new(),
        };
    };
    let victims = victims
        .iter()
        .filter_map(|victim| {
            let key = (victim.namespace.clone(), victim.name.clone());
            let uid = cache.placed(&key)?.1.to_owned();
            Some((key, uid))
        })
        .collect();
    Decision::Unschedulable {
        message,
        nomination: Nomination::Set(node.to_owned()),
        victims,
    }
}

/// Upstream `PodEligibleToPreemptOthers`: a pod nominated to a node where a
/// lower-priority pod it preempted is still terminating waits for it rather
/// than preempting again — unless that node now rejects it outright.
fn waits_for_victims(
    pod: &Pod,
    demand: &PodDemand,
    diagnosis: &Diagnosis,
    cache: &ClusterCache,
) -> bool {
    let Some(nominated) = pod.status.nominated_node_name.as_deref() else {
        return false;
    };
    let Some(state) = cache.node(nominated) else {
        return false;
    };
    let rejected_outright = diagnosis
        .outcomes
        .iter()
        .any(|(node, outcome)| node == nominated && matches!(outcome, Outcome::Rejected(_)));
    !rejected_outright && !demand.never_preempts && cache.preempted_below(state, demand.priority)
}

/// The FitError message with preemption's part replaced by `post_filter`
/// (upstream appends the PostFilter's message after the filters' part).
fn with_post_filter(message: &str, post_filter: &str) -> String {
    let filters = message
        .split_once(" preemption: ")
        .map_or(message, |(filters, _)| filters);
    format!("{filters} preemption: {post_filter}")
}

/// Upstream `pickOneNodeForPreemption` without PDBs: the lowest highest
/// victim priority, then the lowest sum of priorities (each shifted by 2^31,
/// so that more victims of a negative priority never look cheaper), then the
/// fewest victims; then the first by name.
fn pick_one_node<'a>(
    candidates: impl Iterator<Item = (&'a str, &'a [Victim])>,
) -> Option<(&'a str, &'a [Victim])> {
    let rank = |victims: &[Victim]| {
        let highest = victims.iter().map(|v| v.priority).max().unwrap_or(i32::MIN);
        let sum: i64 = victims
            .iter()
            .map(|v| i64::from(v.priority) + (1_i64 << 31))
            .sum();
        (highest, sum, victims.len())
    };
    candidates
        .min_by(|(a_node, a), (b_node, b)| rank(a).cmp(&rank(b)).then_with(|| a_node.cmp(b_node)))
}
