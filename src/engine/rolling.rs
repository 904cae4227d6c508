//! RollingUpdate budgets and the rolling step: how many pods may be unavailable
//! or surged, and which old pods to delete / nodes to surge onto right now.
//!
//! Follows upstream `update.go` (`updatedDesiredNodeCounts`, `rollingUpdate`,
//! `findUpdatedPodsOnNode`) and `util.UnavailableCount`/`SurgeCount`. Pure; the
//! caller (`reconcile`) decides when a rolling step runs at all.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;

use super::coverage::is_pod_available;
use super::revision::RevisionIndex;
use crate::model::{DaemonSet, Pod};

/// Why a rolling budget cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RollingError {
    /// A string budget that is not `<integer>%` (upstream rejects `"1"` too).
    #[error("invalid {field} {value:?}: want an integer or a percentage like \"25%\"")]
    InvalidBudget {
        /// `maxUnavailable` or `maxSurge`.
        field: &'static str,
        /// The value as written.
        value: String,
    },
}

/// The DaemonSet's update strategy after apps/v1 defaulting.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateStrategy {
    /// The controller replaces pods only when someone deletes them.
    OnDelete,
    /// The controller replaces pods itself within these budgets.
    RollingUpdate {
        /// `maxUnavailable` (default 1).
        max_unavailable: IntOrString,
        /// `maxSurge` (default 0).
        max_surge: IntOrString,
    },
}

impl UpdateStrategy {
    /// Whether pods are replaced only when someone deletes them.
    pub fn is_on_delete(&self) -> bool {
        matches!(self, Self::OnDelete)
    }

    /// The strategy's `type` as the API writes it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::OnDelete => "OnDelete",
            Self::RollingUpdate { .. } => "RollingUpdate",
        }
    }
}

/// `OnDelete`, or `RollingUpdate maxUnavailable=1 maxSurge=0`.
impl std::fmt::Display for UpdateStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let budget = |value: &IntOrString| match value {
            IntOrString::Int(n) => n.to_string(),
            IntOrString::String(s) => s.clone(),
        };
        match self {
            Self::OnDelete => f.write_str("OnDelete"),
            Self::RollingUpdate {
                max_unavailable,
                max_surge,
            } => write!(
                f,
                "RollingUpdate maxUnavailable={} maxSurge={}",
                budget(max_unavailable),
                budget(max_surge)
            ),
        }
    }
}

/// The update strategy with the apps/v1 defaults applied (an object from a real
/// API server already has them; a hand-written snapshot may not): missing type is
/// RollingUpdate, missing maxUnavailable is 1, missing maxSurge is 0.
pub fn update_strategy(ds: &DaemonSet) -> UpdateStrategy {
    let strategy = ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref());
    if strategy.and_then(|s| s.type_.as_deref()) == Some("OnDelete") {
        return UpdateStrategy::OnDelete;
    }
    let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
    UpdateStrategy::RollingUpdate {
        max_unavailable: rolling
            .and_then(|r| r.max_unavailable.clone())
            .unwrap_or(IntOrString::Int(1)),
        max_surge: rolling
            .and_then(|r| r.max_surge.clone())
            .unwrap_or(IntOrString::Int(0)),
    }
}

/// Upstream `intstr.GetScaledValueFromIntOrPercent`: an int as is, `"N%"` of
/// `total`, rounded up or down.
pub fn scaled_value(
    value: &IntOrString,
    total: i32,
    round_up: bool,
    field: &'static str,
) -> Result<i32, RollingError> {
    match value {
        IntOrString::Int(v) => Ok(*v),
        IntOrString::String(text) => {
            let invalid = || RollingError::InvalidBudget {
                field,
                value: text.clone(),
            };
            let percent: i64 = text
                .strip_suffix('%')
                .ok_or_else(invalid)?
                .parse()
                .map_err(|_| invalid())?;
            // Checked: a hostile "99999999999999999%" must not overflow.
            let product = percent.checked_mul(i64::from(total)).ok_or_else(invalid)?;
            let scaled = if round_up {
                product.checked_add(99).ok_or_else(invalid)?.div_euclid(100)
            } else {
                product.div_euclid(100)
            };
            i32::try_from(scaled).map_err(|_| invalid())
        }
    }
}

/// The budgets of one rolling step and how much of them is in use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingBudget {
    /// Nodes that should run the daemon pod (the base of percentages).
    pub desired: i32,
    /// Pods that may be unavailable at once.
    pub max_unavailable: i32,
    /// Extra new pods that may run beside old ones at once.
    pub max_surge: i32,
    /// Both budgets came out 0, so one unavailable pod is allowed (upstream
    /// `updatedDesiredNodeCounts` guards against an impossible configuration).
    pub fell_back_to_one_unavailable: bool,
    /// Unavailable pods counted against `max_unavailable` (without surge).
    pub unavailable_now: i32,
    /// Surge pods in flight counted against `max_surge` (with surge).
    pub surge_now: i32,
}

