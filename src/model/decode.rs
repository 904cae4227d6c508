//! Turning one JSON object of a known kind into its typed model value (for
//! the snapshot loader in `input`). Owns the kind dispatch and the
//! events.k8s.io conversion; knows nothing of files, Lists or duplicates.

use serde::Deserialize;
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

use crate::model::{ControllerRevision, DaemonSet, Event, MetaFields, Node, Pod, slim_metadata};

/// One decoded object.
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    /// A Node.
    Node(Node),
    /// A Pod.
    Pod(Pod),
    /// A DaemonSet.
    DaemonSet(Box<DaemonSet>),
    /// A ControllerRevision.
    Revision(Box<ControllerRevision>),
    /// A core/v1 Event.
    Event(Event),
}

impl Object {
    /// The kind, as the API names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Node(_) => "Node",
            Self::Pod(_) => "Pod",
            Self::DaemonSet(_) => "DaemonSet",
            Self::Revision(_) => "ControllerRevision",
            Self::Event(_) => "Event",
        }
    }

    /// The object's metadata, as far as the loader reads it.
    pub fn metadata(&self) -> &dyn MetaFields {
        match self {
            Self::Node(o) => &o.metadata,
            Self::Pod(o) => &o.metadata,
            Self::DaemonSet(o) => &o.metadata,
            Self::Revision(o) => &o.metadata,
            Self::Event(o) => &o.metadata,
        }
    }

    /// Drops what no part of rollcall reads from the metadata of the kinds
    /// kept whole (nodes, pods and events are decoded slim already).
    pub fn slim(&mut self) {
        match self {
            Self::DaemonSet(o) => slim_metadata(&mut o.metadata),
            Self::Revision(o) => slim_metadata(&mut o.metadata),
            Self::Node(_) | Self::Pod(_) | Self::Event(_) => {}
        }
    }
}

/// Why an object of a known kind was not loaded: a field rollcall needs is
/// malformed. `field` is the path of the field (`spec.selector.matchLabels`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// The path of the field.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// One decoded object plus the malformed fields that were dropped on the way
/// (fields rollcall does not need, such as a template's `creationTimestamp:
/// "null"`, which then read as unknown).
#[derive(Debug)]
pub struct Decoded {
    /// The object.
    pub object: Object,
    /// The malformed fields dropped.
    pub dropped: Vec<Rejected>,
    /// The whole object as read (without `kind`/`apiVersion` and the dropped
    /// fields), for the embedded cluster, which needs more than the projection.
    pub raw: Value,
}

/// Decodes `map` as `kind`: `Ok(None)` for a kind rollcall does not read,
/// `Err` naming the field when a field rollcall needs has the wrong shape.
pub fn decode_object(kind: &str, mut map: Map<String, Value>) -> Result<Option<Decoded>, Rejected> {
    let api_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // The kind is dispatched here; k8s-openapi would reject an older apiVersion
    // (extensions/v1beta1 DaemonSets) although the fields read are the same.
    map.remove("kind");
    map.remove("apiVersion");
    let mut value = Value::Object(map);
    let mut dropped = Vec::new();
    let object = match kind {
        "Node" => Object::Node(decode(&mut value, &mut dropped)?),
        "Pod" => Object::Pod(decode(&mut value, &mut dropped)?),
        "DaemonSet" => Object::DaemonSet(Box::new(decode(&mut value, &mut dropped)?)),
        "ControllerRevision" => {
            drop_null_string_timestamp(&mut value);
            Object::Revision(Box::new(decode(&mut value, &mut dropped)?))
        }
        "Event" => {
            if api_version.starts_with("events.k8s.io/") {
                value = events_v1_to_core(value);
            }
            Object::Event(decode(&mut value, &mut dropped)?)
        }
        _ => return Ok(None),
    };
    Ok(Some(Decoded {
        object,
        dropped,
        raw: value,
    }))
}

/// A Node, Pod or core/v1 Event straight from its JSON text into its slim
/// type, skipping what it does not read without building a tree of values
/// (the bulk of a large dump). `None` for every other kind and for text that
/// does not decode cleanly: [`decode_object`] then decides, naming and
/// dropping malformed fields as it does for every object.
pub fn decode_json_slim(kind: &str, api_version: &str, text: &[u8]) -> Option<Object> {
    match kind {
        "Node" => serde_json::from_slice(text).ok().map(Object::Node),
        "Pod" => serde_json::from_slice(text).ok().map(Object::Pod),
        "Event" if !api_version.starts_with("events.k8s.io/") => {
            serde_json::from_slice(text).ok().map(Object::Event)
        }
        _ => None,
    }
}

