//! The comparison itself: roster + DaemonSet + nodes + pods → [`AuditReport`].
//!
//! Pure and synchronous so the console can run it on its stores and the CLI on a
//! cluster read or a snapshot. Validates its input (duplicate node names or pod
//! UIDs mean the caller mixed two reads, and would make every list unreliable),
//! then builds each issue list independently so one problem never hides another.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::Roster;
use super::explain::{explain_missing, lookalike_pods_by_node};
use super::owned::{OwnedPod, is_owned_by};
use super::report::{AuditReport, DaemonSetRef, Details, Explanation, IdentityMismatch, Issues};
use crate::model::{DaemonSet, Node, Pod};

/// Input the audit refuses to compare.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InputError {
    /// The DaemonSet has no name or UID (ownership cannot be decided).
    #[error("the DaemonSet has no {0} in its metadata")]
    DaemonSetIncomplete(&'static str),
    /// Two nodes share a name.
    #[error("node {0:?} appears more than once in the input")]
    DuplicateNode(String),
    /// A node has no name.
    #[error("a node in the input has no name")]
    NodeWithoutName,
    /// Two pods share a UID.
    #[error("pod UID {0:?} appears more than once in the input")]
    DuplicatePodUid(String),
    /// An owned pod has no UID (it could not be reported).
    #[error("owned pod {0:?} has no UID")]
    OwnedPodWithoutUid(String),
}

/// Compares the DaemonSet's owned pods with the roster.
///
/// `nodes` are all nodes of the cluster; `pods` may include pods of other owners
/// (only those controlled by `ds` count, see [`is_owned_by`]).
pub fn compare<N: Borrow<Node>, P: Borrow<Pod>>(
    roster: &Roster,
    ds: &DaemonSet,
    nodes: &[N],
    pods: &[P],
) -> Result<AuditReport, InputError> {
    let daemonset = daemonset_ref(ds)?;
    let nodes_by_name = index_nodes(nodes)?;
    check_pod_uids(pods)?;
    let mut owned: Vec<OwnedPod> = Vec::new();
    for pod in pods
        .iter()
        .map(Borrow::borrow)
        .filter(|p| is_owned_by(p, ds))
    {
        if pod.uid().is_empty() {
            return Err(InputError::OwnedPodWithoutUid(pod.name().to_owned()));
        }
        owned.push(OwnedPod::from_pod(pod));
    }
    owned.sort_by(|a, b| (&a.node, &a.name, &a.uid).cmp(&(&b.node, &b.name, &b.uid)));

    let mut issues = Issues::default();
    let mut details = Details::default();
    check_nodes(roster, &nodes_by_name, &mut issues, &mut details);
    check_pods(roster, &owned, &mut issues);

    let explanations = explain_all(&issues.missing_ready, ds, &nodes_by_name, &owned, pods);
    Ok(AuditReport {
        daemonset,
        roster: roster.clone(),
        pods: owned,
        issues,
        explanations,
        details,
        recorded_status: None,
    })
}

/// One explanation per `missing_ready` node.
fn explain_all<P: Borrow<Pod>>(
    missing: &[String],
    ds: &DaemonSet,
    nodes: &HashMap<&str, &Node>,
    owned: &[OwnedPod],
    pods: &[P],
) -> BTreeMap<String, Explanation> {
    if missing.is_empty() {
        return BTreeMap::new();
    }
    let by_node = pods_by_node(owned);
    let lookalikes = lookalike_pods_by_node(ds, pods);
    missing
        .iter()
        .map(|name| {
            let node = nodes.get(name.as_str()).copied();
            let on_node = by_node.get(name.as_str()).map_or(&[][..], Vec::as_slice);
            let here = lookalikes.get(name.as_str()).map_or(&[][..], Vec::as_slice);
            (name.clone(), explain_missing(node, ds, on_node, here))
        })
        .collect()
}

fn daemonset_ref(ds: &DaemonSet) -> Result<DaemonSetRef, InputError> {
    let name = ds.metadata.name.clone().filter(|n| !n.is_empty());
    let uid = ds.metadata.uid.clone().filter(|u| !u.is_empty());
    Ok(DaemonSetRef {
        namespace: ds.metadata.namespace.clone().unwrap_or_default(),
        name: name.ok_or(InputError::DaemonSetIncomplete("name"))?,
        uid: uid.ok_or(InputError::DaemonSetIncomplete("uid"))?,
    })
}

