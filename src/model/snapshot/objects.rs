//! Turning one JSON object of a known kind into its typed model value, for the
//! snapshot loader. Owns the kind dispatch and the events.k8s.io conversion;
//! knows nothing of files, Lists or duplicates.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::model::{ControllerRevision, DaemonSet, Event, Node, ObjectMeta, Pod};

/// One decoded object.
#[derive(Clone, Debug)]
pub(super) enum Object {
    Node(Node),
    Pod(Pod),
    DaemonSet(Box<DaemonSet>),
    Revision(Box<ControllerRevision>),
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

    /// The object's metadata.
    pub fn metadata_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Self::Node(o) => &mut o.metadata,
            Self::Pod(o) => &mut o.metadata,
            Self::DaemonSet(o) => &mut o.metadata,
            Self::Revision(o) => &mut o.metadata,
            Self::Event(o) => &mut o.metadata,
        }
    }
}

/// Decodes `map` as `kind`: `Ok(None)` for a kind rollcall does not read,
/// `Err` with serde's message when the object does not have its kind's shape.
pub(super) fn decode_object(
    kind: &str,
    mut map: Map<String, Value>,
) -> Result<Option<Object>, String> {
    let api_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // The kind is dispatched here; k8s-openapi would reject an older apiVersion
    // (extensions/v1beta1 DaemonSets) although the fields read are the same.
    map.remove("kind");
    map.remove("apiVersion");
    let value = Value::Object(map);
    let object = match kind {
        "Node" => Object::Node(decode(value)?),
        "Pod" => Object::Pod(decode(value)?),
        "DaemonSet" => Object::DaemonSet(Box::new(decode(value)?)),
        "ControllerRevision" => Object::Revision(Box::new(decode(value)?)),
        "Event" if api_version.starts_with("events.k8s.io/") => {
            Object::Event(decode(events_v1_to_core(value))?)
        }
        "Event" => Object::Event(decode(value)?),
        _ => return Ok(None),
    };
    Ok(Some(object))
}

fn decode<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// `namespace/name`, `name` or `(unnamed)` for messages.
pub(super) fn object_name(map: &Map<String, Value>) -> String {
    let metadata = map.get("metadata");
    let field = |key| {
        metadata
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match (field("namespace"), field("name")) {
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