/// A stored template's `creationTimestamp: "null"` (a string, as some support
/// bundles write it) means no timestamp; left in, the revision would never
/// match its DaemonSet's template, whose copy of the field is dropped.
fn drop_null_string_timestamp(value: &mut Value) {
    let metadata = value
        .pointer_mut("/data/spec/template/metadata")
        .and_then(Value::as_object_mut);
    if let Some(metadata) = metadata
        && metadata.get("creationTimestamp").and_then(Value::as_str) == Some("null")
    {
        metadata.remove("creationTimestamp");
    }
}

/// How many malformed optional fields one object may lose before it is rejected.
const MAX_DROPPED_FIELDS: usize = 16;

/// Decodes `value`, dropping malformed fields that rollcall can do without
/// (recorded in `dropped`) and rejecting the object for any other.
fn decode<T: for<'de> Deserialize<'de>>(
    value: &mut Value,
    dropped: &mut Vec<Rejected>,
) -> Result<T, Rejected> {
    loop {
        let error = match serde_path_to_error::deserialize::<_, T>(&*value) {
            Ok(decoded) => return Ok(decoded),
            Err(error) => error,
        };
        let rejected = Rejected {
            field: error.path().to_string(),
            message: error.inner().to_string(),
        };
        let segments: Vec<&Segment> = error.path().iter().collect();
        if dropped.len() >= MAX_DROPPED_FIELDS
            || !is_optional_field(&segments)
            || !remove_at(value, &segments)
        {
            return Err(rejected);
        }
        dropped.push(rejected);
    }
}

/// Whether a malformed field at this path may be dropped: timestamps (rollcall
/// only shows ages; an unknown age is honest) and anything under
/// `managedFields` (never read). Everything else is needed or might be.
fn is_optional_field(path: &[&Segment]) -> bool {
    const TIMES: [&str; 12] = [
        "creationTimestamp",
        "deletionTimestamp",
        "lastTransitionTime",
        "lastProbeTime",
        "lastHeartbeatTime",
        "lastUpdateTime",
        "startedAt",
        "finishedAt",
        "startTime",
        "firstTimestamp",
        "lastTimestamp",
        "eventTime",
    ];
    let in_managed_fields = path
        .iter()
        .any(|s| matches!(s, Segment::Map { key } if key == "managedFields"));
    let leaf_is_time =
        matches!(path.last(), Some(Segment::Map { key }) if TIMES.contains(&key.as_str()));
    in_managed_fields || leaf_is_time
}

/// Removes the field at `path` from `value` (a map key, or the managed-fields
/// entry it sits in); false when the path does not lead anywhere removable.
fn remove_at(value: &mut Value, path: &[&Segment]) -> bool {
    // A bad entry under managedFields: drop the whole list, never read anyway.
    if let Some(at) = path
        .iter()
        .position(|s| matches!(s, Segment::Map { key } if key == "managedFields"))
    {
        return remove_key(value, &path[..=at]);
    }
    remove_key(value, path)
}

fn remove_key(value: &mut Value, path: &[&Segment]) -> bool {
    let Some((Segment::Map { key }, parents)) = path.split_last() else {
        return false;
    };
    let mut current = value;
    for segment in parents {
        current = match (segment, current) {
            (Segment::Map { key }, Value::Object(map)) => match map.get_mut(key) {
                Some(next) => next,
                None => return false,
            },
            (Segment::Seq { index }, Value::Array(items)) => match items.get_mut(*index) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
    current
        .as_object_mut()
        .is_some_and(|map| map.remove(key).is_some())
}

/// `namespace/name`, `name` or `(unnamed)` for messages.
pub fn object_name(map: &Map<String, Value>) -> String {
    let metadata = map.get("metadata");
    let field = |key| {
        metadata
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    shown_name(field("namespace"), field("name"))
}

/// `namespace/name`, `name` or `(unnamed)`: how messages name an object.
pub fn shown_name(namespace: &str, name: &str) -> String {
    match (namespace, name) {
        (_, "") => "(unnamed)".to_owned(),
        ("", name) => name.to_owned(),
        (namespace, name) => format!("{namespace}/{name}"),
    }
}

/// An events.k8s.io/v1 Event in core/v1 field names (`regarding` is
/// `involvedObject`, `note` is `message`, the deprecated fields are the old ones).
fn events_v1_to_core(value: Value) -> Value {
    let Value::Object(mut map) = value else {
        return value;
    };
    for (from, to) in [
        ("regarding", "involvedObject"),
        ("note", "message"),
        ("deprecatedCount", "count"),
        ("deprecatedFirstTimestamp", "firstTimestamp"),
        ("deprecatedLastTimestamp", "lastTimestamp"),
    ] {
        if let Some(field) = map.remove(from) {
            map.entry(to).or_insert(field);
        }
    }
    Value::Object(map)
}
