//! The batch gate of a progressive rollout: may the next batch start?
//!
//! A batch passes only when every member's replacement pod runs the current
//! revision, is Ready and available, and has soaked without restarting. It fails
//! fast on the signals an operator would stop for. Pure: `now` is an argument.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use crate::engine::coverage::{NodeCoverage, PodCoverage};
use crate::engine::health::{PodHealth, pod_health};

/// How strict the gate is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GatePolicy {
    /// How long a new pod must stay Ready without restarts, counted from its
    /// Ready transition.
    pub soak: Duration,
    /// How long after the old pod's deletion the new pod may take to be Ready.
    pub timeout: Duration,
    /// Seconds a pod must be Ready before it counts as available (at least the
    /// DaemonSet's own `minReadySeconds` is a sensible choice).
    pub min_ready_seconds: i32,
}

/// One node of a batch in flight.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchMember {
    /// Node name.
    pub node: String,
    /// When the old pod was deleted.
    pub started: Timestamp,
    /// UID of the deleted old pod (it may linger while terminating).
    pub pod_uid_deleted: String,
    /// The replacement pod's restart count when the gate started watching it
    /// (0 for a fresh pod).
    pub restarts_at_start: i32,
    /// UID of the replacement pod, once the caller has seen one; lets the gate
    /// tell a vanished replacement from one not yet created.
    pub new_pod_uid: Option<String>,
    /// The node's current coverage.
    pub coverage: NodeCoverage,
}

/// Why a batch fails.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum GateFailure {
    /// No Ready replacement within the timeout.
    NotReadyInTime {
        /// Seconds waited.
        waited_seconds: i64,
    },
    /// The replacement pod is failing (crash loop, image pull, failed phase, …),
    /// as the one classification in [`crate::engine::health`] says.
    Failing {
        /// The kubelet's reason (`CrashLoopBackOff`, `ErrImagePull`, `Failed`).
        reason: String,
        /// The container's own words (exit code, message), when known.
        detail: Option<String>,
    },
    /// Containers restarted since the gate started watching.
    Restarted {
        /// Restarts now.
        restarts: i32,
    },
    /// The replacement pod seen earlier is gone.
    PodGone {
        /// Its UID.
        uid: String,
    },
    /// The node runs a pod of another revision instead of the current one.
    ReplacedByOther {
        /// That pod's name.
        pod: String,
        /// Its revision number, if known.
        revision: Option<i64>,
    },
}

/// What a member still waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum WaitingFor {
    /// The controller to create the replacement pod.
    ReplacementPod,
    /// The replacement pod to become Ready.
    Ready {
        /// Deadline (start + timeout).
        deadline: Timestamp,
    },
    /// `min_ready_seconds` to pass since Ready.
    Available {
        /// When the pod becomes available.
        at: Timestamp,
    },
    /// The soak time to pass without restarts.
    Soak {
        /// When the soak ends.
        until: Timestamp,
    },
}

/// The gate's answer for a batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "camelCase")]
pub enum GateVerdict {
    /// Every member is updated, Ready, available and soaked.
    Passed,
    /// Nothing failed yet; these members still wait.
    Waiting {
        /// Per node, what it waits for.
        waiting: Vec<(String, WaitingFor)>,
    },
    /// A member failed; the rollout should pause.
    Failed {
        /// The first failing node (batch order).
        node: String,
        /// Why.
        reason: GateFailure,
    },
}

/// Judges a batch at `now`.
///
/// Assumptions: each member's old pod was deleted at `started`, and `coverage` is
/// the node's row as of `now` (the DaemonSet controller recreates the pod, which
/// it does only once the old one is fully gone).
/// Invariants: `Passed` only when every member's replacement runs the current
/// revision, is Ready and available, has no restarts beyond the baseline and has
/// been Ready for `soak`; the first failing member (in batch order) decides
/// `Failed`; fail-fast signals (crash loop, image pull, restarts, failed phase,
/// an unschedulable, evicted or rejected pod, a sandbox that cannot be
/// created, a vanished or foreign pod) win over waiting; an empty batch passes.
pub fn gate(batch: &[BatchMember], now: Timestamp, policy: &GatePolicy) -> GateVerdict {
    let mut waiting = Vec::new();
    for member in batch {
        match judge_member(member, now, policy) {
            MemberState::Done => {}
            MemberState::Waiting(what) => waiting.push((member.node.clone(), what)),
            MemberState::Failed(reason) => {
                return GateVerdict::Failed {
                    node: member.node.clone(),
                    reason,
                };
            }
        }
    }
    if waiting.is_empty() {
        GateVerdict::Passed
    } else {
        GateVerdict::Waiting { waiting }
    }
}

