//! The `FailedScheduling` message across nodes, as upstream's `FitError`
//! formats it: `0/N nodes are available: ` and each reason with the count
//! of nodes giving it, as `"<count> <reason>"` strings sorted as strings,
//! then `preemption: ` and the same for what preemption found per node
//! (or that the pod is not eligible).

use std::collections::BTreeMap;

use super::Fit;
use super::check::first_filter_reasons;
use super::preemption::{NEVER, NOT_HELPFUL, Preemption};

/// NodeAffinity's reason (node selector or required node affinity).
pub const NODE_AFFINITY_MISMATCH: &str = "node(s) didn't match Pod's node affinity/selector";
/// NodeUnschedulable's reason (a cordoned node).
pub const NODE_UNSCHEDULABLE: &str = "node(s) were unschedulable";

/// TaintToleration's reason: `node(s) had untolerated taint {key: value}`.
pub fn untolerated_taint(key: &str, value: &str) -> String {
    format!("node(s) had untolerated taint {{{key}: {value}}}")
}

/// Why one node could not take the pod.
#[derive(Clone, Copy, Debug)]
pub enum NodeOutcome<'a> {
    /// The resource and port check (with preemption) for the node.
    Fit(&'a Fit),
    /// Another filter's reason (affinity, taint, cordon): preemption cannot
    /// help there.
    Rejected(&'a str),
}

/// The message of the `FailedScheduling` event and of `PodScheduled`'s
/// condition, for a pod no node takes as is. When preemption found victims
/// on some node the pod is nominated there and the message has no
/// preemption part. No nodes at all: upstream's `no nodes available to
/// schedule pods`.
pub fn failed_scheduling_message(nodes: &[NodeOutcome<'_>], never_preempts: bool) -> String {
    if nodes.is_empty() {
        return "no nodes available to schedule pods".to_owned();
    }
    let total = nodes.len();
    let mut filters: BTreeMap<String, usize> = BTreeMap::new();
    let mut preemption: BTreeMap<String, usize> = BTreeMap::new();
    let mut nominated = false;
    for node in nodes {
        let (filter_words, preemption_words) = match node {
            NodeOutcome::Rejected(reason) => {
                (vec![(*reason).to_owned()], vec![NOT_HELPFUL.to_owned()])
            }
            NodeOutcome::Fit(fit) => {
                nominated |= matches!(fit.preemption, Preemption::Victims(_));
                (
                    first_filter_reasons(&fit.reasons),
                    fit.preemption.upstream_reasons(),
                )
            }
        };
        for word in filter_words {
            *filters.entry(word).or_default() += 1;
        }
        for word in preemption_words {
            *preemption.entry(word).or_default() += 1;
        }
    }
    let mut message = available(total, &filters);
    if nominated {
        return message;
    }
    message.push_str(" preemption: ");
    if never_preempts {
        message.push_str(NEVER);
    } else {
        message.push_str(&available(total, &preemption));
    }
    message
}

/// `0/N nodes are available: 1 Insufficient cpu, 13 node(s) ....`
fn available(total: usize, histogram: &BTreeMap<String, usize>) -> String {
    let mut counted: Vec<String> = histogram
        .iter()
        .map(|(reason, count)| format!("{count} {reason}"))
        .collect();
    counted.sort();
    let mut text = format!("0/{total} nodes are available:");
    if !counted.is_empty() {
        text.push(' ');
        text.push_str(&counted.join(", "));
        text.push('.');
    }
    text
}
