//! The fleet's failure budget, shared by every cluster rolling at once. A
//! node is "at risk" from its old pod's delete until its batch passes its
//! gate; a failed node stays at risk for good. Before a batch's deletes the
//! cluster reserves room for the whole batch: granted only while the nodes at
//! risk fleet-wide, these included, are at most `budget.nodes + 1` — so even
//! if every one of them failed, the failures would stop at the one that ends
//! the run. With `nodes: N` no (N+2)th node can ever fail and none starts
//! after the (N+1)th failure; the price is that at most N+1 nodes move at
//! once fleet-wide (each wave's batch is cut to that). Reserving a whole
//! batch at once (all or nothing) keeps two clusters from each holding half
//! of what both need. Pure; the commands wrap it in a lock.

use super::file::Budget;

/// The shared count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ledger {
    budget: Budget,
    at_risk: usize,
    failed_nodes: usize,
    failed_clusters: usize,
    stop: Option<String>,
}

/// The answer to a reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reserve {
    /// The batch may start.
    Granted,
    /// Not now: wait until others' batches pass.
    Wait,
    /// Never: the run stopped, for this reason.
    Stopped(String),
}

impl Ledger {
    /// A ledger for `budget`, nothing at risk.
    pub fn new(budget: Budget) -> Ledger {
        Ledger {
            budget,
            at_risk: 0,
            failed_nodes: 0,
            failed_clusters: 0,
            stop: None,
        }
    }

    /// How many nodes may be at risk at once, fleet-wide.
    pub fn capacity(&self) -> usize {
        self.budget.nodes.saturating_add(1)
    }

    /// A wave's batch as it may run: no larger than the capacity (a larger
    /// one could never be reserved whole).
    pub fn batch_within(&self, batch: usize) -> usize {
        batch.clamp(1, self.capacity())
    }

    /// A wave's batch as it runs, in words: `batch 5`, or `batch 1 (cut
    /// from 5 by the budget)` when [`Ledger::batch_within`] cut it (`fleet
    /// plan` and the rehearsal's table say it alike).
    pub fn batch_text(&self, batch: usize) -> String {
        let within = self.batch_within(batch);
        if within == batch.max(1) {
            format!("batch {within}")
        } else {
            format!("batch {within} (cut from {batch} by the budget)")
        }
    }

    /// Asks room for `nodes` more nodes at risk.
    pub fn try_reserve(&mut self, nodes: usize) -> Reserve {
        if let Some(reason) = &self.stop {
            return Reserve::Stopped(reason.clone());
        }
        if self.at_risk.saturating_add(nodes) <= self.capacity() {
            self.at_risk += nodes;
            Reserve::Granted
        } else {
            Reserve::Wait
        }
    }

    /// `nodes` reserved earlier passed their gate.
    pub fn release(&mut self, nodes: usize) {
        self.at_risk = self.at_risk.saturating_sub(nodes);
    }

    /// A cluster failed on `node` (its run paused there; what it still holds
    /// stays at risk). Returns the stop reason when this spends the budget.
    pub fn failed(&mut self, context: &str, node: &str, reason: &str) -> Option<String> {
        self.failed_nodes += 1;
        self.failed_clusters += 1;
        if self.failed_nodes > self.budget.nodes || self.failed_clusters > self.budget.clusters {
            self.stop_with(format!("{context}: node {node}: {reason}"));
        }
        self.stop.clone()
    }

    /// Stops the run (an interrupt, an error, someone's pause); the first
    /// reason stands.
    pub fn stop_with(&mut self, reason: String) {
        if self.stop.is_none() {
            self.stop = Some(reason);
        }
    }