enum MemberState {
    Done,
    Waiting(WaitingFor),
    Failed(GateFailure),
}

fn add(at: Timestamp, duration: SignedDuration) -> Timestamp {
    at.checked_add(duration).unwrap_or(Timestamp::MAX)
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}

fn judge_member(member: &BatchMember, now: Timestamp, policy: &GatePolicy) -> MemberState {
    let pod = match replacement(member) {
        Ok(Some(pod)) => pod,
        Ok(None) => return not_ready_yet(member, now, policy, WaitingFor::ReplacementPod),
        Err(failure) => return MemberState::Failed(failure),
    };
    if let Some(failure) = pod_failure(pod, member.restarts_at_start) {
        return MemberState::Failed(failure);
    }
    if !pod.ready {
        let deadline = add(member.started, signed(policy.timeout));
        return not_ready_yet(member, now, policy, WaitingFor::Ready { deadline });
    }
    let ready_since = pod
        .ready_since
        .map_or(member.started, crate::model::Stamp::timestamp);
    let available_at =
        crate::engine::coverage::available_from(ready_since, policy.min_ready_seconds)
            .unwrap_or(Timestamp::MAX);
    if !pod.available || (policy.min_ready_seconds > 0 && available_at >= now) {
        return MemberState::Waiting(WaitingFor::Available { at: available_at });
    }
    let until = add(ready_since, signed(policy.soak));
    if now < until {
        return MemberState::Waiting(WaitingFor::Soak { until });
    }
    MemberState::Done
}

/// Waits, or fails once the timeout since the old pod's deletion has passed.
fn not_ready_yet(
    member: &BatchMember,
    now: Timestamp,
    policy: &GatePolicy,
    what: WaitingFor,
) -> MemberState {
    let waited = now.duration_since(member.started);
    if waited > signed(policy.timeout) {
        MemberState::Failed(GateFailure::NotReadyInTime {
            waited_seconds: waited.as_secs(),
        })
    } else {
        MemberState::Waiting(what)
    }
}

/// The member's replacement pod: the one recorded by UID, else the oldest live
/// pod that is not the deleted one. Fails when the recorded one vanished or the
/// node runs a pod of another revision.
fn replacement(member: &BatchMember) -> Result<Option<&PodCoverage>, GateFailure> {
    let mut live = member
        .coverage
        .pods
        .iter()
        .filter(|p| !p.terminating && p.uid != member.pod_uid_deleted);
    let pod = match &member.new_pod_uid {
        Some(uid) => match member
            .coverage
            .pods
            .iter()
            .find(|p| &p.uid == uid && !p.terminating)
        {
            Some(pod) => pod,
            None => {
                return Err(match live.find(|p| !p.updated) {
                    Some(other) => replaced_by(other),
                    None => GateFailure::PodGone { uid: uid.clone() },
                });
            }
        },
        None => match live.next() {
            Some(pod) => pod,
            None => return Ok(None),
        },
    };
    if pod.updated {
        Ok(Some(pod))
    } else {
        Err(replaced_by(pod))
    }
}

fn replaced_by(pod: &PodCoverage) -> GateFailure {
    GateFailure::ReplacedByOther {
        pod: pod.name.to_string(),
        revision: pod.revision,
    }
}

/// Fail-fast signals on the replacement pod: failing by the one health
/// classification, or restarted since the gate started watching.
fn pod_failure(pod: &PodCoverage, restarts_at_start: i32) -> Option<GateFailure> {
    if let PodHealth::Failing { reason, detail } = pod_health(pod) {
        return Some(GateFailure::Failing { reason, detail });
    }
    (pod.restarts > restarts_at_start).then_some(GateFailure::Restarted {
        restarts: pod.restarts,
    })
}

#[cfg(test)]
mod tests;
