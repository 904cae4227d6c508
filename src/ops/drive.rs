//! The async flows behind the headless commands: advance (and wait), auto-advance
//! to completion or an automatic pause, rollback (and move OnDelete nodes back),
//! pause and resume. Each reads a snapshot, asks the pure modules what to do,
//! and runs their writes through the one [`Executor`], in order, never retrying
//! a delete. A 409 on a state write re-reads and decides again (at most a few
//! times) because the decision itself is redone from fresh data.

use std::time::Duration;

use crate::engine::rollout::rollback_order;
use crate::ops::advance::{AdvanceTarget, InFlight, Victim, choose, delete_requests};
use crate::ops::auto::{AutoPolicy, AutoRun, Step};
use crate::ops::error::OpsError;
use crate::ops::follow::Follower;
use crate::ops::pause::{PauseRequest, pause};
use crate::ops::snapshot::Snapshot;
use crate::ops::state::{Mode, RolloutState};
use crate::ops::write::{Executor, Record, Write, WriteRequest};

/// How an auto-advance (or an OnDelete rollback) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoEnd {
    /// Every node the plan could advance passed its gate.
    Completed {
        /// Nodes advanced by this run.
        advanced: usize,
    },
    /// A gate failed or a delete was refused; the rollout is now paused.
    Paused {
        /// The node.
        node: String,
        /// Why.
        reason: String,
    },
    /// Someone else paused the rollout, or the run was interrupted.
    Stopped {
        /// Who paused it (or what interrupted it).
        by: String,
    },
}

/// Refuses to act on a paused rollout or on a revision view the controller has
/// not caught up with (acting then could delete pods that are already current).
pub fn ensure_actionable(snapshot: &Snapshot, state: &RolloutState) -> Result<(), OpsError> {
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

/// Deletes the chosen pods one by one, stopping at the first refusal; returns
/// the nodes now in flight.
pub async fn delete_victims(
    executor: &Executor,
    snapshot: &Snapshot,
    victims: &[Victim],
    action: &str,
) -> Result<Vec<InFlight>, OpsError> {
    let revision_to = snapshot.index().current().map(|c| c.number);
    let mut flights = Vec::new();
    for (victim, request) in victims.iter().zip(delete_requests(
        &snapshot.target(),
        victims,
        revision_to,
        action,
    )) {
        executor.run(&request).await?;
        flights.push(InFlight {
            victim: victim.clone(),
            started: jiff::Timestamp::now(),
            new_pod_uid: None,
        });
    }
    Ok(flights)
}

/// `rollcall advance`: deletes the old pods on the chosen nodes; with `wait`,
/// follows the replacements until Ready and available (or a failure).
pub async fn advance(
    executor: &Executor,
    snapshot: &Snapshot,
    target: &AdvanceTarget,
) -> Result<Vec<InFlight>, OpsError> {
    let state = snapshot.state()?;
    ensure_actionable(snapshot, &state)?;
    let rows = snapshot.rows(&snapshot.index(), jiff::Timestamp::now());
    let plan = snapshot.plan(&rows, &state)?;
    let victims = choose(&plan, target, &std::collections::BTreeSet::new())?;
    delete_victims(executor, snapshot, &victims, "advance").await
}

/// Follows nodes in flight until every replacement is Ready and available
/// (`Ok`), or one fails (`Err((node, reason))`).
pub async fn follow_flights(
    follower: &Follower,
    flights: Vec<InFlight>,
    timeout: Duration,
) -> Result<Result<(), (String, String)>, OpsError> {
    let mut run = AutoRun::new(AutoPolicy {
        batch: 1,
        soak: Duration::ZERO,
        timeout,
    });
    run.adopt(flights);
    loop {
        let snapshot = follower.snapshot().await?;
        let index = snapshot.index();
        let now = jiff::Timestamp::now();
        let rows = snapshot.rows(&index, now);
        let min_ready = crate::engine::coverage::min_ready_seconds(&snapshot.ds);
        match run.judge_only(&rows, min_ready, now) {
            None => return Ok(Ok(())),
            Some(Step::Pause { node, reason }) => return Ok(Err((node, reason))),
            Some(Step::Wait { wake_at, .. }) => follower.changed_or(wake_at).await,
            Some(_) => follower.changed_or(None).await,
        }
    }
}

/// Settings of an auto run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoSettings {
    /// Batch size, soak, timeout.
    pub policy: AutoPolicy,
    /// A canary selector to store before starting.
    pub canary_selector: Option<String>,
    /// For a rollback: the node order and the revision moved to.
    pub rollback: Option<(Vec<String>, i64)>,
}

