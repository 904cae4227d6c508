//! One stored object: its canonical compact JSON (shared by lists, gets and
//! every watcher without re-serializing) plus the small index that selectors
//! match on, so a list never has to parse the JSON to filter. The index's
//! strings are interned ([`Interned`], [`Labels`]): at 65,000 nodes owned
//! copies of every label and field cost more than 300 MB.

use std::sync::OnceLock;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::StoreError;
use crate::model::{Interned, Labels};
use crate::sim::resources::ResourceKind;

/// The identity of an object within its kind: namespace (empty for
/// cluster-scoped kinds) and name. Orders by namespace, then name, which is
/// the order lists are served in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The namespace, `""` for cluster-scoped objects.
    pub namespace: String,
    /// The object name.
    pub name: String,
}

impl ObjectKey {
    /// A key from a namespace (`""` when cluster-scoped) and a name.
    pub fn new(namespace: &str, name: &str) -> ObjectKey {
        ObjectKey {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// An immutable stored version of an object. Shared by `Arc` between the
/// store, its history and every watch stream.
#[derive(Debug)]
pub struct StoredObject {
    /// The object's compact JSON, `metadata.resourceVersion` included.
    pub json: Bytes,
    /// Namespace and name.
    pub key: ObjectKey,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.resourceVersion`, as a number.
    pub resource_version: u64,
    /// `metadata.labels`.
    pub labels: Labels,
    /// The field-selector fields this kind supports beyond `metadata.name`
    /// and `metadata.namespace` (those are the key): their names and where
    /// they are read from (the kind's table, shared) ...
    field_table: FieldTable,
    /// ... and their values, in the table's order (a name beside each
    /// value was 16 bytes a field: 176 bytes an Event).
    fields: Box<[Interned]>,
    /// The object's protobuf message, written the first time a client asks
    /// for protobuf and kept: the version never changes, and re-encoding the
    /// JSON for every list made the embedded cluster much slower at protobuf
    /// than a kube-apiserver, which keeps objects in its own binary form
    /// (and caches each watch event's serialization per encoding:
    /// apiserver's `cachingObject`). About two thirds of the JSON's size,
    /// held only for objects a protobuf client has read; boxed, so the
    /// objects no protobuf client reads (every one of a rehearsal) hold 16
    /// bytes for it, not 40.
    protobuf: OnceLock<Box<Bytes>>,
}

impl StoredObject {
    /// Serializes `value` and indexes it. `value` must already carry its final
    /// metadata (the store sets it before calling).
    pub fn from_value(kind: ResourceKind, value: &Value) -> Result<StoredObject, StoreError> {
        StoredObject::from_value_sized(kind, value, 0)
    }

    /// [`StoredObject::from_value`] writing into a buffer of `expected_len`
    /// bytes to start with (the previous version's size, for an update), so
    /// the serializer does not grow it by doubling, copying each time.
    pub fn from_value_sized(
        kind: ResourceKind,
        value: &Value,
        expected_len: usize,
    ) -> Result<StoredObject, StoreError> {
        let mut json = Vec::with_capacity(expected_len);
        serde_json::to_writer(&mut json, value).map_err(|e| StoreError::Internal(e.to_string()))?;
        // `to_vec` grows by doubling; without this a 9 KB node keeps a 16 KB buffer.
        json.shrink_to_fit();
        let meta = &value["metadata"];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let labels = meta["labels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        Ok(StoredObject {
            json: Bytes::from(json),
            key: ObjectKey::new(
                meta["namespace"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap_or_default(),
            ),
            uid: text(&meta["uid"]),
            resource_version: meta["resourceVersion"]
                .as_str()
                .and_then(|rv| rv.parse().ok())
                .unwrap_or_default(),
            labels,
            field_table: field_table(kind),
            fields: index_fields(kind, value)
                .into_iter()
                .map(Interned::from)
                .collect(),
            protobuf: OnceLock::new(),
        })
    }

    /// The object's protobuf message: `encode`d from its JSON the first time,
    /// then the same bytes.
    pub fn protobuf(&self, encode: impl FnOnce(&[u8]) -> Vec<u8>) -> &Bytes {
        self.protobuf
            .get_or_init(|| Box::new(Bytes::from(encode(&self.json))))
    }

    /// The object as a JSON value (parsed from the stored bytes).
    pub fn value(&self) -> Value {
        // The bytes were produced by serde_json from a Value, so they parse.
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// The object decoded into a typed (usually slim) model.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, StoreError> {
        serde_json::from_slice(&self.json).map_err(|e| StoreError::Decode(e.to_string()))
    }

    /// The field-selector fields a kind supports.
    pub fn supported_fields(kind: ResourceKind) -> Vec<&'static str> {
        let mut names = vec!["metadata.name", "metadata.namespace"];
        names.extend(field_table(kind).iter().map(|(name, _)| *name));
        names
    }

    /// The value of a field-selector field, if this kind supports it.
    pub fn field(&self, name: &str) -> Option<&str> {
        match name {
            "metadata.name" => Some(&self.key.name),
            "metadata.namespace" => Some(&self.key.namespace),
            _ => self
                .field_table
                .iter()
                .zip(self.fields.iter())
                .find(|((field, _), _)| *field == name)
                .map(|(_, value)| value.as_str()),
        }
    }
}

/// A kind's field-selector fields: each name and the JSON pointer its value
/// is read from.
type FieldTable = &'static [(&'static str, &'static str)];

/// Field-selector fields per kind beyond `metadata.name` and
/// `metadata.namespace` (every kind has those), following the upstream field
/// label conversion functions (pods: `spec.nodeName`, `status.phase`;
/// events: `involvedObject.*`, `reason`, `type`, `source`, ...).
fn field_table(kind: ResourceKind) -> FieldTable {
    match kind {
        ResourceKind::Pod => &[
            ("spec.nodeName", "/spec/nodeName"),
            ("status.phase", "/status/phase"),
            ("spec.restartPolicy", "/spec/restartPolicy"),
            ("spec.schedulerName", "/spec/schedulerName"),
            ("spec.serviceAccountName", "/spec/serviceAccountName"),
            ("status.podIP", "/status/podIP"),
            ("status.nominatedNodeName", "/status/nominatedNodeName"),
        ],
        ResourceKind::Node => &[("spec.unschedulable", "/spec/unschedulable")],
        ResourceKind::Namespace => &[("status.phase", "/status/phase")],
        ResourceKind::Event => &[
            ("involvedObject.kind", "/involvedObject/kind"),
            ("involvedObject.namespace", "/involvedObject/namespace"),
            ("involvedObject.name", "/involvedObject/name"),
            ("involvedObject.uid", "/involvedObject/uid"),
            ("involvedObject.apiVersion", "/involvedObject/apiVersion"),
            (
                "involvedObject.resourceVersion",
                "/involvedObject/resourceVersion",
            ),
            ("involvedObject.fieldPath", "/involvedObject/fieldPath"),
            ("reason", "/reason"),
            ("type", "/type"),
            ("source", "/source/component"),
            ("reportingComponent", "/reportingComponent"),
        ],
        ResourceKind::DaemonSet
        | ResourceKind::ControllerRevision
        | ResourceKind::PriorityClass
        | ResourceKind::Inert(_) => &[],
    }
}

/// The values of `kind`'s [`field_table`] in `value`, in the table's order.
fn index_fields(kind: ResourceKind, value: &Value) -> Vec<String> {
    let text = |pointer: &str| match value.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    };
    field_table(kind)
        .iter()
        .map(|(field, pointer)| {
            let found = text(pointer);
            if *field == "spec.unschedulable" && found.is_empty() {
                "false".to_owned()
            } else {
                found
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn indexes_labels_and_fields() {
        let pod = json!({"metadata":{"name":"p","namespace":"ns","uid":"u","resourceVersion":"7",
            "labels":{"app":"x"}},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}});
        let stored = StoredObject::from_value(ResourceKind::Pod, &pod).unwrap();
        assert_eq!(stored.key, ObjectKey::new("ns", "p"));
        assert_eq!(stored.resource_version, 7);
        assert_eq!(stored.labels.get("app"), Some("x"));
        assert_eq!(stored.field("metadata.name"), Some("p"));
        assert_eq!(stored.field("metadata.namespace"), Some("ns"));
        assert_eq!(stored.field("spec.nodeName"), Some("n1"));
        assert_eq!(stored.field("status.phase"), Some("Running"));
        assert_eq!(stored.field("spec.bogus"), None);
        assert_eq!(stored.value(), pod);
    }

    #[test]
    fn unschedulable_defaults_to_false() {
        let node = json!({"metadata":{"name":"n"}});
        let stored = StoredObject::from_value(ResourceKind::Node, &node).unwrap();
        assert_eq!(stored.field("spec.unschedulable"), Some("false"));
    }
}
