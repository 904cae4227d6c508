//! `metadata.managedFields` bookkeeping, as the API server does for Update
//! operations (create, PUT, every PATCH flavour): the fields a write sets or
//! changes become the writer's (an entry per manager, operation and
//! subresource, stamped with the time), other managers lose them, and fields
//! the write removes leave every set. Field sets use the `FieldsV1` form
//! (`f:<field>` for struct/map keys, `k:{"name":…}` for list items with a
//! `name`, other lists atomic).
//!
//! The manager comes from the `fieldManager` query parameter, else from the
//! User-Agent's prefix (upstream `managerOrUserAgent`/`prefixFromUserAgent`:
//! the text before the first `/`, unprintables dropped, at most 128
//! characters). A write with no manager at all (kube-rs sends no User-Agent)
//! is recorded under the empty name like upstream. Pure functions over JSON.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::strategy::Subresource;

/// Upstream's limit on a field manager's length.
const MAX_MANAGER_LEN: usize = 128;

/// Who is writing: upstream `managerOrUserAgent`.
pub fn manager_or_user_agent(field_manager: Option<&str>, user_agent: &str) -> String {
    match field_manager.filter(|m| !m.is_empty()) {
        Some(manager) => manager.to_owned(),
        None => user_agent
            .split('/')
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_MANAGER_LEN)
            .collect(),
    }
}

/// A field's path in `FieldsV1` steps (`f:spec`, `k:{"name":"c"}`).
pub type Path = Vec<String>;

/// Every leaf of the tracked part of an object with its value.
pub fn leaves(obj: &Value, sub: Subresource) -> BTreeMap<Path, Value> {
    let mut out = BTreeMap::new();
    let Some(map) = obj.as_object() else {
        return out;
    };
    for (key, value) in map {
        let tracked = match sub {
            Subresource::Status => key == "status",
            // Never recorded (see `record`).
            Subresource::Binding => false,
            Subresource::Main => !matches!(key.as_str(), "apiVersion" | "kind" | "status"),
        };
        if !tracked {
            continue;
        }
        if key == "metadata" {
            for field in ["labels", "annotations", "ownerReferences", "finalizers"] {
                if let Some(v) = value.get(field) {
                    walk(
                        &mut out,
                        vec!["f:metadata".to_owned(), format!("f:{field}")],
                        v,
                    );
                }
            }
            continue;
        }
        walk(&mut out, vec![format!("f:{key}")], value);
    }
    out
}

fn walk(out: &mut BTreeMap<Path, Value>, path: Path, value: &Value) {
    match value {
        // An empty map is nobody's field (as upstream, which tracks leaves).
        Value::Object(map) => {
            for (k, v) in map {
                let mut p = path.clone();
                p.push(format!("f:{k}"));
                walk(out, p, v);
            }
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(|i| i["name"].is_string()) => {
            for item in items {
                let mut p = path.clone();
                p.push(format!("k:{}", json!({"name": item["name"]})));
                walk(out, p, item);
            }
        }
        other => {
            out.insert(path, other.clone());
        }
    }
}

fn insert(set: &mut Map<String, Value>, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let slot = set
        .entry(first.clone())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Some(child) = slot.as_object_mut() {
        insert(child, rest);
    }
}

/// Removes `path` (and anything below it) from `set`, pruning emptied parents
/// (a parent's own `.` mark excepted).
pub fn remove(set: &mut Map<String, Value>, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        set.remove(first);
        return;
    }
    if let Some(child) = set.get_mut(first).and_then(Value::as_object_mut) {
        remove(child, rest);
        if child.is_empty() {
            set.remove(first);
        }
    }
}

