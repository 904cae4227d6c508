//! The metadata of objects held by the thousand (nodes, pods), decoded with
//! only the fields rollcall reads. Annotations, managed fields (often the
//! largest part of an object), finalizers and the rest are skipped by the
//! decoder, never built; the labels are interned ([`Labels`]).

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use super::{Interned, Labels, Owner, Owners, Stamp, Uid};

/// The metadata of a node, pod or event: the fields of `ObjectMeta` that
/// rollcall reads, under the same names, and nothing else (the upstream
/// `ObjectMeta` takes 360 bytes per object whatever it holds; this one 160,
/// its times are [`Stamp`]s, and the namespace, the same on every pod, is a
/// shared string).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// `metadata.name` (inline up to 24 bytes: most names need no allocation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<CompactString>,
    /// `metadata.namespace` (shared: every pod of a DaemonSet has the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Interned>,
    /// `metadata.uid`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<Uid>,
    /// `metadata.resourceVersion` (inline: etcd's are at most 20 digits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<CompactString>,
    /// `metadata.creationTimestamp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Stamp>,
    /// `metadata.deletionTimestamp`: set once the object is terminating.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Stamp>,
    /// `metadata.ownerReferences`: a list shared by every object naming the
    /// same owners ([`Owners`]).
    #[serde(skip_serializing_if = "<[Owner]>::is_empty")]
    pub owner_references: Owners,
}

/// What the stores and the snapshot loader read of any object's metadata,
/// whether the slim [`Meta`] or the upstream `ObjectMeta` (DaemonSets and
/// ControllerRevisions).
pub trait MetaFields {
    /// `metadata.name`.
    fn name(&self) -> Option<&str>;
    /// `metadata.namespace`.
    fn namespace(&self) -> Option<&str>;
    /// `metadata.resourceVersion`.
    fn resource_version(&self) -> Option<&str>;
}

impl MetaFields for Meta {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
}

impl MetaFields for super::ObjectMeta {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
}

/// `metadata` as decoded: what [`Meta`] keeps, and the labels.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct WireMeta {
    name: Option<CompactString>,
    namespace: Option<Interned>,
    uid: Option<Uid>,
    resource_version: Option<CompactString>,
    creation_timestamp: Option<Stamp>,
    deletion_timestamp: Option<Stamp>,
    owner_references: Owners,
    labels: Labels,
}

impl WireMeta {
    /// The metadata and the interned labels.
    pub(super) fn split(self) -> (Meta, Labels) {
        let meta = Meta {
            name: self.name,
            namespace: self.namespace,
            uid: self.uid,
            resource_version: self.resource_version,
            creation_timestamp: self.creation_timestamp,
            deletion_timestamp: self.deletion_timestamp,
            owner_references: self.owner_references,
        };
        (meta, self.labels)
    }
}

impl<'de> Deserialize<'de> for Meta {
    /// Decodes `metadata` keeping what [`Meta`] keeps, labels dropped (for
    /// objects whose labels nothing reads, such as events).
    fn deserialize<D: serde::Deserializer<'de>>(decoder: D) -> Result<Self, D::Error> {
        Ok(WireMeta::deserialize(decoder)?.split().0)
    }
}

/// `metadata` as encoded: the kept fields with the labels put back.
#[derive(Serialize)]
pub(super) struct JoinedMeta {
    #[serde(flatten)]
    meta: Meta,
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<std::collections::BTreeMap<String, String>>,
}

/// The metadata with the labels put back, for encoding.
pub(super) fn joined(meta: Meta, labels: &Labels) -> JoinedMeta {
    JoinedMeta {
        meta,
        labels: labels.to_map(),
    }
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
        assert_eq!(
            pod.revision_hash(),
            Some("abc"),
            "labels live in pod.labels"
        );
        assert_eq!(pod.metadata.owner_references.len(), 1);
        assert!(pod.is_ready());
        assert_eq!(pod.restarts(), 2);
        assert_eq!(serde_json::to_value(&pod).unwrap(), kept);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn the_kept_metadata_takes_128_bytes() {
        assert_eq!(std::mem::size_of::<crate::model::Meta>(), 128);
        // With the `Arc` header a pod fits jemalloc's 448-byte class (384
        // until the scheduling fields: the shared requests pointer, the
        // nominated node, the QoS class and PodScheduled's reason and
        // message took it from 368 to 408 bytes).
        assert!(std::mem::size_of::<Pod>() + 16 <= 448);
    }

    /// The pods of one DaemonSet share one owner list; another owner, or
    /// the same owner without `controller`, is a list of its own.
    #[test]
    fn pods_naming_the_same_owner_share_one_list() {
        let pod = |uid: &str, controller: bool| -> Pod {
            let controller = if controller {
                r#","controller":true"#
            } else {
                ""
            };
            serde_json::from_str(&format!(
                r#"{{"metadata":{{"name":"p","ownerReferences":[{{"apiVersion":"apps/v1","kind":"DaemonSet","name":"agent","uid":"{uid}"{controller}}}]}}}}"#
            ))
            .unwrap()
        };
        let (a, b) = (pod("u1", true), pod("u1", true));
        let shared = |p: &Pod| p.metadata.owner_references.as_ptr();
        assert_eq!(shared(&a), shared(&b));
        assert_ne!(shared(&a), shared(&pod("u2", true)));
        assert_ne!(shared(&a), shared(&pod("u1", false)));
        assert_eq!(b.metadata.owner_references[0].uid, "u1");
        assert!(b.metadata.owner_references[0].controller == Some(true));
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
