//! The admission the embedded API server runs on writes that need other
//! objects: upstream's `Priority` plugin (plugin/pkg/admission/priority).
//! A new pod gets `spec.priority` and `spec.preemptionPolicy` from its
//! `priorityClassName` (or the global default class, or 0), and a
//! PriorityClass may be the global default only when no other class is.
//! Every create goes through here, the DaemonSet controller's included;
//! restored objects keep what they hold, but a restored pod without a
//! priority gets one.

use serde_json::{Value, json};

use super::object::StoredObject;
use super::priority_class::PREEMPT_LOWER_PRIORITY;
use super::strategy::object_name;
use super::{State, StoreError};
use crate::sim::resources::ResourceKind;

/// A PriorityClass as admission reads it.
#[derive(Clone, Debug, PartialEq)]
struct Class {
    name: String,
    value: i64,
    preemption_policy: Option<String>,
    global_default: bool,
}

impl Class {
    fn from_value(obj: &Value) -> Class {
        Class {
            name: object_name(obj),
            value: obj["value"].as_i64().unwrap_or_default(),
            preemption_policy: obj["preemptionPolicy"].as_str().map(str::to_owned),
            global_default: obj["globalDefault"] == true,
        }
    }
}

fn stored_classes(state: &State) -> Vec<Class> {
    state
        .objects(ResourceKind::PriorityClass)
        .values()
        .map(|o: &std::sync::Arc<StoredObject>| Class::from_value(&o.value()))
        .collect()
}

/// Upstream `getDefaultPriorityClass`: the global default with the lowest
/// value (more than one can exist after a race).
fn default_class(classes: &[Class]) -> Option<&Class> {
    classes
        .iter()
        .filter(|c| c.global_default)
        .min_by_key(|c| c.value)
}

/// Admits a new object of `kind` against the stored PriorityClasses.
pub(super) fn admit_create(
    state: &State,
    kind: ResourceKind,
    obj: &mut Value,
) -> Result<(), StoreError> {
    match kind {
        ResourceKind::Pod => admit_pod_priority(&stored_classes(state), obj),
        ResourceKind::PriorityClass => only_one_default(&stored_classes(state), obj, true),
        _ => Ok(()),
    }
}

/// Upstream's `NamespaceLifecycle` admission and the CRD handler's check: no
/// new object in a namespace being deleted, and no new custom resource of a
/// CRD being deleted.
pub(super) fn admit_lifecycle(
    state: &State,
    kind: ResourceKind,
    obj: &Value,
) -> Result<(), StoreError> {
    let name = object_name(obj);
    if kind.namespaced() {
        let namespace = obj["metadata"]["namespace"].as_str().unwrap_or_default();
        let terminating = state
            .objects(ResourceKind::Namespace)
            .get(&super::ObjectKey::new("", namespace))
            .is_some_and(|ns| ns.field("status.phase") == Some("Terminating"));
        if terminating {
            return Err(StoreError::forbidden(
                kind,
                &name,
                &format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            ));
        }
    }
    if let Some(crd) = state.terminating_crd(kind) {
        return Err(StoreError::BadRequest(format!(
            "create not allowed while custom resource definition {crd} is terminating"
        )));
    }
    Ok(())
}

/// A restored pod that has no `spec.priority` (a generated one; a real
/// cluster's pods all have one) gets what admission would have given it,
/// when its class is known; anything else is kept as it was.
pub(super) fn fill_restored(state: &State, kind: ResourceKind, obj: &mut Value) {
    if kind != ResourceKind::Pod || obj["spec"]["priority"].is_i64() {
        return;
    }
    // A refusal leaves the pod untouched: every check comes before a write.
    let _ = admit_pod_priority(&stored_classes(state), obj);
}

/// Admits a changed object of `kind` (a PriorityClass may not become a
/// second global default).
pub(super) fn admit_update(
    state: &State,
    kind: ResourceKind,
    obj: &Value,
) -> Result<(), StoreError> {
    match kind {
        ResourceKind::PriorityClass => only_one_default(&stored_classes(state), obj, false),
        _ => Ok(()),
    }
}

/// Upstream `validatePriorityClass`.
fn only_one_default(classes: &[Class], obj: &Value, create: bool) -> Result<(), StoreError> {
    if obj["globalDefault"] != true {
        return Ok(());
    }
    let name = object_name(obj);
    match default_class(classes) {
        Some(existing) if create || existing.name != name => Err(StoreError::forbidden(
            ResourceKind::PriorityClass,
            &name,
            &format!(
                "PriorityClass {} is already marked as default. Only one default can exist",
                existing.name
            ),
        )),
        _ => Ok(()),
    }
}

