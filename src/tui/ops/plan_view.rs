//! The plan view (`P`): the nodes still to advance in order, canaries first,
//! and the skipped nodes with the reason, as `rollcall status` prints them;
//! at most [`LISTED`] of each (a page of the plan costs a look at each row,
//! not a sort of the cluster), then how many more and where to see them all.

use super::{OpsConsole, OpsScope};
use crate::cluster::cache::Cache;
use crate::ops::advance::skip_text;
use crate::ops::owner_guard::reverted;
use crate::ops::run::fit::step_fit;
use crate::ops::state::blocker_with_pause;
use crate::ops::status::state_label;
use crate::tui::confirm::Modal;

/// Steps (and skipped nodes) listed in the plan view.
pub const LISTED: usize = 1_000;

impl OpsConsole {
    pub(super) fn show_plan(
        &mut self,
        scope: &OpsScope<'_>,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Result<(), String> {
        let snapshot = scope.snapshot(cache)?;
        let state = snapshot.state().map_err(|e| e.to_string())?;
        let index = snapshot.index();
        let rows = snapshot.rows(&index, now);
        let head = snapshot
            .plan_head(&rows, &state, LISTED)
            .map_err(|e| e.to_string())?;
        // The row cache's blocker (what the header shows), else the rows'.
        let blocker = match scope.rows.revisions() {
            Some(_) => scope.rows.blocker(&snapshot.ds).clone(),
            None => snapshot.blocker(&rows, now),
        };
        let blocker = blocker_with_pause(&state, blocker);
        let revert = reverted(&snapshot.ds, &state);
        let mut lines = vec![
            format!(
                "state: {}   ({} node(s) to advance)",
                state_label(revert.as_ref(), &state, &blocker, now),
                head.steps
            ),
            format!("why: {}", blocker.message),
        ];
        // Fit per step: the same judgement the step gets when it is taken.
        let nodes: Vec<&str> = head.plan.steps.iter().map(|s| s.node.as_str()).collect();
        let judged = step_fit(&snapshot, &rows, &nodes);
        lines.extend(head.plan.steps.iter().enumerate().map(|(i, step)| {
            let mark = crate::ops::advance::step_mark(step.canary, step.control_plane);
            let fit = judged
                .step_note(&step.node)
                .map_or_else(String::new, |note| format!("  — {note}"));
            format!("{:>4}. {}{mark}  {}{fit}", i + 1, step.node, step.group)
        }));
        lines.extend(more(head.steps, head.plan.steps.len(), "to advance"));
        lines.extend(
            head.plan
                .skipped
                .iter()
                .map(|s| format!("skip {}: {}", s.node, skip_text(&s.reason))),
        );
        lines.extend(more(head.skipped, head.plan.skipped.len(), "skipped"));
        self.modal = Some(Modal::Info {
            title: "rollout plan".to_owned(),
            lines,
        });
        Ok(())
    }
}

/// `… and N more node(s) …` when the list was cut.
fn more(total: usize, listed: usize, what: &str) -> Option<String> {
    (total > listed).then(|| {
        format!(
            "… and {} more node(s) {what} (`rollcall status --all` lists every one)",
            total - listed
        )
    })
}
