//! A rollout run — auto-advance, or a rollback that moves OnDelete nodes back —
//! has one home: this pure state machine. It holds the run's settings, makes
//! its start checks, and for each observed state says the next step as write
//! requests (with their journal records) and words; it names its transitions
//! (started, renewed, batch chosen, paused by someone, stopped, finished).
//!
//! The headless commands (`ops::drive`) and the console (`tui::ops`)
//! only execute the writes in the order given and render the words; neither
//! builds a patch, a pause reason or a journal line of a run itself, so the
//! two cannot drift.
//!
//! Pure: no I/O; `now` is an argument; results of deletes are reported back
//! with [`Run::deleted`].

pub mod decide;
pub mod end;
pub mod fit;
pub mod fleet_run;
pub mod rollback;
pub mod settings;
pub mod words;

#[cfg(test)]
mod fit_tests;
#[cfg(test)]
mod tests;

use crate::engine::rolling::UpdateStrategy;
use crate::ops::advance::{Victim, delete_requests};
use crate::ops::auto::AutoRun;
use crate::ops::error::OpsError;
use crate::ops::journal_action::JournalAction;
use crate::ops::run::decide::{Next, next_move};
use crate::ops::run::settings::{RunSettings, StartRefusal, check_start, takeover, takeover_note};
use crate::ops::snapshot::Snapshot;
use crate::ops::state::{LEASE_RENEW, Mode, RolloutState};
use crate::ops::write::{Write, WriteRequest};

pub use end::RunEnd;

/// A run in progress.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    settings: RunSettings,
    /// Who drives it (`user@host`).
    actor: String,
    gate: AutoRun,
    /// When this run last wrote its heartbeat (its own clock: the view may
    /// not show the write yet, and a renewal must not wait for it).
    renewed_at: jiff::Timestamp,
    /// The RollingUpdate strategy this run took over from the controller.
    taken_over: Option<UpdateStrategy>,
}

/// How a run starts: the write that records it and what to say first.
#[derive(Clone, Debug, PartialEq)]
pub struct Started {
    /// The start (`auto-start`): mode, settings, heartbeat — and for a
    /// RollingUpdate DaemonSet, the switch to OnDelete with the strategy saved.
    pub write: WriteRequest,
    /// Notes before the first step (a takeover of an expired run or of the
    /// controller's rollout).
    pub notes: Vec<String>,
}

/// What the executor does next for a run (one transition each).
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    /// Nothing to write until the cluster changes or `wake_at` passes.
    Wait {
        /// The earliest time the answer can change by itself.
        wake_at: Option<jiff::Timestamp>,
        /// What the run waits for, in words, per node where it is about one.
        waiting: Vec<(Option<String>, String)>,
    },
    /// The lease is due: write this heartbeat, then decide again.
    Renewed(WriteRequest),
    /// A batch was chosen: write `record` (every console shows what is in
    /// flight), then the deletes in order, each result reported with
    /// [`Run::deleted`]; stop at the first refused delete.
    BatchChosen {
        /// The state write naming the batch's nodes.
        record: WriteRequest,
        /// The nodes and their deletes, in order.
        deletes: Vec<(Victim, WriteRequest)>,
    },
    /// Before a timeout fails `node`: read its pods afresh, report it with
    /// [`Run::verified`] (or a failed read with [`Run::read_failed`]), then
    /// decide again (only with [`Run::with_fresh_reads`]).
    Verify {
        /// The node.
        node: String,
    },
    /// The run is over: write [`Run::closing`] for `end`, then say [`RunEnd::text`].
    Finished(RunEnd),
}

