//! The executor of [`OpsConsole`]'s rollout run. `A` starts an auto-advance
//! (after its form, and a dialog of its own to advance past failing pods) or
//! stops the one this console drives; `r` may start a rollback run. Every
//! step of a run — its start, heartbeats, batches, deletes, pause or end — is
//! decided by [`crate::ops::run::Run`]; this file only sends the writes it
//! asks for to the effects task, reports each delete's answer back, and shows
//! its words on the status line. A failed gate pauses the rollout for every
//! console.

use super::{ConsoleRun, DEFAULT_POLICY, OpsConsole, OpsScope};
use crate::cluster::cache::Cache;
use crate::ops::advance::{AdvanceTarget, choose};
use crate::ops::echo;
use crate::ops::preflight::failing_text;
use crate::ops::rbac::Operation;
use crate::ops::run::fit::{preemption_of, step_fit};
use crate::ops::run::settings::{
    RunSettings, StartRefusal, check_start, ensure_actionable, takeover_note,
};
use crate::ops::run::{Run, RunEnd, Turn, takeover_for, words};
use crate::ops::write::WriteRequest;
use crate::tui::auto_form::AutoForm;
use crate::tui::confirm::{Confirm, Intent, Modal};
use crate::tui::effect::Effect;

/// The dialog asked before a run whose first batch will not fit (`None`
/// when it fits): its nodes and why, answered with `y` only; yes starts the
/// run despite fit (no batch of it is refused for fit).
fn first_batch_wont_fit(
    snapshot: &crate::ops::snapshot::Snapshot<'_>,
    form: &AutoForm,
    despite_failing: bool,
    now: jiff::Timestamp,
) -> Result<Option<Confirm>, String> {
    let state = snapshot.state().map_err(|e| e.to_string())?;
    let index = snapshot.index();
    let rows = snapshot.rows(&index, now);
    let first = AdvanceTarget::Next(form.policy.batch);
    let none = std::collections::BTreeSet::new();
    let Ok(plan) = snapshot.plan_for(&rows, &state, &first, &none, false) else {
        return Ok(None);
    };
    let Ok(victims) = choose(&plan, &first, &none) else {
        return Ok(None);
    };
    let nodes: Vec<&str> = victims.iter().map(|v| v.node.as_str()).collect();
    let judged = step_fit(snapshot, &rows, &nodes);
    if !judged.refuses() {
        return Ok(None);
    }
    let mut title = String::new();
    let mut lines = Vec::new();
    super::keys::fit_lines(&judged, &mut title, &mut lines, "start auto-advance");
    lines.push("yes: this run moves every batch despite fit".to_owned());
    let form = AutoForm {
        despite_fit: true,
        failing_accepted: despite_failing,
        ..form.clone()
    };
    Ok(Some(Confirm {
        title,
        lines,
        intent: Intent::StartAuto(form),
    }))
}

