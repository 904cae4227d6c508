//! The auto-advance form (`A`): this run's settings — batch size, soak, Ready
//! timeout — shown with their defaults and editable before anything starts,
//! plus the warnings of the one start check (failing updated pods, a stalled
//! run to take over). Nothing is inherited from an earlier run. Pure data.

use std::time::Duration;

use super::view_model::{Cell, Tone};
use crate::ops::auto::AutoPolicy;

/// Soak choices (`←`/`→` step through them).
const SOAKS: [u64; 8] = [0, 10, 30, 60, 120, 300, 600, 1800];
/// Ready-timeout choices.
const TIMEOUTS: [u64; 7] = [60, 120, 300, 600, 900, 1800, 3600];
/// The largest batch the form offers.
const MAX_BATCH: usize = 500;

/// The open form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoForm {
    /// The field being edited: 0 batch, 1 soak, 2 timeout.
    pub field: usize,
    /// The settings as edited.
    pub policy: AutoPolicy,
    /// Said before starting (failing updated nodes, a run to take over).
    pub warnings: Vec<String>,
    /// Whether starting overrides failing updated pods (then `y` is an explicit yes to that).
    pub despite_failing: bool,
    /// The operator answered the failing-pods dialog with `F` already.
    pub failing_accepted: bool,
    /// The operator answered the won't-fit dialog with `y`: the run goes
    /// despite fit.
    pub despite_fit: bool,
    /// Which nodes go first, in words ([`canary_text`]).
    pub canaries: String,
}

/// Which nodes this run moves first, as the form says it: the nodes marked
/// with `c` (named, the first few), the canary selector, or that there are
/// none — never "the nodes marked with c" when none are.
pub fn canary_text(marked: &std::collections::BTreeSet<String>, selector: Option<&str>) -> String {
    const NAMED: usize = 3;
    let mut parts = Vec::new();
    if !marked.is_empty() {
        let mut names: Vec<&str> = marked.iter().take(NAMED).map(String::as_str).collect();
        if marked.len() > NAMED {
            names.push("…");
        }
        parts.push(format!(
            "{} marked with c ({})",
            marked.len(),
            names.join(", ")
        ));
    }
    if let Some(selector) = selector {
        parts.push(format!("the nodes matching {selector}"));
    }
    if parts.is_empty() {
        "none: the plan's first batch goes first (c marks a node as a canary)".to_owned()
    } else {
        format!("{} (they go first, on their own)", parts.join(" and "))
    }
}

impl AutoForm {
    /// A form with `policy` as the defaults.
    pub fn new(
        policy: AutoPolicy,
        warnings: Vec<String>,
        despite_failing: bool,
        canaries: String,
    ) -> Self {
        Self {
            field: 0,
            policy,
            warnings,
            despite_failing,
            failing_accepted: false,
            despite_fit: false,
            canaries,
        }
    }

    /// Moves to the previous (`up`) or next field.
    pub fn select(&mut self, up: bool) {
        self.field = if up {
            self.field.saturating_sub(1)
        } else {
            (self.field + 1).min(2)
        };
    }

    /// Steps the selected value down (`less`) or up.
    pub fn adjust(&mut self, less: bool) {
        let policy = &mut self.policy;
        match self.field {
            0 => {
                policy.batch = if less {
                    policy.batch.saturating_sub(1).max(1)
                } else {
                    (policy.batch + 1).min(MAX_BATCH)
                };
            }
            1 => policy.soak = step(&SOAKS, policy.soak, less),
            _ => policy.timeout = step(&TIMEOUTS, policy.timeout, less),
        }
    }

    /// The form's lines: each field with a marker on the selected one.
    pub fn lines(&self) -> Vec<Cell> {
        let fields = [
            format!("batch size      {}", self.policy.batch),
            format!(
                "soak            {}",
                humantime::format_duration(self.policy.soak)
            ),
            format!(
                "Ready timeout   {}",
                humantime::format_duration(self.policy.timeout)
            ),
        ];
        let mut lines: Vec<Cell> = fields
            .iter()
            .enumerate()
            .map(|(i, text)| {
                if i == self.field {
                    Cell::new(&format!("▶ {text}"), Tone::Accent)
                } else {
                    Cell::new(&format!("  {text}"), Tone::Normal)
                }
            })
            .collect();
        lines.push(Cell::new(
            &format!("  canaries        {}", self.canaries),
            Tone::Normal,
        ));
        lines.push(Cell::empty());
        lines.extend(self.warnings.iter().map(|w| Cell::new(w, Tone::Warn)));
        lines.push(Cell::new(
            "↑/↓ field   ←/→ or -/+ change   y start   Esc cancel",
            Tone::Accent,
        ));
        lines
    }
}

/// The next smaller or larger choice than `now` in `choices` (seconds).
fn step(choices: &[u64], now: Duration, less: bool) -> Duration {
    let secs = now.as_secs();
    let next = if less {
        choices.iter().rev().find(|c| **c < secs).copied()
    } else {
        choices.iter().find(|c| **c > secs).copied()
    };
    Duration::from_secs(next.unwrap_or(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_step_within_bounds() {
        let mut form = AutoForm::new(
            AutoPolicy {
                batch: 1,
                soak: Duration::from_secs(30),
                timeout: Duration::from_secs(300),
            },
            Vec::new(),
            false,
            String::new(),
        );
        form.adjust(true);
        assert_eq!(form.policy.batch, 1, "never below 1");
        form.adjust(false);
        form.adjust(false);
        assert_eq!(form.policy.batch, 3);
        form.select(false);
        form.adjust(false);
        assert_eq!(form.policy.soak, Duration::from_secs(60));
        form.adjust(true);
        form.adjust(true);
        assert_eq!(form.policy.soak, Duration::from_secs(10));
        form.select(false);
        form.select(false);
        form.adjust(true);
        assert_eq!(form.policy.timeout, Duration::from_secs(120));
        assert!(form.lines()[2].text.starts_with("▶ Ready timeout   2m"));
    }

    /// Issue 33: the form says which nodes go first, and never "the nodes
    /// marked with c" when none are.
    #[test]
    fn the_form_names_the_canaries_it_has() {
        let set = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
        let cases = [
            (
                set(&[]),
                None,
                "none: the plan's first batch goes first (c marks a node as a canary)",
            ),
            (
                set(&["node-02", "node-01"]),
                None,
                "2 marked with c (node-01, node-02) (they go first, on their own)",
            ),
            (
                set(&["a", "b", "c", "d"]),
                None,
                "4 marked with c (a, b, c, …) (they go first, on their own)",
            ),
            (
                set(&[]),
                Some("pool=canary"),
                "the nodes matching pool=canary (they go first, on their own)",
            ),
        ];
        for (marked, selector, want) in cases {
            assert_eq!(
                canary_text(&marked, selector),
                want,
                "{marked:?} {selector:?}"
            );
        }
    }
}
