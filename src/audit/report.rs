//! The audit's result as a value: the issue lists, the per-node explanations,
//! the facts behind them, and the JSON shape `rollcall audit -o json` prints.
//!
//! Owns the report types and the per-node accessors the console uses to mark
//! roster problems; builds nothing itself (see [`super::compare`]) and does no I/O.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{OwnedPod, Roster};
use crate::engine::eligibility::Reason;

/// Which DaemonSet was audited.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DaemonSetRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID; the identity owner references must carry.
    pub uid: String,
}

/// The issue lists, each sorted. Every entry is one problem.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Issues {
    /// Roster nodes that are absent from the cluster or whose UID differs.
    pub node_identity_mismatch: Vec<String>,
    /// Roster nodes that exist and whose Ready condition is not True.
    pub node_not_ready: Vec<String>,
    /// Roster nodes with no ready owned pod.
    pub missing_ready: Vec<String>,
    /// Nodes outside the roster that have owned pods.
    pub unexpected_owned_nodes: Vec<String>,
    /// Nodes with more than one owned pod.
    pub multiple_pods: Vec<String>,
    /// UIDs of owned pods bound to no node.
    pub unassigned: Vec<String>,
    /// UIDs of owned pods that are not ready.
    pub unready_pods: Vec<String>,
}

/// Why a roster node has no ready pod, in one of four broad causes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingCause {
    /// No node of that name exists in the cluster.
    NodeAbsent,
    /// The node exists but the DaemonSet's template excludes it (see `reasons`).
    NotEligible,
    /// The node is eligible but has no owned pod.
    NoPod,
    /// Owned pods are there but none is ready.
    PodNotReady,
}

/// The explanation for one `missing_ready` node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Explanation {
    /// The broad cause.
    pub cause: MissingCause,
    /// One line in words, e.g. `not eligible: taint dedicated=gpu:NoSchedule not tolerated`.
    pub message: String,
    /// The engine's reasons when the node is not eligible (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
    /// The newest Warning event about the cause (the DaemonSet's for `no_pod`,
    /// the pod's for `pod_not_ready`), when events were available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
}

/// What is wrong with a roster node's identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdentityMismatch {
    /// The UID the roster expects.
    pub roster_uid: String,
    /// The UID of the node of that name in the cluster; `None` when absent.
    pub cluster_uid: Option<String>,
}

/// Facts behind the node lists, for people (the table) and scripts alike.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Details {
    /// Per `node_identity_mismatch` entry: expected and found UID.
    pub node_identity_mismatch: BTreeMap<String, IdentityMismatch>,
    /// Per `node_not_ready` entry: the Ready condition in words.
    pub node_not_ready: BTreeMap<String, String>,
}

/// The whole audit result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditReport {
    /// The audited DaemonSet.
    pub daemonset: DaemonSetRef,
    /// The roster it was compared with.
    pub roster: Roster,
    /// Every owned pod, sorted by node (unassigned first), then name.
    pub pods: Vec<OwnedPod>,
    /// The issue lists.
    pub issues: Issues,
    /// One explanation per `missing_ready` node, keyed by node name.
    pub explanations: BTreeMap<String, Explanation>,
    /// Expected/found facts for the node-state lists.
    pub details: Details,
    /// From a dump (`-f`): how the DaemonSet's recorded status differs from
    /// what the dump's nodes and pods give, and why; absent when they agree.
    #[serde(rename = "recordedStatus", skip_serializing_if = "Option::is_none")]
    pub recorded_status: Option<crate::engine::recorded_status::StatusDifference>,
}

/// Roster problems of one node, for marking a grid row.
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent flags a grid cell shows side by side, not a state machine"
)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeAuditStatus {
    /// The node is on the roster.
    pub on_roster: bool,
    /// On the roster but absent or with another UID.
    pub mismatched: bool,
    /// On the roster, present, Ready not True.
    pub not_ready: bool,
    /// On the roster without a ready owned pod.
    pub missing: bool,
    /// Not on the roster but has owned pods.
    pub unexpected: bool,
    /// More than one owned pod.
    pub multiple: bool,
}

