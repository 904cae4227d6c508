//! Advance: pick the old-revision daemon pods to delete (on the named nodes, or
//! the next K nodes of the plan) and build the deletes, each with the pod's UID
//! as precondition, so the controller recreates them from the current template.
//!
//! Pure: reads the engine's plan; never deletes anything itself and never picks
//! a node the plan skipped (the skip reason is the error).

use std::collections::BTreeSet;

use crate::engine::coverage::NodeCoverage;
use crate::engine::rollout::{BatchMember, GateFailure, RolloutPlan, SkipReason, next_batch};
pub use crate::ops::advance_target::AdvanceTarget;
use crate::ops::error::OpsError;
use crate::ops::journal_action::JournalAction;
use crate::ops::snapshot::Target;
use crate::ops::write::{Record, Write, WriteRequest};

/// One pod to delete so that its node moves to the current revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Victim {
    /// The node.
    pub node: String,
    /// The old pod's name.
    pub pod: String,
    /// Its UID (the delete precondition).
    pub uid: String,
    /// Its revision number.
    pub revision_from: Option<i64>,
    /// Whether the node is a canary.
    pub canary: bool,
}

/// Chooses the pods to delete. Named nodes must be steps of the plan (else the
/// skip reason is the error); `Next(k)` takes the plan's next batch (canaries on
/// their own first), leaving out `exclude` (nodes in flight).
pub fn choose(
    plan: &RolloutPlan,
    target: &AdvanceTarget,
    exclude: &BTreeSet<String>,
) -> Result<Vec<Victim>, OpsError> {
    let victims: Vec<Victim> = match target {
        AdvanceTarget::Nodes(names) => {
            let mut seen = BTreeSet::new();
            names
                .iter()
                .filter(|n| seen.insert(n.as_str()))
                .map(|name| named(plan, name))
                .collect::<Result<_, _>>()?
        }
        AdvanceTarget::Next(0) => {
            return Err(OpsError::Invalid("--next must be at least 1".to_owned()));
        }
        AdvanceTarget::Next(k) => next_batch(plan, *k, exclude)
            .into_iter()
            .filter_map(victim)
            .collect(),
    };
    if victims.is_empty() {
        return Err(OpsError::Invalid(nothing_left(plan)));
    }
    Ok(victims)
}

fn named(plan: &RolloutPlan, name: &str) -> Result<Victim, OpsError> {
    if let Some(step) = plan.steps.iter().find(|s| s.node == name) {
        return victim(step)
            .ok_or_else(|| OpsError::Invalid(format!("node {name}: no old pod to delete")));
    }
    match plan.skipped.iter().find(|s| s.node == name) {
        Some(skipped) => Err(OpsError::Invalid(format!(
            "node {name} is skipped: {}",
            skip_text(&skipped.reason)
        ))),
        None => Err(OpsError::Invalid(format!(
            "node {name} is not in the cluster"
        ))),
    }
}

fn victim(step: &crate::engine::rollout::PlanStep) -> Option<Victim> {
    let pod = step.pod.as_ref()?;
    Some(Victim {
        node: step.node.clone(),
        pod: pod.name.to_string(),
        uid: pod.uid.to_string(),
        revision_from: pod.revision,
        canary: step.canary,
    })
}

fn nothing_left(plan: &RolloutPlan) -> String {
    let mut text = "nothing to advance: no eligible node runs an old revision".to_owned();
    let blocked: Vec<String> = plan
        .skipped
        .iter()
        .filter(|s| matches!(s.reason, SkipReason::Cordoned | SkipReason::NotReady))
        .map(|s| format!("{} ({})", s.node, skip_text(&s.reason)))
        .collect();
    if !blocked.is_empty() {
        text.push_str("; skipped: ");
        text.push_str(&blocked.join(", "));
    }
    text
}

/// How a plan line marks a step: canaries first, control-plane nodes last
/// (the plan's order says why a node sits where it does).
pub fn step_mark(canary: bool, control_plane: bool) -> &'static str {
    match (canary, control_plane) {
        (true, _) => " [canary]",
        (false, true) => " [control plane: last]",
        (false, false) => "",
    }
}

/// A skip reason in words.
pub fn skip_text(reason: &SkipReason) -> String {
    match reason {
        // ELIG's own word (`no`, `keep`): the plan and the grid say one thing.
        SkipReason::NotEligible {
            eligibility,
            message,
        } => format!("eligibility {eligibility}: {message}"),
        SkipReason::NoDaemonPod => "no daemon pod on the node".to_owned(),
        SkipReason::AlreadyUpdated => "already runs the current revision".to_owned(),
        SkipReason::Cordoned => "cordoned".to_owned(),
        SkipReason::NotReady => "node not Ready".to_owned(),
    }
}

/// A gate failure in words, for the pause reason and messages.
pub fn failure_text(failure: &GateFailure) -> String {
    match failure {
        GateFailure::NotReadyInTime { waited_seconds } => {
            format!("replacement pod not Ready after {waited_seconds}s")
        }
        GateFailure::Failing { reason, detail } => {
            let what = if crate::engine::health::IMAGE_PULL_REASONS.contains(&reason.as_str()) {
                format!("replacement pod cannot pull its image ({reason})")
            } else {
                format!("replacement pod failing ({reason})")
            };
            match detail {
                Some(detail) => format!("{what}: {}", crate::sanitize::sanitize(detail)),
                None => what,
            }
        }
        GateFailure::Restarted { restarts } => {
            format!("replacement pod restarted ({restarts} restarts)")
        }
        GateFailure::PodGone { uid } => {
            format!("replacement pod {uid} was deleted by someone else")
        }
        GateFailure::ReplacedByOther { pod, revision } => match revision {
            Some(r) => {
                format!("node runs pod {pod} of revision {r} instead (replaced by someone else)")
            }
            None => format!(
                "node runs pod {pod} of another revision instead (replaced by someone else)"
            ),
        },
    }
}

