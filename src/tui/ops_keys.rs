//! The console's rollout keys: advance (`a`, `n`), canary (`c`/Space),
//! auto-advance (`A`), pause/resume (`p`) and rollback (`r`). Every key builds
//! the action value from a snapshot of the cache and opens a confirmation;
//! only "yes" turns it into writes for the effects task; results come back as
//! [`OpsEvent`]s and show in the status line. Auto-advance stepping lives in
//! `ops_auto`, the rollback dialog in `rollback_dialog`, the plan in `plan_view`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::app::{App, Effect, Handled};
use super::confirm::{Confirm, Intent, Modal};
use super::keymap::{Action, Context};
use crate::cluster::cache::Cache;
use crate::ops::advance::{AdvanceTarget, choose, delete_requests};
use crate::ops::auto::AutoPolicy;
use crate::ops::error::OpsError;
use crate::ops::journal_action::JournalAction;
use crate::ops::pause::{PauseRequest, pause, resume};
use crate::ops::rbac::{Operation, Permissions};
use crate::ops::run::settings::ensure_advance_by_hand;
use crate::ops::run::{Run, RunEnd};
use crate::ops::snapshot::Snapshot;
use crate::ops::write::{Outcome, Write, WriteEvent, WriteRequest};
use crate::rows::RowCache;

/// Defaults for auto-advance when the DaemonSet has no stored settings.
pub const DEFAULT_POLICY: AutoPolicy = AutoPolicy {
    batch: 1,
    soak: Duration::from_secs(30),
    timeout: crate::engine::health::READY_TIMEOUT,
};

/// What comes back from the effects side.
#[derive(Debug)]
pub enum OpsEvent {
    /// A write finished.
    Write(Box<WriteEvent>),
    /// The RBAC pre-check answered.
    Permissions(Permissions),
}

/// The run (auto-advance or rollback) this console drives: the one run state
/// machine, and which of the writes in flight are its deletes.
#[derive(Debug)]
pub struct ConsoleRun {
    pub(super) run: Run,
    /// Write id → node, for the deletes it asked for.
    pub(super) deletes: BTreeMap<u64, String>,
    /// The batch's deletes not sent yet: one at a time, each answered before
    /// the next, none after a refusal (as the headless executor runs them).
    pub(super) queued: std::collections::VecDeque<WriteRequest>,
}

impl ConsoleRun {
    pub(super) fn new(run: Run) -> Self {
        Self {
            run,
            deletes: BTreeMap::new(),
            queued: std::collections::VecDeque::new(),
        }
    }
}

/// The console's rollout-operation state.
#[derive(Debug, Default)]
pub struct OpsConsole {
    /// Writes are refused (`--read-only`).
    pub read_only: bool,
    /// Who acts (for the journal and annotations).
    pub actor: String,
    /// The RBAC answers, once in.
    pub permissions: Option<Permissions>,
    /// The open dialog.
    pub modal: Option<Modal>,
    /// The run this console drives, when on.
    pub auto: Option<ConsoleRun>,
    /// Writes sent and not yet answered.
    pub pending: BTreeMap<u64, String>,
    /// The resourceVersion of this console's last DaemonSet write, until the
    /// watch shows it: the auto run decides nothing from an older view.
    pub unechoed: Option<String>,
    /// The nodes advanced by hand, followed until they pass the gate or fail.
    pub followed: Option<super::ops_follow::Followed>,
    /// The user chose to stop this console's run and quit: the console exits
    /// once the pause is answered (written, or failed and journalled).
    pub quit_when_idle: bool,
    next_id: u64,
}

impl OpsConsole {
    /// A console that may write (unless `read_only`) as `actor`.
    pub fn new(read_only: bool, actor: String) -> Self {
        Self {
            read_only,
            actor,
            ..Self::default()
        }
    }

