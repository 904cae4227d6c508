//! The plan view (`P`): the nodes still to advance in order, canaries first,
//! and every skipped node with the reason, as `rollcall status` prints them.

use super::app::App;
use super::confirm::Modal;
use crate::cluster::cache::Cache;

impl App {
    pub(super) fn show_plan(&mut self, cache: &Cache, now: jiff::Timestamp) -> Result<(), String> {
        let snapshot = self.snapshot(cache)?;
        let report =
            crate::ops::status::StatusReport::build(&snapshot, now).map_err(|e| e.to_string())?;
        let mut lines = vec![
            format!(
                "state: {}   ({} node(s) to advance)",
                report.state,
                report.plan.len()
            ),
            format!("why: {}", report.blocker.message),
        ];
        lines.extend(report.plan.iter().enumerate().map(|(i, step)| {
            let canary = if step.canary { " [canary]" } else { "" };
            format!("{:>4}. {}{canary}  {}", i + 1, step.node, step.group)
        }));
        lines.extend(
            report
                .skipped
                .iter()
                .map(|s| format!("skip {}: {}", s.node, s.reason)),
        );
        self.ops.modal = Some(Modal::Info {
            title: "rollout plan".to_owned(),
            lines,
        });
        Ok(())
    }
}
