//! The rollout keys and dialogs of [`OpsConsole`]: `a`, `n`, `c`, `p`, `A`,
//! `r`, `P` open a dialog built from a snapshot of the cache; `y`, `F` and
//! `Esc` answer it; only a "yes" turns it into writes. Results from the
//! effects side come back through [`OpsConsole::on_event`] and show on the
//! status line.

use super::{ConsoleRun, OpsConsole, OpsEvent, OpsScope, follow};
use crate::cluster::cache::Cache;
use crate::ops::advance::{AdvanceTarget, choose, delete_requests};
use crate::ops::error::OpsError;
use crate::ops::journal_action::JournalAction;
use crate::ops::pause::{PauseRequest, pause, resume};
use crate::ops::rbac::Operation;
use crate::ops::run::RunEnd;
use crate::ops::run::fit::{StepFit, note_preemptions, step_fit};
use crate::ops::run::settings::ensure_advance_by_hand;
use crate::ops::write::{Outcome, Write, WriteRequest};
use crate::tui::confirm::{Confirm, Intent, Modal};
use crate::tui::effect::{Effect, Handled};
use crate::tui::keymap::Action;

/// What a confirmation says about fit: a node that will not fit asks in
/// its own words (still `y` only, never Enter), a preempting step names its
/// victims. An unknown fit adds nothing: the console says once, where it
/// shows its streams, that usage cannot be read.
pub(super) fn fit_lines(judged: &StepFit, title: &mut String, lines: &mut Vec<String>, verb: &str) {
    if let Some(refusal) = judged.refusal() {
        let nodes: Vec<&str> = judged.wont_fit.iter().map(|(n, _)| n.as_str()).collect();
        *title = format!("{} won't fit: {verb} anyway?", nodes.join(", "));
        lines.insert(0, refusal);
        lines.push(
            "y deletes anyway (despite fit): the replacement will stay Pending until room is made"
                .to_owned(),
        );
    }
    for (node, preempts) in judged.preempt_notes() {
        lines.push(format!("{node}: its replacement {preempts}"));
    }
}