    /// Why the run stopped, if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.stop.as_deref()
    }

    /// Failed nodes so far.
    pub fn failed_nodes(&self) -> usize {
        self.failed_nodes
    }

    /// Nodes at risk now (failed ones included).
    pub fn at_risk(&self) -> usize {
        self.at_risk
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn budget(nodes: usize, clusters: usize) -> Budget {
        Budget { nodes, clusters }
    }

    #[test]
    fn a_batch_is_granted_whole_or_waits() {
        let mut ledger = Ledger::new(budget(2, 5));
        assert_eq!(ledger.capacity(), 3);
        assert_eq!(ledger.batch_within(5), 3);
        assert_eq!(ledger.try_reserve(2), Reserve::Granted);
        assert_eq!(ledger.try_reserve(2), Reserve::Wait, "2 + 2 > 3");
        assert_eq!(ledger.try_reserve(1), Reserve::Granted);
        ledger.release(2);
        assert_eq!(ledger.try_reserve(2), Reserve::Granted);
    }

    #[test]
    fn a_batch_cut_by_the_budget_says_so() {
        let none = Ledger::new(budget(0, 0));
        assert_eq!(none.batch_text(2), "batch 1 (cut from 2 by the budget)");
        assert_eq!(none.batch_text(1), "batch 1");
        assert_eq!(Ledger::new(budget(9, 0)).batch_text(5), "batch 5");
    }

    #[test]
    fn the_first_failure_over_budget_stops_every_later_reservation() {
        let mut ledger = Ledger::new(budget(0, 0));
        assert_eq!(ledger.try_reserve(1), Reserve::Granted);
        assert_eq!(
            ledger.failed("prod-eu-1", "node-3", "CrashLoopBackOff"),
            Some("prod-eu-1: node node-3: CrashLoopBackOff".to_owned())
        );
        ledger.release(5);
        assert!(matches!(ledger.try_reserve(1), Reserve::Stopped(r) if r.contains("node-3")));
        // A cluster budget: the first failed cluster is tolerated.
        let mut lenient = Ledger::new(budget(3, 1));
        assert_eq!(lenient.failed("a", "n1", "x"), None);
        assert!(lenient.failed("b", "n2", "y").is_some(), "a second cluster");
    }

    /// One step of concurrent clusters sharing a ledger.
    #[derive(Clone, Debug)]
    enum Op {
        Reserve { cluster: usize, nodes: usize },
        Pass { cluster: usize },
        Fail { cluster: usize },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..4usize, 1..6usize).prop_map(|(cluster, nodes)| Op::Reserve { cluster, nodes }),
            (0..4usize).prop_map(|cluster| Op::Pass { cluster }),
            (0..4usize).prop_map(|cluster| Op::Fail { cluster }),
        ]
    }

    proptest! {
        /// However four clusters interleave, failures never pass budget + 1,
        /// nothing is granted after the stop, and at risk never passes capacity.
        #[test]
        fn the_budget_is_exact_under_any_interleaving(
            nodes in 0..4usize,
            clusters in 0..3usize,
            ops in proptest::collection::vec(op(), 0..80),
        ) {
            let mut ledger = Ledger::new(budget(nodes, clusters));
            // Per cluster: nodes held (deleted, gate not passed), and whether it failed.
            let mut held = [0usize; 4];
            let mut dead = [false; 4];
            for op in ops {
                match op {
                    Op::Reserve { cluster, nodes: n } if !dead[cluster] && held[cluster] == 0 => {
                        let n = ledger.batch_within(n);
                        let stopped = ledger.stopped().is_some();
                        match ledger.try_reserve(n) {
                            Reserve::Granted => {
                                prop_assert!(!stopped, "granted after the stop");
                                held[cluster] = n;
                            }
                            Reserve::Wait | Reserve::Stopped(_) => {}
                        }
                    }
                    Op::Pass { cluster } if !dead[cluster] => {
                        ledger.release(held[cluster]);
                        held[cluster] = 0;
                    }
                    Op::Fail { cluster } if !dead[cluster] && held[cluster] > 0 => {
                        dead[cluster] = true;
                        ledger.failed("c", "n", "r");
                    }
                    _ => {}
                }
                prop_assert!(ledger.at_risk() <= ledger.capacity());
                prop_assert!(ledger.failed_nodes() <= nodes + 1);
            }
        }
    }
}
