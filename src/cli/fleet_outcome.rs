//! How one member of a fleet run ended ([`Outcome`]), and its share of the
//! fleet's failure budget ([`MemberBudget`]: what its batches hold, reserved
//! whole before a batch's deletes and released when the batch passes).

use std::sync::{Arc, Mutex};

use crate::fleet::waves::budget::{Ledger, Reserve};
use crate::ops::shared_budget::SharedBudget;

/// How one member's part ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
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

/// A member's share of the budget: what its batches hold.
pub(super) struct MemberBudget {
    ledger: Arc<Mutex<Ledger>>,
    held: Mutex<usize>,
}

impl MemberBudget {
    /// A share holding nothing yet.
    pub fn new(ledger: Arc<Mutex<Ledger>>) -> Self {
        MemberBudget {
            ledger,
            held: Mutex::new(0),
        }
    }
}

impl SharedBudget for MemberBudget {
    fn try_reserve(&self, nodes: usize) -> bool {
        let Ok(mut ledger) = self.ledger.lock() else {
            return false;
        };
        match ledger.try_reserve(nodes) {
            Reserve::Granted => {
                if let Ok(mut held) = self.held.lock() {
                    *held += nodes;
                }
                true
            }
            Reserve::Wait | Reserve::Stopped(_) => false,
        }
    }

    fn settled(&self) {
        if let (Ok(mut ledger), Ok(mut held)) = (self.ledger.lock(), self.held.lock()) {
            ledger.release(*held);
            *held = 0;
        }
    }
}
