//! How one member of a fleet run ended ([`Outcome`]) and how the whole run
//! ended ([`FleetOutcome`]: its last line and exit code, decided here so
//! every caller says the same).

use std::fmt::Write as _;

use crate::ops::interrupt::EXIT_INTERRUPTED;

/// How one member's part ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every node it was to move moved; `left` were left behind (cordoned…).
    Passed {
        /// Nodes moved.
        moved: usize,
        /// Nodes left, with why.
        left: Vec<(String, String)>,
    },
    /// A node failed its gate; the member is paused there.
    Failed {
        /// The node.
        node: String,
        /// Why (the container's reason).
        reason: String,
    },
    /// Not rolled, and why (a veto, unreachable with `--unreachable skip`).
    Skipped(String),
    /// Not rolled: someone's pause stands, or the member refused to start.
    Blocked(String),
    /// Stopped by the fleet's stop (its rollout paused with the reason).
    Stopped(String),
    /// A dry run showed its first batch.
    DryRun,
}

impl Outcome {
    /// Whether the member lets its wave pass.
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed { .. } | Outcome::DryRun)
    }

    /// Whether every node it was to move moved (or a dry run showed it).
    pub fn done(&self) -> bool {
        matches!(self, Outcome::Passed { left, .. } if left.is_empty()) || *self == Outcome::DryRun
    }

    /// The outcome in one word.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Passed { left, .. } if left.is_empty() => "done",
            Outcome::Passed { .. } => "incomplete",
            Outcome::Failed { .. } => "failed",
            Outcome::Skipped(_) => "skipped",
            Outcome::Blocked(_) => "not started",
            Outcome::Stopped(_) => "stopped",
            Outcome::DryRun => "dry run",
        }
    }

    /// The outcome in words.
    pub fn text(&self) -> String {
        match self {
            Outcome::Passed { moved, left } if left.is_empty() => {
                format!("done: {moved} node(s) moved")
            }
            Outcome::Passed { moved, left } => {
                let list: Vec<String> = left.iter().map(|(n, why)| format!("{n}: {why}")).collect();
                format!(
                    "incomplete: {moved} node(s) moved, left {}",
                    list.join(", ")
                )
            }
            Outcome::Failed { node, reason } => format!("failed: node {node}: {reason}"),
            Outcome::Skipped(why) => format!("skipped: {why}"),
            Outcome::Blocked(why) => format!("not started: {why}"),
            Outcome::Stopped(why) => format!("stopped: {why}"),
            Outcome::DryRun => {
                "would go on batch by batch, each after the one before passes its gate".to_owned()
            }
        }
    }
}

/// One member's part of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberResult {
    /// Its context.
    pub context: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Whether a run was started there (a stop pauses it).
    pub touched: bool,
}

/// How a fleet run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetOutcome {
    /// Each member the run reached, in the order its waves ran.
    pub members: Vec<MemberResult>,
    /// Contexts of the plan the run never reached (a wave stopped before them).
    pub not_reached: Vec<String>,
    /// The failure that spent the budget, if one did.
    pub stop: Option<String>,
    /// Stopped by its operator ([`super::Stopper::stop`]).
    pub interrupted: bool,
    /// A dry run.
    pub dry_run: bool,
    /// How many waves the plan has.
    pub waves: usize,
}

impl FleetOutcome {
    /// Nodes moved, fleet-wide.
    pub fn moved(&self) -> usize {
        self.members
            .iter()
            .map(|m| match m.outcome {
                Outcome::Passed { moved, .. } => moved,
                _ => 0,
            })
            .sum()
    }

    /// Whether every cluster of the plan was reached and is done.
    pub fn all_done(&self) -> bool {
        self.not_reached.is_empty() && self.members.iter().all(|m| m.outcome.done())
    }