impl Run {
    /// Starts a run from `snapshot` at `now`, or says why it may not.
    pub fn start(
        snapshot: &Snapshot<'_>,
        settings: RunSettings,
        actor: &str,
        now: jiff::Timestamp,
    ) -> Result<(Self, Started), StartRefusal> {
        let before = snapshot.state().map_err(StartRefusal::Invalid)?;
        check_start(snapshot, &before, &settings, now)?;
        let mut notes = Vec::new();
        if let Some(text) = before.run_owner(now).expired_text() {
            notes.push(format!("taking over: {text}"));
        }
        let taken_over =
            takeover_for(snapshot, &before, &settings, now).map_err(StartRefusal::Invalid)?;
        if let Some(strategy) = &taken_over {
            notes.push(takeover_note(strategy));
        }
        if !snapshot.usage_known() {
            notes.push(fit::UNKNOWN_FIT.to_owned());
        }
        // A run that takes over an expired run which had taken the rollout
        // from the controller (the DaemonSet is OnDelete with its strategy
        // saved, no pause): it inherits the budget and gives it back at the end.
        let inherited = taken_over
            .is_none()
            .then(|| inherited_takeover(snapshot, &before))
            .flatten();
        let after = start_state(&before, &settings, actor, now);
        let write = match &taken_over {
            Some(_) => {
                let strategy = crate::ops::pause::current_strategy(snapshot);
                let after = RolloutState {
                    saved_strategy: Some(strategy),
                    ..after
                };
                end::strategy_write(snapshot, before, after, end::ON_DELETE.clone())
                    .map_err(StartRefusal::Invalid)?
            }
            None => WriteRequest::state(snapshot, before, after, JournalAction::AutoStart, None),
        };
        let write = WriteRequest {
            record: crate::ops::write::Record {
                action: JournalAction::AutoStart,
                ..write.record
            },
            ..write
        };
        let mut gate = AutoRun::new(settings.policy);
        if let Some((order, _)) = &settings.rollback {
            gate = gate.only(order.clone());
        }
        let run = Self {
            settings,
            actor: actor.to_owned(),
            gate,
            renewed_at: now,
            taken_over: taken_over.or(inherited),
        };
        Ok((run, Started { write, notes }))
    }

    /// The run's settings.
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// `auto-advance` or `rollback`.
    pub fn label(&self) -> &'static str {
        self.settings.label()
    }

    /// How many nodes this run moved so far (old pod deleted).
    pub fn moved(&self) -> usize {
        self.gate.moved()
    }

    /// The next step from `snapshot` (and the state stored on it) at `now`.
    pub fn turn(
        &mut self,
        snapshot: &Snapshot<'_>,
        now: jiff::Timestamp,
    ) -> Result<Turn, OpsError> {
        let state = snapshot.state()?;
        if let Some(pause) = &state.pause {
            return Ok(Turn::Finished(RunEnd::Stopped {
                by: format!("a pause by {}", pause.by),
            }));
        }
        // The lease first: a decision is acted on in the turn it is made
        // (the machine records a chosen batch as sent), never dropped for a
        // heartbeat.
        if let Some(renewal) = self.renewal(snapshot, &state, now) {
            return Ok(Turn::Renewed(renewal));
        }
        let next = next_move(
            &mut self.gate,
            snapshot,
            &state,
            &self.settings,
            self.taken_over.as_ref(),
            now,
        )?;
        Ok(match next {
            Next::Stopped { by } => Turn::Finished(RunEnd::Stopped { by }),
            Next::Wait { wake_at, waiting } => Turn::Wait {
                wake_at: Some(wake_at.map_or(self.renewal_due(), |w| w.min(self.renewal_due()))),
                waiting: waiting
                    .iter()
                    .map(|(node, what)| (Some(node.clone()), words::waiting_text(what)))
                    .collect(),
            },
            Next::OverBudget { unavailable } => Turn::Wait {
                wake_at: Some(self.renewal_due()),
                waiting: vec![(None, words::over_budget_text(unavailable))],
            },
            Next::Delete(victims, preempts) => self.batch(snapshot, state, victims, &preempts),
            Next::Pause { node, reason } => Turn::Finished(RunEnd::Paused {
                node,
                reason,
                by_cluster: self.gate.failed_by_cluster(),
            }),
            Next::Verify { node } => Turn::Verify { node },
            Next::Completed { advanced, left } => {
                Turn::Finished(RunEnd::Completed { advanced, left })
            }
        })
    }

    /// For an executor that can read afresh: a timeout is confirmed by a
    /// fresh read of the node's pods before it fails the node.
    #[must_use]
    pub fn with_fresh_reads(mut self) -> Self {
        self.gate = self.gate.with_fresh_reads();
        self
    }

    /// Reports that `node`'s pods were just read afresh into the view.
    pub fn verified(&mut self, node: &str) {
        self.gate.verified(node);
    }

    /// Reports that reading `node`'s pods afresh failed at `now`: the node's
    /// wait is extended and it is read again later, never failed on the view.
    pub fn read_failed(&mut self, node: &str, now: jiff::Timestamp) {
        self.gate.read_failed(node, now);
    }

    /// Reports the server's answer to the delete on `node`.
    pub fn deleted(&mut self, node: &str, result: Result<(), &OpsError>, now: jiff::Timestamp) {
        self.gate.deleted(node, result, now);
    }

    /// The write that records how the run ended, decided on `snapshot` (a
    /// conflict is answered by deciding again on a fresh one); `None` when
    /// nothing is left to write (someone else's pause stands).
    pub fn closing(
        &self,
        end: &RunEnd,
        snapshot: &Snapshot<'_>,
        now: jiff::Timestamp,
    ) -> Result<Option<WriteRequest>, OpsError> {
        end::closing(self, end, snapshot, now)
    }

    /// Who drives the run.
    pub fn actor(&self) -> &str {
        &self.actor
    }

    /// The strategy this run took over from the controller, if any.
    pub fn taken_over(&self) -> Option<&UpdateStrategy> {
        self.taken_over.as_ref()
    }

    fn renewal_due(&self) -> jiff::Timestamp {
        let renew = jiff::SignedDuration::try_from(LEASE_RENEW).unwrap_or_default();
        self.renewed_at + renew
    }

    fn renewal(
        &mut self,
        snapshot: &Snapshot<'_>,
        state: &RolloutState,
        now: jiff::Timestamp,
    ) -> Option<WriteRequest> {
        if now < self.renewal_due() {
            return None;
        }
        self.renewed_at = now;
        let after = RolloutState {
            heartbeat: Some(now),
            ..state.clone()
        };
        Some(WriteRequest::state(
            snapshot,
            state.clone(),
            after,
            JournalAction::Heartbeat,
            None,
        ))
    }

    fn batch(
        &self,
        snapshot: &Snapshot<'_>,
        state: RolloutState,
        victims: Vec<Victim>,
        preempts: &[(String, String)],
    ) -> Turn {
        let revision_to = snapshot.index().current().map(|c| c.number);
        let after = RolloutState {
            batch_nodes: victims.iter().map(|v| v.node.clone()).collect(),
            ..state.clone()
        };
        let record = WriteRequest::state(snapshot, state, after, JournalAction::Batch, None);
        let action = if self.settings.rollback.is_some() {
            JournalAction::Rollback
        } else {
            JournalAction::AutoAdvance
        };
        let mut requests = delete_requests(&snapshot.target(), &victims, revision_to, action);
        fit::note_preemptions(&mut requests, preempts);
        Turn::BatchChosen {
            record,
            deletes: victims.into_iter().zip(requests).collect(),
        }
    }
}

