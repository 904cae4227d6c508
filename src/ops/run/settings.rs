//! A run's settings and the checks before it starts: the same refusals for
//! `rollcall auto`, `rollcall rollback` and the console's `A` and `r`.
//!
//! A RollingUpdate DaemonSet is rolled by its controller. A run never races
//! it: it takes the rollout over explicitly, as pause does — the strategy is
//! switched to OnDelete (the exact strategy saved on the DaemonSet) when the
//! run starts and written back when it ends — and moves at most as many nodes
//! at once as the DaemonSet's own `maxUnavailable` leaves, counting every node
//! already unavailable. A surge-only strategy (`maxUnavailable: 0`) cannot be
//! honoured by deletes, and a GitOps owner would put the strategy back
//! mid-run: both are refused with what to do instead.

use crate::engine::rolling::{RollingError, UpdateStrategy, scaled_value};
use crate::ops::auto::AutoPolicy;
use crate::ops::error::OpsError;
use crate::ops::owner_guard::{Decision, SpecAction, decide};
use crate::ops::preflight::{FailingNode, check_canary_selector, failing_text, failing_updated};
use crate::ops::run::fleet_run::FleetRunName;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::RolloutState;

/// Everything a run is given: nothing is inherited from the annotations an
/// earlier run left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSettings {
    /// Batch size, soak, timeout.
    pub policy: AutoPolicy,
    /// The canary selector of this run (`None`: no canary stage by selector).
    pub canary_selector: Option<String>,
    /// For a rollback: the nodes to move back, in order, and the revision moved to.
    pub rollback: Option<(Vec<String>, i64)>,
    /// Start although pods already on the target revision are failing.
    pub despite_failing: bool,
    /// Move a node although its replacement will not fit (`--despite-fit`).
    pub despite_fit: bool,
    /// Also move cordoned nodes.
    pub include_cordoned: bool,
    /// The fleet run this run is a member's part of, written with the run's
    /// start so a console or `status` on the member names it, and marking
    /// the pauses a later run of the same plan resumes; `None` for a run of
    /// its own (which clears the name an earlier fleet run left).
    pub fleet_run: Option<FleetRunName>,
}

impl RunSettings {
    /// An auto-advance with `policy` and nothing else set.
    pub fn auto(policy: AutoPolicy) -> Self {
        Self {
            policy,
            canary_selector: None,
            rollback: None,
            despite_failing: false,
            despite_fit: false,
            include_cordoned: false,
            fleet_run: None,
        }
    }

    /// What the run is called in messages and pause reasons.
    pub fn label(&self) -> &'static str {
        if self.rollback.is_some() {
            "rollback"
        } else {
            "auto-advance"
        }
    }
}

/// Why a run may not start.
#[derive(Debug)]
pub enum StartRefusal {
    /// Bad settings or state (exit 2).
    Invalid(OpsError),
    /// Pods already on the target revision are failing (exit 1; an explicit
    /// override — `--despite-failing`, or its own dialog in the console — starts anyway).
    Failing(Vec<FailingNode>),
}

impl std::fmt::Display for StartRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(err) => write!(f, "{err}"),
            Self::Failing(nodes) => f.write_str(&failing_text(nodes, 10)),
        }
    }
}

/// Refuses to act on a paused rollout or on a revision view the controller has
/// not caught up with (acting then could delete pods that are already current).
pub fn ensure_actionable(snapshot: &Snapshot<'_>, state: &RolloutState) -> Result<(), OpsError> {
    if let Some(pause) = &state.pause {
        return Err(OpsError::Invalid(format!(
            "the rollout is paused by {}; resume it first",
            pause.by
        )));
    }
    if !snapshot.index().current_matches_template() {
        return Err(OpsError::Invalid(
            "the controller has not yet recorded the current template as a revision; try again in a moment".to_owned(),
        ));
    }
    Ok(())
}

/// Refuses a pod deleted by hand (`advance`, the console's `a` and `n`)
/// where it would race the controller: on a RollingUpdate DaemonSet the
/// controller replaces pods itself, and a delete beside its own replacements
/// goes over the DaemonSet's `maxUnavailable`. (While a run has taken the
/// rollout over, the strategy is OnDelete and hand advances are allowed.)
pub fn ensure_advance_by_hand(
    snapshot: &Snapshot<'_>,
    state: &RolloutState,
) -> Result<(), OpsError> {
    ensure_actionable(snapshot, state)?;
    let strategy = snapshot.update_strategy();
    if strategy.is_on_delete() {
        return Ok(());
    }
    let target = snapshot.target();
    Err(OpsError::Invalid(format!(
        "{target} rolls out with {strategy}: its controller replaces pods itself, and a pod          deleted by hand would go down beside its replacements; use `rollcall auto {target}`          (the console's A), which takes the rollout over within maxUnavailable, or let the          controller roll"
    )))
}