    /// The exit code: 0 done (or a dry run), 1 stopped, skipped or
    /// incomplete, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        if self.interrupted {
            EXIT_INTERRUPTED
        } else {
            u8::from(!(self.dry_run || self.all_done()))
        }
    }

    /// The run's last line: how it ended, then the members that did not
    /// pass and those never reached (each member's outcome was said as it came).
    pub fn summary(&self) -> String {
        let moved = self.moved();
        let mut text = if self.dry_run {
            format!(
                "dry run: nothing was changed; would roll {} cluster(s) in {} wave(s)",
                self.members.len(),
                self.waves
            )
        } else if self.interrupted {
            "interrupted: every touched cluster is paused (run the plan again to resume)".to_owned()
        } else if let Some(stop) = &self.stop {
            format!("stopped: {stop}; every touched cluster is paused")
        } else if self.all_done() {
            format!(
                "done: {moved} node(s) moved in {} cluster(s)",
                self.members.len()
            )
        } else {
            format!("incomplete: {moved} node(s) moved in the clusters that passed")
        };
        if self.dry_run {
            return text;
        }
        // A member that passed its wave with nodes left behind (cordoned,
        // not Ready) did pass: it is named with what it left, not as failed.
        let left: Vec<String> = self
            .members
            .iter()
            .filter_map(|m| match &m.outcome {
                Outcome::Passed { left, .. } if !left.is_empty() => {
                    let nodes: Vec<String> =
                        left.iter().map(|(n, why)| format!("{n}: {why}")).collect();
                    Some(format!("{} ({})", m.context, nodes.join(", ")))
                }
                _ => None,
            })
            .collect();
        if !left.is_empty() {
            let _ = write!(text, "; nodes left behind: {}", left.join("; "));
        }
        let unpassed: Vec<String> = self
            .members
            .iter()
            .filter(|m| !m.outcome.passed())
            .map(|m| match &m.outcome {
                Outcome::Skipped(why) => format!("{} (skipped: {why})", m.context),
                other => format!("{} ({})", m.context, other.word()),
            })
            .collect();
        if !unpassed.is_empty() {
            let _ = write!(text, "; not passed: {}", unpassed.join(", "));
        }
        if !self.not_reached.is_empty() {
            let _ = write!(text, "; not reached: {}", self.not_reached.join(", "));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(context: &str, outcome: Outcome) -> MemberResult {
        MemberResult {
            context: context.to_owned(),
            outcome,
            touched: true,
        }
    }

    fn ended(members: Vec<MemberResult>, not_reached: &[&str]) -> FleetOutcome {
        FleetOutcome {
            members,
            not_reached: not_reached.iter().map(|c| (*c).to_owned()).collect(),
            stop: None,
            interrupted: false,
            dry_run: false,
            waves: 2,
        }
    }

    #[test]
    fn a_run_is_done_only_when_every_cluster_is_reached_and_done() {
        let passed = |moved| Outcome::Passed {
            moved,
            left: Vec::new(),
        };
        let done = ended(vec![member("a", passed(3)), member("b", passed(2))], &[]);
        assert_eq!(done.exit_code(), 0);
        assert_eq!(done.summary(), "done: 5 node(s) moved in 2 cluster(s)");
        let left = ended(
            vec![
                member("a", passed(3)),
                member(
                    "b",
                    Outcome::Passed {
                        moved: 1,
                        left: vec![("n4".to_owned(), "cordoned".to_owned())],
                    },
                ),
            ],
            &[],
        );
        assert_eq!(left.exit_code(), 1, "a node left behind is not done");
        assert_eq!(
            left.summary(),
            "incomplete: 4 node(s) moved in the clusters that passed; \
             nodes left behind: b (n4: cordoned)"
        );
        let short = ended(vec![member("a", passed(3))], &["b"]);
        assert_eq!(short.exit_code(), 1);
        assert_eq!(
            short.summary(),
            "incomplete: 3 node(s) moved in the clusters that passed; not reached: b"
        );
    }

    #[test]
    fn a_stop_names_its_failure_and_the_members_that_did_not_pass() {
        let mut stopped = ended(
            vec![
                member(
                    "a",
                    Outcome::Failed {
                        node: "n1".to_owned(),
                        reason: "CrashLoopBackOff".to_owned(),
                    },
                ),
                member("b", Outcome::Skipped("vetoed".to_owned())),
            ],
            &["c"],
        );
        stopped.stop = Some("a: node n1: CrashLoopBackOff".to_owned());
        assert_eq!(stopped.exit_code(), 1);
        assert_eq!(
            stopped.summary(),
            "stopped: a: node n1: CrashLoopBackOff; every touched cluster is paused; \
             not passed: a (failed), b (skipped: vetoed); not reached: c"
        );
        stopped.interrupted = true;
        assert_eq!(stopped.exit_code(), EXIT_INTERRUPTED);
    }
}
