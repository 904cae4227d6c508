//! DaemonSet write rules (apps/v1 `daemonSetStrategy`): defaults, the
//! generation and template-generation bumps, and the selector validation.
//! Pure functions over JSON; called from the generic write strategy.

use serde_json::{Map, Value, json};

use super::StoreError;
use super::strategy::object_name;
use crate::sim::resources::ResourceKind;

/// The annotation apps/v1 uses to expose a DaemonSet's template generation.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

pub(super) fn create_daemonset(obj: &mut Value, keep: bool) {
    default_daemonset(obj);
    if !keep || obj["metadata"]["generation"].as_i64().is_none() {
        obj["metadata"]["generation"] = json!(1);
    }
    if obj["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION]
        .as_str()
        .is_none()
    {
        if !obj["metadata"]["annotations"].is_object() {
            obj["metadata"]["annotations"] = json!({});
        }
        obj["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION] = json!("1");
    }
    if !keep || !obj["status"].is_object() {
        obj["status"] = json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0,
            "numberMisscheduled": 0, "numberReady": 0});
    }
}

/// apps/v1 defaults: RollingUpdate with maxUnavailable 1 and maxSurge 0, and a
/// revision history limit of 10.
pub(super) fn default_daemonset(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let strategy = spec.entry("updateStrategy").or_insert_with(|| json!({}));
    if !strategy.is_object() {
        *strategy = json!({});
    }
    if strategy["type"].as_str().is_none_or(str::is_empty) {
        strategy["type"] = json!("RollingUpdate");
    }
    if strategy["type"] == "RollingUpdate" {
        if !strategy["rollingUpdate"].is_object() {
            strategy["rollingUpdate"] = json!({});
        }
        let rolling = &mut strategy["rollingUpdate"];
        if rolling["maxUnavailable"].is_null() {
            rolling["maxUnavailable"] = json!(1);
        }
        if rolling["maxSurge"].is_null() {
            rolling["maxSurge"] = json!(0);
        }
    }
    spec.entry("revisionHistoryLimit")
        .or_insert_with(|| json!(10));
}

/// Required selector that matches the template labels (upstream validation).
pub(super) fn validate_daemonset(obj: &Value) -> Result<(), StoreError> {
    let kind = ResourceKind::DaemonSet;
    let name = object_name(obj);
    let selector = &obj["spec"]["selector"];
    let match_labels = selector["matchLabels"].as_object();
    let has_expressions = selector["matchExpressions"]
        .as_array()
        .is_some_and(|e| !e.is_empty());
    if match_labels.is_none_or(Map::is_empty) && !has_expressions {
        return Err(StoreError::invalid(
            kind,
            &name,
            "spec.selector",
            "Required value",
        ));
    }
    let template_labels = &obj["spec"]["template"]["metadata"]["labels"];
    if let Some(labels) = match_labels
        && labels
            .iter()
            .any(|(k, v)| template_labels.get(k) != Some(v))
    {
        return Err(StoreError::invalid(
            kind,
            &name,
            "spec.template.metadata.labels",
            "Invalid value: `selector` does not match template `labels`",
        ));
    }
    Ok(())
}

/// Spec changes bump `generation`; template changes also bump the template
/// generation annotation (upstream `daemonSetStrategy.PrepareForUpdate`).
pub(super) fn bump_daemonset_generation(old: &Value, next: &mut Value) {
    let old_generation = old["metadata"]["generation"].as_i64().unwrap_or(1);
    let spec_changed = next["spec"] != old["spec"];
    next["metadata"]["generation"] = json!(old_generation + i64::from(spec_changed));
    let old_template_generation = old["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION]
        .as_str()
        .and_then(|g| g.parse::<i64>().ok())
        .unwrap_or(1);
    let template_changed = next["spec"]["template"] != old["spec"]["template"];
    if !next["metadata"]["annotations"].is_object() {
        next["metadata"]["annotations"] = json!({});
    }
    next["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION] =
        json!((old_template_generation + i64::from(template_changed)).to_string());
}
