//! Server-side bookkeeping on writes, after the upstream registry strategies:
//! what create sets (uid, creationTimestamp, generation, defaults, cleared
//! status), what update keeps (identity, status on the main resource, spec on
//! `/status`), when `generation` moves, and the validation that answers 422.
//! Pure functions over JSON values; the store supplies the resourceVersion,
//! the clock and the uid.

use serde_json::{Map, Value, json};

use super::StoreError;
use super::daemonset::{
    bump_daemonset_generation, create_daemonset, default_daemonset, validate_daemonset,
};
use super::priority_class::{
    default_priority_class, validate_priority_class, validate_priority_class_update,
};
use crate::engine::qos::qos_class;
use crate::sim::resources::{ResourceKind, crd};
use k8s_openapi::api::core::v1::PodSpec;

/// Which part of an object a write targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// The main resource: status changes are ignored (for kinds with status).
    Main,
    /// `/status`: only status changes are kept.
    Status,
    /// A pod's `/binding`: `spec.nodeName` and the status (its PodScheduled
    /// condition) change in one write, as upstream's `BindingREST` assigns
    /// the host and marks the pod scheduled in one storage update. Like
    /// upstream's, it writes past the field manager (no managedFields entry).
    Binding,
}

/// How a create treats identity fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateMode {
    /// An API create: uid, creationTimestamp, generation and status are set by the server.
    Api,
    /// Loading a snapshot: uid, creationTimestamp, generation and status are kept if present.
    Restore,
}

/// What the store supplies to a write.
pub struct WriteStamp<'a> {
    /// The new resourceVersion.
    pub resource_version: u64,
    /// Now, RFC 3339.
    pub now: &'a str,
    /// A fresh uid (used by creates).
    pub uid: &'a str,
    /// The field manager to record, if any (see `managed.rs`).
    pub manager: Option<&'a str>,
}

/// Fills in and validates a new object. Returns it ready to store.
pub fn prepare_create(
    kind: ResourceKind,
    mut obj: Value,
    mode: CreateMode,
    stamp: &WriteStamp<'_>,
) -> Result<Value, StoreError> {
    check_type(kind, &mut obj)?;
    let name = object_name(&obj);
    as_map(&mut obj, kind, &name)?;
    // `metadata` is now an object or absent, so indexing below cannot panic.
    obj["metadata"]["resourceVersion"] = json!(stamp.resource_version.to_string());
    remove_meta(&mut obj, "deletionTimestamp");
    remove_meta(&mut obj, "deletionGracePeriodSeconds");
    if !kind.namespaced() {
        remove_meta(&mut obj, "namespace");
    }
    let keep = mode == CreateMode::Restore;
    if !keep || !obj["metadata"]["uid"].is_string() {
        obj["metadata"]["uid"] = json!(stamp.uid);
    }
    if !keep || !obj["metadata"]["creationTimestamp"].is_string() {
        obj["metadata"]["creationTimestamp"] = json!(stamp.now);
    }
    validate_identity(kind, &obj)?;
    match kind {
        ResourceKind::DaemonSet => create_daemonset(&mut obj, keep),
        ResourceKind::Pod => {
            if !keep {
                obj["status"] = json!({"phase": "Pending"});
            }
            // Upstream's pod strategy sets the QoS class in PrepareForCreate;
            // a restored pod keeps the one it has.
            if obj["status"]["qosClass"].as_str().is_none()
                && let Ok(spec) = serde_json::from_value::<PodSpec>(obj["spec"].clone())
            {
                obj["status"]["qosClass"] = json!(qos_class(&spec).as_str());
            }
        }
        ResourceKind::Namespace if obj["status"]["phase"].as_str().is_none() => {
            obj["status"] = json!({"phase": "Active"});
        }
        _ => {}
    }
    if kind == ResourceKind::DaemonSet {
        validate_daemonset(&obj)?;
    }
    if kind == ResourceKind::PriorityClass {
        default_priority_class(&mut obj);
        validate_priority_class(&obj)?;
    }
    super::inert::prepare_create(kind, &mut obj, keep);
    if kind.is_crd() {
        validate_crd(kind, &obj, None)?;
        if !keep || !obj["status"]["conditions"].is_array() {
            obj["status"] = crd::established_status(&obj, stamp.now);
        }
    }
    if let Some(manager) = stamp.manager.filter(|_| !keep) {
        super::managed::record(None, &mut obj, manager, Subresource::Main, stamp.now);
    }
    Ok(obj)
}

