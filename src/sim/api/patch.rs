//! PATCH bodies: JSON merge patch (RFC 7386), the strategic-merge subset
//! kubectl sends (label, annotate, taint, cordon, set image, rollout undo,
//! edit, client-side apply), and JSON patch (RFC 6902). Pure functions from
//! (current object, patch) to the new object; the store does the rest.

use serde_json::{Map, Value};

use super::status::ApiError;

/// The patch flavours the server accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/json-patch+json`.
    Json,
    /// `application/apply-patch+yaml`: server-side apply (`apply.rs`).
    Apply,
}

/// The accepted patch media types, for 415 messages.
pub const ACCEPTED: &str = "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml";

impl PatchType {
    /// From the request Content-Type (parameters ignored); `None` is a 415.
    pub fn from_content_type(content_type: &str) -> Option<PatchType> {
        match content_type.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/json-patch+json" => Some(PatchType::Json),
            "application/apply-patch+yaml" => Some(PatchType::Apply),
            _ => None,
        }
    }
}

/// Applies `patch` to `current`.
pub fn apply(kind: PatchType, current: &Value, patch: &Value) -> Result<Value, ApiError> {
    let mut next = current.clone();
    match kind {
        PatchType::Merge => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            json_patch::merge(&mut next, patch);
        }
        PatchType::Strategic => {
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "a strategic merge patch must be a JSON object",
                ));
            }
            strategic_merge(&mut next, patch);
        }
        PatchType::Apply => {
            return Err(ApiError::unsupported_media_type(ACCEPTED));
        }
        PatchType::Json => {
            let operations: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(&mut next, &operations).map_err(|e| {
                ApiError::new(
                    http::StatusCode::UNPROCESSABLE_ENTITY,
                    "Invalid",
                    format!("the JSON patch could not be applied: {e}"),
                )
            })?;
        }
    }
    Ok(next)
}

/// The merge key of a list field, from the upstream `patchMergeKey` tags.
/// `ports` is a container's (`containerPort`) or a Service's (`port`): the
/// field name alone does not tell, the items do.
fn merge_key(field: &str, items: &[Value]) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets" => Some("name"),
        "volumeMounts" | "volumeDevices" => Some("mountPath"),
        "ports" if items.iter().any(|i| i.get("containerPort").is_some()) => Some("containerPort"),
        "ports" => Some("port"),
        "ownerReferences" => Some("uid"),
        "conditions" | "addresses" => Some("type"),
        "hostAliases" => Some("ip"),
        _ => None,
    }
}

/// What a nested merge asks the parent to do.
enum Outcome {
    Keep,
    Delete,
}

/// Strategic merge of `patch` into `target` (both objects at the top).
pub fn strategic_merge(target: &mut Value, patch: &Value) {
    if let Outcome::Delete = merge_map(target, patch) {
        *target = Value::Object(Map::new());
    }
}

fn merge_map(target: &mut Value, patch: &Value) -> Outcome {
    let Some(patch_map) = patch.as_object() else {
        *target = patch.clone();
        return Outcome::Keep;
    };
    match patch_map.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            *target = strip_directives(patch);
            return Outcome::Keep;
        }
        Some("delete") => return Outcome::Delete,
        _ => {}
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Some(target_map) = target.as_object_mut() else {
        return Outcome::Keep;
    };
    for (key, value) in patch_map {
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            delete_from_primitive_list(target_map, field, value);
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        merge_field(target_map, key, value);
    }
    if let Some(retain) = patch_map.get("$retainKeys").and_then(Value::as_array) {
        target_map.retain(|k, _| retain.iter().any(|r| r == k));
    }
    Outcome::Keep
}

fn merge_field(target: &mut Map<String, Value>, key: &str, value: &Value) {
    match value {
        Value::Null => {
            target.remove(key);
        }
        Value::Object(_) => {
            let slot = target.entry(key.to_owned()).or_insert(Value::Null);
            if let Outcome::Delete = merge_map(slot, value) {
                target.remove(key);
            }
        }
        Value::Array(items) => {
            let merged = match (merge_key(key, items), target.get(key)) {
                (Some(merge_key), Some(Value::Array(current))) => {
                    merge_keyed_list(current, items, merge_key)
                }
                _ if key == "finalizers" => union(target.get(key), items),
                _ => replace_list(items),
            };
            target.insert(key.to_owned(), Value::Array(merged));
        }
        other => {
            target.insert(key.to_owned(), other.clone());
        }
    }
}

/// A list given wholesale; a `{"$patch":"replace"}` element is dropped.
fn replace_list(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .filter(|i| !is_directive_element(i))
        .map(strip_directives)
        .collect()
}

fn is_directive_element(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|m| m.len() == 1 && m.contains_key("$patch"))
}

fn merge_keyed_list(current: &[Value], patch: &[Value], key: &str) -> Vec<Value> {
    if patch
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        return replace_list(patch);
    }
    let mut merged = current.to_vec();
    for item in patch {
        let Some(id) = item.get(key) else {
            merged.push(strip_directives(item));
            continue;
        };
        let position = merged.iter().position(|m| m.get(key) == Some(id));
        let deleting = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, deleting) {
            (Some(i), true) => {
                merged.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => {
                if let Outcome::Delete = merge_map(&mut merged[i], item) {
                    merged.remove(i);
                }
            }
            (None, false) => merged.push(strip_directives(item)),
        }
    }
    merged
}