    /// The keymap context of the open dialog, if any.
    pub fn context(&self) -> Option<Context> {
        match self.modal {
            Some(Modal::Confirm(_)) => Some(Context::Confirm),
            Some(Modal::Rollback(_)) => Some(Context::RollbackPicker),
            Some(Modal::Info { .. }) => Some(Context::PlanView),
            Some(Modal::AutoForm(_)) => Some(Context::AutoForm),
            None => None,
        }
    }

    /// Numbers the writes and remembers what they are.
    pub(super) fn submit(&mut self, requests: Vec<WriteRequest>) -> Vec<(u64, WriteRequest)> {
        requests
            .into_iter()
            .map(|request| {
                self.next_id += 1;
                let label = request.record.node.as_ref().map_or_else(
                    || request.record.action.to_string(),
                    |n| format!("{} {n}", request.record.action),
                );
                self.pending.insert(self.next_id, label);
                (self.next_id, request)
            })
            .collect()
    }

    /// Refuses an operation the console may not do, with why.
    pub(super) fn allowed(&self, operation: Operation, what: &str) -> Result<(), String> {
        if self.read_only {
            return Err(format!("read-only mode: {what} is disabled"));
        }
        if let Some(permissions) = &self.permissions {
            permissions
                .allows(operation)
                .map_err(|why| format!("{what} disabled: {why}"))?;
        }
        if !self.pending.is_empty() {
            return Err(format!(
                "{what}: busy, waiting for {}",
                self.pending
                    .values()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }
}

impl App {
    /// Handles the rollout keys and dialog keys ([`Handled::Passed`] when `action` is not one).
    pub fn ops_update(&mut self, action: Action, cache: &Cache, now: jiff::Timestamp) -> Handled {
        let result = match action {
            // Yes/no belong to the console's own confirmation unless a rollout dialog is open.
            Action::Confirm if self.ops.modal.is_some() => Ok(self.dialog_yes(cache, now)),
            Action::Cancel if self.ops.modal.is_some() => {
                if !matches!(self.ops.modal.take(), Some(Modal::Info { .. })) {
                    self.ui.info("cancelled");
                }
                Ok(None)
            }
            // Quitting while this console drives a run would leave it with
            // nobody driving: ask first (a second quit key means yes).
            Action::Quit if self.ops.auto.is_some() => Ok(self.ask_quit_during_run(cache, now)),
            Action::ConfirmDespite => Ok(self.dialog_despite(cache, now)),
            Action::ShowPlan => self.show_plan(cache, now).map(|()| None),
            Action::DialogUp | Action::DialogDown | Action::FormLess | Action::FormMore
                if matches!(self.ops.modal, Some(Modal::AutoForm(_))) =>
            {
                if let Some(Modal::AutoForm(form)) = self.ops.modal.as_mut() {
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
                self.move_rollback_selection(action, cache);
                Ok(None)
            }
            Action::AdvanceSelected => self.ask_advance(cache, true, now).map(|()| None),
            Action::AdvanceNext => self.ask_advance(cache, false, now).map(|()| None),
            Action::ToggleCanary => self.ask_canary(cache, now).map(|()| None),
            Action::ToggleAuto => self.toggle_auto(cache, now),
            Action::TogglePause => self.ask_pause(cache, now).map(|()| None),
            Action::Rollback => self.open_rollback(cache).map(|()| None),
            _ => return Handled::Passed,
        };
        Handled::Took(result.unwrap_or_else(|message| {
            self.ui.error(message);
            None
        }))
    }

    fn ask_advance(
        &mut self,
        cache: &Cache,
        selected: bool,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        self.ops.allowed(Operation::Advance, "advance")?;
        let snapshot = live_snapshot(self.ui.target.as_ref(), &self.rows, cache)?;
        let state = snapshot.state().map_err(|e| e.to_string())?;
        ensure_advance_by_hand(&snapshot, &state).map_err(|e| e.to_string())?;
        let index = snapshot.index();
        let rows = snapshot.rows(&index, now);
        let target = if selected {
            AdvanceTarget::Nodes(vec![
                self.ui.selected_node.clone().ok_or("no node selected")?,
            ])
        } else {
            AdvanceTarget::Next(1)
        };
        let no_exclusion = std::collections::BTreeSet::new();
        let plan = snapshot
            .plan_for(&rows, &state, &target, &no_exclusion, false)
            .map_err(|e| e.to_string())?;
        let victims = choose(&plan, &target, &no_exclusion).map_err(|e| e.to_string())?;
        let to = index.current().map(|c| c.number);
        let requests = delete_requests(&snapshot.target(), &victims, to, JournalAction::Advance);
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
        self.ops.modal = Some(Modal::Confirm(Box::new(Confirm {
            title,
            lines,
            intent,
        })));
        Ok(())
    }

    fn ask_canary(&mut self, cache: &Cache, now: jiff::Timestamp) -> Result<(), String> {
        self.ops.allowed(Operation::EditPlan, "marking canaries")?;
        let node = self.ui.selected_node.clone().ok_or("no node selected")?;
        let snapshot = live_snapshot(self.ui.target.as_ref(), &self.rows, cache)?;
        let before = snapshot.state().map_err(|e| e.to_string())?;
        let mut after = before.clone().touched(&self.ops.actor, now);
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
        self.ops.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: format!("{verb} node {node} as a canary?"),
            lines: vec!["canaries are advanced first, as their own batch; stored on the DaemonSet for every console".to_owned()],
            intent: Intent::Writes(vec![request]),
        })));
        Ok(())
    }

