//! What every member of one fleet run shares ([`Shared`]: the plan's mark,
//! the failure budget, the stop, the report, the way to clusters) and a
//! member's share of the budget ([`MemberBudget`]: what its batches hold,
//! reserved whole before a batch's deletes, released when the batch passes).

use std::sync::{Arc, Mutex};

use super::connector::Connector;
use super::report::{Event, Happening, Report};
use super::settings::FleetSettings;
use crate::fleet::waves::budget::{Ledger, Reserve};
use crate::fleet::waves::node_class::{ClassFailures, NodeClass};
use crate::model::DsRef;
use crate::ops::drive::Progress;
use crate::ops::interrupt::Interrupt;
use crate::ops::run::fleet_run::{FleetRunName, mark};
use crate::ops::shared_budget::SharedBudget;
use crate::ops::write_gate::WriteGate;

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
    /// Failed nodes by class: one class failing in two clusters stops the run.
    pub classes: Mutex<ClassFailures>,
    /// The fleet's stop (its operator, or a failure past the budget).
    pub interrupt: Interrupt,
    /// The gate every member's writes pass (closed when the run must exit now).
    pub gate: WriteGate,
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

    /// The run's name on a member of `wave` (`rollcall.dev/fleet-run`).
    pub fn identity(&self, wave: &str) -> FleetRunName {
        FleetRunName {
            digest: self.digest.clone(),
            wave: wave.to_owned(),
        }
    }

    /// Stops every member with `cause` (the first cause stands).
    pub fn halt(&self, cause: &str) {
        let reason = format!("{}: stopped: {cause}", self.mark());
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.stop_with(cause.to_owned());
        }
        self.interrupt.halt(reason);
    }

    /// Records a failed node in the budget and by its class; halts the
    /// fleet when the budget is spent (naming the node) or the class has
    /// failed in another cluster too (naming the class).
    pub fn failed(&self, context: &str, node: &str, reason: &str, class: &NodeClass) {
        // The class first: when both stop the run, the class says more.
        if let Some(cause) = self
            .classes
            .lock()
            .ok()
            .and_then(|mut classes| classes.failed(class, context, node, reason))
        {
            self.halt(&cause);
        }
        let spent = self
            .ledger
            .lock()
            .ok()
            .and_then(|mut ledger| ledger.failed(context, node, reason));
        if spent.is_some() {
            self.halt(&format!("{context}: node {node}: {reason}"));
        }
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

    fn unreserve(&self, nodes: usize) {
        if let (Ok(mut ledger), Ok(mut held)) = (self.ledger.lock(), self.held.lock()) {
            let freed = nodes.min(*held);
            ledger.release(freed);
            *held -= freed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::waves::file::Budget;

    struct Nowhere;

    impl Connector for Nowhere {
        fn connect<'a>(
            &'a self,
            _context: &'a str,
        ) -> futures::future::BoxFuture<'a, Result<crate::cluster::connect::Connection, String>>
        {
            Box::pin(async { Err("no cluster in a unit test".to_owned()) })
        }
    }

    fn shared(budget: Budget) -> Shared {
        Shared {
            verb: "roll out",
            daemonset: "kube-system/node-agent".parse().expect("a DaemonSet"),
            digest: "d1".to_owned(),
            ledger: Arc::new(Mutex::new(Ledger::new(budget))),
            classes: Mutex::default(),
            interrupt: Interrupt::never(),
            gate: WriteGate::default(),
            report: Arc::new(super::super::report::Silent),
            connector: Arc::new(Nowhere),
            settings: FleetSettings {
                namespace: None,
                journal: crate::ops::journal::Journal::new("/nonexistent/journal".into()),
                dry_run: false,
                skip_unreachable: false,
                patience: std::time::Duration::from_secs(1),
                by: "test".to_owned(),
            },
        }
    }

    fn edge() -> NodeClass {
        NodeClass {
            architecture: "arm64".to_owned(),
            instance_type: "t4g.large".to_owned(),
            ..NodeClass::default()
        }
    }

    #[test]
    fn nodes_never_deleted_give_their_room_back() {
        let ledger = Arc::new(Mutex::new(Ledger::new(Budget {
            nodes: 1,
            clusters: 1,
        })));
        let (one, other) = (
            MemberBudget::new(Arc::clone(&ledger)),
            MemberBudget::new(Arc::clone(&ledger)),
        );
        assert!(one.try_reserve(2));
        assert!(!other.try_reserve(1), "the capacity of 2 is held");
        // The first delete went out, the second was refused.
        one.unreserve(1);
        assert!(other.try_reserve(1));
        one.unreserve(5);
        assert_eq!(
            ledger.lock().unwrap().at_risk(),
            1,
            "no more than it held: the other's node stays"
        );
    }

    #[test]
    fn one_class_failing_in_two_clusters_stops_the_run_within_the_budget() {
        let run = shared(Budget {
            nodes: 5,
            clusters: 5,
        });
        run.failed("eu-1", "edge-0", "CrashLoopBackOff", &edge());
        assert!(
            !run.interrupt.requested(),
            "one failure is within the budget"
        );
        run.failed("us-1", "edge-3", "CrashLoopBackOff", &edge());
        assert!(run.interrupt.requested());
        let stop = run
            .ledger
            .lock()
            .expect("ledger")
            .stopped()
            .map(str::to_owned);
        assert_eq!(
            stop.as_deref(),
            Some(
                "node class [arch arm64, instance type t4g.large] failed in two clusters: \
                 eu-1 node edge-0 (CrashLoopBackOff), us-1 node edge-3 (CrashLoopBackOff)"
            )
        );
        assert!(
            run.interrupt
                .halt_reason()
                .is_some_and(|r| r.starts_with("fleet run d1: stopped: node class [")),
            "{:?}",
            run.interrupt.halt_reason()
        );
    }

    #[test]
    fn two_classes_failing_stop_only_past_the_budget() {
        let run = shared(Budget {
            nodes: 1,
            clusters: 5,
        });
        run.failed("eu-1", "edge-0", "CrashLoopBackOff", &edge());
        run.failed("us-1", "gen-0", "ImagePullBackOff", &NodeClass::default());
        let stop = run
            .ledger
            .lock()
            .expect("ledger")
            .stopped()
            .map(str::to_owned);
        assert_eq!(stop.as_deref(), Some("us-1: node gen-0: ImagePullBackOff"));
    }
}