fn union(current: Option<&Value>, items: &[Value]) -> Vec<Value> {
    let mut merged = current
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for item in items {
        if !merged.contains(item) {
            merged.push(item.clone());
        }
    }
    merged
}

fn delete_from_primitive_list(target: &mut Map<String, Value>, field: &str, values: &Value) {
    let Some(values) = values.as_array() else {
        return;
    };
    if let Some(Value::Array(list)) = target.get_mut(field) {
        list.retain(|v| !values.contains(v));
    }
}

/// Removes every `$…` directive key, recursively, so none is ever stored.
fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ds() -> Value {
        json!({"metadata":{"name":"agent","labels":{"app":"a"}},
            "spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1}},
                "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[
                {"name":"agent","image":"agent:v1","args":["-v"]},{"name":"sidecar","image":"side:v1"}]}}}})
    }

    type Check = Box<dyn Fn(&Value) -> bool>;

    #[test]
    fn kubectl_strategic_patches() {
        let node =
            json!({"metadata":{"name":"n"},"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]}});
        let cases: Vec<(&str, Value, Value, Check)> = vec![
            (
                "taint replaces the list",
                node.clone(),
                json!({"spec":{"taints":[{"key":"b","effect":"NoExecute"}]}}),
                Box::new(|v| v["spec"]["taints"] == json!([{"key":"b","effect":"NoExecute"}])),
            ),
            (
                "taint null clears",
                node.clone(),
                json!({"spec":{"taints":null}}),
                Box::new(|v| v["spec"].get("taints").is_none()),
            ),
            (
                "cordon",
                node.clone(),
                json!({"spec":{"unschedulable":true}}),
                Box::new(|v| v["spec"]["unschedulable"] == true),
            ),
            (
                "uncordon",
                json!({"spec":{"unschedulable":true}}),
                json!({"spec":{"unschedulable":null}}),
                Box::new(|v| v["spec"].get("unschedulable").is_none()),
            ),
            (
                "set image merges containers by name",
                ds(),
                json!({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"agent"},{"name":"sidecar"}],
                    "containers":[{"image":"agent:v2","name":"agent"}]}}}}),
                Box::new(|v| {
                    let c = &v["spec"]["template"]["spec"]["containers"];
                    c[0]["image"] == "agent:v2"
                        && c[0]["args"] == json!(["-v"])
                        && c[1]["image"] == "side:v1"
                        && !v.to_string().contains('$')
                }),
            ),
            (
                "rollout undo replaces the template",
                ds(),
                json!({"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"a"}},
                    "spec":{"containers":[{"name":"agent","image":"agent:v0"}]}}}}),
                Box::new(|v| {
                    v["spec"]["template"]["spec"]["containers"]
                        == json!([{"name":"agent","image":"agent:v0"}])
                }),
            ),
            (
                "delete a container",
                ds(),
                json!({"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}),
                Box::new(|v| {
                    v["spec"]["template"]["spec"]["containers"]
                        .as_array()
                        .unwrap()
                        .len()
                        == 1
                }),
            ),
            (
                "retainKeys drops rollingUpdate",
                ds(),
                json!({"spec":{"updateStrategy":{"$retainKeys":["type"],"type":"OnDelete"}}}),
                Box::new(|v| v["spec"]["updateStrategy"] == json!({"type":"OnDelete"})),
            ),
            (
                "label removal",
                ds(),
                json!({"metadata":{"labels":{"app":null,"tier":"x"}}}),
                Box::new(|v| v["metadata"]["labels"] == json!({"tier":"x"})),
            ),
        ];
        for (name, current, patch, check) in cases {
            let next = apply(PatchType::Strategic, &current, &patch).unwrap();
            assert!(check(&next), "{name}: {next}");
        }
    }

    #[test]
    fn merge_patch_replaces_lists_and_json_patch_ops() {
        let next = apply(
            PatchType::Merge,
            &ds(),
            &json!({"spec":{"template":{"spec":{"containers":[]}}}}),
        )
        .unwrap();
        assert_eq!(next["spec"]["template"]["spec"]["containers"], json!([]));
        let ops = json!([{"op":"replace","path":"/metadata/labels/app","value":"b"},{"op":"test","path":"/metadata/name","value":"agent"}]);
        let next = apply(PatchType::Json, &ds(), &ops).unwrap();
        assert_eq!(next["metadata"]["labels"]["app"], "b");
        let failing = json!([{"op":"test","path":"/metadata/name","value":"other"}]);
        assert_eq!(
            apply(PatchType::Json, &ds(), &failing).unwrap_err().code,
            422
        );
        assert_eq!(
            apply(PatchType::Json, &ds(), &json!({"op":1}))
                .unwrap_err()
                .code,
            400
        );
        assert_eq!(
            apply(PatchType::Merge, &ds(), &json!([1]))
                .unwrap_err()
                .code,
            400
        );
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::from_content_type("application/strategic-merge-patch+json"),
            Some(PatchType::Strategic)
        );
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml"),
            Some(PatchType::Apply)
        );
        assert_eq!(PatchType::from_content_type("application/yaml"), None);
    }
}