impl OpsConsole {
    pub(super) fn toggle_auto(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Result<Option<Effect>, String> {
        if self.auto.is_some() {
            let moved = self.auto.as_ref().map_or(0, |r| r.run.moved());
            let end = RunEnd::Cancelled {
                by: self.actor.clone(),
                moved,
            };
            return Ok(self.end_run(scope, cache, &end, now));
        }
        self.allowed(Operation::Auto, "auto-advance")?;
        let snapshot = scope.snapshot(cache)?;
        let before = snapshot.state().map_err(|e| e.to_string())?;
        ensure_actionable(&snapshot, &before).map_err(|e| e.to_string())?;
        let mut warnings = Vec::new();
        let mut despite_failing = false;
        match check_start(&snapshot, &before, &RunSettings::auto(DEFAULT_POLICY), now) {
            Ok(()) => {}
            Err(StartRefusal::Invalid(err)) => return Err(err.to_string()),
            Err(StartRefusal::Failing(failing)) => {
                warnings.push(format!(
                    "{}: starting asks again, in a dialog of its own",
                    failing_text(&failing, 3)
                ));
                despite_failing = true;
            }
        }
        if let Some(text) = before.run_owner(now).expired_text() {
            warnings.push(format!("{text}: this console takes it over"));
        }
        if let Ok(Some(strategy)) =
            takeover_for(&snapshot, &before, &RunSettings::auto(DEFAULT_POLICY), now)
        {
            warnings.push(takeover_note(&strategy));
        }
        // This run's settings start from the defaults, never from what an
        // earlier run left in the annotations.
        let canaries =
            crate::tui::auto_form::canary_text(&before.canaries, before.canary_selector.as_deref());
        self.modal = Some(Modal::AutoForm(Box::new(AutoForm::new(
            DEFAULT_POLICY,
            warnings,
            despite_failing,
            canaries,
        ))));
        Ok(None)
    }

    /// The form's `y`: starts the run, or — when pods on the new revision
    /// are failing — first asks, in a dialog of its own answered with `F`,
    /// whether to advance past them.
    pub(super) fn confirm_auto_form(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        form: AutoForm,
        now: jiff::Timestamp,
    ) -> Result<Option<Effect>, String> {
        if !form.despite_failing {
            return self.start_auto(scope, cache, &form, false, now);
        }
        let snapshot = scope.snapshot(cache)?;
        let index = snapshot.index();
        let failing = crate::ops::preflight::failing_updated(&snapshot.rows(&index, now));
        if failing.is_empty() {
            return self.start_auto(scope, cache, &form, false, now);
        }
        self.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: format!(
                "{} node(s) on the new revision are failing: advance past them?",
                failing.len()
            ),
            lines: vec![
                failing_text(&failing, 5),
                "F starts auto-advance anyway: more nodes move onto the failing revision"
                    .to_owned(),
            ],
            intent: Intent::DespiteFailing(Box::new(Intent::StartAuto(form))),
        })));
        Ok(None)
    }

    /// Starts auto-advance with the form's settings, checked again on the
    /// current snapshot (the cluster may have changed while the form was open).
    pub(super) fn start_auto(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        form: &AutoForm,
        despite_failing: bool,
        now: jiff::Timestamp,
    ) -> Result<Option<Effect>, String> {
        let snapshot = scope.snapshot(cache)?;
        if !form.despite_fit
            && let Some(dialog) = first_batch_wont_fit(&snapshot, form, despite_failing, now)?
        {
            self.modal = Some(Modal::Confirm(Box::new(dialog)));
            return Ok(None);
        }
        let settings = RunSettings {
            despite_failing,
            despite_fit: form.despite_fit,
            ..RunSettings::auto(form.policy)
        };
        let (run, started) = Run::start(&snapshot, settings, &self.actor, now)
            .map_err(|refusal| refusal.to_string())?;
        let policy = form.policy;
        let mut text = format!(
            "auto-advance started: batches of {}, soak {}, Ready timeout {}",
            policy.batch,
            humantime::format_duration(policy.soak),
            humantime::format_duration(policy.timeout)
        );
        if run.taken_over().is_some() {
            text.push_str("; taken over from the controller (OnDelete until the run ends)");
        }
        scope.status.info(text);
        self.auto = Some(ConsoleRun::new(run));
        Ok(Some(Effect::Writes(self.submit(vec![started.write]))))
    }

    /// Steps the run this console drives (on cache changes and ticks) and
    /// follows the nodes advanced by hand; returns the writes to send.
    pub fn on_change(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        self.judge_advanced(scope, cache, now);
        if self.auto.is_none() || !self.pending.is_empty() {
            return None;
        }
        let snapshot = scope.snapshot(cache).ok()?;
        if let Some(written) = &self.unechoed {
            // Read-your-writes: the cache must show this console's last write.
            if !echo::reflects(snapshot.ds.metadata.resource_version.as_deref(), written) {
                return None;
            }
            self.unechoed = None;
        }
        let console_run = self.auto.as_mut()?;
        if console_run.reading.is_some() {
            return None;
        }
        if let Some(request) = console_run.queued.pop_front() {
            return Some(self.send_delete(request));
        }
        let turn = match console_run.run.turn(&snapshot, now) {
            Ok(turn) => turn,
            Err(err) => Turn::Finished(RunEnd::Failed {
                error: err.to_string(),
            }),
        };
        drop(snapshot);
        match turn {
            Turn::Wait { .. } => None,
            Turn::Renewed(heartbeat) => Some(Effect::Writes(self.submit(vec![heartbeat]))),
            // Read off the UI thread; the run decides again on the answer.
            Turn::Verify { node } => {
                let target = scope.target?.clone();
                self.auto.as_mut()?.reading = Some(node.clone());
                Some(Effect::ReadPodsOn { target, node })
            }
            Turn::BatchChosen { record, deletes } => {
                let nodes: Vec<String> = deletes
                    .iter()
                    .map(|(v, request)| match preemption_of(request) {
                        Some(preempts) => format!("{} ({preempts})", v.node),
                        None => v.node.clone(),
                    })
                    .collect();
                let console_run = self.auto.as_mut()?;
                console_run.queued = deletes.into_iter().map(|(_, request)| request).collect();
                let first = console_run.queued.pop_front();
                let label = console_run.run.label();
                scope.status.info(format!(
                    "{label}: {} {}",
                    words::moving(label),
                    nodes.join(", ")
                ));
                let mut ids = self.submit(vec![record]);
                if let Some(Effect::Writes(more)) = first.map(|request| self.send_delete(request)) {
                    ids.extend(more);
                }
                Some(Effect::Writes(ids))
            }
            Turn::Finished(end) => self.end_run(scope, cache, &end, now),
        }
    }

    /// Reports a fresh read of `node`'s pods to the run: read, it judges on
    /// what was read; failed, the node's wait is extended and it is read again.
    pub(super) fn on_fresh_read(
        &mut self,
        scope: &mut OpsScope<'_>,
        node: &str,
        result: Result<(), String>,
        now: jiff::Timestamp,
    ) {
        let Some(console_run) = self.auto.as_mut() else {
            return;
        };
        if console_run.reading.as_deref() != Some(node) {
            return;
        }
        console_run.reading = None;
        match result {
            Ok(()) => console_run.run.verified(node),
            Err(err) => {
                console_run.run.read_failed(node, now);
                scope.status.error(format!(
                    "{}: could not read the pods on {node} afresh (waiting longer): {err}",
                    console_run.run.label()
                ));
            }
        }
    }

    /// Sends one delete of the run's batch, remembering which node it moves.
    fn send_delete(&mut self, request: WriteRequest) -> Effect {
        let node = request.record.node.clone().unwrap_or_default();
        let ids = self.submit(vec![request]);
        if let Some(console_run) = self.auto.as_mut() {
            for (id, _) in &ids {
                console_run.deletes.insert(*id, node.clone());
            }
        }
        Effect::Writes(ids)
    }

    /// Ends this console's run: says how, and sends the write that records it.
    pub(super) fn end_run(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        end: &RunEnd,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        let console_run = self.auto.take()?;
        let run = &console_run.run;
        let snapshot = scope.snapshot(cache).ok();
        let revision = snapshot
            .as_ref()
            .and_then(|s| s.index().current().map(|c| c.number));
        let text = format!("{} {}", run.label(), end.text(run.label(), revision));
        if end.is_success() {
            scope.status.info(text);
        } else {
            scope.status.error(text);
        }
        let write = match snapshot.map(|s| run.closing(end, &s, now)) {
            Some(Ok(Some(write))) => write,
            Some(Err(err)) => {
                scope
                    .status
                    .error(format!("{}: could not record the end: {err}", run.label()));
                return None;
            }
            Some(Ok(None)) | None => return None,
        };
        Some(Effect::Writes(self.submit(vec![write])))
    }

    /// Judges the nodes advanced by hand at `now`; once they pass the gate or
    /// one fails, says so and stops following.
    fn judge_advanced(&mut self, scope: &mut OpsScope<'_>, cache: &Cache, now: jiff::Timestamp) {
        let Some(followed) = self.followed.as_mut() else {
            return;
        };
        let Ok(snapshot) = scope.snapshot(cache) else {
            return;
        };
        match followed.judge(&snapshot, now) {
            None => {}
            Some(Ok(text)) => {
                scope.status.info(text);
                self.followed = None;
            }
            Some(Err(text)) => {
                scope.status.error(text);
                self.followed = None;
            }
        }
    }
}
