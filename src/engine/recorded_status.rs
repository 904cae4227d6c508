//! A DaemonSet's recorded status against what its nodes and pods give: the
//! status a dump carries (or a rehearsal recorded when it loaded the dump)
//! and the counts the engine computes, whether they differ, and the reasons
//! found in the nodes and pods. One decision for `explain -f`, `audit -f`,
//! `sim -f` (which records it in the [`ANNOTATION`]), `status` and the console.
//!
//! Pure: plain data in, plain data out; `now` is an argument. Says nothing
//! about what to do; the embedded controller acts on the nodes and pods.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use k8s_openapi::api::apps::v1::DaemonSetStatus;
use serde::{Deserialize, Serialize};

use super::coverage::{NodeCoverage, Totals, fleet_coverage, is_deleted_terminal};
use super::ownership::is_controlled_by;
use super::revision::RevisionIndex;
use crate::model::{ControllerRevision, DaemonSet, Node, Pod};

/// The annotation `rollcall sim -f` puts on each loaded DaemonSet: a JSON
/// [`LoadRecord`] (the dump's counts, the generation they describe, the
/// reasons found at load). Anyone may write annotations, so a malformed value
/// is ignored.
pub const ANNOTATION: &str = "rollcall.dev/dump-status";

/// How many node names a reason lists (the count says how many there are).
const NAMED: usize = 5;

/// The five `DaemonSetStatus` counts a dump and a rehearsal are compared on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCounts {
    /// `desiredNumberScheduled`.
    pub desired: i32,
    /// `currentNumberScheduled`.
    pub current: i32,
    /// `updatedNumberScheduled`.
    pub updated: i32,
    /// `numberReady`.
    pub ready: i32,
    /// `numberAvailable`.
    pub available: i32,
}

impl StatusCounts {
    /// The counts of a stored status (absent optional counts are 0).
    pub fn of_status(status: &DaemonSetStatus) -> StatusCounts {
        StatusCounts {
            desired: status.desired_number_scheduled,
            current: status.current_number_scheduled,
            updated: status.updated_number_scheduled.unwrap_or_default(),
            ready: status.number_ready,
            available: status.number_available.unwrap_or_default(),
        }
    }

    /// The counts of computed totals.
    pub fn of_totals(totals: &Totals) -> StatusCounts {
        StatusCounts {
            desired: totals.desired,
            current: totals.current,
            updated: totals.updated,
            ready: totals.ready,
            available: totals.available,
        }
    }

    fn named(self) -> [(&'static str, i32); 5] {
        [
            ("desired", self.desired),
            ("current", self.current),
            ("updated", self.updated),
            ("ready", self.ready),
            ("available", self.available),
        ]
    }
}

/// What kind of reason the nodes and pods give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasonCode {
    /// Nodes that should run the pod have none (the controller creates them).
    MissingPod,
    /// Owned pods are bound to nodes the dump does not hold (not counted).
    PodOnAbsentNode,
    /// The pod that counts on a node is not Ready.
    NotReady,
    /// Ready, but not for `minReadySeconds` yet.
    NotAvailable,
    /// Nodes run an older revision: the dump was taken mid-rollout.
    OldRevision,
    /// Pods on nodes that should not run one (the controller deletes them).
    Misscheduled,
    /// `status.observedGeneration` is older than `metadata.generation`.
    StaleStatus,
    /// The counts differ and no node or pod explains it.
    Unexplained,
    /// Nothing at load explained a difference: the rehearsal changed since.
    ChangedSinceLoad,
}

/// One reason, with the nodes it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DifferenceReason {
    /// The kind of reason.
    pub code: ReasonCode,
    /// How many nodes (or pods) it concerns; 0 when it is not about nodes.
    #[serde(default)]
    pub count: usize,
    /// The first few of those nodes, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// In words, naming the nodes.
    pub message: String,
}

/// The recorded counts, what the nodes and pods give, and every reason found
/// (also when the counts agree: a rehearsal may still change them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusCheck {
    /// The dump's own status.
    pub recorded: StatusCounts,
    /// As the engine counts the dump's nodes and pods.
    pub actual: StatusCounts,
    /// What the nodes and pods show that a steady DaemonSet would not.
    pub reasons: Vec<DifferenceReason>,
}

/// Who has the counts a recorded status is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The dump's own nodes and pods.
    Dump,
    /// The rehearsal (the embedded cluster loaded from the dump), live.
    Rehearsal,
}

/// A recorded status that differs, for people (`message`) and scripts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDifference {
    /// The counts the dump recorded.
    pub recorded: StatusCounts,
    /// The counts of the dump's nodes and pods, or of the rehearsal.
    pub actual: StatusCounts,
    /// Why they differ (or may).
    pub reasons: Vec<DifferenceReason>,
    /// "the dump's status records desired 2, ready 2; its nodes and pods give
    /// desired 2, ready 1: …": desired, ready and the other counts that say
    /// something more (see `shown_counts`), then why.
    pub message: String,
}

