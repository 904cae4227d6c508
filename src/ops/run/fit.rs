//! The fit rule of every acting step — `advance`, a run's batch (auto,
//! rollback), the console's `a`, `n`, `A`, `r`: a node whose replacement
//! will not fit is refused unless the operator says `--despite-fit` (the
//! console: `y` in its own dialog); a replacement that fits only by
//! preempting workloads names them before the delete; an unknown fit (no
//! usage: the pods of all namespaces cannot be listed) refuses nothing and
//! is said once.
//!
//! The per-node answer is the rows' preflight fit
//! (`crate::rows::fit::node_fit`, the same `fit` `status` gives); this
//! module only judges a step's nodes by it. Pure.

use crate::engine::fit::{Fit, FitReason, Victim};
use crate::ops::snapshot::{Rows, Snapshot};
use crate::ops::write::WriteRequest;
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::cluster::usage::NodeUsage;
use crate::engine::coverage::NodeCoverage;
use crate::model::Node;
use crate::rows::fit::{FitTarget, node_fit, replacement_fit};

/// What one node of a step answers.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeFit {
    /// Usage is unknown: nothing can be said.
    Unknown,
    /// The replacement fits (as is when `preempts` is empty).
    Fits {
        /// The pods preemption would remove to make room.
        preempts: Vec<Victim>,
    },
    /// Nothing makes room.
    WontFit(Vec<FitReason>),
}

impl NodeFit {
    /// The answer for a node from its preflight fit: `usage_known` false is
    /// unknown; no fit asked (the node runs the target revision already, or
    /// gets no pod) refuses nothing.
    pub fn of(usage_known: bool, fit: Option<&Fit>) -> Self {
        match fit {
            _ if !usage_known => Self::Unknown,
            Some(fit) if !fit.fits => Self::WontFit(fit.reasons.clone()),
            Some(fit) => Self::Fits {
                preempts: fit.preempts.clone(),
            },
            None => Self::Fits {
                preempts: Vec::new(),
            },
        }
    }
}

/// A step's nodes judged together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepFit {
    /// Nodes whose replacement will not fit, with why, in step order.
    pub wont_fit: Vec<(String, Vec<FitReason>)>,
    /// Nodes whose replacement preempts workloads, with the victims.
    pub preempts: Vec<(String, Vec<Victim>)>,
    /// Some node's fit is unknown.
    pub unknown: bool,
}

/// The step of `nodes` judged on `snapshot` and its `rows`: each node's
/// preflight fit of the revision the rollout moves to (the rows' rule,
/// computed for these nodes only).
pub fn step_fit(snapshot: &Snapshot<'_>, rows: &Rows<'_>, nodes: &[&str]) -> StepFit {
    let target = FitTarget::of(&snapshot.ds, snapshot.pods());
    judge_nodes(snapshot, rows, nodes, target.as_ref(), node_fit)
}

/// A rollback's nodes judged before its template patch: on each, the fit of
/// `template` (the revision rolled back to) once the node's daemon pods are
/// gone — so a rollback that cannot place its pods is refused before
/// anything changes, as an advance is.
pub fn rollback_fit(
    snapshot: &Snapshot<'_>,
    rows: &Rows<'_>,
    nodes: &[&str],
    template: &serde_json::Value,
) -> StepFit {
    let mut ds = snapshot.ds.clone();
    let parsed = serde_json::from_value::<PodTemplateSpec>(template.clone()).ok();
    let target = match (ds.spec.as_mut(), parsed) {
        (Some(spec), Some(template)) => {
            spec.template = template;
            FitTarget::of(&ds, snapshot.pods())
        }
        _ => None,
    };
    judge_nodes(snapshot, rows, nodes, target.as_ref(), replacement_fit)
}

/// Each of `nodes` judged by `fit_of` against `target` (unknown for all
/// when usage is).
fn judge_nodes(
    snapshot: &Snapshot<'_>,
    rows: &Rows<'_>,
    nodes: &[&str],
    target: Option<&FitTarget>,
    fit_of: impl Fn(&FitTarget, &Node, &NodeCoverage, Option<Option<&NodeUsage>>) -> Option<Fit>,
) -> StepFit {
    let known = snapshot.usage_known();
    if !known {
        return StepFit::judge(nodes.iter().map(|node| (*node, NodeFit::Unknown)));
    }
    let lookup = snapshot.node_lookup();
    StepFit::judge(nodes.iter().map(|name| {
        let fit = target.and_then(|target| {
            let node = lookup.get(name)?;
            let row = rows.get(name)?;
            fit_of(target, node, row, snapshot.usage_on(name))
        });
        (*name, NodeFit::of(known, fit.as_ref()))
    }))
}

/// What is said once when fit cannot be checked.
pub const UNKNOWN_FIT: &str = "fit not checked: the pods of all namespaces cannot be listed, \
     so the nodes' free resources are unknown";

impl StepFit {
    /// Judges `answers`, one per node of the step.
    pub fn judge<S: Into<String>>(answers: impl IntoIterator<Item = (S, NodeFit)>) -> Self {
        let mut step = Self::default();
        for (node, answer) in answers {
            match answer {
                NodeFit::Unknown => step.unknown = true,
                NodeFit::Fits { preempts } if preempts.is_empty() => {}
                NodeFit::Fits { preempts } => step.preempts.push((node.into(), preempts)),
                NodeFit::WontFit(reasons) => step.wont_fit.push((node.into(), reasons)),
            }
        }
        step
    }

    /// Whether some node will not fit.
    pub fn refuses(&self) -> bool {
        !self.wont_fit.is_empty()
    }

