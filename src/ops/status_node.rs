//! One node of the status report, and the words every part of `status` uses
//! for nodes: the eligibility word and a capped list of names. The report
//! (`ops::status`), its summary (`ops::status_summary`) and the changes
//! `status --watch` prints (`ops::status_changes`) all build on this file;
//! it uses none of them.
//!
//! Pure: plain data and text.

use std::fmt::Write as _;

use serde::Serialize;

use crate::engine::coverage::PodCoverage;
use crate::engine::health::ProblemCode;

/// How many node names a list shows before "+N more".
pub const NAMES_SHOWN: usize = 5;

/// One node.
#[allow(
    clippy::struct_excessive_bools,
    reason = "a flat JSON record of independent yes/no facts"
)]
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// Node name.
    pub name: String,
    /// Whether a daemon pod should run here (`true` when unknown: the node
    /// could not be read and runs a daemon pod; see `eligibility`).
    pub eligible: bool,
    /// The one eligibility word: `yes`, `keep`, `no`, or `unknown` (the node
    /// could not be read).
    pub eligibility: crate::engine::vocabulary::Eligibility,
    /// Whether a running daemon pod may stay.
    pub should_continue_running: bool,
    /// Why not eligible, in words.
    pub reasons: Vec<String>,
    /// The daemon pod (the newest live one), if any.
    pub pod: Option<String>,
    /// Its revision number.
    pub revision: Option<i64>,
    /// Whether it runs the current revision.
    pub updated: bool,
    /// Whether it is Ready.
    pub ready: bool,
    /// Whether it is available (Ready for minReadySeconds).
    pub available: bool,
    /// Its problem, if any: the code, the reason and the scheduler's,
    /// kubelet's or container's words ([`NodeProblem`]).
    pub problem: Option<NodeProblem>,
    /// When the pod is failing: the reason and the container's own words
    /// (last termination, waiting message), from the one health classification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// How many live daemon pods the node has.
    pub pod_count: usize,
    /// Preflight for the revision the rollout moves to: `{fits, reasons[{code,
    /// message}], preempts[{namespace, name, priority}]}` (see
    /// [`crate::rows::fit`]); `null` when the node runs it already, is not
    /// eligible, or usage is unknown.
    pub fit: Option<crate::engine::fit::Fit>,
    /// Marked or selected as a canary.
    pub canary: bool,
}

/// A node's problem in `status -o json`: `{"code": "unschedulable",
/// "reason": "Unschedulable", "message": "0/14 nodes are available: …"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeProblem {
    /// The stable code ([`ProblemCode`]): `unschedulable`, `evicted`,
    /// `rejected`, `sandboxFailed`, `crashLoop`, `imagePull`, `oomKilled`,
    /// `containerError`, `failed`, or `waiting` (a reason that is not a
    /// failure).
    pub code: ProblemCode,
    /// The reason it was read from (what `problem` held before it was an
    /// object): `CrashLoopBackOff`, `Unschedulable`, `Evicted`, `OutOfcpu`,
    /// `FailedCreatePodSandBox`, …
    pub reason: String,
    /// The scheduler's, the kubelet's or the container's own words, when a
    /// failing pod has them (unsanitised API text, bounded).
    pub message: Option<String>,
}

impl NodeProblem {
    /// The problem of a daemon pod's row, if it has one.
    pub fn of(pod: &PodCoverage) -> Option<Self> {
        let reason = pod.problem.as_deref()?;
        Some(NodeProblem {
            code: ProblemCode::of(reason),
            reason: reason.to_owned(),
            message: pod.failure_detail.clone(),
        })
    }
}

/// The eligibility word for a node, the same as the console's (the one
/// vocabulary, [`crate::engine::vocabulary::Eligibility`]).
pub fn eligibility_word(node: &NodeStatus) -> &'static str {
    node.eligibility.word()
}

/// The first few names and "+N more".
pub fn names(nodes: &[String]) -> String {
    let mut text = nodes
        .iter()
        .take(NAMES_SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if nodes.len() > NAMES_SHOWN {
        let _ = write!(text, " +{} more", nodes.len() - NAMES_SHOWN);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_capped() {
        let many: Vec<String> = (1..=7).map(|i| format!("n{i}")).collect();
        assert_eq!(names(&many), "n1, n2, n3, n4, n5 +2 more");
    }
}