/// Merges an update into the stored object following the kind's strategy.
/// Returns `None` when the result equals `old` (a no-op, which upstream
/// answers with the old object and no new resourceVersion).
pub fn prepare_update(
    kind: ResourceKind,
    old: &Value,
    mut new: Value,
    sub: Subresource,
    stamp: &WriteStamp<'_>,
) -> Result<Option<Value>, StoreError> {
    check_type(kind, &mut new)?;
    let name = object_name(old);
    as_map(&mut new, kind, &name)?;
    let sent_rv = new["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    let old_rv = old["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    if !sent_rv.is_empty() && sent_rv != old_rv {
        return Err(StoreError::conflict(kind, &name));
    }
    let mut next = match sub {
        Subresource::Status => status_write(old, new),
        Subresource::Binding => {
            let node = new["spec"]["nodeName"].take();
            let mut next = status_write(old, new);
            next["spec"]["nodeName"] = node;
            next
        }
        Subresource::Main => {
            if kind.has_status()
                && let (Some(old_map), Some(new_map)) = (old.as_object(), new.as_object_mut())
            {
                reset_field(new_map, old_map, "status");
            }
            keep_identity(old, &mut new);
            new
        }
    };
    if kind == ResourceKind::DaemonSet {
        default_daemonset(&mut next);
        validate_daemonset(&next)?;
        if next["spec"]["selector"] != old["spec"]["selector"] {
            return Err(StoreError::invalid(
                kind,
                &name,
                "spec.selector",
                "field is immutable",
            ));
        }
        bump_daemonset_generation(old, &mut next);
    }
    if kind == ResourceKind::PriorityClass {
        default_priority_class(&mut next);
        validate_priority_class_update(old, &next)?;
    }
    if sub == Subresource::Main {
        super::inert::prepare_update(kind, old, &mut next);
    }
    if kind.is_crd() && sub == Subresource::Main {
        validate_crd(kind, &next, Some(old))?;
        next["status"]["acceptedNames"] = next["spec"]["names"].clone();
    }
    next["metadata"]["resourceVersion"] = json!(old_rv);
    if next == *old {
        return Ok(None);
    }
    next["metadata"]["resourceVersion"] = json!(stamp.resource_version.to_string());
    validate_identity(kind, &next)?;
    if let Some(manager) = stamp.manager {
        super::managed::record(Some(old), &mut next, manager, sub, stamp.now);
    }
    Ok(Some(next))
}

/// What a status write stores: `old` with `new`'s status (`{}` when it has
/// none); everything else the client sent is ignored, as upstream's status
/// strategies do. Built from `new`, keeping each field that equals `old`'s,
/// because a client (the kubelets, churn) sends back what it read: a
/// comparison instead of a deep copy of the object, and the same result.
fn status_write(old: &Value, mut new: Value) -> Value {
    let (Some(old_map), Some(new_map)) = (old.as_object(), new.as_object_mut()) else {
        let mut next = old.clone();
        next["status"] = new.get("status").cloned().unwrap_or_else(|| json!({}));
        return next;
    };
    let status = new_map.remove("status").unwrap_or_else(|| json!({}));
    new_map.retain(|field, _| old_map.contains_key(field));
    for field in old_map.keys().filter(|field| *field != "status") {
        reset_field(new_map, old_map, field);
    }
    new_map.insert("status".to_owned(), status);
    new
}

/// Makes `new[field]` what `old` holds (absent when `old` has none), copying
/// only when they differ.
fn reset_field(new: &mut Map<String, Value>, old: &Map<String, Value>, field: &str) {
    match old.get(field) {
        Some(kept) if new.get(field) != Some(kept) => {
            new.insert(field.to_owned(), kept.clone());
        }
        Some(_) => {}
        None => drop(new.remove(field)),
    }
}

/// Upstream's CRD validation, as far as the sim relies on it: the kind a CRD
/// defines must be well-formed, and its group, resource name and scope never
/// change (the sim keeps custom resources under them).
fn validate_crd(kind: ResourceKind, obj: &Value, old: Option<&Value>) -> Result<(), StoreError> {
    let name = object_name(obj);
    let info = crd::kind_info(obj)
        .map_err(|(field, message)| StoreError::invalid(kind, &name, field, &message))?;
    let Some(before) = old.and_then(|old| crd::kind_info(old).ok()) else {
        return Ok(());
    };
    let unchanged = [
        ("spec.group", before.group == info.group),
        ("spec.names.plural", before.plural == info.plural),
        ("spec.scope", before.namespaced == info.namespaced),
    ];
    match unchanged.iter().find(|(_, same)| !same) {
        Some((field, _)) => Err(StoreError::invalid(
            kind,
            &name,
            field,
            "field is immutable",
        )),
        None => Ok(()),
    }
}

/// The object's name, for messages (empty if it has none).
pub fn object_name(obj: &Value) -> String {
    obj["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Checks `kind`/`apiVersion` when present and fills them in.
fn check_type(kind: ResourceKind, obj: &mut Value) -> Result<(), StoreError> {
    let Some(map) = obj.as_object_mut() else {
        return Err(StoreError::BadRequest(
            "the body must be a JSON object".into(),
        ));
    };
    for (field, expected) in [("apiVersion", kind.api_version()), ("kind", kind.kind())] {
        match map.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::String(found)) if found == expected || found.is_empty() => {}
            // Any served version of a custom resource (stored as sent: the
            // sim converts nothing between versions).
            Some(Value::String(found))
                if field == "apiVersion" && kind.accepts_api_version(found) =>
            {
                continue;
            }
            Some(found) => {
                return Err(StoreError::BadRequest(format!(
                    "the {field} in the data ({}) does not match the expected {field} ({expected})",
                    found.as_str().unwrap_or("?")
                )));
            }
        }
        map.insert(field.into(), json!(expected));
    }
    Ok(())
}

fn as_map<'a>(
    obj: &'a mut Value,
    kind: ResourceKind,
    name: &str,
) -> Result<&'a mut Map<String, Value>, StoreError> {
    let map = obj
        .as_object_mut()
        .ok_or_else(|| StoreError::BadRequest("the body must be a JSON object".into()))?;
    if !map.get("metadata").is_none_or(Value::is_object) {
        return Err(StoreError::invalid(
            kind,
            name,
            "metadata",
            "must be an object",
        ));
    }
    Ok(map)
}

