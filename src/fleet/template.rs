//! One revision identity across clusters. Revision numbers and the
//! `controller-revision-hash` differ per cluster for the same template, so a
//! fleet compares templates by content: a digest of the normalised pod
//! template, and its image list. Pure: a template in, an identity out.
//!
//! Normalising leaves out what differs between clusters for the same
//! manifest:
//!
//! - by nature: the labels `controller-revision-hash` and
//!   `pod-template-generation` (the controller's per-cluster bookkeeping) and
//!   any object metadata (`name`, `namespace`, `uid`, `resourceVersion`,
//!   `creationTimestamp`, `generation`, `managedFields`);
//! - what the API server defaults, when it has the default value (a cluster
//!   of another version, or a manifest that spells the default out, must not
//!   look different): `restartPolicy: Always`, `dnsPolicy: ClusterFirst`,
//!   `schedulerName: default-scheduler`, `terminationGracePeriodSeconds: 30`,
//!   `enableServiceLinks: true`; per container `terminationMessagePath:
//!   /dev/termination-log`, `terminationMessagePolicy: File`, the
//!   `imagePullPolicy` the image implies (`Always` for `:latest` or no tag,
//!   else `IfNotPresent`), a port's `protocol: TCP`, a probe's
//!   `timeoutSeconds: 1`, `periodSeconds: 10`, `successThreshold: 1`,
//!   `failureThreshold: 3`, a field reference's `apiVersion: v1`; per volume
//!   `defaultMode: 420` and `hostPath.type: ""`;
//! - absence spelled three ways: `null`, `[]` and an empty `labels`,
//!   `annotations`, `nodeSelector`, `securityContext` or `resources` are
//!   the same as the field left out (an `emptyDir: {}` is kept: it means something).
//!
//! Everything else counts, in order (the order of `env` or `args` matters).

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

/// Labels the controller puts on every template with per-cluster values.
pub const PER_CLUSTER_LABELS: [&str; 2] = ["controller-revision-hash", "pod-template-generation"];

/// How many hex digits of the SHA-256 make the digest (48 bits: ample for
/// the handful of templates a fleet runs, short enough to read in a table).
const DIGEST_HEX: usize = 12;

/// A template's identity fleet-wide.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateIdentity {
    /// The first hex digits of the SHA-256 of the normalised template's
    /// canonical JSON (keys sorted, no spaces).
    pub digest: String,
    /// The images of its containers, then its init containers', in order, each once.
    pub images: Vec<String>,
    /// The normalised template, to say what differs.
    #[serde(skip)]
    pub normalized: Value,
}

impl TemplateIdentity {
    /// The identity of a pod template (`spec.template` of a DaemonSet).
    pub fn of(template: &k8s_openapi::api::core::v1::PodTemplateSpec) -> TemplateIdentity {
        TemplateIdentity::of_value(&serde_json::to_value(template).unwrap_or(Value::Null))
    }

    /// The identity of a pod template given as JSON.
    pub fn of_value(template: &Value) -> TemplateIdentity {
        let normalized = normalize(template);
        let mut canonical = String::new();
        crate::engine::revision::write_canonical(&normalized, &mut canonical);
        let hash = ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes());
        let mut digest = String::with_capacity(DIGEST_HEX);
        for byte in hash.as_ref().iter().take(DIGEST_HEX / 2) {
            let _ = write!(digest, "{byte:02x}");
        }
        TemplateIdentity {
            digest,
            images: images(&normalized),
            normalized,
        }
    }
}

/// The template without what differs per cluster by nature or by defaulting.
fn normalize(template: &Value) -> Value {
    let mut out = Map::new();
    if let Some(metadata) = template.get("metadata") {
        let mut kept = Map::new();
        for key in ["labels", "annotations"] {
            if let Some(Value::Object(map)) = metadata.get(key) {
                let mut map = map.clone();
                if key == "labels" {
                    for label in PER_CLUSTER_LABELS {
                        map.remove(label);
                    }
                }
                if !map.is_empty() {
                    kept.insert(key.to_owned(), Value::Object(map));
                }
            }
        }
        if !kept.is_empty() {
            out.insert("metadata".to_owned(), Value::Object(kept));
        }
    }
    if let Some(spec) = template.get("spec") {
        out.insert("spec".to_owned(), normalize_spec(spec));
    }
    strip_absent(Value::Object(out))
}

