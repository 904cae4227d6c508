//! The rollback dialog: `r` lists the revisions (newest first, the previous
//! one selected) with the template diff of the selection; Enter asks to
//! confirm the patch and, for OnDelete, moving the nodes back newest first.

use super::{DEFAULT_POLICY, OpsConsole, OpsScope};
use crate::cluster::cache::Cache;
use crate::ops::rbac::Operation;
use crate::ops::snapshot::Snapshot;
use crate::tui::confirm::{Confirm, Intent, Modal, RollbackPicker};
use crate::tui::keymap::Action;

/// Builds the rollback picker for the DaemonSet.
pub fn rollback_picker(snapshot: &Snapshot<'_>) -> Result<RollbackPicker, String> {
    let index = snapshot.index();
    let current = index.current().map(|c| c.number);
    let revisions: Vec<(i64, String)> = index
        .list()
        .iter()
        .rev()
        .map(|r| {
            let images = r.template["spec"]["containers"]
                .as_array()
                .map(|cs| {
                    cs.iter()
                        .filter_map(|c| c["image"].as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default();
            let mark = if Some(r.number) == current {
                " (current)"
            } else {
                ""
            };
            (r.number, format!("revision {}{mark}  {images}", r.number))
        })
        .collect();
    if revisions.len() < 2 {
        return Err("no last revision to roll back to".to_owned());
    }
    let selected = revisions
        .iter()
        .position(|(n, _)| Some(*n) != current)
        .unwrap_or(0);
    let mut picker = RollbackPicker {
        revisions,
        selected,
        diff: Vec::new(),
    };
    picker.diff = diff_lines(snapshot, picker.revisions[selected].0);
    Ok(picker)
}

fn diff_lines(snapshot: &Snapshot<'_>, number: i64) -> Vec<String> {
    match crate::ops::rollback::plan(snapshot, Some(number)) {
        Ok(plan) if plan.diff.is_empty() => vec!["(identical to the current template)".to_owned()],
        Ok(plan) => plan.diff.lines().map(str::to_owned).collect(),
        Err(err) => vec![err.to_string()],
    }
}

impl OpsConsole {
    pub(super) fn open_rollback(
        &mut self,
        scope: &OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        self.allowed(Operation::Rollback, "rollback")?;
        // Refused up front, not after a revision is picked: this console's
        // run, with the way out; another console's, as the rollback would.
        if let Some(console_run) = &self.auto {
            return Err(format!(
                "rollback refused: {} is running in this console: press A to stop it first",
                console_run.run.label()
            ));
        }
        let snapshot = scope.snapshot(cache)?;
        let state = snapshot.state().map_err(|e| e.to_string())?;
        if let Some(running) = state.run_in_progress(now) {
            return Err(format!("rollback refused: {running}"));
        }
        self.modal = Some(Modal::Rollback(rollback_picker(&snapshot)?));
        Ok(())
    }

    pub(super) fn move_rollback_selection(
        &mut self,
        scope: &OpsScope<'_>,
        action: Action,
        cache: &Cache,
    ) {
        let Ok(snapshot) = scope.snapshot(cache) else {
            return;
        };
        let Some(Modal::Rollback(picker)) = self.modal.as_mut() else {
            return;
        };
        let last = picker.revisions.len().saturating_sub(1);
        picker.selected = match action {
            Action::DialogUp => picker.selected.saturating_sub(1),
            _ => (picker.selected + 1).min(last),
        };
        if let Some((number, _)) = picker.revisions.get(picker.selected) {
            picker.diff = diff_lines(&snapshot, *number);
        }
    }

    pub(super) fn ask_rollback(
        &mut self,
        scope: &OpsScope<'_>,
        cache: &Cache,
        picker: &RollbackPicker,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        let snapshot = scope.snapshot(cache)?;
        let (number, _) = picker
            .revisions
            .get(picker.selected)
            .ok_or("no revision selected")?;
        let plan =
            crate::ops::rollback::plan(&snapshot, Some(*number)).map_err(|e| e.to_string())?;
        let patch = plan.request.ok_or_else(|| {
            format!("skipped rollback: the template already matches revision {number}")
        })?;
        // A revision that will not fit somewhere is asked about, as `a` asks:
        // the dialog says where and why, and `y` rolls back despite it.
        let order = crate::ops::run::rollback::rollback_nodes(&snapshot);
        let unfit = crate::ops::run::rollback::unfit_nodes(&snapshot, &order, *number);
        let options = crate::ops::run::rollback::RollbackOptions {
            timeout: DEFAULT_POLICY.timeout,
            include_cordoned: false,
            despite_fit: unfit.is_some(),
            fleet_run: None,
        };
        let start = crate::ops::run::rollback::start_rollback(
            &snapshot,
            patch,
            *number,
            options,
            &self.actor,
            now,
        )
        .map_err(|e| e.to_string())?;
        let order = start.order.clone();
        let mut lines = crate::ops::owner_guard::dialog_lines(
            &snapshot.ds,
            Some(crate::ops::owner_guard::SpecAction::Rollback),
        );
        if let Some(unfit) = &unfit {
            lines.push(unfit.clone());
        }
        lines.push(format!(
            "patch the template to revision {number}{}",
            if order.is_empty() {
                String::new()
            } else {
                format!(
                    ", then move {} node(s) back one by one, newest first",
                    order.len()
                )
            }
        ));
        lines.extend(plan.diff.lines().map(str::to_owned));
        self.modal = Some(Modal::Confirm(Box::new(Confirm {
            title: if unfit.is_some() {
                format!("revision {number} won't fit: roll back anyway?")
            } else {
                format!("roll back to revision {number}?")
            },
            lines,
            intent: Intent::Rollback(Box::new(start)),
        })));
        Ok(())
    }
}
