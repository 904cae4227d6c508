//! Server-side apply (PATCH `application/apply-patch+yaml`), the subset the
//! sim needs for `kubectl apply --server-side` and controllers that apply:
//! the applied configuration is merged into the live object (maps merge,
//! lists of named items merge by name, other lists are replaced), fields the
//! same manager applied before and no longer names are removed unless
//! another manager owns them too, and a field another manager owns that the
//! configuration would change is a conflict unless `force`. The manager's
//! `Apply` entry in `managedFields` then holds exactly the configuration's
//! fields. An apply that changes nothing returns the live object as it was,
//! so a second identical apply is no write at all (no new resourceVersion).
//! Without schemas, "named items" is the only list key known (upstream reads
//! `x-kubernetes-list-map-keys`); that covers containers, volumes, env and
//! ports-by-name. Pure functions over JSON.

use serde_json::{Map, Value, json};

use crate::sim::store::Subresource;
use crate::sim::store::managed::{self, Path};

/// A field another manager owns that the configuration would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The owning manager.
    pub manager: String,
    /// The field, as upstream prints it (`.spec.replicas`).
    pub field: String,
}

/// The live object after applying `config` as `manager` (at `now`), or the
/// conflicts that stop it.
pub fn apply(
    current: &Value,
    config: &Value,
    manager: &str,
    force: bool,
    now: &str,
) -> Result<Value, Vec<Conflict>> {
    let applied = managed::leaves(config, Subresource::Main);
    let live = managed::leaves(current, Subresource::Main);
    let mut entries = entries(current);
    let changing: Vec<&Path> = applied
        .iter()
        .filter(|(path, value)| live.get(*path).is_some_and(|old| old != *value))
        .map(|(path, _)| path)
        .collect();
    let conflicts: Vec<Conflict> = changing
        .iter()
        .flat_map(|path| {
            entries
                .iter()
                .filter(|e| !is_my_apply(e, manager) && owns(e, path))
                .map(|e| Conflict {
                    manager: e["manager"].as_str().unwrap_or_default().to_owned(),
                    field: field_text(path),
                })
        })
        .collect();
    if !conflicts.is_empty() && !force {
        return Err(conflicts);
    }
    let mut next = current.clone();
    let mine = entries.iter().position(|e| is_my_apply(e, manager));
    let previous = mine.map(|i| entries[i].clone());
    if let Some(previous) = &previous {
        for path in managed::paths(&previous["fieldsV1"]) {
            let dropped = !applied
                .keys()
                .any(|p| p.starts_with(&path) || path.starts_with(p));
            let shared = entries
                .iter()
                .any(|e| !is_my_apply(e, manager) && owns(e, &path));
            if dropped && !shared {
                remove_field(&mut next, &path);
            }
        }
    }
    let mut body = config.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    super::patch::strategic_merge(&mut next, &body);
    for entry in entries.iter_mut().filter(|e| !is_my_apply(e, manager)) {
        if let Some(set) = entry["fieldsV1"].as_object_mut() {
            for path in &changing {
                managed::remove(set, path);
            }
        }
    }
    // The same fields as last time keep their entry as it was (time
    // included), so an apply that changes nothing writes nothing, whatever
    // defaulting the strategy does afterwards.
    let fields = managed::fields_of(applied.keys());
    match mine {
        Some(i) if entries[i]["fieldsV1"] == fields => {}
        Some(i) => entries[i] = apply_entry(config, manager, fields, now),
        None => entries.push(apply_entry(config, manager, fields, now)),
    }
    entries.retain(|e| e["fieldsV1"].as_object().is_some_and(|s| !s.is_empty()));
    managed::set_entries(&mut next, entries);
    Ok(next)
}

/// A new object made by applying `config` as `manager`: the configuration
/// itself, with the manager's `Apply` entry.
pub fn create(mut config: Value, manager: &str, now: &str) -> Value {
    let fields = managed::fields_of(managed::leaves(&config, Subresource::Main).keys());
    // An empty field set is nobody's (the same rule as on every write).
    let entries = if fields.as_object().is_some_and(Map::is_empty) {
        Vec::new()
    } else {
        vec![apply_entry(&config, manager, fields, now)]
    };
    managed::set_entries(&mut config, entries);
    config
}

/// Upstream's conflict message.
pub fn conflict_message(conflicts: &[Conflict], api_version: &str) -> String {
    let lines: Vec<String> = conflicts
        .iter()
        .map(|c| {
            format!(
                "conflict with \"{}\" using {api_version}: {}",
                c.manager, c.field
            )
        })
        .collect();
    match lines.as_slice() {
        [one] => format!("Apply failed with 1 conflict: {one}"),
        many => format!(
            "Apply failed with {} conflicts: {}",
            many.len(),
            many.join("\n")
        ),
    }
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "the field set is built for this entry"
)]
fn apply_entry(config: &Value, manager: &str, fields: Value, now: &str) -> Value {
    json!({"manager": manager, "operation": "Apply", "apiVersion": config["apiVersion"],
        "time": now, "fieldsType": "FieldsV1", "fieldsV1": fields})
}