/// Upstream `admitPod` on create: resolves the class into `spec.priority`
/// and `spec.preemptionPolicy` (an unknown class is Forbidden); a pod
/// without a class gets the global default's name and value, or 0. A
/// priority or policy sent that differs from the computed one is Forbidden.
/// Nothing is written unless the pod is admitted.
fn admit_pod_priority(classes: &[Class], pod: &mut Value) -> Result<(), StoreError> {
    let name = object_name(pod);
    let forbidden = |message: String| StoreError::forbidden(ResourceKind::Pod, &name, &message);
    let class_name = pod["spec"]["priorityClassName"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (class_name, priority, policy) = if class_name.is_empty() {
        match default_class(classes) {
            Some(class) => (
                class.name.clone(),
                class.value,
                class.preemption_policy.clone(),
            ),
            None => (String::new(), 0, Some(PREEMPT_LOWER_PRIORITY.to_owned())),
        }
    } else {
        let class = classes
            .iter()
            .find(|c| c.name == class_name)
            .ok_or_else(|| {
                forbidden(format!("no PriorityClass with name {class_name} was found"))
            })?;
        (class_name, class.value, class.preemption_policy.clone())
    };
    let spec = &pod["spec"];
    if let Some(sent) = spec["priority"].as_i64().filter(|sent| *sent != priority) {
        return Err(forbidden(format!(
            "the integer value of priority ({sent}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
        )));
    }
    if let (Some(sent), Some(policy)) = (spec["preemptionPolicy"].as_str(), policy.as_deref())
        && sent != policy
    {
        return Err(forbidden(format!(
            "the string value of PreemptionPolicy ({sent}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
        )));
    }
    if !pod["spec"].is_object() {
        pod["spec"] = json!({});
    }
    if !class_name.is_empty() {
        pod["spec"]["priorityClassName"] = json!(class_name);
    }
    pod["spec"]["priority"] = json!(priority);
    if let Some(policy) = policy {
        pod["spec"]["preemptionPolicy"] = json!(policy);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i64, global_default: bool, policy: &str) -> Class {
        Class {
            name: name.to_owned(),
            value,
            preemption_policy: Some(policy.to_owned()),
            global_default,
        }
    }

    /// The pod's spec after admission, or the refusal's message.
    type Admitted = Result<Value, String>;

    fn admitted(classes: &[Class], spec: Value) -> Admitted {
        let mut pod = json!({"metadata": {"name": "p", "namespace": "default"}});
        pod["spec"] = spec;
        admit_pod_priority(classes, &mut pod)
            .map(|()| pod["spec"].clone())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn pod_priority_follows_upstream_admit_pod() {
        let low = class("low", 100, false, "Never");
        let critical = class(
            "system-node-critical",
            2_000_001_000,
            false,
            PREEMPT_LOWER_PRIORITY,
        );
        let fallback = class("fallback", 7, true, PREEMPT_LOWER_PRIORITY);
        let cheaper_fallback = class("cheaper", 3, true, "Never");
        let classes = [low.clone(), critical];
        let cases: [(&str, &[Class], Value, Admitted); 7] = [
            (
                "a named class gives its value and policy",
                &classes,
                json!({"priorityClassName": "low"}),
                Ok(json!({"priorityClassName": "low", "priority": 100, "preemptionPolicy": "Never"})),
            ),
            (
                "no class and no default: 0, PreemptLowerPriority",
                &classes,
                json!({}),
                Ok(json!({"priority": 0, "preemptionPolicy": "PreemptLowerPriority"})),
            ),
            (
                "no class: the global default's name and value",
                &[low.clone(), fallback.clone()],
                json!({}),
                Ok(json!({"priorityClassName": "fallback", "priority": 7, "preemptionPolicy": "PreemptLowerPriority"})),
            ),
            (
                "two defaults after a race: the lowest value wins",
                &[fallback, cheaper_fallback],
                json!({}),
                Ok(json!({"priorityClassName": "cheaper", "priority": 3, "preemptionPolicy": "Never"})),
            ),
            (
                "an unknown class is Forbidden",
                &classes,
                json!({"priorityClassName": "nope"}),
                Err("pods \"p\" is forbidden: no PriorityClass with name nope was found".to_owned()),
            ),
            (
                "a priority sent that differs is Forbidden",
                &classes,
                json!({"priorityClassName": "low", "priority": 5}),
                Err("pods \"p\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 100 from the given PriorityClass name".to_owned()),
            ),
            (
                "a policy sent that differs is Forbidden",
                &classes,
                json!({"priorityClassName": "low", "preemptionPolicy": "PreemptLowerPriority"}),
                Err("pods \"p\" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name".to_owned()),
            ),
        ];
        for (case, classes, spec, expected) in cases {
            assert_eq!(admitted(classes, spec), expected, "{case}");
        }
        assert!(
            admitted(&[low], json!({"priorityClassName": "low", "priority": 100})).is_ok(),
            "the same priority sent is accepted"
        );
    }

    #[test]
    fn only_one_class_may_be_the_global_default() {
        let classes = [class("first", 1, true, PREEMPT_LOWER_PRIORITY)];
        let second = json!({"metadata": {"name": "second"}, "globalDefault": true});
        let first = json!({"metadata": {"name": "first"}, "globalDefault": true});
        assert_eq!(
            only_one_default(&classes, &second, true).map_err(|e| e.to_string()),
            Err("priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass first is already marked as default. Only one default can exist".to_owned())
        );
        assert!(only_one_default(&classes, &second, false).is_err());
        assert!(
            only_one_default(&classes, &first, false).is_ok(),
            "re-marking the default itself"
        );
        assert!(only_one_default(&[], &second, true).is_ok());
    }
}
