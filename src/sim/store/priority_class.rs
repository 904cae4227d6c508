//! PriorityClass write rules (`scheduling.k8s.io/v1`): the two built-in
//! system classes, defaulting, validation on create and update, and the
//! registry's refusal to delete a system class. Pure functions over JSON;
//! the cross-object rule (one global default) is admission's, in
//! `admission.rs`.

use serde_json::{Value, json};

use super::StoreError;
use super::strategy::object_name;
use crate::sim::resources::ResourceKind;

/// Upstream `HighestUserDefinablePriority`: user classes may not go above it.
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;

/// Upstream `SystemPriorityClassPrefix`: names reserved for the system classes.
const SYSTEM_PREFIX: &str = "system-";

/// Upstream's `PreemptionPolicy` default for a class.
pub const PREEMPT_LOWER_PRIORITY: &str = "PreemptLowerPriority";

pub use crate::engine::priority::SYSTEM_PRIORITY_CLASSES;

/// The system classes as objects to create at start.
pub fn system_priority_classes() -> impl Iterator<Item = Value> {
    SYSTEM_PRIORITY_CLASSES
        .iter()
        .map(|(name, value, description)| {
            json!({"metadata": {"name": name}, "value": value, "description": description,
            "preemptionPolicy": PREEMPT_LOWER_PRIORITY})
        })
}

fn is_system_class(name: &str) -> bool {
    SYSTEM_PRIORITY_CLASSES.iter().any(|(n, ..)| *n == name)
}

/// Defaults `preemptionPolicy` as upstream's `SetDefaults_PriorityClass`.
pub(super) fn default_priority_class(obj: &mut Value) {
    if obj.get("preemptionPolicy").is_none_or(Value::is_null) {
        obj["preemptionPolicy"] = json!(PREEMPT_LOWER_PRIORITY);
    }
}

/// Upstream `ValidatePriorityClass`: a 32-bit `value`, `system-` names only
/// for the known system classes (with their values), user values at most
/// [`HIGHEST_USER_DEFINABLE_PRIORITY`], a known preemption policy.
pub(super) fn validate_priority_class(obj: &Value) -> Result<(), StoreError> {
    let name = object_name(obj);
    let invalid = |field: &str, message: String| {
        StoreError::invalid(ResourceKind::PriorityClass, &name, field, &message)
    };
    let value = match &obj["value"] {
        Value::Null => 0,
        value => value
            .as_i64()
            .filter(|v| i32::try_from(*v).is_ok())
            .ok_or_else(|| {
                invalid(
                    "value",
                    format!("Invalid value: {value}: must be a 32-bit integer"),
                )
            })?,
    };
    if name.starts_with(SYSTEM_PREFIX) {
        let known = SYSTEM_PRIORITY_CLASSES
            .iter()
            .any(|(n, v, _)| *n == name && i64::from(*v) == value);
        if !known || obj["globalDefault"] == true {
            return Err(invalid(
                "metadata.name",
                format!(
                    "Forbidden: priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {name:?} is not a known system priority class with value {value}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        return Err(invalid(
            "value",
            format!(
                "Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    match obj["preemptionPolicy"].as_str() {
        Some(PREEMPT_LOWER_PRIORITY | "Never") => Ok(()),
        other => Err(invalid(
            "preemptionPolicy",
            format!(
                "Unsupported value: {:?}: supported values: \"Never\", \"{PREEMPT_LOWER_PRIORITY}\"",
                other.unwrap_or_default()
            ),
        )),
    }
}

/// Upstream `ValidatePriorityClassUpdate`: `value` and `preemptionPolicy`
/// cannot change.
pub(super) fn validate_priority_class_update(old: &Value, new: &Value) -> Result<(), StoreError> {
    let name = object_name(old);
    if old["value"].as_i64().unwrap_or_default() != new["value"].as_i64().unwrap_or_default() {
        return Err(StoreError::invalid(
            ResourceKind::PriorityClass,
            &name,
            "value",
            "Forbidden: may not be changed in an update.",
        ));
    }
    if old["preemptionPolicy"] != new["preemptionPolicy"] {
        return Err(StoreError::invalid(
            ResourceKind::PriorityClass,
            &name,
            "preemptionPolicy",
            &format!(
                "Invalid value: {}: field is immutable",
                new["preemptionPolicy"]
            ),
        ));
    }
    validate_priority_class(new)
}

/// The registry's guard: the system classes cannot be deleted.
pub(super) fn refuse_system_delete(kind: ResourceKind, name: &str) -> Result<(), StoreError> {
    if kind == ResourceKind::PriorityClass && is_system_class(name) {
        return Err(StoreError::forbidden(
            kind,
            name,
            "this is a system priority class and cannot be deleted",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i64) -> Value {
        let mut obj = json!({"metadata": {"name": name}, "value": value});
        default_priority_class(&mut obj);
        obj
    }

    fn message(result: Result<(), StoreError>) -> String {
        result.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn validation_follows_upstream_validate_priority_class() {
        let cases = [
            (
                "user class at the ceiling",
                class("high", 1_000_000_000),
                "",
            ),
            (
                "user class above HighestUserDefinablePriority",
                class("too-high", 1_000_000_001),
                "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            ),
            (
                "a system class with its own value",
                class("system-node-critical", 2_000_001_000),
                "",
            ),
            (
                "a system- name that is not a system class",
                class("system-mine", 10),
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved",
            ),
            (
                "a system class with another value",
                class("system-cluster-critical", 10),
                "reserved for system use only",
            ),
            (
                "a value past 32 bits",
                class("big", 1 << 40),
                "value: Invalid value",
            ),
            ("negative values are allowed", class("low", -5), ""),
        ];
        for (case, obj, expected) in cases {
            let got = message(validate_priority_class(&obj));
            if expected.is_empty() {
                assert_eq!(got, "", "{case}");
            } else {
                assert!(got.contains(expected), "{case}: {got}");
            }
        }
        let mut never = class("never", 1);
        never["preemptionPolicy"] = json!("Sometimes");
        assert!(message(validate_priority_class(&never)).contains("Unsupported value"));
    }

    #[test]
    fn value_and_preemption_policy_are_immutable() {
        let old = class("p", 5);
        assert!(
            message(validate_priority_class_update(&old, &class("p", 6)))
                .contains("value: Forbidden: may not be changed in an update.")
        );
        let mut never = class("p", 5);
        never["preemptionPolicy"] = json!("Never");
        assert!(
            message(validate_priority_class_update(&old, &never)).contains("field is immutable")
        );
        let mut described = class("p", 5);
        described["description"] = json!("d");
        assert!(validate_priority_class_update(&old, &described).is_ok());
    }

    #[test]
    fn system_classes_cannot_be_deleted() {
        assert_eq!(
            message(refuse_system_delete(
                ResourceKind::PriorityClass,
                "system-node-critical"
            )),
            "priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a system priority class and cannot be deleted"
        );
        assert!(refuse_system_delete(ResourceKind::PriorityClass, "low").is_ok());
        assert!(refuse_system_delete(ResourceKind::Pod, "system-node-critical").is_ok());
    }
}
