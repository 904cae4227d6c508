//! Auto-advance in the console: `A` starts it (after confirming) or stops it;
//! on every cache change and tick the pure [`AutoRun`] machine decides the next
//! move from a fresh snapshot, and its deletes go to the effects task like any
//! other confirmed write. A failed gate pauses the rollout for every console.

use super::app::{App, Effect};
use super::auto_form::AutoForm;
use super::confirm::Modal;
use super::ops_keys::DEFAULT_POLICY;
use super::ops_keys::{AutoSession, OpsConsole, live_snapshot};
use super::state::UiState;
use crate::cluster::cache::Cache;
use crate::ops::advance::delete_requests;
use crate::ops::auto::{AutoPolicy, AutoRun};
use crate::ops::decide::{Next, next_move};
use crate::ops::drive::{AutoSettings, StartRefusal, check_start, ensure_actionable};
use crate::ops::echo;
use crate::ops::pause::{PauseRequest, pause};
use crate::ops::preflight::failing_text;
use crate::ops::rbac::Operation;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::{LEASE_RENEW, Mode, RolloutState};
use crate::ops::write::WriteRequest;

/// The console's run settings: canaries are the nodes marked with `c`.
fn settings(policy: AutoPolicy, despite_failing: bool) -> AutoSettings {
    AutoSettings {
        policy,
        canary_selector: None,
        rollback: None,
        despite_failing,
        include_cordoned: false,
    }
}