fn entries(obj: &Value) -> Vec<Value> {
    obj["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn is_my_apply(entry: &Value, manager: &str) -> bool {
    entry["manager"] == manager
        && entry["operation"] == "Apply"
        && entry["subresource"].as_str().unwrap_or_default().is_empty()
}

/// Whether an entry's field set holds `path` (or a field below it).
fn owns(entry: &Value, path: &Path) -> bool {
    if entry["subresource"].as_str().is_some_and(|s| !s.is_empty()) {
        return false;
    }
    let mut set = &entry["fieldsV1"];
    for step in path {
        match set.get(step) {
            Some(inner) => set = inner,
            None => return false,
        }
    }
    true
}

/// `.spec.template.spec.containers[name="c"].image`.
fn field_text(path: &Path) -> String {
    let mut text = String::new();
    for step in path {
        if let Some(field) = step.strip_prefix("f:") {
            text.push('.');
            text.push_str(field);
            continue;
        }
        let pairs: Vec<String> = list_key(step)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        text.push('[');
        text.push_str(&pairs.join(","));
        text.push(']');
    }
    text
}

/// Removes the field at `path` (`f:` steps through maps, `k:` steps pick a
/// list item by its key fields) from `obj`, if present.
fn remove_field(obj: &mut Value, path: &Path) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = obj;
    for step in parents {
        let Some(next) = step_into(at, step) else {
            return;
        };
        at = next;
    }
    match (last.strip_prefix("f:"), at) {
        (Some(field), Value::Object(map)) => {
            map.remove(field);
        }
        (None, Value::Array(items)) => {
            let key = list_key(last);
            items.retain(|item| !matches_key(item, &key));
        }
        _ => {}
    }
}

fn step_into<'a>(value: &'a mut Value, step: &str) -> Option<&'a mut Value> {
    if let Some(field) = step.strip_prefix("f:") {
        return value.get_mut(field);
    }
    let key = list_key(step);
    value
        .as_array_mut()?
        .iter_mut()
        .find(|item| matches_key(item, &key))
}

fn list_key(step: &str) -> Map<String, Value> {
    step.strip_prefix("k:")
        .and_then(|k| serde_json::from_str(k).ok())
        .unwrap_or_default()
}

fn matches_key(item: &Value, key: &Map<String, Value>) -> bool {
    !key.is_empty() && key.iter().all(|(k, v)| item.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(image: &str, extra_label: bool) -> Value {
        let mut labels = json!({"app": "agent"});
        if extra_label {
            labels["tier"] = json!("node");
        }
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "kube-system", "labels": labels},
            "spec": {"template": {"spec": {"containers": [{"name": "agent", "image": image}]}}}})
    }

    fn live(obj: Value) -> Value {
        let mut obj = obj;
        obj["metadata"]["uid"] = json!("u");
        obj["status"] = json!({"numberReady": 1});
        obj
    }

    #[test]
    fn create_then_reapply_is_no_change_and_dropped_fields_go() {
        let created = live(create(config("a:1", true), "kubectl", "t0"));
        assert_eq!(
            created["metadata"]["managedFields"][0]["operation"],
            "Apply"
        );
        let again = apply(&created, &config("a:1", true), "kubectl", false, "t1").unwrap();
        assert_eq!(
            again, created,
            "identical apply: nothing changes, not even the time"
        );
        let fewer = apply(&created, &config("a:2", false), "kubectl", false, "t2").unwrap();
        assert_eq!(fewer["metadata"]["labels"], json!({"app": "agent"}));
        assert_eq!(
            fewer["spec"]["template"]["spec"]["containers"][0]["image"],
            "a:2"
        );
        assert_eq!(fewer["status"]["numberReady"], 1, "status untouched");
        assert_eq!(fewer["metadata"]["managedFields"][0]["time"], "t2");
    }

    #[test]
    fn another_managers_field_conflicts_unless_forced() {
        let mut created = live(create(config("a:1", false), "helm", "t0"));
        created["metadata"]["managedFields"][0]["operation"] = json!("Update");
        let conflicts = apply(&created, &config("a:2", false), "kubectl", false, "t1").unwrap_err();
        assert_eq!(
            conflicts,
            [Conflict {
                manager: "helm".into(),
                field: ".spec.template.spec.containers[name=\"agent\"].image".into()
            }]
        );
        let same = apply(&created, &config("a:1", false), "kubectl", false, "t1").unwrap();
        let entries = same["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(
            [&entries[0]["manager"], &entries[1]["manager"]],
            ["helm", "kubectl"],
            "same values: shared ownership"
        );
        let forced = apply(&created, &config("a:2", false), "kubectl", true, "t1").unwrap();
        assert_eq!(
            forced["spec"]["template"]["spec"]["containers"][0]["image"],
            "a:2"
        );
        assert!(
            conflict_message(&conflicts, "apps/v1")
                .starts_with("Apply failed with 1 conflict: conflict with \"helm\" using apps/v1")
        );
    }
}
