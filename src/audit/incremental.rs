//! A roster report kept up to date per changed node: what [`compare`] would
//! say about a node (identity, Ready, its owned pods, missing with the
//! engine's reason, unexpected, several pods) depends only on that node and
//! the pods bound to it, so a change to a few nodes is applied by taking out
//! their old entries and putting in new ones, at the cost of those nodes.
//! The DaemonSet itself, the roster and unbound pods are not followed here:
//! when they change the caller compares from scratch.
//!
//! Pure: reads the node and its pods through the caller's lookups.

use crate::audit::compare::InputError;
use crate::audit::explain::{explain_missing, lookalike_pods_by_node};
use crate::audit::owned::{OwnedPod, is_owned_by};
use crate::audit::report::{AuditReport, IdentityMismatch};
use crate::model::{DaemonSet, Node, Pod};

#[cfg(test)]
#[path = "incremental_tests.rs"]
mod tests;

/// Brings `report` (made by [`compare`](crate::audit::compare) for `ds`) up
/// to date for the nodes in `changed`: `node_of` gives a node of the cluster
/// by name, `pods_on` the pods bound to a node (any owner; only those `ds`
/// owns count). An owned pod without a UID is the same error as in a full
/// comparison; the report is then left half-updated and must be replaced.
pub fn update_nodes<'a, 'n>(
    report: &mut AuditReport,
    ds: &DaemonSet,
    changed: impl IntoIterator<Item = &'n str>,
    node_of: impl Fn(&str) -> Option<&'a Node>,
    pods_on: impl Fn(&str) -> Vec<&'a Pod>,
) -> Result<(), InputError> {
    for name in changed {
        let pods = pods_on(name);
        let mut owned = Vec::new();
        for pod in pods.iter().filter(|p| is_owned_by(p, ds)) {
            if pod.uid().is_empty() {
                return Err(InputError::OwnedPodWithoutUid(pod.name().to_owned()));
            }
            owned.push(OwnedPod::from_pod(pod));
        }
        owned.sort_by(|a, b| (&a.name, &a.uid).cmp(&(&b.name, &b.uid)));
        learn(report, ds, name, node_of(name), &pods, owned);
    }
    Ok(())
}

/// Sets what the report says about `name` to what `check_nodes` and
/// `check_pods` of a full comparison would say, touching only the entries
/// that change (the lists are sorted vectors: an entry that stays costs a
/// binary search, not a shift).
fn learn(
    report: &mut AuditReport,
    ds: &DaemonSet,
    name: &str,
    node: Option<&Node>,
    pods: &[&Pod],
    owned: Vec<OwnedPod>,
) {
    let on_roster = report.roster.uid(name).map(str::to_owned);
    let cluster_uid = node.map(Node::uid);
    let issues = &mut report.issues;
    let details = &mut report.details;
    let mismatch = on_roster.as_deref().filter(|uid| cluster_uid != Some(*uid));
    set_sorted(&mut issues.node_identity_mismatch, name, mismatch.is_some());
    match mismatch {
        Some(roster_uid) => details.node_identity_mismatch.insert(
            name.to_owned(),
            IdentityMismatch {
                roster_uid: roster_uid.to_owned(),
                cluster_uid: cluster_uid.map(str::to_owned),
            },
        ),
        None => details.node_identity_mismatch.remove(name),
    };
    let not_ready = node.filter(|n| on_roster.is_some() && !n.is_ready());
    set_sorted(&mut issues.node_not_ready, name, not_ready.is_some());
    match not_ready {
        Some(node) => details.node_not_ready.insert(
            name.to_owned(),
            crate::audit::compare::ready_condition_words(node),
        ),
        None => details.node_not_ready.remove(name),
    };
    let missing = on_roster.is_some() && !owned.iter().any(|p| p.ready);
    set_sorted(&mut issues.missing_ready, name, missing);
    if missing {
        let here: Vec<Pod> = pods.iter().map(|p| (*p).clone()).collect();
        let lookalikes = lookalike_pods_by_node(ds, &here);
        let lookalikes = lookalikes.get(name).map_or(&[][..], Vec::as_slice);
        let on_node: Vec<&OwnedPod> = owned.iter().collect();
        report.explanations.insert(
            name.to_owned(),
            explain_missing(node, ds, &on_node, lookalikes),
        );
    } else {
        report.explanations.remove(name);
    }
    let unexpected = on_roster.is_none() && !owned.is_empty();
    set_sorted(&mut issues.unexpected_owned_nodes, name, unexpected);
    set_sorted(&mut issues.multiple_pods, name, owned.len() > 1);
    let range = pods_range(&report.pods, name);
    for old in &report.pods[range.clone()] {
        let still_unready = owned.iter().any(|p| p.uid == old.uid && !p.ready);
        set_sorted(&mut issues.unready_pods, &old.uid, still_unready);
    }
    for pod in &owned {
        if !pod.ready {
            set_sorted(&mut issues.unready_pods, &pod.uid, true);
        }
        // A pod that was unbound is bound now.
        set_sorted(&mut issues.unassigned, &pod.uid, false);
    }
    if range.len() == owned.len() {
        for (slot, pod) in report.pods[range].iter_mut().zip(owned) {
            *slot = pod;
        }
    } else {
        report.pods.splice(range, owned);
    }
}

/// Where the pods bound to `name` are (the report's pods are sorted by node,
/// unassigned first, then name).
fn pods_range(pods: &[OwnedPod], name: &str) -> std::ops::Range<usize> {
    let start = pods.partition_point(|p| p.node.as_deref().is_none_or(|n| n < name));
    let len = pods[start..].partition_point(|p| p.node.as_deref() == Some(name));
    start..start + len
}

/// Puts `item` in the sorted `list` or takes it out.
fn set_sorted(list: &mut Vec<String>, item: &str, present: bool) {
    match (
        list.binary_search_by(|probe| probe.as_str().cmp(item)),
        present,
    ) {
        (Err(at), true) => list.insert(at, item.to_owned()),
        (Ok(at), false) => {
            list.remove(at);
        }
        _ => {}
    }
}
