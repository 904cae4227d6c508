//! Why a roster node has no ready pod, in words, using the engine's eligibility
//! oracle for "the DaemonSet does not want this node".
//!
//! Owns the explanation text only; decides no issue list and does no I/O.

use std::collections::HashMap;

use super::owned::{OwnedPod, is_owned_by};
use super::report::{Explanation, MissingCause};
use crate::engine::eligibility::node_should_run_daemon_pod;
use crate::engine::selector::label_selector_matches;
use crate::model::{DaemonSet, Node, Pod};

/// Explains one `missing_ready` node. `node` is `None` when no node of that name
/// exists; `owned` are the DaemonSet's pods on it; `lookalikes` are other pods
/// on it that match the DaemonSet's selector without being owned by it.
pub fn explain_missing(
    node: Option<&Node>,
    ds: &DaemonSet,
    owned: &[&OwnedPod],
    lookalikes: &[&Pod],
) -> Explanation {
    let Some(node) = node else {
        return Explanation {
            cause: MissingCause::NodeAbsent,
            message: "no pod because no node of this name is in the cluster".to_owned(),
            reasons: Vec::new(),
            event: None,
        };
    };
    let verdict = node_should_run_daemon_pod(node, ds);
    let not_eligible = (!verdict.should_run).then(|| {
        let reasons: Vec<&str> = verdict.reasons.iter().map(|r| r.message.as_str()).collect();
        if reasons.is_empty() {
            "not eligible".to_owned()
        } else {
            format!("not eligible because {}", reasons.join("; "))
        }
    });
    if !owned.is_empty() {
        let pods = owned
            .iter()
            .map(|p| {
                let why = p.not_ready_reason.as_deref().unwrap_or("not ready");
                format!("pod {} not ready because {why}", p.name)
            })
            .collect::<Vec<_>>()
            .join("; ");
        let message = match &not_eligible {
            Some(excluded) => format!("{pods} (and the node is {excluded})"),
            None => pods,
        };
        return Explanation {
            cause: MissingCause::PodNotReady,
            message,
            reasons: verdict.reasons,
            event: None,
        };
    }
    if let Some(message) = not_eligible {
        return Explanation {
            cause: MissingCause::NotEligible,
            message,
            reasons: verdict.reasons,
            event: None,
        };
    }
    Explanation {
        cause: MissingCause::NoPod,
        message: no_pod_message(ds, lookalikes),
        reasons: Vec::new(),
        event: None,
    }
}

/// Pods in the DaemonSet's namespace whose labels match its selector but that
/// it does not own, by node: the usual sign of an orphaned or foreign pod
/// standing where the daemon pod should be. One pass over the pods.
pub fn lookalike_pods_by_node<'a, P: std::borrow::Borrow<Pod>>(
    ds: &DaemonSet,
    pods: &'a [P],
) -> HashMap<&'a str, Vec<&'a Pod>> {
    let mut by_node: HashMap<&str, Vec<&Pod>> = HashMap::new();
    let Some(selector) = ds.spec.as_ref().map(|s| &s.selector) else {
        return by_node;
    };
    let selects_something = selector
        .match_labels
        .as_ref()
        .is_some_and(|m| !m.is_empty())
        || selector
            .match_expressions
            .as_ref()
            .is_some_and(|e| !e.is_empty());
    if !selects_something {
        // An empty selector matches every pod: naming them all would be noise.
        return by_node;
    }
    let candidates = pods
        .iter()
        .map(std::borrow::Borrow::borrow)
        .filter(|p| p.metadata.namespace.as_deref() == ds.metadata.namespace.as_deref())
        .filter(|p| !is_owned_by(p, ds))
        .filter(|p| label_selector_matches(selector, Some(&p.labels)));
    for pod in candidates {
        if let Some(node) = pod.target_node() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    by_node
}

fn no_pod_message(ds: &DaemonSet, lookalikes: &[&Pod]) -> String {
    if lookalikes.is_empty() {
        return "no pod because the DaemonSet controller has not created one although the node is eligible (look for FailedCreate events on the DaemonSet)".to_owned();
    }
    let described: Vec<String> = lookalikes
        .iter()
        .map(|p| format!("{} {}", p.name(), owner_words(p, ds)))
        .collect();
    format!(
        "no pod because the pod here, {}, matches the DaemonSet's selector but is not owned by it",
        described.join(", ")
    )
}

/// Who controls a pod that is not ours, in words.
fn owner_words(pod: &Pod, ds: &DaemonSet) -> String {
    let controller = pod
        .metadata
        .owner_references
        .iter()
        .find(|r| r.controller == Some(true));
    match controller {
        None => "(no controller)".to_owned(),
        Some(r)
            if r.kind == "DaemonSet" && Some(r.name.as_str()) == ds.metadata.name.as_deref() =>
        {
            format!(
                "(controlled by DaemonSet {} with UID {}, not this one's; left by an earlier DaemonSet of the same name?)",
                r.name, r.uid
            )
        }
        Some(r) => format!("(controlled by {} {})", r.kind, r.name),
    }
}