fn index_nodes<N: Borrow<Node>>(nodes: &[N]) -> Result<HashMap<&str, &Node>, InputError> {
    let mut index = HashMap::with_capacity(nodes.len());
    for node in nodes.iter().map(Borrow::borrow) {
        if node.name().is_empty() {
            return Err(InputError::NodeWithoutName);
        }
        if index.insert(node.name(), node).is_some() {
            return Err(InputError::DuplicateNode(node.name().to_owned()));
        }
    }
    Ok(index)
}

fn check_pod_uids<P: Borrow<Pod>>(pods: &[P]) -> Result<(), InputError> {
    let mut seen = HashSet::with_capacity(pods.len());
    for uid in pods
        .iter()
        .map(|p| p.borrow().uid())
        .filter(|u| !u.is_empty())
    {
        if !seen.insert(uid) {
            return Err(InputError::DuplicatePodUid(uid.to_owned()));
        }
    }
    Ok(())
}

/// `node_identity_mismatch` and `node_not_ready` (roster iteration is sorted).
fn check_nodes(
    roster: &Roster,
    nodes: &HashMap<&str, &Node>,
    issues: &mut Issues,
    details: &mut Details,
) {
    for (name, roster_uid) in roster.iter() {
        let node = nodes.get(name);
        let cluster_uid = node.map(|n| n.uid());
        if cluster_uid != Some(roster_uid) {
            issues.node_identity_mismatch.push(name.to_owned());
            details.node_identity_mismatch.insert(
                name.to_owned(),
                IdentityMismatch {
                    roster_uid: roster_uid.to_owned(),
                    cluster_uid: cluster_uid.map(str::to_owned),
                },
            );
        }
        if let Some(node) = node
            && !node.is_ready()
        {
            issues.node_not_ready.push(name.to_owned());
            details
                .node_not_ready
                .insert(name.to_owned(), ready_condition_words(node));
        }
    }
}

/// The pod lists; `owned` is sorted by node then name.
fn check_pods(roster: &Roster, owned: &[OwnedPod], issues: &mut Issues) {
    let by_node = pods_by_node(owned);
    for (name, _) in roster.iter() {
        let ready = by_node
            .get(name)
            .is_some_and(|pods| pods.iter().any(|p| p.ready));
        if !ready {
            issues.missing_ready.push(name.to_owned());
        }
    }
    let mut unexpected = BTreeSet::new();
    for (node, pods) in &by_node {
        if !roster.contains(node) {
            unexpected.insert((*node).to_owned());
        }
        if pods.len() > 1 {
            issues.multiple_pods.push((*node).to_owned());
        }
    }
    issues.unexpected_owned_nodes = unexpected.into_iter().collect();
    issues.multiple_pods.sort();
    issues.unassigned = sorted_uids(owned.iter().filter(|p| p.node.is_none()));
    issues.unready_pods = sorted_uids(owned.iter().filter(|p| !p.ready));
}

fn pods_by_node(owned: &[OwnedPod]) -> BTreeMap<&str, Vec<&OwnedPod>> {
    let mut map: BTreeMap<&str, Vec<&OwnedPod>> = BTreeMap::new();
    for pod in owned {
        if let Some(node) = pod.node.as_deref() {
            map.entry(node).or_default().push(pod);
        }
    }
    map
}

fn sorted_uids<'a>(pods: impl Iterator<Item = &'a OwnedPod>) -> Vec<String> {
    let mut uids: Vec<String> = pods.map(|p| p.uid.clone()).collect();
    uids.sort();
    uids
}

/// `Ready=False (KubeletNotReady: ...)`, or `no Ready condition`.
pub(crate) fn ready_condition_words(node: &Node) -> String {
    let Some(c) = node.condition("Ready") else {
        return "no Ready condition reported".to_owned();
    };
    let detail = match (c.reason.as_deref(), c.message.as_deref()) {
        (Some(r), Some(m)) => format!(" ({r}: {m})"),
        (Some(r), None) => format!(" ({r})"),
        (None, Some(m)) => format!(" ({m})"),
        (None, None) => String::new(),
    };
    format!("Ready={}{detail}", c.status)
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