    fn ask_pause(&mut self, cache: &Cache, now: jiff::Timestamp) -> Result<(), String> {
        self.ops.allowed(Operation::Pause, "pause/resume")?;
        let snapshot = live_snapshot(self.ui.target.as_ref(), &self.rows, cache)?;
        let state = snapshot.state().map_err(|e| e.to_string())?;
        let spec_action =
            crate::ops::owner_guard::pause_spec_action(&snapshot.ds, &state, state.is_paused());
        let mut lines = crate::ops::owner_guard::dialog_lines(&snapshot.ds, spec_action);
        let (title, request) = if state.is_paused() {
            (
                "resume the rollout?",
                resume(&snapshot, &self.ops.actor, now),
            )
        } else {
            let request = PauseRequest {
                by: self.ops.actor.clone(),
                reason: None,
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
        self.ops.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: title.to_owned(),
            lines,
            intent: Intent::Writes(vec![request]),
        })));
        Ok(())
    }

    fn ask_quit_during_run(&mut self, cache: &Cache, now: jiff::Timestamp) -> Option<Effect> {
        if let Some(Modal::Confirm(confirm)) = &self.ops.modal
            && matches!(confirm.intent, Intent::StopAndQuit)
        {
            return self.dialog_yes(cache, now);
        }
        let label = self
            .ops
            .auto
            .as_ref()
            .map_or("auto-advance", |r| r.run.label());
        self.ops.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: format!("{label} is running in this console: stop it and quit?"),
            lines: vec![
                "y: pause the rollout (reason: console closed) and quit".to_owned(),
                "Esc: keep it running and stay".to_owned(),
            ],
            intent: Intent::StopAndQuit,
        })));
        None
    }

    fn dialog_yes(&mut self, cache: &Cache, now: jiff::Timestamp) -> Option<Effect> {
        match self.ops.modal.take()? {
            Modal::Info { .. } => None,
            Modal::AutoForm(form) => {
                let result = self.confirm_auto_form(cache, *form, now);
                self.answer(result)
            }
            Modal::Rollback(picker) => {
                if let Err(message) = self.ask_rollback(cache, &picker, now) {
                    self.ui.error(message);
                }
                None
            }
            Modal::Confirm(confirm) => {
                if let Intent::DespiteFailing(_) = confirm.intent {
                    // Not a `y`: advancing past failing pods has its own key.
                    self.ui.error(
                        "this moves nodes onto a failing revision: F to go on, Esc to cancel",
                    );
                    self.ops.modal = Some(Modal::Confirm(confirm));
                    return None;
                }
                let title = confirm.title.trim_end_matches('?').to_owned();
                self.run_intent(cache, confirm.intent, &title, now)
            }
        }
    }

    /// `F` in the failing-pods dialog: goes on past the failing pods.
    fn dialog_despite(&mut self, cache: &Cache, now: jiff::Timestamp) -> Option<Effect> {
        let Some(Modal::Confirm(confirm)) = self.ops.modal.take() else {
            return None;
        };
        let Intent::DespiteFailing(inner) = confirm.intent else {
            self.ops.modal = Some(Modal::Confirm(confirm));
            return None;
        };
        let title = confirm.title.trim_end_matches('?').to_owned();
        match *inner {
            Intent::StartAuto(form) => {
                let result = self.start_auto(cache, &form, true, now);
                self.answer(result)
            }
            other => self.run_intent(cache, other, &title, now),
        }
    }

    fn run_intent(
        &mut self,
        cache: &Cache,
        intent: Intent,
        title: &str,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        match intent {
            Intent::Writes(requests) => {
                self.ui.info(format!("{title}: sent"));
                Some(Effect::Writes(self.ops.submit(requests)))
            }
            Intent::StopAndQuit => {
                self.ops.quit_when_idle = true;
                self.ui.info("pausing the rollout, then quitting");
                let end = RunEnd::Interrupted {
                    by: self.ops.actor.clone(),
                    how: "console closed",
                };
                self.end_run(cache, &end, now)
            }
            Intent::StartAuto(form) => {
                let result = self.start_auto(cache, &form, false, now);
                self.answer(result)
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
                    self.ops.auto = Some(ConsoleRun::new(run));
                }
                self.ui.info(format!("rolling back to revision {to}"));
                Some(Effect::Writes(self.ops.submit(vec![patch, then])))
            }
        }
    }

    /// Shows a refusal on the status line.
    fn answer(&mut self, result: Result<Option<Effect>, String>) -> Option<Effect> {
        result.unwrap_or_else(|message| {
            self.ui.error(message);
            None
        })
    }

    /// Applies a result from the effects side.
    pub fn ops_on_event(&mut self, event: OpsEvent, now: jiff::Timestamp) {
        match event {
            OpsEvent::Permissions(permissions) => {
                // An answer for a namespace the console has since left is stale.
                let current = self.ui.target.as_ref().map(|t| t.namespace.as_str());
                if current.is_none_or(|ns| ns == permissions.namespace()) {
                    self.ops.permissions = Some(permissions);
                }
            }
            OpsEvent::Write(event) => {
                let event = *event;
                let label = self.ops.pending.remove(&event.id).unwrap_or_default();
                if let Ok(Outcome::DaemonSetPatched {
                    resource_version: Some(written),
                }) = &event.result
                {
                    self.ops.unechoed = Some(written.clone());
                }
                if event.result.is_ok() && event.request.record.action == JournalAction::Advance {
                    self.follow_advance(&event.request, now);
                }
                if let Some(console_run) = self.ops.auto.as_mut()
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
                    (Err(err), _) => self.ui.error(write_error(&label, err)),
                    (Ok(_), Some(journal)) => {
                        self.ui.error(format!("{label}: done, but {journal}"));
                    }
                    // Bookkeeping writes succeed quietly, so the run's own message stays.
                    (Ok(_), None) if event.request.record.action.is_bookkeeping() => {}
                    (Ok(_), None) => self.ui.info(done_text(&event.request.record, &label)),
                }
            }
        }
    }
}

/// The console's snapshot of `target`: borrows the watch cache's nodes and
/// pods and the row cache's coverage rows (no copy of the cluster under the
/// cache lock), see [`Snapshot::live`].
pub(super) fn live_snapshot<'a>(
    target: Option<&crate::model::Target>,
    rows: &'a RowCache,
    cache: &'a Cache,
) -> Result<Snapshot<'a>, String> {
    let target = target.ok_or("no daemonset selected")?;
    Snapshot::live(cache, target, rows).ok_or_else(|| format!("daemonset {target} not loaded yet"))
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