/// Computes `max_unavailable` and `max_surge` for `desired` nodes (upstream
/// `updatedDesiredNodeCounts`): percentages round up; if both are 0 and there is
/// something to schedule, `max_unavailable` becomes 1. `None` for OnDelete.
pub fn rolling_budget(ds: &DaemonSet, desired: i32) -> Result<Option<RollingBudget>, RollingError> {
    let UpdateStrategy::RollingUpdate {
        max_unavailable,
        max_surge,
    } = update_strategy(ds)
    else {
        return Ok(None);
    };
    let mut unavailable = scaled_value(&max_unavailable, desired, true, "maxUnavailable")?;
    let surge = scaled_value(&max_surge, desired, true, "maxSurge")?;
    let fell_back = desired > 0 && unavailable == 0 && surge == 0;
    if fell_back {
        unavailable = 1;
    }
    Ok(Some(RollingBudget {
        desired,
        max_unavailable: unavailable,
        max_surge: surge,
        fell_back_to_one_unavailable: fell_back,
        unavailable_now: 0,
        surge_now: 0,
    }))
}

/// Upstream `util.AllowsSurge`: RollingUpdate whose maxSurge scaled against one
/// node is positive (an invalid value allows none).
pub fn allows_surge(ds: &DaemonSet) -> bool {
    match update_strategy(ds) {
        UpdateStrategy::OnDelete => false,
        UpdateStrategy::RollingUpdate { max_surge, .. } => {
            scaled_value(&max_surge, 1, true, "maxSurge").is_ok_and(|s| s > 0)
        }
    }
}

/// One node's daemon pods as the rolling step sees them.
#[derive(Clone, Debug)]
pub struct NodeSlot<'a> {
    /// Node name.
    pub node: String,
    /// The node exists and a daemon pod should run there.
    pub should_run: bool,
    /// The DaemonSet's pods bound to the node (deleted terminal pods left out).
    pub pods: Vec<&'a Pod>,
}

/// Why the rolling step deletes a pod or creates one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RollingReason {
    /// Old pod deleted within maxUnavailable so the controller recreates it.
    ReplaceOld,
    /// Old pod is not available anyway, so replacing it costs no budget.
    ReplaceUnavailableOld,
    /// Surge: the new pod on this node is available, so the old one goes.
    NewPodAvailable,
    /// Surge: an old pod on a node that should no longer run it, deleted once
    /// enough pods are available elsewhere.
    NodeNoLongerEligible,
    /// Surge: new pod created beside an available old one, within maxSurge.
    Surge,
    /// Surge: new pod created beside an unavailable old one (costs no budget).
    SurgeForUnavailableOld,
}

/// What one rolling step does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RollingStep<'a> {
    /// Old pods to delete, with the reason.
    pub delete: Vec<(&'a Pod, String, RollingReason)>,
    /// Nodes to create a new pod on (surge only), with the reason.
    pub create_on: Vec<(String, RollingReason)>,
    /// The budgets and how much is in use.
    pub budget: RollingBudget,
}

/// Pod-level judgements the step needs, bundled.
#[derive(Clone, Copy, Debug)]
pub struct Judge<'a> {
    /// Which pods are updated.
    pub revisions: &'a RevisionIndex,
    /// `spec.minReadySeconds`.
    pub min_ready_seconds: i32,
    /// The instant availability is judged at.
    pub now: jiff::Timestamp,
}

impl Judge<'_> {
    fn available(&self, pod: &Pod) -> bool {
        is_pod_available(pod, self.min_ready_seconds, self.now)
    }
}

/// Upstream `findUpdatedPodsOnNode`: among non-terminating pods, at most one new
/// and one old; `None` when there are more (the manage loop prunes them first).
pub fn find_updated_pods_on_node<'a>(
    pods: &[&'a Pod],
    revisions: &RevisionIndex,
) -> Option<(Option<&'a Pod>, Option<&'a Pod>)> {
    let (mut new, mut old) = (None, None);
    for pod in pods.iter().copied().filter(|p| !p.is_terminating()) {
        let slot = if revisions.is_pod_updated(pod) {
            &mut new
        } else {
            &mut old
        };
        if slot.replace(pod).is_some() {
            return None;
        }
    }
    Some((new, old))
}

/// One rolling step over `slots` (every node that should run plus every node
/// with daemon pods), dispatching on whether surge is allowed.
pub fn plan_rolling_step<'a>(
    slots: &[NodeSlot<'a>],
    budget: RollingBudget,
    judge: Judge<'_>,
) -> RollingStep<'a> {
    if budget.max_surge == 0 {
        step_without_surge(slots, budget, judge)
    } else {
        step_with_surge(slots, budget, judge)
    }
}

