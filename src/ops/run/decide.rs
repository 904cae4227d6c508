//! The one decision of a running auto-advance or rollback: given the observed
//! cluster, the stored rollout state, the run's settings and `now`, what to do
//! next — stop (someone paused), wait, delete these pods, pause with this
//! reason, or finish (with the nodes left behind). [`super::Run`] turns it into
//! writes; the headless driver and the console only execute them.
//!
//! Pure: no I/O, `now` is an argument.

use crate::engine::coverage::NodeCoverage;
use crate::engine::rolling::UpdateStrategy;
use crate::engine::rollout::{RolloutPlan, SkipReason, WaitingFor};
use crate::ops::advance::{AdvanceTarget, Victim, skip_text};
use crate::ops::auto::{AutoRun, Step};
use crate::ops::error::OpsError;
use crate::ops::preflight::failing_updated;
use crate::ops::run::fit::{step_fit, wont_fit_text};
use crate::ops::run::settings::{RunSettings, unavailable_allowance};
use crate::ops::snapshot::{Rows, Snapshot, plan_options};
use crate::ops::state::{Mode, RolloutState};

/// What a running auto-advance or rollback does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Someone paused the rollout: the run ends, their pause stands.
    Stopped {
        /// Who paused.
        by: String,
    },
    /// Nothing to do until the cluster changes or `wake_at` passes.
    Wait {
        /// The earliest time the answer can change by itself.
        wake_at: Option<jiff::Timestamp>,
        /// Per node, what it waits for.
        waiting: Vec<(String, WaitingFor)>,
    },
    /// Delete these pods (one at a time, each journalled), then report each
    /// result to the run; with, per node whose replacement preempts
    /// workloads, the victims in words (said before its delete).
    Delete(Vec<Victim>, Vec<(String, String)>),
    /// Stop and pause the rollout: a gate failed or an updated pod is failing.
    Pause {
        /// The node.
        node: String,
        /// Why, in words.
        reason: String,
    },
    /// Read this node's pods afresh before its timeout fails it.
    Verify {
        /// The node.
        node: String,
    },
    /// Every node the run could move passed its gate.
    Completed {
        /// Nodes moved by this run.
        advanced: usize,
        /// Nodes the run was meant to move but could not, with why.
        left: Vec<(String, String)>,
    },
    /// The DaemonSet's own `maxUnavailable` is spent (a RollingUpdate
    /// DaemonSet taken over from its controller): wait for nodes to come back.
    OverBudget {
        /// Nodes without an available pod now.
        unavailable: usize,
    },
}

/// Decides the next move of `run` from `snapshot` and `state` at `now`.
pub fn next_move(
    run: &mut AutoRun,
    snapshot: &Snapshot<'_>,
    state: &RolloutState,
    settings: &RunSettings,
    taken_over: Option<&UpdateStrategy>,
    now: jiff::Timestamp,
) -> Result<Next, OpsError> {
    if let Some(pause) = &state.pause {
        return Ok(Next::Stopped {
            by: format!("a pause by {}", pause.by),
        });
    }
    let index = snapshot.index();
    if !index.current_matches_template() {
        // The controller has not snapshotted the template yet: "updated" would be wrong.
        return Ok(Next::Wait {
            wake_at: None,
            waiting: Vec::new(),
        });
    }
    let rows = snapshot.rows(&index, now);
    let planned = planned_state(state, settings);
    // A bad selector is an error before anything else is judged.
    plan_options(&planned)?;
    // Every updated node is re-checked before a new batch, not only the last one.
    let recheck =
        settings.rollback.is_none() && !settings.despite_failing && !run.has_work_in_flight();
    if let Some(failing) = recheck
        .then(|| failing_updated(&rows).into_iter().next())
        .flatten()
    {
        return Ok(Next::Pause {
            node: failing.node,
            reason: format!(
                "an updated pod is failing: {}",
                crate::sanitize::sanitize(&failing.reason)
            ),
        });
    }
    let min_ready = crate::engine::coverage::min_ready_seconds(&snapshot.ds);
    // The batch in flight is judged on its own rows, as of now: a change
    // elsewhere costs nothing more.
    let row_of = |node: &str| rows.fresh(node);
    if let Some(step) = run.judge_batch(&row_of, min_ready, now) {
        return Ok(from_step(step));
    }
    // A RollingUpdate DaemonSet taken over: its own maxUnavailable bounds
    // the batch, counting every node already down (the controller's
    // replacements still settling included).
    let mut size = run.batch_size();
    let mut spent = None;
    if let Some(strategy) = taken_over {
        let (desired, unavailable) = budget_counts(rows.iter());
        match unavailable_allowance(strategy, desired, unavailable) {
            Ok(Some(0)) => (size, spent) = (1, Some(unavailable)),
            Ok(Some(allowed)) => size = size.min(allowed),
            Ok(None) => {}
            Err(err) => return Err(OpsError::Invalid(err.to_string())),
        }
    }
    // The next batch: only its steps for an auto-advance, the whole plan for
    // a rollback (it walks its own order and reports the nodes left behind).
    let plan = if run.is_limited() || settings.rollback.is_some() {
        snapshot.plan_with(&rows, &planned, settings.include_cordoned)?
    } else {
        let next = AdvanceTarget::Next(size);
        snapshot.plan_for(
            &rows,
            &planned,
            &next,
            run.done(),
            settings.include_cordoned,
        )?
    };
    // A spent budget holds the next batch; with nothing left to move the
    // run ends as any other (a NotReady node must not keep it waiting).
    if let Some(unavailable) = spent
        && plan.steps.iter().any(|s| !run.done().contains(&s.node))
    {
        return Ok(Next::OverBudget { unavailable });
    }
    match run.next_up_to(&plan, size) {
        // Fit is re-checked before every batch: the nodes filled up since
        // the run started, or the template changed.
        Step::Delete(victims) => Ok(fit_checked(victims, snapshot, &rows, settings)),
        // Done: the whole plan names the nodes left behind (cordoned,
        // NotReady), so "completed" is said only when none are.
        Step::Completed { advanced } => {
            let whole = snapshot.plan_with(&rows, &planned, settings.include_cordoned)?;
            let left = match &settings.rollback {
                Some((order, _)) => left_behind(&whole, Some(order)),
                None => left_behind(&whole, None),
            };
            Ok(Next::Completed { advanced, left })
        }
        step => Ok(from_step(step)),
    }
}