fn remove_meta(obj: &mut Value, field: &str) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove(field);
    }
}

/// Copies the fields a client may not change on update.
fn keep_identity(old: &Value, new: &mut Value) {
    for field in [
        "uid",
        "creationTimestamp",
        "generation",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "name",
        "namespace",
    ] {
        match old["metadata"].get(field) {
            Some(value) => new["metadata"][field] = value.clone(),
            None => remove_meta(new, field),
        }
    }
}

/// Names are DNS-1123 subdomains (what upstream requires of these kinds).
fn validate_identity(kind: ResourceKind, obj: &Value) -> Result<(), StoreError> {
    let name = object_name(obj);
    if !is_dns_subdomain(&name) {
        let message = if name.is_empty() {
            "name or generateName is required".to_owned()
        } else {
            format!(
                "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case \
                 alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
            )
        };
        return Err(StoreError::invalid(kind, &name, "metadata.name", &message));
    }
    let namespace = obj["metadata"]["namespace"].as_str().unwrap_or_default();
    if kind.namespaced() && !is_dns_subdomain(namespace) {
        return Err(StoreError::invalid(
            kind,
            &name,
            "metadata.namespace",
            "Required value: a valid namespace is required",
        ));
    }
    Ok(())
}

/// Whether `name` is a lowercase RFC 1123 subdomain of at most 253 characters.
pub fn is_dns_subdomain(name: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 253
        && bytes.iter().all(|&c| alnum(c) || c == b'-' || c == b'.')
        && bytes.first().copied().is_some_and(alnum)
        && bytes.last().copied().is_some_and(alnum)
}

