//! The registry rules upstream applies to the kinds the sim only stores:
//! `metadata.generation` (set to 1 on create and bumped when anything but
//! metadata and status changes, for custom resources and for built-in
//! kinds with a `spec`), and a Secret's `stringData` folded into `data`
//! (base64) with `type` defaulted to `Opaque`. Nothing else about them is
//! validated or defaulted (no cluster IP for a Service, no schema for a
//! custom resource). Pure functions over JSON.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::sim::resources::ResourceKind;

/// Fills in a new inert object (a restored one keeps its generation).
pub(super) fn prepare_create(kind: ResourceKind, obj: &mut Value, restore: bool) {
    let Some(info) = kind.inert() else { return };
    if is_secret(kind) {
        fold_string_data(obj);
    }
    let custom = ResourceKind::from_group_plural(&info.group, &info.plural).is_none();
    let keep = restore && obj["metadata"]["generation"].is_i64();
    if (custom || obj.get("spec").is_some()) && !keep {
        obj["metadata"]["generation"] = json!(1);
    }
}

/// Follows an update of an inert object: `next` already holds `old`'s
/// identity (generation included).
pub(super) fn prepare_update(kind: ResourceKind, old: &Value, next: &mut Value) {
    if kind.inert().is_none() {
        return;
    }
    if is_secret(kind) {
        fold_string_data(next);
    }
    let Some(generation) = old["metadata"]["generation"].as_i64() else {
        return;
    };
    if body(old) != body(next) {
        next["metadata"]["generation"] = json!(generation + 1);
    }
}

fn is_secret(kind: ResourceKind) -> bool {
    kind.group().is_empty() && kind.plural() == "secrets"
}

/// Everything but metadata and status.
fn body(obj: &Value) -> Map<String, Value> {
    obj.as_object()
        .map(|map| {
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "metadata" | "status"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Upstream's Secret strategy: `stringData` entries overwrite `data`'s,
/// base64-encoded, and `stringData` is never stored.
fn fold_string_data(secret: &mut Value) {
    let Some(map) = secret.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(plain)) = map.remove("stringData") {
        let data = map
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if !data.is_object() {
            *data = Value::Object(Map::new());
        }
        for (key, value) in plain {
            let text = value.as_str().unwrap_or_default();
            data[key.as_str()] = json!(base64::engine::general_purpose::STANDARD.encode(text));
        }
    }
    map.entry("type").or_insert_with(|| json!("Opaque"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(group: &str, plural: &str) -> ResourceKind {
        ResourceKind::from_group_plural(group, plural).unwrap()
    }

    #[test]
    fn secrets_store_string_data_as_data() {
        let mut secret = json!({"metadata": {"name": "s"}, "data": {"a": "eA=="},
            "stringData": {"token": "abc"}});
        prepare_create(kind("", "secrets"), &mut secret, false);
        assert_eq!(secret["data"], json!({"a": "eA==", "token": "YWJj"}));
        assert!(secret.get("stringData").is_none());
        assert_eq!(secret["type"], "Opaque");
        assert!(secret["metadata"].get("generation").is_none(), "no spec");
    }

    #[test]
    fn generation_moves_with_the_spec_not_metadata_or_status() {
        let deploy = kind("apps", "deployments");
        let mut old = json!({"metadata": {"name": "d"}, "spec": {"replicas": 1}});
        prepare_create(deploy, &mut old, false);
        assert_eq!(old["metadata"]["generation"], 1);
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        relabelled["status"] = json!({"replicas": 1});
        prepare_update(deploy, &old, &mut relabelled);
        assert_eq!(relabelled["metadata"]["generation"], 1);
        let mut scaled = old.clone();
        scaled["spec"]["replicas"] = json!(3);
        prepare_update(deploy, &old, &mut scaled);
        assert_eq!(scaled["metadata"]["generation"], 2);
        let mut cm = json!({"metadata": {"name": "c"}, "data": {}});
        prepare_create(kind("", "configmaps"), &mut cm, false);
        assert!(cm["metadata"].get("generation").is_none());
    }
}
