//! What every member of one fleet run shares ([`Shared`]: the plan's mark,
//! the failure budget, the stop, the report, the way to clusters) and a
//! member's share of the budget ([`MemberBudget`]: what its batches hold,
//! reserved whole before a batch's deletes, released when the batch passes).

use std::sync::{Arc, Mutex};

use super::connector::Connector;
use super::report::{Event, Happening, Report};
use super::settings::FleetSettings;
use crate::fleet::waves::budget::{Ledger, Reserve};
use crate::model::DsRef;
use crate::ops::drive::Progress;
use crate::ops::interrupt::Interrupt;
use crate::ops::shared_budget::SharedBudget;

/// What every member of one fleet run shares.
pub(super) struct Shared {
    /// `roll out` or `roll back`, in messages.
    pub verb: &'static str,
    /// The DaemonSet.
    pub daemonset: DsRef,
    /// The plan's digest: every pause this run leaves starts with
    /// [`Shared::mark`], so a later run of the same plan resumes them.
    pub digest: String,
    /// The failure budget.
    pub ledger: Arc<Mutex<Ledger>>,
    /// The fleet's stop (its operator, or a failure past the budget).
    pub interrupt: Interrupt,
    /// Where each step goes.
    pub report: Arc<dyn Report>,
    /// The way to each cluster.
    pub connector: Arc<dyn Connector>,
    /// How the run is carried out.
    pub settings: FleetSettings,
}

impl Shared {
    /// How every pause reason this run writes begins.
    pub fn mark(&self) -> String {
        mark(&self.digest)
    }

    /// Stops every member with `cause` (the first cause stands).
    pub fn halt(&self, cause: &str) {
        let reason = format!("{}: stopped: {cause}", self.mark());
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.stop_with(cause.to_owned());
        }
        self.interrupt.halt(reason);
    }

    /// Whether this is a dry run.
    pub fn dry_run(&self) -> bool {
        self.settings.dry_run
    }

    /// `would ` in a dry run.
    pub fn would(&self) -> &'static str {
        if self.dry_run() { "would " } else { "" }
    }

    /// Reports a fleet-wide step.
    pub fn say_fleet(&self, happening: Happening, message: String) {
        self.report.event(Event::fleet(happening, message));
    }

    /// Reports a member's step.
    pub fn say(&self, context: &str, happening: Happening, step: Progress) {
        self.report.event(Event::member(context, happening, step));
    }
}

/// How every pause reason a run of the plan with `digest` writes begins.
pub(super) fn mark(digest: &str) -> String {
    format!("fleet run {digest}")
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
