//! `nodeSelector` and required node affinity against a node's labels and name,
//! as upstream `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)` decides,
//! with a reason naming the failed label, term or expression.
//!
//! Required affinity: terms are OR'ed, a term's expressions and fields AND'ed; an
//! empty term list or a term with neither expressions nor fields matches nothing;
//! a term with an invalid expression (bad key, wrong value count, a non-integer
//! `Gt`/`Lt` value, an unknown operator, a field other than `metadata.name`)
//! matches nothing. Pure; taints are not its business.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, PodSpec};

use super::eligibility::{Reason, ReasonCode};
use super::requirement::{Operator, Requirement};
use crate::model::{LabelSet, Node};

/// The only field a `matchFields` requirement may name.
pub const METADATA_NAME_FIELD: &str = "metadata.name";

/// One reason per `nodeSelector` pair the labels do not satisfy (upstream
/// `labels.SelectorFromSet`: each key present with exactly that value).
pub fn node_selector_reasons(
    node_selector: Option<&BTreeMap<String, String>>,
    labels: Option<&(impl LabelSet + ?Sized)>,
) -> Vec<Reason> {
    let mut reasons = Vec::new();
    for (key, wanted) in node_selector.into_iter().flatten() {
        let problem = match labels.and_then(|l| l.label(key)) {
            Some(actual) if actual == wanted => continue,
            Some("") => "label is empty".to_owned(),
            Some(actual) => format!("label is {actual}"),
            None => "label missing".to_owned(),
        };
        reasons.push(Reason {
            key: Some(key.clone()),
            ..Reason::new(
                ReasonCode::NodeSelectorMismatch,
                format!("nodeSelector {key}={wanted}: {problem}"),
                true,
            )
        });
    }
    reasons
}

/// Nothing when the template has no required node affinity or one of its terms
/// matches the node; otherwise one reason per term (or one for "no terms").
pub fn required_affinity_reasons(spec: &PodSpec, node: &Node) -> Vec<Reason> {
    let Some(required) = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
    else {
        return Vec::new();
    };
    if required.node_selector_terms.is_empty() {
        return vec![Reason::new(
            ReasonCode::NodeAffinityMismatch,
            "required node affinity has no terms, so it matches no node",
            true,
        )];
    }
    let mut reasons = Vec::new();
    for (index, term) in required.node_selector_terms.iter().enumerate() {
        match term_failure(term, node) {
            None => return Vec::new(),
            Some((code, detail)) => reasons.push(Reason {
                term: Some(index + 1),
                ..Reason::new(code, format!("affinity term {}: {detail}", index + 1), true)
            }),
        }
    }
    reasons
}

/// Why one term does not match, or `None` when it does.
fn term_failure(term: &NodeSelectorTerm, node: &Node) -> Option<(ReasonCode, String)> {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return Some((
            ReasonCode::NodeAffinityMismatch,
            "empty term matches no node".to_owned(),
        ));
    }
    // Upstream parses the whole term first: any invalid part fails the term.
    let mut parsed = Vec::new();
    for expression in expressions {
        match label_requirement(expression) {
            Ok(requirement) => parsed.push((expression, requirement)),
            Err(why) => return Some((ReasonCode::InvalidNodeAffinity, invalid(expression, &why))),
        }
    }
    for field in fields {
        if let Err(why) = check_field(field) {
            return Some((ReasonCode::InvalidNodeAffinity, invalid(field, &why)));
        }
    }
    let labels = Some(&node.labels);
    if let Some((expression, _)) = parsed.iter().find(|(_, r)| !r.matches(labels)) {
        return Some((ReasonCode::NodeAffinityMismatch, describe(expression)));
    }
    // Upstream skips the field check for a node without a name (no fields to test).
    if !node.name().is_empty()
        && let Some(field) = fields.iter().find(|f| !field_matches(f, node.name()))
    {
        return Some((ReasonCode::NodeAffinityMismatch, describe(field)));
    }
    None
}

fn label_requirement(expression: &NodeSelectorRequirement) -> Result<Requirement, String> {
    let operator = match expression.operator.as_str() {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        "Gt" => Operator::Gt,
        "Lt" => Operator::Lt,
        other => return Err(format!("unknown operator {other:?}")),
    };
    let values = expression.values.clone().unwrap_or_default();
    Requirement::new(&expression.key, operator, values).map_err(|e| e.to_string())
}

/// Upstream accepts only `metadata.name` with `In` or `NotIn` and exactly one value.
fn check_field(field: &NodeSelectorRequirement) -> Result<(), String> {
    if field.key != METADATA_NAME_FIELD {
        return Err(format!(
            "field {:?} is not {METADATA_NAME_FIELD}",
            field.key
        ));
    }
    if !matches!(field.operator.as_str(), "In" | "NotIn") {
        return Err(format!(
            "field operator {:?} is not In or NotIn",
            field.operator
        ));
    }
    let count = field.values.as_ref().map_or(0, Vec::len);
    if count != 1 {
        return Err(format!(
            "field {} needs exactly one value, got {count}",
            field.operator
        ));
    }
    Ok(())
}

fn field_matches(field: &NodeSelectorRequirement, node_name: &str) -> bool {
    let named = field
        .values
        .as_ref()
        .and_then(|v| v.first())
        .is_some_and(|v| v == node_name);
    if field.operator == "In" {
        named
    } else {
        !named
    }
}

/// `zone NotIn [a,b]`, `gpu Exists`.
fn describe(expression: &NodeSelectorRequirement) -> String {
    match expression.values.as_deref() {
        Some(values) if !values.is_empty() => {
            format!(
                "{} {} [{}]",
                expression.key,
                expression.operator,
                values.join(",")
            )
        }
        _ => format!("{} {}", expression.key, expression.operator),
    }
}

fn invalid(expression: &NodeSelectorRequirement, why: &str) -> String {
    format!("{} is invalid ({why})", describe(expression))
}

#[cfg(test)]
mod tests;