#[cfg(test)]
#[path = "strategy_reuse_tests.rs"]
mod reuse_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::store::TEMPLATE_GENERATION_ANNOTATION;

    fn stamp(rv: u64) -> WriteStamp<'static> {
        WriteStamp {
            resource_version: rv,
            now: "2026-01-01T00:00:00Z",
            uid: "uid-1",
            manager: None,
        }
    }

    fn ds() -> Value {
        json!({"metadata":{"name":"agent","namespace":"default"},
            "spec":{"selector":{"matchLabels":{"app":"a"}},
                "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i:1"}]}}}})
    }

    #[test]
    fn create_daemonset_sets_generation_defaults_and_status() {
        let created =
            prepare_create(ResourceKind::DaemonSet, ds(), CreateMode::Api, &stamp(5)).unwrap();
        assert_eq!(created["metadata"]["generation"], 1);
        assert_eq!(created["metadata"]["resourceVersion"], "5");
        assert_eq!(created["metadata"]["uid"], "uid-1");
        assert_eq!(created["kind"], "DaemonSet");
        assert_eq!(created["spec"]["updateStrategy"]["type"], "RollingUpdate");
        assert_eq!(
            created["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
            1
        );
        assert_eq!(
            created["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION],
            "1"
        );
        assert_eq!(created["status"]["desiredNumberScheduled"], 0);
    }

    #[test]
    fn template_change_bumps_generation_status_change_does_not() {
        let old =
            prepare_create(ResourceKind::DaemonSet, ds(), CreateMode::Api, &stamp(5)).unwrap();
        let mut changed = old.clone();
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("i:2");
        let next = prepare_update(
            ResourceKind::DaemonSet,
            &old,
            changed,
            Subresource::Main,
            &stamp(6),
        )
        .unwrap()
        .unwrap();
        assert_eq!(next["metadata"]["generation"], 2);
        assert_eq!(
            next["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION],
            "2"
        );
        let mut status_only = old.clone();
        status_only["status"]["numberReady"] = json!(3);
        let on_main = prepare_update(
            ResourceKind::DaemonSet,
            &old,
            status_only.clone(),
            Subresource::Main,
            &stamp(7),
        )
        .unwrap();
        assert!(on_main.is_none(), "status is ignored on the main resource");
        let on_status = prepare_update(
            ResourceKind::DaemonSet,
            &old,
            status_only,
            Subresource::Status,
            &stamp(7),
        )
        .unwrap()
        .unwrap();
        assert_eq!(on_status["status"]["numberReady"], 3);
        assert_eq!(on_status["metadata"]["generation"], 1);
    }

    /// Upstream's `BindingREST` sets the host and the PodScheduled
    /// condition in one storage update; nothing else the writer sent lands.
    #[test]
    fn a_binding_sets_the_node_and_the_status_in_one_write_and_nothing_else() {
        let pod = json!({"metadata":{"name":"p","namespace":"default"},
            "spec":{"containers":[{"name":"c","image":"i:1"}]}});
        let old = prepare_create(ResourceKind::Pod, pod, CreateMode::Api, &stamp(5)).unwrap();
        let mut bound = old.clone();
        bound["spec"]["nodeName"] = json!("n1");
        bound["spec"]["containers"][0]["image"] = json!("i:2");
        bound["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True"}]);
        bound["metadata"]["labels"] = json!({"sneaked": "in"});
        let by_scheduler = WriteStamp {
            manager: Some("default-scheduler"),
            ..stamp(6)
        };
        let next = prepare_update(
            ResourceKind::Pod,
            &old,
            bound,
            Subresource::Binding,
            &by_scheduler,
        )
        .unwrap()
        .unwrap();
        assert_eq!(next["spec"]["nodeName"], "n1");
        assert_eq!(next["status"]["conditions"][0]["type"], "PodScheduled");
        assert_eq!(next["spec"]["containers"][0]["image"], "i:1");
        assert!(next["metadata"]["labels"].is_null());
        assert_eq!(next["metadata"]["resourceVersion"], "6");
        // Past the field manager, as upstream's binding: no entry for it.
        assert!(next["metadata"]["managedFields"].is_null());
    }

    #[test]
    fn stale_resource_version_conflicts_and_selector_is_immutable() {
        let old =
            prepare_create(ResourceKind::DaemonSet, ds(), CreateMode::Api, &stamp(5)).unwrap();
        let mut stale = old.clone();
        stale["metadata"]["resourceVersion"] = json!("4");
        let err = prepare_update(
            ResourceKind::DaemonSet,
            &old,
            stale,
            Subresource::Main,
            &stamp(6),
        );
        assert!(matches!(err, Err(StoreError::Conflict { .. })));
        let mut moved = old.clone();
        moved["spec"]["selector"]["matchLabels"]["app"] = json!("b");
        moved["spec"]["template"]["metadata"]["labels"]["app"] = json!("b");
        let err = prepare_update(
            ResourceKind::DaemonSet,
            &old,
            moved,
            Subresource::Main,
            &stamp(6),
        );
        assert!(matches!(err, Err(StoreError::Invalid { .. })));
    }

    #[test]
    fn invalid_names_and_wrong_kinds_are_rejected() {
        let bad = json!({"metadata":{"name":"Bad_Name"}});
        assert!(matches!(
            prepare_create(ResourceKind::Node, bad, CreateMode::Api, &stamp(1)),
            Err(StoreError::Invalid { .. })
        ));
        let wrong = json!({"kind":"Pod","metadata":{"name":"n"}});
        assert!(matches!(
            prepare_create(ResourceKind::Node, wrong, CreateMode::Api, &stamp(1)),
            Err(StoreError::BadRequest(_))
        ));
        let pod = json!({"metadata":{"name":"p"}});
        assert!(matches!(
            prepare_create(ResourceKind::Pod, pod, CreateMode::Api, &stamp(1)),
            Err(StoreError::Invalid { .. })
        ));
    }

    #[test]
    fn created_pods_get_their_qos_class_as_upstream_prepare_for_create() {
        let pod = |resources: Value| {
            let obj = json!({"metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]}});
            prepare_create(ResourceKind::Pod, obj, CreateMode::Api, &stamp(1)).unwrap()
                ["status"]["qosClass"]
                .clone()
        };
        let both = json!({"cpu": "100m", "memory": "64Mi"});
        assert_eq!(pod(json!({"requests": both, "limits": both})), "Guaranteed");
        assert_eq!(pod(json!({"requests": {"cpu": "100m"}})), "Burstable");
        assert_eq!(pod(json!({})), "BestEffort");
    }

    #[test]
    fn restore_keeps_identity() {
        let node = json!({"metadata":{"name":"n","uid":"keep","creationTimestamp":"2020-01-01T00:00:00Z"},
            "status":{"conditions":[]}});
        let restored =
            prepare_create(ResourceKind::Node, node, CreateMode::Restore, &stamp(2)).unwrap();
        assert_eq!(restored["metadata"]["uid"], "keep");
        assert_eq!(
            restored["metadata"]["creationTimestamp"],
            "2020-01-01T00:00:00Z"
        );
    }
}