/// The state a run plans from. The run's own settings choose its canaries,
/// never the annotation as last seen: right after the start the view may not
/// hold the start's own write yet (it read no selector, and the first batch
/// went to edge-01 instead of the canaries), and an older run's selector must
/// not carry over.
fn planned_state(state: &RolloutState, settings: &RunSettings) -> RolloutState {
    RolloutState {
        canary_selector: settings.canary_selector.clone(),
        mode: Mode::Auto,
        ..state.clone()
    }
}

/// Whether a run with `settings` has any node to move on `snapshot` at
/// `now` (a template the controller has not snapshotted yet counts as yes:
/// what is old cannot be told).
pub fn has_nodes_to_move(
    snapshot: &Snapshot<'_>,
    state: &RolloutState,
    settings: &RunSettings,
    now: jiff::Timestamp,
) -> Result<bool, OpsError> {
    let index = snapshot.index();
    if !index.current_matches_template() {
        return Ok(true);
    }
    let rows = snapshot.rows(&index, now);
    let plan = snapshot.plan_with(
        &rows,
        &planned_state(state, settings),
        settings.include_cordoned,
    )?;
    Ok(!plan.steps.is_empty())
}

/// The nodes in the order a run moves them (`true`: a canary), and the
/// nodes it leaves behind with why.
pub type PlannedOrder = (Vec<(String, bool)>, Vec<(String, String)>);

/// The plan a run with `settings` would follow on `snapshot` at `now`, as
/// the run itself plans it (its canary selector, cordoned nodes or not): the
/// nodes in the order they would move (canaries flagged), and the nodes it
/// would leave behind with why. A fleet plan shows it per cluster.
pub fn planned_order(
    snapshot: &Snapshot<'_>,
    settings: &RunSettings,
    now: jiff::Timestamp,
) -> Result<PlannedOrder, OpsError> {
    let state = snapshot.state()?;
    let index = snapshot.index();
    let rows = snapshot.rows(&index, now);
    let plan = snapshot.plan_with(
        &rows,
        &planned_state(&state, settings),
        settings.include_cordoned,
    )?;
    let order = plan
        .steps
        .iter()
        .map(|step| (step.node.clone(), step.canary))
        .collect();
    Ok((order, left_behind(&plan, None)))
}

/// Nodes that should run the daemon pod, and those of them without an
/// available pod that is not being deleted: upstream `rollingUpdate` counts a
/// node whose only pod is terminating as unavailable (it skips pods with a
/// deletion timestamp), and so must a budget taken over from it.
fn budget_counts<'r>(rows: impl Iterator<Item = &'r NodeCoverage>) -> (usize, usize) {
    rows.filter(|row| row.verdict.should_run)
        .fold((0, 0), |(desired, unavailable), row| {
            let up = row.pods.iter().any(|p| p.available && !p.terminating);
            (desired + 1, unavailable + usize::from(!up))
        })
}

/// A batch judged by fit: paused when a node's replacement will not fit
/// (unless the run goes despite fit), else its deletes with the workloads
/// each preempts.
fn fit_checked(
    victims: Vec<Victim>,
    snapshot: &Snapshot<'_>,
    rows: &Rows<'_>,
    settings: &RunSettings,
) -> Next {
    let nodes: Vec<&str> = victims.iter().map(|v| v.node.as_str()).collect();
    let judged = step_fit(snapshot, rows, &nodes);
    if !settings.despite_fit
        && let Some((node, reasons)) = judged.wont_fit.first()
    {
        let others = judged.wont_fit.len() - 1;
        let also = if others > 0 {
            format!(" (and {others} more node(s) of the batch)")
        } else {
            String::new()
        };
        return Next::Pause {
            node: node.clone(),
            reason: format!("{}{also}", wont_fit_text(reasons)),
        };
    }
    Next::Delete(victims, judged.preempt_notes())
}