/// Runs auto-advance until completion, an automatic pause, or a pause by someone else.
pub async fn auto(
    executor: &Executor,
    follower: &Follower,
    settings: &AutoSettings,
) -> Result<AutoEnd, OpsError> {
    let snapshot = follower.snapshot().await?;
    let state = snapshot.state()?;
    // A rollback supersedes a pause of the rollout it undoes; auto-advance does not.
    if let (Some(pause), None) = (&state.pause, &settings.rollback) {
        return Err(OpsError::Invalid(format!(
            "the rollout is paused by {}; resume it first",
            pause.by
        )));
    }
    if let Some(running) = state.run_in_progress() {
        return Err(OpsError::Invalid(running));
    }
    let started = start_state(&state, settings, executor.actor());
    write_state(executor, &snapshot, &state, &started, "auto-start", None).await?;
    let mut run = AutoRun::new(settings.policy);
    if let Some((order, _)) = &settings.rollback {
        run = run.with_priority(order.clone());
    }
    let end = auto_loop(executor, follower, &mut run).await?;
    finish(executor, follower, &end).await?;
    Ok(end)
}

fn start_state(state: &RolloutState, settings: &AutoSettings, actor: &str) -> RolloutState {
    let policy = settings.policy;
    RolloutState {
        mode: if settings.rollback.is_some() {
            Mode::RollingBack
        } else {
            Mode::Auto
        },
        batch: Some(u32::try_from(policy.batch).unwrap_or(u32::MAX)),
        soak: Some(policy.soak),
        timeout: Some(policy.timeout),
        canary_selector: settings
            .canary_selector
            .clone()
            .or_else(|| state.canary_selector.clone()),
        rollback_to: settings.rollback.as_ref().map(|(_, to)| *to),
        // A rollback supersedes a pause of the rollout it undoes.
        pause: if settings.rollback.is_some() {
            None
        } else {
            state.pause.clone()
        },
        ..state.clone()
    }
    .touched(actor, jiff::Timestamp::now())
}

async fn auto_loop(
    executor: &Executor,
    follower: &Follower,
    run: &mut AutoRun,
) -> Result<AutoEnd, OpsError> {
    loop {
        let snapshot = follower.snapshot().await?;
        let state = snapshot.state()?;
        if let Some(pause) = &state.pause {
            return Ok(AutoEnd::Stopped {
                by: format!("a pause by {}", pause.by),
            });
        }
        let index = snapshot.index();
        if !index.current_matches_template() {
            // The controller has not snapshotted the template yet: "updated" would be wrong.
            follower.changed_or(None).await;
            continue;
        }
        let now = jiff::Timestamp::now();
        let rows = snapshot.rows(&index, now);
        let plan = snapshot.plan(&rows, &state)?;
        let min_ready = crate::engine::coverage::min_ready_seconds(&snapshot.ds);
        match run.step(&plan, &rows, min_ready, now) {
            Step::Delete(victims) => {
                let batch = RolloutState {
                    batch_nodes: victims.iter().map(|v| v.node.clone()).collect(),
                    ..state.clone()
                };
                write_state(executor, &snapshot, &state, &batch, "batch", None).await?;
                let revision_to = index.current().map(|c| c.number);
                for (victim, request) in victims.iter().zip(delete_requests(
                    &snapshot.target(),
                    &victims,
                    revision_to,
                    "auto-advance",
                )) {
                    let result = executor.run(&request).await;
                    run.deleted(
                        &victim.node,
                        result.as_ref().map(|_| ()),
                        jiff::Timestamp::now(),
                    );
                    if result.is_err() {
                        break;
                    }
                }
            }
            // Ctrl-C is honoured only while waiting, never between a delete and its journal line.
            Step::Wait { wake_at, .. } => tokio::select! {
                () = follower.changed_or(wake_at) => {}
                _ = tokio::signal::ctrl_c() => return Ok(AutoEnd::Stopped { by: "an interrupt (Ctrl-C)".to_owned() }),
            },
            Step::Pause { node, reason } => return Ok(AutoEnd::Paused { node, reason }),
            Step::Completed { advanced } => return Ok(AutoEnd::Completed { advanced }),
        }
    }
}