/// Records a write by `manager` that turned `old` (None for a create) into
/// `new`: updates `new`'s `metadata.managedFields` from `old`'s. A write that
/// changes no tracked field leaves them as they were.
pub fn record(old: Option<&Value>, new: &mut Value, manager: &str, sub: Subresource, now: &str) {
    let subresource = match sub {
        Subresource::Main => "",
        Subresource::Status => "status",
        // Upstream's binding writes storage past the field manager: no entry.
        Subresource::Binding => return,
    };
    let before = old.map(|o| leaves(o, sub)).unwrap_or_default();
    let after = leaves(new, sub);
    let changed: Vec<&Path> = after
        .iter()
        .filter(|(path, value)| before.get(*path) != Some(value))
        .map(|(path, _)| path)
        .collect();
    let removed: Vec<&Path> = before.keys().filter(|p| !after.contains_key(*p)).collect();
    // A write that sets managedFields itself (kubectl's upgrade of
    // client-side-apply ownership, a reset to `[]`) is the new base, as
    // upstream; otherwise the stored ones are.
    let sent = &new["metadata"]["managedFields"];
    let base = match old {
        Some(o) if !sent.is_array() || *sent == o["metadata"]["managedFields"] => {
            o["metadata"]["managedFields"].clone()
        }
        _ => sent.clone(),
    };
    let mut entries: Vec<Value> = base.as_array().cloned().unwrap_or_default();
    if changed.is_empty() && removed.is_empty() {
        set_entries(new, entries);
        return;
    }
    let is_mine = |e: &Value| {
        e["manager"].as_str().unwrap_or_default() == manager
            && e["operation"] == "Update"
            && e["subresource"].as_str().unwrap_or_default() == subresource
    };
    for entry in &mut entries {
        if is_mine(entry) {
            continue;
        }
        if let Some(set) = entry["fieldsV1"].as_object_mut() {
            for path in changed.iter().chain(&removed) {
                remove(set, path);
            }
        }
    }
    let mut mine = entries.iter().position(is_mine).map_or_else(
        || json!({"manager": manager, "operation": "Update", "fieldsV1": {}}),
        |i| entries.remove(i),
    );
    if let Some(set) = mine["fieldsV1"].as_object_mut() {
        for path in &removed {
            remove(set, path);
        }
        for path in &changed {
            insert(set, path);
        }
    }
    mine["apiVersion"] = new["apiVersion"].clone();
    mine["time"] = json!(now);
    mine["fieldsType"] = json!("FieldsV1");
    if !subresource.is_empty() {
        mine["subresource"] = json!(subresource);
    }
    entries.push(mine);
    entries.retain(|e| e["fieldsV1"].as_object().is_some_and(|s| !s.is_empty()));
    set_entries(new, entries);
}

/// Sets `metadata.managedFields` (removed when `entries` is empty).
pub fn set_entries(obj: &mut Value, entries: Vec<Value>) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".to_owned(), Value::Array(entries));
    }
}

/// A `FieldsV1` set holding every tracked field of `obj` (for objects loaded
/// with a manager that applied them whole).
pub fn all_fields(obj: &Value) -> Value {
    fields_of(leaves(obj, Subresource::Main).keys())
}

/// The `FieldsV1` set holding `paths`.
pub fn fields_of<'a>(paths: impl Iterator<Item = &'a Path>) -> Value {
    let mut set = Map::new();
    for path in paths {
        insert(&mut set, path);
    }
    Value::Object(set)
}