/// The RollingUpdate strategy a run with `settings` takes over from the
/// controller at its start, or why it may not (see [`takeover`]). A
/// rollback's node moves run on an OnDelete DaemonSet only (a RollingUpdate
/// rollback is the controller's), and with no node to move there is nothing
/// to take over: no strategy is switched and switched back for nothing.
pub fn takeover_for(
    snapshot: &Snapshot<'_>,
    state: &RolloutState,
    settings: &RunSettings,
    now: jiff::Timestamp,
) -> Result<Option<UpdateStrategy>, OpsError> {
    if settings.rollback.is_some() || !decide::has_nodes_to_move(snapshot, state, settings, now)? {
        return Ok(None);
    }
    takeover(snapshot)
}

/// The state a run starts with: its settings, mode, heartbeat; a rollback
/// supersedes a pause of the rollout it undoes.
fn start_state(
    state: &RolloutState,
    settings: &RunSettings,
    actor: &str,
    now: jiff::Timestamp,
) -> RolloutState {
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
        canary_selector: settings.canary_selector.clone(),
        rollback_to: settings.rollback.as_ref().map(|(_, to)| *to),
        pause: if settings.rollback.is_some() {
            None
        } else {
            state.pause.clone()
        },
        batch_nodes: Vec::new(),
        heartbeat: Some(now),
        fleet_run: settings
            .fleet_run
            .as_ref()
            .map(fleet_run::FleetRunName::identity),
        ..state.clone()
    }
    .touched(actor, now)
}

/// The strategy an expired run took over from the controller and left saved:
/// the DaemonSet is OnDelete, not paused, with a saved RollingUpdate strategy.
fn inherited_takeover(snapshot: &Snapshot<'_>, state: &RolloutState) -> Option<UpdateStrategy> {
    if state.is_paused() || !snapshot.update_strategy().is_on_delete() {
        return None;
    }
    let saved: k8s_openapi::api::apps::v1::DaemonSetUpdateStrategy =
        serde_json::from_value(state.saved_strategy.clone()?).ok()?;
    if saved.type_.as_deref() == Some("OnDelete") {
        return None;
    }
    let rolling = saved.rolling_update.unwrap_or_default();
    let int = k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int;
    Some(UpdateStrategy::RollingUpdate {
        max_unavailable: rolling.max_unavailable.unwrap_or(int(1)),
        max_surge: rolling.max_surge.unwrap_or(int(0)),
    })
}

/// Whether `write` deletes a pod (the executor reports its result to the run).
pub fn is_delete(write: &WriteRequest) -> bool {
    matches!(write.write, Write::DeletePod { .. })
}
