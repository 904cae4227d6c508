//! The per-(node, DaemonSet) eligibility oracle: upstream `NodeShouldRunDaemonPod`
//! with a structured reason for every "no".
//!
//! Two answers, as the controller gives them: `should_run` (may a new daemon pod
//! be placed here) and `should_continue_running` (may an existing one stay).
//! Pure; reads only the node and the DaemonSet's pod template.

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::PodSpec;
use serde::Serialize;

use super::affinity::{node_selector_reasons, required_affinity_reasons};
use super::taints::{NO_EXECUTE, daemon_pod_tolerations, format_taint, untolerated_taints};
use crate::model::{Node, Taint};

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;

/// What the DaemonSet controller would decide for one node.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeVerdict {
    /// A daemon pod should be created here if none runs.
    pub should_run: bool,
    /// A daemon pod already here may keep running (false: the controller deletes it).
    pub should_continue_running: bool,
    /// Why not, one entry per failed rule (empty when `should_run`).
    pub reasons: Vec<Reason>,
}

/// One reason a node is excluded.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reason {
    /// Which rule failed.
    pub code: ReasonCode,
    /// The rule in words, naming the exact taint, label, term or expression.
    pub message: String,
    /// Whether this reason also stops a running pod (placement rules and
    /// `NoExecute` taints do; `NoSchedule` taints do not).
    pub evicts: bool,
    /// The untolerated taint, for `UntoleratedTaint`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taint: Option<Taint>,
    /// The label key involved, for nodeSelector reasons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The 1-based required-affinity term, for affinity reasons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term: Option<usize>,
}

/// The rule behind a [`Reason`], serialized as the variant name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ReasonCode {
    /// The template's `spec.nodeName` names another node.
    NodeNameMismatch,
    /// A `nodeSelector` label is missing or has another value.
    NodeSelectorMismatch,
    /// No required node-affinity term matches the node.
    NodeAffinityMismatch,
    /// A required node-affinity term is invalid (upstream treats it as no match).
    InvalidNodeAffinity,
    /// A `NoSchedule` or `NoExecute` taint that no toleration (template or default) tolerates.
    UntoleratedTaint,
    /// The node could not be read (the user may not list nodes): no rule was
    /// checked, the answer is unknown. See [`NodeVerdict::unknown`].
    NodeUnreadable,
}

impl Reason {
    /// A reason with only code and message set.
    pub fn new(code: ReasonCode, message: impl Into<String>, evicts: bool) -> Self {
        Self {
            code,
            message: message.into(),
            evicts,
            taint: None,
            key: None,
            term: None,
        }
    }
}

impl NodeVerdict {
    /// The verdict for a node with nothing against it.
    pub fn eligible() -> Self {
        Self {
            should_run: true,
            should_continue_running: true,
            reasons: Vec::new(),
        }
    }

    /// The verdict for a node that could not be read, only known from a daemon
    /// pod bound to it: no rule can be checked. It counts as "should run, may
    /// keep running" so that the pod there is neither misscheduled nor the
    /// node missing one (the controller put it there), while the one reason,
    /// `NodeUnreadable` with `why`, makes every surface say "unknown".
    pub fn unknown(why: &str) -> Self {
        Self {
            should_run: true,
            should_continue_running: true,
            reasons: vec![Reason::new(ReasonCode::NodeUnreadable, why, false)],
        }
    }

    /// Whether the node could not be read (see [`NodeVerdict::unknown`]).
    pub fn is_unknown(&self) -> bool {
        self.reasons
            .iter()
            .any(|r| r.code == ReasonCode::NodeUnreadable)
    }

    /// The first reason's message, for a one-line summary.
    pub fn headline(&self) -> Option<&str> {
        self.reasons.first().map(|r| r.message.as_str())
    }
}

/// Whether a daemon pod of `ds` should run on `node`, and whether one already
/// there should continue running (upstream `NodeShouldRunDaemonPod`):
/// - template `nodeName` set to another node, an unmatched `nodeSelector` or
///   required node affinity: neither;
/// - an untolerated `NoExecute` taint: neither;
/// - only untolerated `NoSchedule` taints: no new pod, the running one stays;
/// - `PreferNoSchedule` never blocks.
///
/// Unlike upstream, which stops at the first failed rule, every failed rule is
/// reported; the two answers are the same.
pub fn node_should_run_daemon_pod(node: &Node, ds: &DaemonSet) -> NodeVerdict {
    let empty = PodSpec::default();
    let spec = ds
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .unwrap_or(&empty);
    let mut reasons = placement_reasons(node, spec);
    let fits_placement = reasons.is_empty();
    let tolerations = daemon_pod_tolerations(spec);
    let untolerated = untolerated_taints(&node.spec.taints, &tolerations);
    let evicting_taint = untolerated.iter().any(|t| t.effect == NO_EXECUTE);
    reasons.extend(untolerated.into_iter().map(taint_reason));
    NodeVerdict {
        should_run: reasons.is_empty(),
        should_continue_running: fits_placement && !evicting_taint,
        reasons,
    }
}

/// The rules that decide both answers: nodeName, nodeSelector, required affinity.
fn placement_reasons(node: &Node, spec: &PodSpec) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if let Some(pinned) = spec.node_name.as_deref().filter(|n| !n.is_empty())
        && pinned != node.name()
    {
        reasons.push(Reason::new(
            ReasonCode::NodeNameMismatch,
            format!("template nodeName pins {pinned}"),
            true,
        ));
    }
    reasons.extend(node_selector_reasons(
        spec.node_selector.as_ref(),
        Some(&node.labels),
    ));
    reasons.extend(required_affinity_reasons(spec, node));
    reasons
}

fn taint_reason(taint: &Taint) -> Reason {
    Reason {
        taint: Some(taint.clone()),
        ..Reason::new(
            ReasonCode::UntoleratedTaint,
            format!("taint {} not tolerated", format_taint(taint)),
            taint.effect == NO_EXECUTE,
        )
    }
}