/// Records the end: an automatic pause (who, why, which node) or back to idle.
async fn finish(executor: &Executor, follower: &Follower, end: &AutoEnd) -> Result<(), OpsError> {
    let snapshot = follower.snapshot().await?;
    let state = snapshot.state()?;
    match end {
        // Someone else paused meanwhile: their pause (and its reason) stands.
        AutoEnd::Paused { .. } if state.is_paused() => Ok(()),
        AutoEnd::Paused { node, reason } => {
            let request = PauseRequest {
                by: format!("rollcall auto ({})", executor.actor()),
                reason: Some(format!("node {node}: {reason}")),
                node: Some(node.clone()),
            };
            retry_on_conflict(
                follower,
                |snap| pause(snap, &request, jiff::Timestamp::now()),
                executor,
            )
            .await
        }
        AutoEnd::Completed { .. } => {
            let idle = RolloutState {
                mode: Mode::Idle,
                batch_nodes: Vec::new(),
                rollback_to: None,
                ..state.clone()
            }
            .touched(executor.actor(), jiff::Timestamp::now());
            write_state(executor, &snapshot, &state, &idle, "auto-done", None).await
        }
        AutoEnd::Stopped { .. } => {
            let stopped = RolloutState {
                mode: Mode::Idle,
                batch_nodes: Vec::new(),
                ..state.clone()
            };
            write_state(executor, &snapshot, &state, &stopped, "auto-stopped", None).await
        }
    }
}

/// Writes the state keys that changed (no resourceVersion precondition: only
/// the changed keys are sent, so others' keys survive).
pub async fn write_state(
    executor: &Executor,
    snapshot: &Snapshot,
    before: &RolloutState,
    after: &RolloutState,
    action: &str,
    note: Option<String>,
) -> Result<(), OpsError> {
    if before == after {
        return Ok(());
    }
    let target = snapshot.target();
    let request = WriteRequest {
        write: Write::PatchState {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            before: before.clone(),
            after: after.clone(),
            resource_version: None,
        },
        record: Record {
            action: action.to_owned(),
            daemonset: target.key(),
            note,
            ..Record::default()
        },
    };
    executor.run(&request).await.map(|_| ())
}

/// Runs a write decided from a snapshot; on 409 (the DaemonSet changed since it
/// was read) re-reads and decides again, up to three times.
pub async fn retry_on_conflict<F>(
    follower: &Follower,
    decide: F,
    executor: &Executor,
) -> Result<(), OpsError>
where
    F: Fn(&Snapshot) -> Result<WriteRequest, OpsError>,
{
    let mut last = None;
    for _ in 0..3 {
        let snapshot = follower.snapshot().await?;
        let request = decide(&snapshot)?;
        match executor.run(&request).await {
            Ok(_) => return Ok(()),
            Err(err @ OpsError::Conflict { .. }) => {
                last = Some(err);
                follower
                    .changed_or(Some(
                        jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1),
                    ))
                    .await;
            }
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| OpsError::Invalid("conflict".to_owned())))
}

/// The rollback order for OnDelete: nodes running the revision being left,
/// most recently updated first.
pub fn rollback_nodes(snapshot: &Snapshot) -> Vec<String> {
    let index = snapshot.index();
    let Some(current) = index.current() else {
        return Vec::new();
    };
    let rows = snapshot.rows(&index, jiff::Timestamp::now());
    rollback_order(&rows, &current.hash)
}