/// The run's step as the next move.
fn from_step(step: Step) -> Next {
    match step {
        Step::Delete(victims) => Next::Delete(victims, Vec::new()),
        Step::Wait { wake_at, waiting } => Next::Wait { wake_at, waiting },
        Step::Pause { node, reason } => Next::Pause { node, reason },
        Step::Verify { node } => Next::Verify { node },
        Step::Completed { advanced } => Next::Completed {
            advanced,
            left: Vec::new(),
        },
    }
}

/// Nodes the run was meant to move and could not, with why: nodes that should
/// run the daemon pod and still run an old revision because the plan skipped
/// them (cordoned, NotReady). A rollback counts only the nodes of its `order`;
/// nodes that should not run the pod, or have none, are not a run's to move.
pub fn left_behind(plan: &RolloutPlan, order: Option<&Vec<String>>) -> Vec<(String, String)> {
    plan.skipped
        .iter()
        .filter(|s| order.is_none_or(|order| order.contains(&s.node)))
        .filter(|s| match s.reason {
            SkipReason::Cordoned | SkipReason::NotReady => true,
            SkipReason::NotEligible { .. } | SkipReason::NoDaemonPod => order.is_some(),
            SkipReason::AlreadyUpdated => false,
        })
        .map(|s| (s.node.clone(), skip_text(&s.reason)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixtures::pod;
    use crate::ops::auto::AutoPolicy;
    use crate::ops::testing::{NEW, all_old, ds, replace, snapshot, t};

    const NODES: [&str; 3] = ["n1", "n2", "n3"];

    fn settings() -> RunSettings {
        RunSettings {
            policy: AutoPolicy {
                batch: 1,
                soak: std::time::Duration::ZERO,
                timeout: std::time::Duration::from_secs(60),
            },
            canary_selector: None,
            rollback: None,
            despite_failing: false,
            despite_fit: false,
            include_cordoned: false,
            fleet_run: None,
        }
    }

    #[test]
    fn a_failing_updated_pod_pauses_before_the_next_batch() {
        let crashing = pod("agent-n2-new", "n2", NEW)
            .running_not_ready(50)
            .waiting("CrashLoopBackOff", 3)
            .build();
        let snap = snapshot(
            ds(false, &[]),
            &NODES,
            replace(all_old(&NODES), vec![crashing]),
        );
        let mut run = AutoRun::new(settings().policy);
        let next = next_move(
            &mut run,
            &snap,
            &RolloutState::default(),
            &settings(),
            None,
            t(100),
        );
        match next {
            Ok(Next::Pause { node, reason }) => {
                assert_eq!(node, "n2");
                assert!(reason.contains("CrashLoopBackOff"), "{reason}");
            }
            other => panic!("expected a pause, got {other:?}"),
        }
        let despite = RunSettings {
            despite_failing: true,
            ..settings()
        };
        assert!(matches!(
            next_move(
                &mut run,
                &snap,
                &RolloutState::default(),
                &despite,
                None,
                t(100)
            ),
            Ok(Next::Delete(..))
        ));
    }

    #[test]
    fn the_runs_canary_selector_decides_the_first_batch_whatever_the_view_holds() {
        use crate::engine::fixtures::node;
        let old = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        let nodes = NODES
            .iter()
            .map(|n| {
                let pool = if *n == "n3" { "canary" } else { "general" };
                node(n).label("pool", pool).build()
            })
            .collect::<Vec<_>>();
        let pods = old.pods().cloned().collect::<Vec<_>>();
        let snap = Snapshot::new(old.ds.clone(), nodes, pods, old.revisions.clone());
        let canaries = RunSettings {
            canary_selector: Some("pool=canary".into()),
            ..settings()
        };
        // The view still holds an older run's state: no selector, or another one.
        for seen in [None, Some("pool=general".to_owned())] {
            let state = RolloutState {
                canary_selector: seen.clone(),
                ..RolloutState::default()
            };
            let mut run = AutoRun::new(canaries.policy);
            match next_move(&mut run, &snap, &state, &canaries, None, t(0)) {
                Ok(Next::Delete(victims, _)) => {
                    let nodes: Vec<&str> = victims.iter().map(|v| v.node.as_str()).collect();
                    assert_eq!(nodes, ["n3"], "view held {seen:?}");
                }
                other => panic!("expected the canary's delete, got {other:?}"),
            }
        }
    }

    #[test]
    fn someone_elses_pause_stops_the_run() {
        let snap = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        let state = RolloutState {
            pause: Some(crate::ops::state::Pause {
                by: "ana".into(),
                ..crate::ops::state::Pause::default()
            }),
            ..RolloutState::default()
        };
        let mut run = AutoRun::new(settings().policy);
        assert_eq!(
            next_move(&mut run, &snap, &state, &settings(), None, t(0)).ok(),
            Some(Next::Stopped {
                by: "a pause by ana".into()
            })
        );
    }
}