/// The delete requests for `victims`, journaled as `action`.
pub fn delete_requests(
    target: &Target,
    victims: &[Victim],
    revision_to: Option<i64>,
    action: JournalAction,
) -> Vec<WriteRequest> {
    victims
        .iter()
        .map(|v| WriteRequest {
            write: Write::DeletePod {
                namespace: target.namespace.clone(),
                name: v.pod.clone(),
                uid: v.uid.clone(),
            },
            record: Record {
                action,
                daemonset: target.clone(),
                node: Some(v.node.clone()),
                pod: Some(v.pod.clone()),
                revision_from: v.revision_from,
                revision_to,
                note: v.canary.then(|| "canary".to_owned()),
            },
        })
        .collect()
}

/// A node whose old pod was deleted at `started`, for the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// The victim.
    pub victim: Victim,
    /// When the delete was acknowledged.
    pub started: jiff::Timestamp,
    /// The replacement pod's UID, once seen.
    pub new_pod_uid: Option<String>,
}

impl InFlight {
    /// Remembers the replacement pod (an updated, live pod that is not the
    /// deleted one) the first time it shows up, so the gate can tell if it vanishes.
    pub fn observe(&mut self, row: Option<&NodeCoverage>) {
        if self.new_pod_uid.is_some() {
            return;
        }
        self.new_pod_uid = row
            .and_then(|r| {
                r.pods
                    .iter()
                    .find(|p| p.updated && !p.terminating && p.uid != self.victim.uid)
            })
            .map(|p| p.uid.to_string());
    }

    /// The gate's view of this node with its current coverage row (taken:
    /// the gate judges a batch on every wake, and a copy per node was a
    /// third of its cost).
    pub fn member(&self, row: Option<NodeCoverage>) -> BatchMember {
        let coverage = row.unwrap_or_else(|| NodeCoverage {
            node: self.victim.node.as_str().into(),
            verdict: crate::engine::eligibility::NodeVerdict {
                should_run: false,
                should_continue_running: false,
                reasons: Vec::new(),
            },
            pods: Vec::new(),
        });
        BatchMember {
            node: self.victim.node.clone(),
            started: self.started,
            pod_uid_deleted: self.victim.uid.clone(),
            restarts_at_start: 0,
            new_pod_uid: self.new_pod_uid.clone(),
            coverage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::state::RolloutState;
    use crate::ops::testing::{NEW, all_old, ds, ready_pod, replace, snapshot, t};

    const NODES: [&str; 3] = ["n1", "n2", "n3"];

    fn plan_for(pods: Vec<crate::model::Pod>) -> RolloutPlan {
        let snap = snapshot(ds(false, &[]), &NODES, pods);
        let rows = snap.rows(&snap.index(), t(0));
        snap.plan(&rows, &RolloutState::default()).unwrap()
    }

    #[test]
    fn named_and_next_targets() {
        type Case = (
            &'static str,
            AdvanceTarget,
            Result<Vec<&'static str>, &'static str>,
        );
        let plan = plan_for(replace(all_old(&NODES), vec![ready_pod("n1", NEW, 5)]));
        let none = BTreeSet::new();
        let cases: Vec<Case> = vec![
            (
                "named old node",
                AdvanceTarget::Nodes(vec!["n2".into()]),
                Ok(vec!["n2"]),
            ),
            (
                "duplicates once",
                AdvanceTarget::Nodes(vec!["n3".into(), "n3".into()]),
                Ok(vec!["n3"]),
            ),
            ("next two", AdvanceTarget::Next(2), Ok(vec!["n2", "n3"])),
            (
                "updated node",
                AdvanceTarget::Nodes(vec!["n1".into()]),
                Err("node n1 is skipped: already runs the current revision"),
            ),
            (
                "unknown node",
                AdvanceTarget::Nodes(vec!["zz".into()]),
                Err("node zz is not in the cluster"),
            ),
            (
                "next zero",
                AdvanceTarget::Next(0),
                Err("--next must be at least 1"),
            ),
        ];
        for (name, target, want) in cases {
            let got = choose(&plan, &target, &none)
                .map(|v| v.into_iter().map(|v| v.node).collect::<Vec<_>>())
                .map_err(|e| e.to_string());
            let want = want
                .map(|v| v.into_iter().map(str::to_owned).collect::<Vec<_>>())
                .map_err(str::to_owned);
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn nothing_left_says_so() {
        let plan = plan_for(NODES.iter().map(|n| ready_pod(n, NEW, 0)).collect());
        let err = choose(&plan, &AdvanceTarget::Next(1), &BTreeSet::new()).unwrap_err();
        assert!(err.to_string().starts_with("nothing to advance"), "{err}");
    }

    #[test]
    fn deletes_carry_the_old_pod_uid() {
        let plan = plan_for(all_old(&NODES));
        let victims = choose(
            &plan,
            &AdvanceTarget::Nodes(vec!["n2".into()]),
            &BTreeSet::new(),
        )
        .unwrap();
        let target = Target {
            namespace: "kube-system".into(),
            name: "agent".into(),
        };
        let requests = delete_requests(&target, &victims, Some(2), JournalAction::Advance);
        assert_eq!(requests.len(), 1);
        assert_eq!(
            requests[0].write,
            Write::DeletePod {
                namespace: "kube-system".into(),
                name: "agent-n2-h1".into(),
                uid: "uid-agent-n2-h1".into()
            }
        );
        assert_eq!(
            (
                requests[0].record.revision_from,
                requests[0].record.revision_to
            ),
            (Some(1), Some(2))
        );
    }
}