/// The leaf paths of a `FieldsV1` set (the inverse of [`fields_of`]).
pub fn paths(set: &Value) -> Vec<Path> {
    fn walk_set(set: &Map<String, Value>, prefix: &mut Path, out: &mut Vec<Path>) {
        for (step, inner) in set {
            prefix.push(step.clone());
            match inner.as_object() {
                Some(inner) if !inner.is_empty() => walk_set(inner, prefix, out),
                _ => out.push(prefix.clone()),
            }
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    if let Some(set) = set.as_object() {
        walk_set(set, &mut Vec::new(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(strategy: &str, image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "a", "labels": {"app": "a"}},
            "spec": {"updateStrategy": {"type": strategy},
                "template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
            "status": {"numberReady": 1}})
    }

    fn managers(obj: &Value) -> Vec<(String, Value)> {
        obj["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["manager"].as_str().unwrap().to_owned(),
                    e["fieldsV1"].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn manager_from_query_or_user_agent() {
        let cases = [
            (
                Some("kubectl-patch"),
                "kubectl/v1.32.4 (linux/amd64)",
                "kubectl-patch",
            ),
            (
                None,
                "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07",
                "kubectl",
            ),
            (
                Some(""),
                "argocd-application-controller/v2.13",
                "argocd-application-controller",
            ),
            (None, "a\u{7}b/1", "ab"),
            (None, "", ""),
        ];
        for (query, agent, expected) in cases {
            assert_eq!(manager_or_user_agent(query, agent), expected, "{agent}");
        }
        assert_eq!(manager_or_user_agent(None, &"x".repeat(300)).len(), 128);
    }

    #[test]
    fn create_owns_everything_then_changes_move() {
        let mut created = ds("RollingUpdate", "v1");
        record(
            None,
            &mut created,
            "argocd-controller",
            Subresource::Main,
            "t0",
        );
        let owned = &managers(&created)[0];
        assert_eq!(owned.0, "argocd-controller");
        assert!(owned.1["f:spec"]["f:updateStrategy"]["f:type"].is_object());
        assert!(owned.1["f:metadata"]["f:labels"]["f:app"].is_object());
        assert!(owned.1["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["f:image"].is_object());
        assert!(
            owned.1.get("f:status").is_none(),
            "status is not the main resource's"
        );

        let mut paused = ds("OnDelete", "v1");
        record(
            Some(&created),
            &mut paused,
            "rollcall",
            Subresource::Main,
            "t1",
        );
        let m = managers(&paused);
        assert_eq!(m.len(), 2);
        assert!(
            m[0].1["f:spec"].get("f:updateStrategy").is_none(),
            "argo lost the strategy"
        );
        assert!(
            m[0].1["f:spec"]["f:template"].is_object(),
            "argo keeps the template"
        );
        assert_eq!(m[1].0, "rollcall");
        assert_eq!(
            m[1].1,
            json!({"f:spec": {"f:updateStrategy": {"f:type": {}}}})
        );
        assert_eq!(paused["metadata"]["managedFields"][1]["time"], "t1");

        let mut healed = ds("RollingUpdate", "v1");
        record(
            Some(&paused),
            &mut healed,
            "argocd-controller",
            Subresource::Main,
            "t2",
        );
        let m = managers(&healed);
        assert_eq!(m.len(), 1, "rollcall owned nothing left: its entry goes");
        assert_eq!(m[0].0, "argocd-controller");
        assert_eq!(healed["metadata"]["managedFields"][0]["time"], "t2");
    }

    #[test]
    fn managed_fields_a_write_sets_replace_the_stored_ones() {
        let mut created = ds("RollingUpdate", "v1");
        record(
            None,
            &mut created,
            "kubectl-client-side-apply",
            Subresource::Main,
            "t0",
        );
        let mut upgraded = created.clone();
        let migrated = json!([{"manager": "kubectl", "operation": "Apply",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:updateStrategy": {}}}}]);
        upgraded["metadata"]["managedFields"] = migrated.clone();
        record(
            Some(&created),
            &mut upgraded,
            "kubectl",
            Subresource::Main,
            "t1",
        );
        assert_eq!(upgraded["metadata"]["managedFields"], migrated);
        let mut resent = created.clone();
        resent["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        record(
            Some(&created),
            &mut resent,
            "kubectl",
            Subresource::Main,
            "t1",
        );
        assert_eq!(
            resent["metadata"]["managedFields"], created["metadata"]["managedFields"],
            "an object sent without them keeps the stored ones"
        );
    }

    #[test]
    fn no_change_keeps_entries_and_removals_leave_every_set() {
        let mut created = ds("RollingUpdate", "v1");
        record(None, &mut created, "a", Subresource::Main, "t0");
        let mut same = ds("RollingUpdate", "v1");
        record(Some(&created), &mut same, "b", Subresource::Main, "t1");
        assert_eq!(
            same["metadata"]["managedFields"],
            created["metadata"]["managedFields"]
        );

        let mut unlabelled = ds("RollingUpdate", "v1");
        unlabelled["metadata"]["labels"] = json!({});
        record(
            Some(&created),
            &mut unlabelled,
            "b",
            Subresource::Main,
            "t1",
        );
        let m = managers(&unlabelled);
        assert_eq!(m.len(), 1, "b changed nothing it could own: {m:?}");
        assert!(m[0].1.get("f:metadata").is_none());

        let mut status = ds("RollingUpdate", "v1");
        status["status"]["numberReady"] = json!(2);
        record(
            Some(&created),
            &mut status,
            "kube-controller-manager",
            Subresource::Status,
            "t1",
        );
        let entry = &status["metadata"]["managedFields"][1];
        assert_eq!(entry["subresource"], "status");
        assert_eq!(
            entry["fieldsV1"],
            json!({"f:status": {"f:numberReady": {}}})
        );
    }
}