impl App {
    pub(super) fn toggle_auto(
        &mut self,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Result<Option<Effect>, String> {
        if let Some(session) = self.ops.auto.take() {
            self.ui.info(format!(
                "{} stopped in this console ({} node(s) done)",
                session.label,
                session.run.done().len()
            ));
            let snapshot = live_snapshot(self.ui.target.as_ref(), &self.rows, cache)?;
            let before = snapshot.state().map_err(|e| e.to_string())?;
            let after = RolloutState {
                mode: Mode::Idle,
                batch_nodes: Vec::new(),
                heartbeat: None,
                ..before.clone()
            };
            let request = WriteRequest::state(&snapshot, before, after, "auto-stop", None);
            return Ok(Some(Effect::Writes(self.ops.submit(vec![request]))));
        }
        self.ops.allowed(Operation::Auto, "auto-advance")?;
        let snapshot = live_snapshot(self.ui.target.as_ref(), &self.rows, cache)?;
        let before = snapshot.state().map_err(|e| e.to_string())?;
        ensure_actionable(&snapshot, &before).map_err(|e| e.to_string())?;
        let mut warnings = Vec::new();
        let mut despite_failing = false;
        match check_start(&snapshot, &before, &settings(DEFAULT_POLICY, false), now) {
            Ok(()) => {}
            Err(StartRefusal::Invalid(err)) => return Err(err.to_string()),
            Err(StartRefusal::Failing(failing)) => {
                warnings.push(format!(
                    "{}: starting is an explicit yes to advancing anyway",
                    failing_text(&failing, 3)
                ));
                despite_failing = true;
            }
        }
        if let Some(text) = before.run_owner(now).expired_text() {
            warnings.push(format!("{text}: this console takes it over"));
        }
        // This run's settings start from the defaults, never from what an
        // earlier run left in the annotations.
        self.ops.modal = Some(Modal::AutoForm(Box::new(AutoForm::new(
            DEFAULT_POLICY,
            warnings,
            despite_failing,
        ))));
        Ok(None)
    }

    /// Starts auto-advance with the form's settings, checked again on the
    /// current snapshot (the cluster may have changed while the form was open).
    pub(super) fn start_auto(
        &mut self,
        cache: &Cache,
        form: &AutoForm,
        now: jiff::Timestamp,
    ) -> Result<Option<Effect>, String> {
        let snapshot = live_snapshot(self.ui.target.as_ref(), &self.rows, cache)?;
        let before = snapshot.state().map_err(|e| e.to_string())?;
        check_start(
            &snapshot,
            &before,
            &settings(form.policy, form.despite_failing),
            now,
        )
        .map_err(|refusal| refusal.to_string())?;
        let policy = form.policy;
        let after = RolloutState {
            mode: Mode::Auto,
            batch: u32::try_from(policy.batch).ok(),
            soak: Some(policy.soak),
            timeout: Some(policy.timeout),
            canary_selector: None,
            batch_nodes: Vec::new(),
            heartbeat: Some(now),
            ..before.clone()
        }
        .touched(&self.ops.actor, now);
        let state = WriteRequest::state(&snapshot, before, after, "auto-start", None);
        self.ops.auto = Some(AutoSession {
            run: AutoRun::new(policy),
            deletes: std::collections::BTreeMap::new(),
            label: "auto-advance",
            renewed_at: now,
            settings: settings(policy, form.despite_failing),
        });
        self.ui.info(format!(
            "auto-advance started: batches of {}, soak {}, Ready timeout {}",
            policy.batch,
            humantime::format_duration(policy.soak),
            humantime::format_duration(policy.timeout)
        ));
        Ok(Some(Effect::Writes(self.ops.submit(vec![state]))))
    }

    /// Judges the nodes advanced by hand and steps the auto run (on cache
    /// changes and ticks); returns the writes the run asks for.
    pub fn ops_on_change(&mut self, cache: &Cache, now: jiff::Timestamp) -> Option<Effect> {
        self.judge_advanced(cache, now);
        if self.ops.auto.is_none() || !self.ops.pending.is_empty() {
            return None;
        }
        let snapshot = live_snapshot(self.ui.target.as_ref(), &self.rows, cache).ok()?;
        if let Some(written) = &self.ops.unechoed {
            // Read-your-writes: the cache must show this console's last write.
            if !echo::reflects(snapshot.ds.metadata.resource_version.as_deref(), written) {
                return None;
            }
            self.ops.unechoed = None;
        }
        let state = snapshot.state().ok()?;
        let session = self.ops.auto.as_mut()?;
        // The same decision the headless driver makes (ops::decide).
        let next = next_move(&mut session.run, &snapshot, &state, &session.settings, now).ok()?;
        if let Next::Stopped { by } = &next {
            let session = self.ops.auto.take()?;
            self.ui
                .error(format!("{} stopped: the rollout was {by}", session.label));
            return None;
        }
        if let Some(renewal) = Self::renew_heartbeat(&mut self.ops, &snapshot, &state, now) {
            return Some(renewal);
        }
        Self::auto_step(&mut self.ops, &mut self.ui, &snapshot, state, next)
    }

    /// Renews the run's lease when due, so other consoles and commands see
    /// that this console still drives it.
    fn renew_heartbeat(
        ops: &mut OpsConsole,
        snapshot: &Snapshot<'_>,
        state: &RolloutState,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        // The console's own clock of its last renewal: the cache may not show
        // the write yet, and a renewal must not wait for it.
        let renew = jiff::SignedDuration::try_from(LEASE_RENEW).ok()?;
        let session = ops.auto.as_mut()?;
        if now.duration_since(session.renewed_at) < renew {
            return None;
        }
        session.renewed_at = now;
        let after = RolloutState {
            heartbeat: Some(now),
            ..state.clone()
        };
        let request = WriteRequest::state(snapshot, state.clone(), after, "heartbeat", None);
        Some(Effect::Writes(ops.submit(vec![request])))
    }

    fn auto_step(
        ops: &mut OpsConsole,
        ui: &mut UiState,
        snapshot: &Snapshot<'_>,
        state: RolloutState,
        next: Next,
    ) -> Option<Effect> {
        match next {
            Next::Wait { .. } | Next::Stopped { .. } => None,
            Next::Delete(victims) => {
                let to = snapshot.index().current().map(|c| c.number);
                // Record the batch first, so every console shows what is in flight.
                let batch = RolloutState {
                    batch_nodes: victims.iter().map(|v| v.node.clone()).collect(),
                    ..state.clone()
                };
                let mut requests = vec![WriteRequest::state(snapshot, state, batch, "batch", None)];
                let action = match ops.auto.as_ref()?.label {
                    "rollback" => "rollback",
                    _ => "auto-advance",
                };
                requests.extend(delete_requests(&snapshot.target(), &victims, to, action));
                let ids = ops.submit(requests);
                let session = ops.auto.as_mut()?;
                for ((id, _), victim) in ids.iter().skip(1).zip(&victims) {
                    session.deletes.insert(*id, victim.node.clone());
                }
                let nodes: Vec<&str> = victims.iter().map(|v| v.node.as_str()).collect();
                let verb = if session.label == "rollback" {
                    "moving back"
                } else {
                    "advancing"
                };
                ui.info(format!("{}: {verb} {}", session.label, nodes.join(", ")));
                Some(Effect::Writes(ids))
            }
            Next::Pause { node, reason } => {
                let session = ops.auto.take()?;
                ui.error(format!("{} paused: node {node}: {reason}", session.label));
                let request = PauseRequest {
                    by: format!("rollcall auto ({})", ops.actor),
                    reason: Some(format!("node {node}: {reason}")),
                    node: Some(node),
                };
                let write = pause(snapshot, &request, jiff::Timestamp::now()).ok()?;
                Some(Effect::Writes(ops.submit(vec![write])))
            }
            Next::Completed { advanced, left } => {
                let session = ops.auto.take()?;
                let verb = if session.label == "rollback" {
                    "moved back"
                } else {
                    "advanced"
                };
                if left.is_empty() {
                    ui.info(format!(
                        "{} completed: {advanced} node(s) {verb}",
                        session.label
                    ));
                } else {
                    let list: Vec<String> =
                        left.iter().map(|(n, why)| format!("{n}: {why}")).collect();
                    ui.error(format!(
                        "{} incomplete: {advanced} node(s) {verb}, {} left ({})",
                        session.label,
                        left.len(),
                        list.join(", ")
                    ));
                }
                let after = RolloutState {
                    mode: Mode::Idle,
                    batch_nodes: Vec::new(),
                    rollback_to: None,
                    heartbeat: None,
                    ..state.clone()
                };
                let request = WriteRequest::state(snapshot, state, after, "auto-done", None);
                Some(Effect::Writes(ops.submit(vec![request])))
            }
        }
    }
}