/// Rolling step without surge (upstream `rollingUpdate`, `maxSurge == 0`).
///
/// Assumptions: the manage loop keeps at most one pod per node, creates missing
/// pods and deletes failed ones; terminating pods are not counted as unavailable
/// so an update progresses while nodes are down.
/// Invariants: unavailable pods (missing, new-but-unavailable, nodes with excess
/// pods, replaced unavailable old pods) are counted first; available old pods are
/// deleted only in the room left under `max_unavailable`; an old pod that is
/// already unavailable is always replaced.
fn step_without_surge<'a>(
    slots: &[NodeSlot<'a>],
    mut budget: RollingBudget,
    judge: Judge<'_>,
) -> RollingStep<'a> {
    let mut unavailable = 0;
    let mut replacements = Vec::new();
    let mut candidates = Vec::new();
    for slot in slots {
        let Some((new, old)) = find_updated_pods_on_node(&slot.pods, judge.revisions) else {
            unavailable += 1;
            continue;
        };
        match (new, old) {
            (None, None) | (Some(_), Some(_)) => unavailable += 1,
            (Some(new), None) => {
                if !judge.available(new) {
                    unavailable += 1;
                }
            }
            (None, Some(old)) if !judge.available(old) => {
                replacements.push((old, slot.node.clone(), RollingReason::ReplaceUnavailableOld));
                unavailable += 1;
            }
            (None, Some(old)) => {
                if unavailable < budget.max_unavailable {
                    candidates.push((old, slot.node.clone(), RollingReason::ReplaceOld));
                }
            }
        }
    }
    let room = usize::try_from(budget.max_unavailable - unavailable).unwrap_or(0);
    candidates.truncate(room);
    budget.unavailable_now = unavailable;
    replacements.extend(candidates);
    RollingStep {
        delete: replacements,
        create_on: Vec::new(),
        budget,
    }
}

/// Rolling step with surge (upstream `rollingUpdate`, `maxSurge > 0`).
///
/// Assumptions: the manage loop keeps at most one old and one new pod per node,
/// creates pods on empty nodes and deletes failed ones; terminating pods are not
/// counted.
/// Invariants: a node with an unavailable old pod gets a new pod at once; an old
/// available pod is deleted only when the new pod beside it is available; at most
/// `max_surge` new pods are in flight beside available old pods; old pods on nodes
/// that should no longer run them are deleted only while more pods are available
/// than desired (100% availability is what surge promises).
fn step_with_surge<'a>(
    slots: &[NodeSlot<'a>],
    mut budget: RollingBudget,
    judge: Judge<'_>,
) -> RollingStep<'a> {
    let mut work = SurgeWork::default();
    for slot in slots {
        work.visit(slot, judge, budget.max_surge);
    }
    let SurgeWork {
        mut step,
        mut sunset,
        mut candidates,
        surge,
        available,
    } = work;
    sunset.truncate(usize::try_from(available - budget.desired).unwrap_or(0));
    step.delete.extend(sunset);
    candidates.truncate(usize::try_from(budget.max_surge - surge).unwrap_or(0));
    step.create_on.extend(candidates);
    budget.surge_now = surge;
    step.budget = budget;
    step
}

/// What the surge step has collected so far.
#[derive(Default)]
struct SurgeWork<'a> {
    /// Decided deletions and creations.
    step: RollingStep<'a>,
    /// Available old pods on nodes that should no longer run them.
    sunset: Vec<(&'a Pod, String, RollingReason)>,
    /// Nodes that may get a surge pod if budget remains.
    candidates: Vec<(String, RollingReason)>,
    /// Surge pods in flight (new pods not yet available, nodes with excess pods).
    surge: i32,
    /// Nodes whose old pod (or, lacking one, new pod) is available.
    available: i32,
}

impl<'a> SurgeWork<'a> {
    fn visit(&mut self, slot: &NodeSlot<'a>, judge: Judge<'_>, max_surge: i32) {
        let Some((new, old)) = find_updated_pods_on_node(&slot.pods, judge.revisions) else {
            self.surge += 1;
            return;
        };
        if old.or(new).is_some_and(|p| judge.available(p)) {
            self.available += 1;
        }
        let node = slot.node.clone();
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) if !judge.available(old) => {
                if slot.should_run {
                    self.step
                        .create_on
                        .push((node, RollingReason::SurgeForUnavailableOld));
                } else {
                    self.step
                        .delete
                        .push((old, node, RollingReason::NodeNoLongerEligible));
                }
            }
            (None, Some(old)) => {
                if !slot.should_run {
                    self.sunset
                        .push((old, node, RollingReason::NodeNoLongerEligible));
                } else if self.surge < max_surge {
                    self.candidates.push((node, RollingReason::Surge));
                }
            }
            (Some(new), Some(old)) => {
                if judge.available(new) {
                    self.step
                        .delete
                        .push((old, node, RollingReason::NewPodAvailable));
                } else {
                    self.surge += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