    /// `general-03: won't fit: Insufficient cpu: needs 900m, 120m free of 4`,
    /// one clause per node (`None` when every node fits).
    pub fn refusal(&self) -> Option<String> {
        let clauses: Vec<String> = self
            .wont_fit
            .iter()
            .map(|(node, reasons)| format!("{node}: {}", wont_fit_text(reasons)))
            .collect();
        (!clauses.is_empty()).then(|| clauses.join("; "))
    }

    /// Per node that preempts, the victims in words.
    pub fn preempt_notes(&self) -> Vec<(String, String)> {
        self.preempts
            .iter()
            .map(|(node, victims)| (node.clone(), preempts_text(victims)))
            .collect()
    }

    /// What fit says of `node`'s step in the plan: `won't fit: …`,
    /// `preempts …`, or `None` (it fits as is, or nothing is known).
    pub fn step_note(&self, node: &str) -> Option<String> {
        if let Some((_, reasons)) = self.wont_fit.iter().find(|(n, _)| n == node) {
            return Some(wont_fit_text(reasons));
        }
        self.preempts_on(node)
    }

    /// The victims on `node` in words (`None`: it preempts nothing).
    pub fn preempts_on(&self, node: &str) -> Option<String> {
        self.preempts
            .iter()
            .find(|(n, _)| n == node)
            .map(|(_, victims)| preempts_text(victims))
    }
}

/// Adds to each delete's journal record whom its replacement preempts
/// (`notes`: per node, from [`StepFit::preempt_notes`]).
pub fn note_preemptions(requests: &mut [WriteRequest], notes: &[(String, String)]) {
    for request in requests {
        let node = request.record.node.as_deref();
        let Some((_, text)) = notes.iter().find(|(n, _)| Some(n.as_str()) == node) else {
            continue;
        };
        let joined = match request.record.note.take() {
            Some(earlier) => format!("{earlier}; {text}"),
            None => text.clone(),
        };
        request.record.note = Some(joined);
    }
}

/// The preemption words of a delete's journal note, if any.
pub fn preemption_of(request: &WriteRequest) -> Option<&str> {
    request
        .record
        .note
        .as_deref()?
        .split("; ")
        .find(|part| part.starts_with("preempts "))
}

/// `won't fit: REASON; REASON` (the engine's reasons: upstream's words and
/// the numbers).
pub fn wont_fit_text(reasons: &[FitReason]) -> String {
    let reasons: Vec<String> = reasons
        .iter()
        .map(|r| crate::sanitize::sanitize(&r.message).into_owned())
        .collect();
    format!("won't fit: {}", reasons.join("; "))
}

/// `preempts batch/job-1 (priority -10), batch/job-2 (priority -10)`.
pub fn preempts_text(victims: &[Victim]) -> String {
    let named: Vec<String> = victims
        .iter()
        .map(|v| {
            format!(
                "{}/{} (priority {})",
                crate::sanitize::sanitize(&v.namespace),
                crate::sanitize::sanitize(&v.name),
                v.priority
            )
        })
        .collect();
    format!("preempts {}", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fit::ReasonCode;

    fn short_of_cpu() -> FitReason {
        FitReason {
            code: ReasonCode::InsufficientCpu,
            message: "Insufficient cpu: needs 900m, 120m free of 4".into(),
            shortfall: None,
        }
    }

    fn job(name: &str) -> Victim {
        Victim {
            namespace: "batch".into(),
            name: name.into(),
            priority: -10,
        }
    }

    #[test]
    fn a_step_is_judged_node_by_node() {
        let step = StepFit::judge([
            ("n1", NodeFit::Fits { preempts: vec![] }),
            ("n2", NodeFit::WontFit(vec![short_of_cpu()])),
            (
                "n3",
                NodeFit::Fits {
                    preempts: vec![job("a"), job("b")],
                },
            ),
        ]);
        assert!(step.refuses());
        assert!(!step.unknown);
        assert_eq!(
            step.refusal().as_deref(),
            Some("n2: won't fit: Insufficient cpu: needs 900m, 120m free of 4")
        );
        assert_eq!(
            step.preempts_on("n3").as_deref(),
            Some("preempts batch/a (priority -10), batch/b (priority -10)")
        );
        assert_eq!(step.preempts_on("n1"), None);
    }

    #[test]
    fn unknown_fit_refuses_nothing() {
        let step = StepFit::judge([("n1", NodeFit::Unknown)]);
        assert!(!step.refuses());
        assert!(step.unknown);
        assert_eq!(step.refusal(), None);
    }

    #[test]
    fn the_answer_of_a_node_table() {
        let wont = Fit {
            fits: false,
            reasons: vec![short_of_cpu()],
            ..Fit::default()
        };
        let preempting = Fit {
            fits: true,
            reasons: vec![short_of_cpu()],
            preempts: vec![job("a")],
            ..Fit::default()
        };
        let cases = [
            ("usage unknown", false, Some(&wont), NodeFit::Unknown),
            (
                "nothing asked",
                true,
                None,
                NodeFit::Fits { preempts: vec![] },
            ),
            (
                "will not fit",
                true,
                Some(&wont),
                NodeFit::WontFit(vec![short_of_cpu()]),
            ),
            (
                "fits by preempting",
                true,
                Some(&preempting),
                NodeFit::Fits {
                    preempts: vec![job("a")],
                },
            ),
        ];
        for (name, known, fit, want) in cases {
            assert_eq!(NodeFit::of(known, fit), want, "{name}");
        }
    }

    #[test]
    fn hostile_names_are_sanitised() {
        let text = preempts_text(&[Victim {
            namespace: "ns\u{1b}[2J".into(),
            name: "p".into(),
            priority: 0,
        }]);
        assert!(!text.contains('\u{1b}'), "{text}");
    }
}