/// What a rehearsal keeps of a dump's status on its DaemonSet ([`ANNOTATION`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadRecord {
    /// The dump's counts.
    pub recorded: StatusCounts,
    /// `metadata.generation` at load: once the template changes, the rollout
    /// is the rehearsal's own and the dump's counts no longer apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// The reasons found at load.
    #[serde(default)]
    pub reasons: Vec<DifferenceReason>,
}

/// Compares `ds`'s own status with what `nodes` and `pods` give (any pods:
/// only those `ds` controls count). `None` when `ds` carries no status, or
/// when there are no pods at all: an export without pods (`kubectl get
/// nodes,ds`) says nothing about them, so there is nothing to compare.
pub fn check(
    ds: &DaemonSet,
    nodes: &[Node],
    pods: &[Pod],
    revisions: &[ControllerRevision],
    now: jiff::Timestamp,
) -> Option<StatusCheck> {
    let status = ds.status.as_ref()?;
    if pods.is_empty() {
        return None;
    }
    let index = RevisionIndex::new(ds, revisions);
    // fleet_coverage places only the pods `ds` controls (by UID).
    let rows = fleet_coverage(ds, nodes, pods, &index, now);
    let recorded = StatusCounts::of_status(status);
    let actual = StatusCounts::of_totals(&Totals::from_rows(&rows));
    let mut reasons = node_reasons(&rows);
    let present: BTreeSet<&str> = nodes.iter().map(Node::name).collect();
    let absent: BTreeSet<&str> = pods
        .iter()
        .filter(|p| is_controlled_by(p, ds) && !is_deleted_terminal(p))
        .filter_map(Pod::node_name)
        .filter(|n| !present.contains(n))
        .collect();
    if !absent.is_empty() {
        reasons.push(reason(
            ReasonCode::PodOnAbsentNode,
            absent.into_iter().map(str::to_owned).collect(),
        ));
    }
    if let (Some(observed), Some(generation)) = (status.observed_generation, ds.metadata.generation)
        && observed < generation
    {
        reasons.push(DifferenceReason {
            code: ReasonCode::StaleStatus,
            count: 0,
            nodes: Vec::new(),
            message: format!(
                "the status predates the DaemonSet's last change (observedGeneration {observed} < generation {generation})"
            ),
        });
    }
    if recorded != actual && reasons.is_empty() {
        reasons.push(DifferenceReason {
            code: ReasonCode::Unexplained,
            count: 0,
            nodes: Vec::new(),
            message: "no node or pod of the dump explains it (the status was written at another moment than the nodes and pods were listed)".to_owned(),
        });
    }
    Some(StatusCheck {
        recorded,
        actual,
        reasons,
    })
}

/// The per-node reasons, in the order of the status counts.
fn node_reasons(rows: &[NodeCoverage]) -> Vec<DifferenceReason> {
    let mut missing = Vec::new();
    let mut not_ready = Vec::new();
    let mut not_available = Vec::new();
    let mut old = Vec::new();
    let mut misscheduled = Vec::new();
    for row in rows {
        let node = row.node.to_string();
        match (row.verdict.should_run, row.primary()) {
            (true, None) => missing.push(node),
            (true, Some(pod)) => {
                if !pod.updated {
                    old.push(node.clone());
                }
                if !pod.ready {
                    not_ready.push(node);
                } else if !pod.available {
                    not_available.push(node);
                }
            }
            (false, Some(_)) => misscheduled.push(node),
            (false, None) => {}
        }
    }
    [
        (ReasonCode::MissingPod, missing),
        (ReasonCode::OldRevision, old),
        (ReasonCode::NotReady, not_ready),
        (ReasonCode::NotAvailable, not_available),
        (ReasonCode::Misscheduled, misscheduled),
    ]
    .into_iter()
    .filter(|(_, nodes)| !nodes.is_empty())
    .map(|(code, nodes)| reason(code, nodes))
    .collect()
}