impl OpsConsole {
    /// Handles the rollout keys and dialog keys ([`Handled::Passed`] when `action` is not one).
    pub fn update(
        &mut self,
        scope: &mut OpsScope<'_>,
        action: Action,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Handled {
        let result = match action {
            // Typing the pause's reason; Enter goes on to the confirmation.
            Action::FilterChar(c) if matches!(self.modal, Some(Modal::PauseReason(_))) => {
                if let Some(Modal::PauseReason(reason)) = self.modal.as_mut() {
                    reason.push(c);
                }
                Ok(None)
            }
            Action::FilterBackspace if matches!(self.modal, Some(Modal::PauseReason(_))) => {
                if let Some(Modal::PauseReason(reason)) = self.modal.as_mut() {
                    reason.pop();
                }
                Ok(None)
            }
            Action::Confirm if matches!(self.modal, Some(Modal::PauseReason(_))) => {
                let Some(Modal::PauseReason(reason)) = self.modal.take() else {
                    return Handled::Passed;
                };
                let reason = Some(reason.trim().to_owned()).filter(|r| !r.is_empty());
                self.confirm_pause(scope, cache, reason, now).map(|()| None)
            }
            // Yes/no belong to the console's own confirmation unless a rollout dialog is open.
            Action::Confirm if self.modal.is_some() => Ok(self.dialog_yes(scope, cache, now)),
            Action::Cancel if self.modal.is_some() => {
                if !matches!(self.modal.take(), Some(Modal::Info { .. })) {
                    scope.status.info("cancelled");
                }
                Ok(None)
            }
            // Quitting while this console drives a run would leave it with
            // nobody driving: ask first (a second quit key means yes).
            Action::Quit if self.auto.is_some() => Ok(self.ask_quit_during_run(scope, cache, now)),
            Action::ConfirmDespite => Ok(self.dialog_despite(scope, cache, now)),
            Action::ShowPlan => self.show_plan(scope, cache, now).map(|()| None),
            Action::DialogUp | Action::DialogDown | Action::FormLess | Action::FormMore
                if matches!(self.modal, Some(Modal::AutoForm(_))) =>
            {
                if let Some(Modal::AutoForm(form)) = self.modal.as_mut() {
                    match action {
                        Action::DialogUp | Action::DialogDown => {
                            form.select(action == Action::DialogUp);
                        }
                        _ => form.adjust(action == Action::FormLess),
                    }
                }
                Ok(None)
            }
            Action::DialogUp | Action::DialogDown => {
                self.move_rollback_selection(scope, action, cache);
                Ok(None)
            }
            Action::AdvanceSelected => self.ask_advance(scope, cache, true, now).map(|()| None),
            Action::AdvanceNext => self.ask_advance(scope, cache, false, now).map(|()| None),
            Action::ToggleCanary => self.ask_canary(scope, cache, now).map(|()| None),
            Action::ToggleAuto => self.toggle_auto(scope, cache, now),
            Action::TogglePause => self.ask_pause(scope, cache, now).map(|()| None),
            Action::Rollback => self.open_rollback(scope, cache, now).map(|()| None),
            _ => return Handled::Passed,
        };
        Handled::Took(result.unwrap_or_else(|message| {
            scope.status.error(message);
            None
        }))
    }

    fn ask_advance(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        selected: bool,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        self.allowed(Operation::Advance, "advance")?;
        let snapshot = scope.snapshot(cache)?;
        let state = snapshot.state().map_err(|e| e.to_string())?;
        ensure_advance_by_hand(&snapshot, &state).map_err(|e| e.to_string())?;
        let index = snapshot.index();
        let rows = snapshot.rows(&index, now);
        let target = if selected {
            AdvanceTarget::Nodes(vec![scope.selected()?])
        } else {
            AdvanceTarget::Next(1)
        };
        let no_exclusion = std::collections::BTreeSet::new();
        let plan = snapshot
            .plan_for(&rows, &state, &target, &no_exclusion, false)
            .map_err(|e| e.to_string())?;
        let victims = choose(&plan, &target, &no_exclusion).map_err(|e| e.to_string())?;
        let to = index.current().map(|c| c.number);
        let nodes: Vec<&str> = victims.iter().map(|v| v.node.as_str()).collect();
        let judged = step_fit(&snapshot, &rows, &nodes);
        let mut requests =
            delete_requests(&snapshot.target(), &victims, to, JournalAction::Advance);
        note_preemptions(&mut requests, &judged.preempt_notes());
        let mut lines: Vec<String> = victims
            .iter()
            .map(|v| {
                let from = v.revision_from.map_or_else(|| "?".to_owned(), |r| r.to_string());
                let to = to.map_or_else(|| "?".to_owned(), |r| r.to_string());
                format!("delete pod {} on node {} (revision {from} → {to}), only if its UID is still {}", v.pod, v.node, v.uid)
            })
            .collect();
        lines.extend(crate::ops::owner_guard::advance_note(&snapshot.ds));
        let node = victims.first().map(|v| v.node.clone()).unwrap_or_default();
        let mut lines: Vec<String> = lines;
        let mut title = format!("advance node {node}?");
        fit_lines(&judged, &mut title, &mut lines, "advance");
        let mut intent = Intent::Writes(requests);
        // The same refusal `advance --next` makes: a new node is not moved onto
        // a revision that is failing elsewhere without its own explicit answer.
        let failing = crate::ops::preflight::failing_updated(&rows);
        if !selected && !failing.is_empty() {
            title = format!(
                "{} updated node(s) are failing: advance node {node} anyway?",
                failing.len()
            );
            lines.insert(0, crate::ops::preflight::failing_text(&failing, 3));
            intent = Intent::DespiteFailing(Box::new(intent));
        }
        self.modal = Some(Modal::Confirm(Box::new(Confirm {
            title,
            lines,
            intent,
        })));
        Ok(())
    }

    fn ask_canary(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        self.allowed(Operation::EditPlan, "marking canaries")?;
        let node = scope.selected()?;
        let snapshot = scope.snapshot(cache)?;
        let before = snapshot.state().map_err(|e| e.to_string())?;
        let mut after = before.clone().touched(&self.actor, now);
        let marking = after.canaries.insert(node.clone());
        if !marking {
            after.canaries.remove(&node);
        }
        let verb = if marking { "mark" } else { "unmark" };
        let request = WriteRequest::state(
            &snapshot,
            before,
            after,
            JournalAction::Canary,
            Some(node.clone()),
        );
        self.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: format!("{verb} node {node} as a canary?"),
            lines: vec!["canaries are advanced first, as their own batch; stored on the DaemonSet for every console".to_owned()],
            intent: Intent::Writes(vec![request]),
        })));
        Ok(())
    }

    fn ask_pause(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        self.allowed(Operation::Pause, "pause/resume")?;
        let snapshot = scope.snapshot(cache)?;
        let state = snapshot.state().map_err(|e| e.to_string())?;
        if state.is_paused() {
            return self.confirm_pause(scope, cache, None, now);
        }
        // A pause says why, as `pause --reason` does: asked first, optional.
        self.modal = Some(Modal::PauseReason(String::new()));
        Ok(())
    }

    /// The confirmation of a pause with `reason` (or of the resume, when paused).
    fn confirm_pause(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        reason: Option<String>,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        self.allowed(Operation::Pause, "pause/resume")?;
        let snapshot = scope.snapshot(cache)?;
        let state = snapshot.state().map_err(|e| e.to_string())?;
        let spec_action =
            crate::ops::owner_guard::pause_spec_action(&snapshot.ds, &state, state.is_paused());
        let mut lines = crate::ops::owner_guard::dialog_lines(&snapshot.ds, spec_action);
        let (title, request) = if state.is_paused() {
            ("resume the rollout?", resume(&snapshot, &self.actor, now))
        } else {
            lines.push(format!(
                "reason: {}",
                reason.as_deref().unwrap_or("(none given)")
            ));
            let request = PauseRequest {
                by: self.actor.clone(),
                reason,
                node: None,
                automatic: false,
            };
            ("pause the rollout?", pause(&snapshot, &request, now))
        };
        let request = request.map_err(|e| e.to_string())?;
        let detail = match &request.write {
            Write::PatchStrategy { strategy, .. } => {
                format!("set spec.updateStrategy to {strategy} (the template is not touched)")
            }
            _ if state.is_paused() => {
                "clear the pause on the DaemonSet (every console sees it; auto-advance can start again)".to_owned()
            }
            _ => "record the pause on the DaemonSet (every console sees it; a running auto-advance stops)".to_owned(),
        };
        lines.push(detail);
        self.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: title.to_owned(),
            lines,
            intent: Intent::Writes(vec![request]),
        })));
        Ok(())
    }

    fn ask_quit_during_run(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        if let Some(Modal::Confirm(confirm)) = &self.modal
            && matches!(confirm.intent, Intent::StopAndQuit)
        {
            return self.dialog_yes(scope, cache, now);
        }
        let label = self.auto.as_ref().map_or("auto-advance", |r| r.run.label());
        self.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: format!("{label} is running in this console: stop it and quit?"),
            lines: vec![
                "y: pause the rollout (reason: console closed) and quit".to_owned(),
                "Esc: keep it running and stay".to_owned(),
            ],
            intent: Intent::StopAndQuit,
        })));
        None
    }

    fn dialog_yes(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        match self.modal.take()? {
            Modal::Info { .. } | Modal::PauseReason(_) => None,
            Modal::AutoForm(form) => {
                let result = self.confirm_auto_form(scope, cache, *form, now);
                Self::answer(scope, result)
            }
            Modal::Rollback(picker) => {
                if let Err(message) = self.ask_rollback(scope, cache, &picker, now) {
                    scope.status.error(message);
                }
                None
            }
            Modal::Confirm(confirm) => {
                if let Intent::DespiteFailing(_) = confirm.intent {
                    // Not a `y`: advancing past failing pods has its own key.
                    scope.status.error(
                        "this moves nodes onto a failing revision: F to go on, Esc to cancel",
                    );
                    self.modal = Some(Modal::Confirm(confirm));
                    return None;
                }
                let title = confirm.title.trim_end_matches('?').to_owned();
                self.run_intent(scope, cache, confirm.intent, &title, now)
            }
        }
    }

    /// `F` in the failing-pods dialog: goes on past the failing pods.
    fn dialog_despite(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        let Some(Modal::Confirm(confirm)) = self.modal.take() else {
            return None;
        };
        let Intent::DespiteFailing(inner) = confirm.intent else {
            self.modal = Some(Modal::Confirm(confirm));
            return None;
        };
        let title = confirm.title.trim_end_matches('?').to_owned();
        match *inner {
            Intent::StartAuto(form) => {
                let result = self.start_auto(scope, cache, &form, true, now);
                Self::answer(scope, result)
            }
            other => self.run_intent(scope, cache, other, &title, now),
        }
    }

    fn run_intent(
        &mut self,
        scope: &mut OpsScope<'_>,
        cache: &Cache,
        intent: Intent,
        title: &str,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        match intent {
            Intent::Writes(requests) => {
                scope.status.info(format!("{title}: sent"));
                Some(Effect::Writes(self.submit(requests)))
            }
            Intent::StopAndQuit => {
                self.quit_when_idle = true;
                scope.status.info("pausing the rollout, then quitting");
                let end = RunEnd::Interrupted {
                    by: self.actor.clone(),
                    how: "console closed",
                };
                self.end_run(scope, cache, &end, now)
            }
            Intent::StartAuto(form) => {
                let accepted = form.failing_accepted;
                let result = self.start_auto(scope, cache, &form, accepted, now);
                Self::answer(scope, result)
            }
            // Only `F` answers it (see `dialog_despite`).
            Intent::DespiteFailing(_) => None,
            Intent::Rollback(start) => {
                let crate::ops::run::rollback::RollbackStart {
                    patch,
                    then,
                    run,
                    to,
                    ..
                } = *start;
                if let Some(run) = run {
                    self.auto = Some(ConsoleRun::new(run));
                }
                scope.status.info(format!("rolling back to revision {to}"));
                Some(Effect::Writes(self.submit(vec![patch, then])))
            }
        }
    }

    /// Shows a refusal on the status line.
    fn answer(scope: &mut OpsScope<'_>, result: Result<Option<Effect>, String>) -> Option<Effect> {
        result.unwrap_or_else(|message| {
            scope.status.error(message);
            None
        })
    }

    /// Applies a result from the effects side.
    pub fn on_event(&mut self, scope: &mut OpsScope<'_>, event: OpsEvent, now: jiff::Timestamp) {
        match event {
            OpsEvent::Permissions(permissions) => {
                // An answer for a namespace the console has since left is stale.
                let current = scope.target.map(|t| t.namespace.as_str());
                if current.is_none_or(|ns| ns == permissions.namespace()) {
                    self.permissions = Some(permissions);
                }
            }
            OpsEvent::FreshRead { node, result } => self.on_fresh_read(scope, &node, result, now),
            OpsEvent::Write(event) => {
                let event = *event;
                let label = self.pending.remove(&event.id).unwrap_or_default();
                if let Ok(Outcome::DaemonSetPatched {
                    resource_version: Some(written),
                }) = &event.result
                {
                    self.unechoed = Some(written.clone());
                }
                if event.result.is_ok() && event.request.record.action == JournalAction::Advance {
                    follow::follow(&mut self.followed, &event.request, now);
                }
                if let Some(console_run) = self.auto.as_mut()
                    && let Some(node) = console_run.deletes.remove(&event.id)
                {
                    console_run
                        .run
                        .deleted(&node, event.result.as_ref().map(|_| ()), now);
                    if event.result.is_err() {
                        // A refusal ends the batch: the rest is never sent.
                        for request in console_run.queued.drain(..) {
                            if let Some(node) = &request.record.node {
                                console_run.run.deleted(
                                    node,
                                    Err(&OpsError::Invalid("not sent".to_owned())),
                                    now,
                                );
                            }
                        }
                    }
                }
                match (&event.result, &event.journal_error) {
                    (Err(err), _) => scope.status.error(write_error(&label, err)),
                    (Ok(_), Some(journal)) => {
                        scope.status.error(format!("{label}: done, but {journal}"));
                    }
                    // Bookkeeping writes succeed quietly, so the run's own message stays.
                    (Ok(_), None) if event.request.record.action.is_bookkeeping() => {}
                    (Ok(_), None) => scope.status.info(done_text(&event.request.record, &label)),
                }
            }
        }
    }
}

fn write_error(label: &str, err: &OpsError) -> String {
    if err.needs_refresh() {
        format!("{label}: {err}")
    } else {
        format!("{label} failed: {err}")
    }
}

/// What a finished write did, with the right verb for node moves.
fn done_text(record: &crate::ops::write::Record, label: &str) -> String {
    match (record.action, &record.node) {
        (JournalAction::Rollback, Some(node)) => {
            format!("rollback: node {node} moving back (old pod deleted)")
        }
        (JournalAction::Advance | JournalAction::AutoAdvance, Some(node)) => {
            format!("{}: node {node} advancing (old pod deleted)", record.action)
        }
        _ => format!("{label}: done"),
    }
}
