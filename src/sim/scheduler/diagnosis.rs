//! What an attempt found on the nodes it filtered (upstream `Diagnosis`):
//! each rejected node's outcome — a placement filter's reason, or the fit
//! engine's answer with what preemption would do there — and, through the
//! fit engine, upstream's FitError message over every node of the cluster.

use std::borrow::Cow;

use crate::engine::fit::{Fit, NODE_AFFINITY_MISMATCH, NodeOutcome, failed_scheduling_message};

/// Why one node did not take the pod as is.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A placement filter rejected it (preemption cannot change that).
    Rejected(Cow<'static, str>),
    /// The fit engine's answer: what is short, and what preemption finds.
    Fit(Fit),
}

/// The rejected nodes of one attempt.
#[derive(Clone, Debug, Default)]
pub struct Diagnosis {
    /// How many nodes the cluster has (`NumAllNodes`).
    pub all_nodes: usize,
    /// Each filtered node that did not take the pod, in the order filtered.
    pub outcomes: Vec<(String, Outcome)>,
}

impl Diagnosis {
    /// An empty diagnosis of a cluster of `all_nodes` nodes.
    pub fn new(all_nodes: usize) -> Diagnosis {
        Diagnosis {
            all_nodes,
            outcomes: Vec::new(),
        }
    }

    /// Upstream's FitError message. The nodes NodeAffinity's PreFilter left
    /// out (every node but a daemon pod's own) count as not matching the
    /// pod's node affinity, which is what they are.
    pub fn message(&self, never_preempts: bool) -> String {
        let left_out = self.all_nodes.saturating_sub(self.outcomes.len());
        let nodes: Vec<NodeOutcome<'_>> = self
            .outcomes
            .iter()
            .map(|(_, outcome)| match outcome {
                Outcome::Rejected(reason) => NodeOutcome::Rejected(reason),
                Outcome::Fit(fit) => NodeOutcome::Fit(fit),
            })
            .chain(std::iter::repeat_n(
                NodeOutcome::Rejected(NODE_AFFINITY_MISMATCH),
                left_out,
            ))
            .collect();
        failed_scheduling_message(&nodes, never_preempts)
    }
}