fn normalize_spec(spec: &Value) -> Value {
    let mut spec = spec.clone();
    let Some(map) = spec.as_object_mut() else {
        return spec;
    };
    drop_if(map, "restartPolicy", &Value::from("Always"));
    drop_if(map, "dnsPolicy", &Value::from("ClusterFirst"));
    drop_if(map, "schedulerName", &Value::from("default-scheduler"));
    drop_if(map, "terminationGracePeriodSeconds", &Value::from(30));
    drop_if(map, "enableServiceLinks", &Value::Bool(true));
    for key in ["containers", "initContainers"] {
        if let Some(Value::Array(containers)) = map.get_mut(key) {
            containers.iter_mut().for_each(normalize_container);
        }
    }
    if let Some(Value::Array(volumes)) = map.get_mut("volumes") {
        volumes.iter_mut().for_each(normalize_volume);
    }
    spec
}

fn normalize_container(container: &mut Value) {
    let implied_pull = container
        .get("image")
        .and_then(Value::as_str)
        .map(implied_pull_policy);
    let Some(map) = container.as_object_mut() else {
        return;
    };
    drop_if(
        map,
        "terminationMessagePath",
        &Value::from("/dev/termination-log"),
    );
    drop_if(map, "terminationMessagePolicy", &Value::from("File"));
    if let Some(implied) = implied_pull {
        drop_if(map, "imagePullPolicy", &Value::from(implied));
    }
    if let Some(Value::Array(ports)) = map.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            drop_if(port, "protocol", &Value::from("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(probe)) = map.get_mut(probe) {
            drop_if(probe, "timeoutSeconds", &Value::from(1));
            drop_if(probe, "periodSeconds", &Value::from(10));
            drop_if(probe, "successThreshold", &Value::from(1));
            drop_if(probe, "failureThreshold", &Value::from(3));
        }
    }
    if let Some(Value::Array(env)) = map.get_mut("env") {
        for field_ref in env
            .iter_mut()
            .filter_map(|var| var.pointer_mut("/valueFrom/fieldRef"))
            .filter_map(Value::as_object_mut)
        {
            drop_if(field_ref, "apiVersion", &Value::from("v1"));
        }
    }
}

fn normalize_volume(volume: &mut Value) {
    let Some(map) = volume.as_object_mut() else {
        return;
    };
    for source in ["configMap", "secret", "projected", "downwardAPI"] {
        if let Some(Value::Object(source)) = map.get_mut(source) {
            drop_if(source, "defaultMode", &Value::from(420));
        }
    }
    if let Some(Value::Object(host_path)) = map.get_mut("hostPath") {
        drop_if(host_path, "type", &Value::from(""));
    }
}

/// The pull policy the API server gives a container that names none.
fn implied_pull_policy(image: &str) -> &'static str {
    let name = image.split('@').next().unwrap_or(image);
    let tag = name
        .rfind(':')
        .map(|at| &name[at + 1..])
        .filter(|tag| !tag.contains('/'));
    let pinned_by_digest = image.contains('@');
    match tag {
        _ if pinned_by_digest => "IfNotPresent",
        None | Some("latest") => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn drop_if(map: &mut Map<String, Value>, key: &str, default: &Value) {
    if map.get(key) == Some(default) {
        map.remove(key);
    }
}

/// Objects whose emptiness means "not set" (an empty `emptyDir` does not).
const EMPTY_MEANS_UNSET: [&str; 5] = [
    "labels",
    "annotations",
    "nodeSelector",
    "securityContext",
    "resources",
];

/// Removes nulls, empty arrays and the empty objects of [`EMPTY_MEANS_UNSET`], everywhere.
fn strip_absent(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, strip_absent(value)))
                .filter(|(key, value)| match value {
                    Value::Null => false,
                    Value::Array(items) => !items.is_empty(),
                    Value::Object(map) => {
                        !(map.is_empty() && EMPTY_MEANS_UNSET.contains(&key.as_str()))
                    }
                    _ => true,
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_absent).collect()),
        other => other,
    }
}