fn reason(code: ReasonCode, mut nodes: Vec<String>) -> DifferenceReason {
    let count = nodes.len();
    let s = if count == 1 { "" } else { "s" };
    let what = match code {
        ReasonCode::MissingPod => format!("no pod on {count} eligible node{s}"),
        ReasonCode::PodOnAbsentNode => {
            format!("pods on {count} node{s} absent from the dump")
        }
        ReasonCode::NotReady => format!("{count} pod{s} not Ready"),
        ReasonCode::NotAvailable => format!("{count} pod{s} not available yet"),
        ReasonCode::OldRevision => {
            format!("mid-rollout: {count} node{s} on an older revision")
        }
        ReasonCode::Misscheduled => {
            format!("pods on {count} ineligible node{s}")
        }
        ReasonCode::StaleStatus | ReasonCode::Unexplained | ReasonCode::ChangedSinceLoad => {
            String::new()
        }
    };
    let mut message = format!("{what} ({}", nodes[..count.min(NAMED)].join(", "));
    if count > NAMED {
        let _ = write!(message, ", {} more", count - NAMED);
    }
    message.push(')');
    nodes.truncate(NAMED);
    DifferenceReason {
        code,
        count,
        nodes,
        message,
    }
}

impl StatusCheck {
    /// Whether the recorded counts differ from the nodes' and pods'.
    pub fn differs(&self) -> bool {
        self.recorded != self.actual
    }

    /// The difference in words, when there is one.
    pub fn difference(&self) -> Option<StatusDifference> {
        self.differs()
            .then(|| difference(self.recorded, self.actual, &self.reasons, Side::Dump))
    }

    /// What a rehearsal records on the DaemonSet (`generation`: its
    /// `metadata.generation`), as the [`ANNOTATION`]'s value.
    pub fn load_record(&self, generation: Option<i64>) -> String {
        let record = LoadRecord {
            recorded: self.recorded,
            generation,
            reasons: self.reasons.clone(),
        };
        serde_json::to_string(&record).unwrap_or_default()
    }
}

/// The rehearsal's counts `live` against what the dump recorded on `ds` at
/// load ([`ANNOTATION`]): `None` when they agree, when `ds` has no (readable)
/// record, or once its template changed since the load.
pub fn rehearsal_difference(ds: &DaemonSet, live: StatusCounts) -> Option<StatusDifference> {
    let text = ds.metadata.annotations.as_ref()?.get(ANNOTATION)?;
    let record: LoadRecord = serde_json::from_str(text).ok()?;
    if record.generation.is_some() && record.generation != ds.metadata.generation {
        return None;
    }
    if record.recorded == live {
        return None;
    }
    let mut reasons = record.reasons;
    if reasons.is_empty() {
        reasons.push(DifferenceReason {
            code: ReasonCode::ChangedSinceLoad,
            count: 0,
            nodes: Vec::new(),
            message: "changed in the rehearsal since the dump was loaded".to_owned(),
        });
    }
    Some(difference(record.recorded, live, &reasons, Side::Rehearsal))
}

/// The warning `explain`, `audit` and `sim` print for a dump's DaemonSet
/// whose status differs: `DaemonSet NAMESPACE/NAME: <message>`.
pub fn warning_line(ds: &DaemonSet, difference: &StatusDifference) -> String {
    format!(
        "DaemonSet {}/{}: {}",
        ds.metadata.namespace.as_deref().unwrap_or_default(),
        ds.metadata.name.as_deref().unwrap_or_default(),
        difference.message
    )
}

/// Which of the five counts a message names (indexes into
/// [`StatusCounts::named`]): desired and ready always; current, updated and
/// available where they differ between the two sides, unless on both sides
/// they equal the count they follow (current desired, updated current,
/// available ready) and so say nothing new. Keeps the line short enough for
/// the console's state line.
fn shown_counts(recorded: StatusCounts, actual: StatusCounts) -> Vec<usize> {
    let follows = |c: StatusCounts, i: usize| match i {
        1 => c.current == c.desired,
        2 => c.updated == c.current,
        4 => c.available == c.ready,
        _ => false,
    };
    (0..5)
        .filter(|&i| {
            i == 0
                || i == 3
                || (recorded.named()[i].1 != actual.named()[i].1
                    && !(follows(recorded, i) && follows(actual, i)))
        })
        .collect()
}

fn difference(
    recorded: StatusCounts,
    actual: StatusCounts,
    reasons: &[DifferenceReason],
    side: Side,
) -> StatusDifference {
    let shown = shown_counts(recorded, actual);
    let words = |counts: StatusCounts| {
        let named = counts.named();
        shown
            .iter()
            .map(|&i| format!("{} {}", named[i].0, named[i].1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (said, has) = match side {
        Side::Dump => ("the dump's status records", "its nodes and pods give"),
        Side::Rehearsal => ("the dump recorded", "rehearsal has"),
    };
    let why: Vec<&str> = reasons.iter().map(|r| r.message.as_str()).collect();
    StatusDifference {
        recorded,
        actual,
        reasons: reasons.to_vec(),
        message: format!(
            "{said} {}; {has} {}: {}",
            words(recorded),
            words(actual),
            why.join("; ")
        ),
    }
}

#[cfg(test)]
mod tests;