/// Checks a run may start from `snapshot` at `now`: not paused (unless it is a
/// rollback), no live run elsewhere, a RollingUpdate strategy a run can take
/// over, a canary selector that matches, and no failing updated pods (unless
/// overridden).
pub fn check_start(
    snapshot: &Snapshot<'_>,
    state: &RolloutState,
    settings: &RunSettings,
    now: jiff::Timestamp,
) -> Result<(), StartRefusal> {
    // A rollback supersedes a pause of the rollout it undoes; auto-advance does not.
    if let (Some(pause), None) = (&state.pause, &settings.rollback) {
        return Err(StartRefusal::Invalid(OpsError::Invalid(format!(
            "the rollout is paused by {}; resume it first",
            pause.by
        ))));
    }
    if let Some(running) = state.run_in_progress(now) {
        return Err(StartRefusal::Invalid(OpsError::Invalid(running)));
    }
    takeover(snapshot).map_err(StartRefusal::Invalid)?;
    let index = snapshot.index();
    let rows = snapshot.rows(&index, now);
    if let Some(text) = &settings.canary_selector {
        check_canary_selector(text, &rows, snapshot.nodes()).map_err(StartRefusal::Invalid)?;
    }
    if settings.rollback.is_none() && !settings.despite_failing {
        let failing = failing_updated(&rows);
        if !failing.is_empty() {
            return Err(StartRefusal::Failing(failing));
        }
    }
    Ok(())
}

/// The strategy a run takes over from the controller: `None` for OnDelete
/// (nothing to take over); the RollingUpdate strategy when a run may take it
/// over; an error saying what to do instead when it may not.
pub fn takeover(snapshot: &Snapshot<'_>) -> Result<Option<UpdateStrategy>, OpsError> {
    let strategy = snapshot.update_strategy();
    let UpdateStrategy::RollingUpdate {
        max_unavailable,
        max_surge,
    } = &strategy
    else {
        return Ok(None);
    };
    let target = snapshot.target();
    // Against one node: 0 only when maxUnavailable is 0 or 0%.
    if scaled_value(max_unavailable, 1, true, "maxUnavailable").unwrap_or(1) == 0 {
        return Err(OpsError::Invalid(format!(
            "{target} rolls out with {strategy}: replacing its pods by deleting them would take \
             nodes down where maxUnavailable allows none; let the controller roll it (it surges \
             maxSurge={} node(s) at a time)",
            budget_text(max_surge)
        )));
    }
    if let Decision::Refuse(text) = decide(&snapshot.ds, SpecAction::Pause, false) {
        return Err(OpsError::Invalid(format!(
            "{target} uses RollingUpdate, and a run would take the rollout over from the \
             controller by switching it to OnDelete until the run ends; {text}"
        )));
    }
    Ok(Some(strategy))
}

/// The note a run over a RollingUpdate DaemonSet shows before it starts.
pub fn takeover_note(strategy: &UpdateStrategy) -> String {
    format!(
        "takes the rollout over from the controller: switches {strategy} to OnDelete (saved on \
         the DaemonSet, written back when the run ends) and moves no more nodes at once than \
         maxUnavailable leaves"
    )
}

/// How many more nodes may go unavailable now under `strategy` (taken over
/// from the controller): its `maxUnavailable` for `desired` nodes (percentages
/// round up, as upstream's `updatedDesiredNodeCounts`) less the nodes that
/// have no available daemon pod now. `None` when there is no budget (OnDelete).
pub fn unavailable_allowance(
    strategy: &UpdateStrategy,
    desired: usize,
    unavailable_now: usize,
) -> Result<Option<usize>, RollingError> {
    let UpdateStrategy::RollingUpdate {
        max_unavailable, ..
    } = strategy
    else {
        return Ok(None);
    };
    let desired_i32 = i32::try_from(desired).unwrap_or(i32::MAX);
    let max = scaled_value(max_unavailable, desired_i32, true, "maxUnavailable")?;
    // Upstream falls back to one unavailable when both budgets come out 0.
    let max = usize::try_from(max.max(1)).unwrap_or(1);
    Ok(Some(max.saturating_sub(unavailable_now)))
}

fn budget_text(value: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString) -> String {
    match value {
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => n.to_string(),
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;

    fn rolling(max_unavailable: IntOrString) -> UpdateStrategy {
        UpdateStrategy::RollingUpdate {
            max_unavailable,
            max_surge: IntOrString::Int(0),
        }
    }

    /// upstream `updatedDesiredNodeCounts`: percentages of the desired nodes
    /// round up; the budget in use is every node without an available pod.
    #[test]
    fn the_allowance_is_max_unavailable_less_what_is_down() {
        let cases = [
            (
                "10% of 14 rounds up to 2",
                rolling(IntOrString::String("10%".into())),
                14,
                0,
                Some(2),
            ),
            (
                "one already down",
                rolling(IntOrString::String("10%".into())),
                14,
                1,
                Some(1),
            ),
            ("spent", rolling(IntOrString::Int(2)), 10, 2, Some(0)),
            ("over spent", rolling(IntOrString::Int(2)), 10, 5, Some(0)),
            (
                "0 falls back to 1",
                rolling(IntOrString::Int(0)),
                10,
                0,
                Some(1),
            ),
            ("OnDelete has none", UpdateStrategy::OnDelete, 10, 0, None),
        ];
        for (name, strategy, desired, down, want) in cases {
            assert_eq!(
                unavailable_allowance(&strategy, desired, down)
                    .ok()
                    .flatten(),
                want,
                "{name}"
            );
        }
    }
}