impl NodeAuditStatus {
    /// Whether any roster problem marks this node.
    pub fn has_problem(&self) -> bool {
        self.mismatched || self.not_ready || self.missing || self.unexpected || self.multiple
    }
}

impl Issues {
    /// The lists with their JSON names, in report order.
    pub fn lists(&self) -> [(&'static str, &[String]); 7] {
        [
            ("node_identity_mismatch", &self.node_identity_mismatch),
            ("node_not_ready", &self.node_not_ready),
            ("missing_ready", &self.missing_ready),
            ("unexpected_owned_nodes", &self.unexpected_owned_nodes),
            ("multiple_pods", &self.multiple_pods),
            ("unassigned", &self.unassigned),
            ("unready_pods", &self.unready_pods),
        ]
    }

    /// Total entries over all lists.
    pub fn count(&self) -> usize {
        self.lists().iter().map(|(_, list)| list.len()).sum()
    }
}

impl AuditReport {
    /// Total problems (entries over all issue lists); 0 means the audit passed.
    pub fn problem_count(&self) -> usize {
        self.issues.count()
    }

    /// Whether every issue list is empty.
    pub fn is_ok(&self) -> bool {
        self.problem_count() == 0
    }

    /// The process exit code the audit stands for: 0 all clear, 1 problems.
    pub fn exit_code(&self) -> u8 {
        u8::from(!self.is_ok())
    }

    /// Roster node with no ready owned pod.
    pub fn is_missing(&self, node: &str) -> bool {
        contains_sorted(&self.issues.missing_ready, node)
    }

    /// Node outside the roster with owned pods.
    pub fn is_unexpected(&self, node: &str) -> bool {
        contains_sorted(&self.issues.unexpected_owned_nodes, node)
    }

    /// Roster node absent or with another UID.
    pub fn is_mismatched(&self, node: &str) -> bool {
        contains_sorted(&self.issues.node_identity_mismatch, node)
    }

    /// Everything the audit says about one node, for a grid row.
    pub fn node_status(&self, node: &str) -> NodeAuditStatus {
        NodeAuditStatus {
            on_roster: self.roster.contains(node),
            mismatched: self.is_mismatched(node),
            not_ready: contains_sorted(&self.issues.node_not_ready, node),
            missing: self.is_missing(node),
            unexpected: self.is_unexpected(node),
            multiple: contains_sorted(&self.issues.multiple_pods, node),
        }
    }

    /// Owned pods bound to `node` (a binary search: `pods` is sorted by node,
    /// unassigned first).
    pub fn pods_on(&self, node: &str) -> &[OwnedPod] {
        let start = self
            .pods
            .partition_point(|p| p.node.as_deref().is_none_or(|n| n < node));
        let len = self.pods[start..].partition_point(|p| p.node.as_deref() == Some(node));
        &self.pods[start..start + len]
    }

    /// The owned pod with this UID (a linear scan; index [`Self::pods`] by UID
    /// when looking up many).
    pub fn pod(&self, uid: &str) -> Option<&OwnedPod> {
        self.pods.iter().find(|p| p.uid == uid)
    }

    /// The report as `-o json` prints it: `ok` and `problems` first, then the
    /// report's fields in declaration order.
    pub fn json(&self) -> JsonReport<'_> {
        JsonReport {
            ok: self.is_ok(),
            problems: self.problem_count(),
            report: self,
        }
    }

    /// [`Self::json`] as a `serde_json::Value` (keys sorted), for tests and embedding.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self.json()).unwrap_or(serde_json::Value::Null)
    }
}

/// The `-o json` document: [`AuditReport`] with `ok` and `problems` in front.
#[derive(Debug, Serialize)]
pub struct JsonReport<'a> {
    /// Every issue list is empty.
    pub ok: bool,
    /// Total entries over all issue lists.
    pub problems: usize,
    /// The report itself, flattened.
    #[serde(flatten)]
    pub report: &'a AuditReport,
}

fn contains_sorted(list: &[String], item: &str) -> bool {
    list.binary_search_by(|probe| probe.as_str().cmp(item))
        .is_ok()
}
