//! The metadata of objects held by the thousand (nodes, pods), decoded with
//! only the fields rollcall reads. Annotations, managed fields (often the
//! largest part of an object), finalizers and the rest are skipped by the
//! decoder, never built; the labels are interned ([`Labels`]).

use serde::Deserialize;

use super::{Labels, ObjectMeta, OwnerReference, Time};

/// `metadata` as decoded: what [`ObjectMeta`] keeps for a node or a pod, and the labels.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct WireMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    owner_references: Option<Vec<OwnerReference>>,
    labels: Labels,
}

impl WireMeta {
    /// The metadata (its `labels` left `None`) and the interned labels.
    pub(super) fn split(self) -> (ObjectMeta, Labels) {
        let meta = ObjectMeta {
            name: self.name,
            namespace: self.namespace,
            uid: self.uid,
            resource_version: self.resource_version,
            creation_timestamp: self.creation_timestamp,
            deletion_timestamp: self.deletion_timestamp,
            deletion_grace_period_seconds: self.deletion_grace_period_seconds,
            owner_references: self.owner_references.filter(|owners| !owners.is_empty()),
            ..ObjectMeta::default()
        };
        (meta, self.labels)
    }
}

/// Decodes `metadata` keeping what [`WireMeta`] keeps, labels dropped (for
/// objects whose labels nothing reads, such as events).
pub(super) fn slim<'de, D: serde::Deserializer<'de>>(decoder: D) -> Result<ObjectMeta, D::Error> {
    Ok(WireMeta::deserialize(decoder)?.split().0)
}

/// `metadata` as encoded: the kept fields with the labels put back.
pub(super) fn joined(mut meta: ObjectMeta, labels: &Labels) -> ObjectMeta {
    if let Some(map) = labels.to_map() {
        meta.labels = Some(map);
    }
    meta
}

#[cfg(test)]
mod tests {
    use crate::model::{Node, Pod};

    #[test]
    fn a_pod_keeps_the_api_shape_on_the_wire_without_what_rollcall_never_reads() {
        let kept = serde_json::json!({
            "metadata": {
                "name": "agent-x", "namespace": "kube-system", "uid": "u1",
                "resourceVersion": "7", "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"app": "agent", "controller-revision-hash": "abc"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                    "name": "agent", "uid": "d1", "controller": true}]
            },
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "img:1"}]},
            "status": {"phase": "Running",
                "conditions": [{"type": "Ready", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:05Z"}],
                "containerStatuses": [{"name": "c", "ready": true, "restartCount": 2,
                    "image": "img:1", "state": {"running": {"startedAt": "2026-01-01T00:00:04Z"}},
                    "lastState": {}}]}
        });
        let mut wire = kept.clone();
        wire["metadata"]["annotations"] = serde_json::json!({"big": "x".repeat(1000)});
        wire["metadata"]["managedFields"] = serde_json::json!([{"manager": "kubelet"}]);
        wire["metadata"]["generateName"] = serde_json::json!("agent-");
        wire["spec"]["tolerations"] = serde_json::json!([{"operator": "Exists"}]);
        let pod: Pod = serde_json::from_value(wire).unwrap();
        assert_eq!(pod.metadata.labels, None, "labels live in pod.labels");
        assert_eq!(pod.revision_hash(), Some("abc"));
        assert_eq!(pod.metadata.annotations, None);
        assert_eq!(pod.metadata.managed_fields, None);
        assert!(pod.is_ready());
        assert_eq!(pod.restarts(), 2);
        assert_eq!(serde_json::to_value(&pod).unwrap(), kept);
    }

    #[test]
    fn labels_decode_like_a_map_null_empty_and_a_repeated_key() {
        let node: Node = serde_json::from_str(
            r#"{"metadata": {"name": "n", "labels": {"b": "1", "a": "2", "b": "3"}}}"#,
        )
        .unwrap();
        let pairs: Vec<_> = node.labels.iter().collect();
        assert_eq!(
            pairs,
            [("a", "2"), ("b", "3")],
            "sorted, the last value of a key wins"
        );
        let bare: Node = serde_json::from_str(r#"{"metadata": {"labels": null}}"#).unwrap();
        assert!(bare.labels.is_empty());
    }
}