/// Containers' images, then init containers', each once, in order.
fn images(normalized: &Value) -> Vec<String> {
    let mut images: Vec<String> = Vec::new();
    for key in ["containers", "initContainers"] {
        let listed = normalized
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("image").and_then(Value::as_str));
        for image in listed {
            if !images.iter().any(|known| known == image) {
                images.push(image.to_owned());
            }
        }
    }
    images
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(image: &str) -> Value {
        json!({
            "metadata": {"labels": {"app": "agent"}},
            "spec": {
                "containers": [{"name": "agent", "image": image, "env": [{"name": "A", "value": "1"}]}],
                "tolerations": [{"operator": "Exists"}]
            }
        })
    }

    /// The same template as a cluster's API server returns it: defaulted,
    /// with the controller's per-cluster labels.
    fn as_served(image: &str) -> Value {
        json!({
            "metadata": {
                "creationTimestamp": null,
                "labels": {"app": "agent", "controller-revision-hash": "6d9f7c", "pod-template-generation": "4"}
            },
            "spec": {
                "containers": [{
                    "name": "agent", "image": image,
                    "env": [{"name": "A", "value": "1"}],
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "ports": [{"containerPort": 9100, "protocol": "TCP"}]
                }],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30,
                "tolerations": [{"operator": "Exists"}],
                "volumes": []
            }
        })
    }

    #[test]
    fn defaults_and_per_cluster_labels_do_not_change_the_digest() {
        let mut plain = template("agent:1.9");
        plain["spec"]["containers"][0]["ports"] = json!([{"containerPort": 9100}]);
        let plain = TemplateIdentity::of_value(&plain);
        let served = TemplateIdentity::of_value(&as_served("agent:1.9"));
        assert_eq!(plain.digest, served.digest);
        assert_eq!(plain.digest.len(), DIGEST_HEX);
        assert_eq!(served.images, ["agent:1.9"]);
    }

    #[test]
    fn what_counts_changes_the_digest() {
        let base = TemplateIdentity::of_value(&template("agent:1.9"));
        let mut cases: Vec<(&str, Value)> = vec![("image", template("agent:1.8"))];
        let mut env = template("agent:1.9");
        env["spec"]["containers"][0]["env"][0]["value"] = json!("2");
        cases.push(("env value", env));
        let mut tolerations = template("agent:1.9");
        tolerations["spec"]["tolerations"] = json!([]);
        cases.push(("tolerations gone", tolerations));
        let mut label = template("agent:1.9");
        label["metadata"]["labels"]["tier"] = json!("edge");
        cases.push(("a label", label));
        let mut pull = template("agent:1.9");
        pull["spec"]["containers"][0]["imagePullPolicy"] = json!("Always");
        cases.push(("a pull policy other than the implied one", pull));
        let mut empty_dir = template("agent:1.9");
        empty_dir["spec"]["volumes"] = json!([{"name": "scratch", "emptyDir": {}}]);
        cases.push(("an emptyDir volume", empty_dir));
        for (name, changed) in cases {
            assert_ne!(
                TemplateIdentity::of_value(&changed).digest,
                base.digest,
                "{name}"
            );
        }
    }

    #[test]
    fn key_order_does_not_matter() {
        let a: Value = serde_json::from_str(
            r#"{"spec":{"containers":[{"name":"x","image":"i:1"}],"hostNetwork":true}}"#,
        )
        .unwrap();
        let b: Value = serde_json::from_str(
            r#"{"spec":{"hostNetwork":true,"containers":[{"image":"i:1","name":"x"}]}}"#,
        )
        .unwrap();
        assert_eq!(
            TemplateIdentity::of_value(&a).digest,
            TemplateIdentity::of_value(&b).digest
        );
    }

    #[test]
    fn the_implied_pull_policy_follows_the_tag() {
        for (image, policy) in [
            ("agent", "Always"),
            ("agent:latest", "Always"),
            ("agent:1.9", "IfNotPresent"),
            ("registry:5000/agent", "Always"),
            ("agent@sha256:abc", "IfNotPresent"),
        ] {
            assert_eq!(implied_pull_policy(image), policy, "{image}");
        }
    }

    #[test]
    fn images_list_containers_then_init_containers_once_each() {
        let value = json!({"spec": {
            "containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}],
            "initContainers": [{"name": "i", "image": "x:1"}, {"name": "j", "image": "z:1"}]
        }});
        assert_eq!(
            TemplateIdentity::of_value(&value).images,
            ["x:1", "y:1", "z:1"]
        );
    }

    #[test]
    fn hostile_shapes_are_an_identity_not_a_panic() {
        for value in [
            json!(null),
            json!([1, 2]),
            json!({"spec": 7}),
            json!({"spec": {"containers": "no"}}),
        ] {
            let identity = TemplateIdentity::of_value(&value);
            assert_eq!(identity.digest.len(), DIGEST_HEX);
        }
    }
}
