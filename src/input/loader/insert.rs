//! Objects into the snapshot: a List's items or one object, decoded by kind,
//! malformed ones excluded with a warning naming the field, duplicates merged
//! when identical and replaced with a warning naming both places when not.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::{ObjectKey, SnapshotLoader, stream};
use crate::input::error::SnapshotError;
use crate::input::limits::shorten;
use crate::model::bounds;
use crate::model::decode::{
    Object, Rejected, decode_json_slim, decode_object, object_name, shown_name,
};

/// Why a List item stopped the file.
pub(super) enum ItemError {
    /// Its text is not JSON (positions relative to the item).
    Syntax(serde_json::Error),
    /// The loader refused it.
    Loader(SnapshotError),
}

/// What decides an item's kind, read without decoding the rest.
#[derive(Deserialize)]
struct ItemHead<'a> {
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Option<Cow<'a, str>>,
    #[serde(default)]
    metadata: Option<IgnoredAny>,
    /// Go's internal form (see `is_internal_form`) has these instead.
    #[serde(rename = "ObjectMeta", default)]
    go_metadata: Option<IgnoredAny>,
    #[serde(rename = "Spec", default)]
    go_spec: Option<IgnoredAny>,
    #[serde(rename = "Status", default)]
    go_status: Option<IgnoredAny>,
    #[serde(rename = "Items", default)]
    go_items: Option<IgnoredAny>,
    #[serde(rename = "TypeMeta", default)]
    go_type: Option<IgnoredAny>,
    #[serde(rename = "ListMeta", default)]
    go_list: Option<IgnoredAny>,
}

impl ItemHead<'_> {
    /// Its own kind, else the List's for an item that is an API object.
    fn kind<'k>(&'k self, implied: Option<&'k str>) -> Option<&'k str> {
        match self.kind.as_deref() {
            Some(kind) if !kind.is_empty() => Some(kind),
            _ if self.metadata.is_some() && !self.is_internal_form() => implied,
            _ => None,
        }
    }

    /// As `is_internal_form`, for the fields it names.
    fn is_internal_form(&self) -> bool {
        [
            &self.go_metadata,
            &self.go_spec,
            &self.go_status,
            &self.go_items,
            &self.go_type,
            &self.go_list,
        ]
        .iter()
        .any(|field| field.is_some())
    }

    fn api_version(&self) -> &str {
        self.api_version.as_deref().unwrap_or_default()
    }
}

impl SnapshotLoader {
    /// One object or one List; `item_kind` is the kind implied by an enclosing
    /// typed List, else by the file's place in a dump layout.
    pub(super) fn add_map(
        &mut self,
        source_name: &str,
        mut map: Map<String, Value>,
        item_kind: Option<&str>,
    ) -> Result<(), SnapshotError> {
        let own_kind = map
            .get("kind")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .map(str::to_owned);
        let is_list = match own_kind.as_deref() {
            Some(kind) => kind.ends_with("List"),
            None => map.contains_key("items") && !has_name(&map),
        };
        if is_list {
            return self.add_list(source_name, &mut map, own_kind.as_deref(), item_kind);
        }
        if own_kind.is_none() && is_internal_form(&map) {
            // kubectl before 1.14 dumped Go's internal types: read as the API
            // form they would mislead (no kind, fields under other names).
            self.summary.internal_types += 1;
            return Ok(());
        }
        if own_kind.is_none() && !map.contains_key("metadata") {
            // Not an API object at all (a dump's own config or index file).
            self.summary.not_objects += 1;
            return Ok(());
        }
        let Some(kind) = own_kind.or_else(|| item_kind.map(str::to_owned)) else {
            let name = object_name(&map);
            self.summary.without_kind += 1;
            self.warn(
                source_name,
                format!("skipped an object without a kind ({name})"),
            );
            return Ok(());
        };
        self.add_object(source_name, &kind, map);
        Ok(())
    }

    /// The items of a List that was not streamed (`items: null` is an empty List).
    fn add_list(
        &mut self,
        source_name: &str,
        map: &mut Map<String, Value>,
        kind: Option<&str>,
        item_kind: Option<&str>,
    ) -> Result<(), SnapshotError> {
        let items = match map.get_mut("items") {
            Some(Value::Array(items)) => std::mem::take(items),
            None | Some(Value::Null) => return Ok(()),
            Some(other) => {
                let text = stream::short(&other.to_string());
                self.warn(
                    source_name,
                    format!("skipped a List whose items are not a list: {text}"),
                );
                return Ok(());
            }
        };
        let implied = kind
            .and_then(|k| k.strip_suffix("List"))
            .filter(|k| !k.is_empty())
            .or(item_kind)
            .map(str::to_owned);
        for item in items {
            match item {
                Value::Object(item) => self.add_map(source_name, item, implied.as_deref())?,
                other => self.warn(
                    source_name,
                    format!(
                        "skipped a list item that is not an object: {}",
                        stream::short(&other.to_string())
                    ),
                ),
            }
        }
        Ok(())
    }

    fn add_object(&mut self, source_name: &str, kind: &str, map: Map<String, Value>) {
        let name = object_name(&map);
        let decoded = match decode_object(kind, map) {
            Ok(Some(decoded)) => decoded,
            Ok(None) => {
                // Counted per kind for the summary; a line per object would
                // bury the warnings that matter.
                *self
                    .summary
                    .skipped_kinds
                    .entry(kind.to_owned())
                    .or_default() += 1;
                return;
            }
            Err(rejected) => {
                let why = format!("field {}: {}", rejected.field, rejected.message);
                return self.exclude(source_name, kind, &name, &why);
            }
        };
        let raw = matches!(decoded.object, Object::Node(_) | Object::Pod(_)).then_some(decoded.raw);
        self.accept(source_name, kind, decoded.object, &decoded.dropped, raw);
    }

    /// A decoded object into the snapshot, unless it is past the API's limits.
    fn accept(
        &mut self,
        source_name: &str,
        kind: &str,
        object: Object,
        dropped: &[Rejected],
        raw: Option<Value>,
    ) {
        let metadata = object.metadata();
        let name = shown_name(
            metadata.namespace().unwrap_or_default(),
            metadata.name().unwrap_or_default(),
        );
        if let Err(oversized) = bounds::check(&object) {
            return self.exclude(source_name, kind, &name, &oversized.to_string());
        }
        for field in dropped {
            self.summary.fields_dropped += 1;
            self.warn(
                source_name,
                format!(
                    "{kind} {name}: ignored malformed field {} ({}); it reads as unknown",
                    field.field, field.message
                ),
            );
        }
        self.insert(source_name, object, raw);
    }

    /// One element of a List's `items` from its JSON text. A Node, Pod or
    /// core/v1 Event with its kind known decodes straight into its slim type;
    /// anything else (or anything that does not decode cleanly, or a loader
    /// that keeps objects whole) takes the object path. `implied` is the
    /// List's kind for its items, `hint` the kind the file's place implies.
    /// Returns the item when it has no kind yet (its List's `kind` follows).
    pub(super) fn add_json_item(
        &mut self,
        source_name: &str,
        text: &[u8],
        implied: Option<&str>,
        hint: Option<&str>,
    ) -> Result<Option<Map<String, Value>>, ItemError> {
        if self.whole.is_none()
            && let Ok(head) = serde_json::from_slice::<ItemHead<'_>>(text)
            && let Some(kind) = head.kind(implied)
            && let Some(object) = decode_json_slim(kind, head.api_version(), text)
        {
            self.accept(source_name, kind, object, &[], None);
            return Ok(None);
        }
        let value: Value = serde_json::from_slice(text).map_err(ItemError::Syntax)?;
        let Value::Object(map) = value else {
            self.warn(
                source_name,
                format!(
                    "skipped a list item that is not an object: {}",
                    stream::short(&value.to_string())
                ),
            );
            return Ok(None);
        };
        let has_kind = map
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| !k.is_empty());
        if !has_kind && implied.is_none() {
            return Ok(Some(map));
        }
        self.add_map(source_name, map, implied.or(hint))
            .map_err(ItemError::Loader)?;
        Ok(None)
    }

    /// An object left out, with a warning saying why.
    fn exclude(&mut self, source_name: &str, kind: &str, name: &str, why: &str) {
        self.summary.excluded += 1;
        let name = shorten(name, 80);
        self.warn(source_name, format!("excluded {kind} {name}: {why}"));
    }

    fn source_index(&mut self, source_name: &str) -> usize {
        if self.sources.last().map(String::as_str) != Some(source_name) {
            self.sources.push(source_name.to_owned());
        }
        self.sources.len() - 1
    }

    fn insert(&mut self, source_name: &str, mut object: Object, raw: Option<Value>) {
        let kind = object.kind();
        object.slim();
        let metadata = object.metadata();
        let key = (
            kind,
            metadata.namespace().unwrap_or_default().to_owned(),
            metadata.name().unwrap_or_default().to_owned(),
        );
        let source = self.source_index(source_name);
        let raw = self.whole.is_some().then(|| raw.map(slim_raw)).flatten();
        if let Some(&existing) = self.index.get(&key) {
            if self.replace(existing, source, &key, object)
                && let Some(slot) = self.whole.as_mut().and_then(|w| w.get_mut(existing))
            {
                *slot = raw;
            }
            return;
        }
        self.index.insert(key, self.objects.len());
        self.objects.push(object);
        self.places.push(source);
        if let Some(whole) = self.whole.as_mut() {
            whole.push(raw);
        }
    }

    /// A second copy of an object: merged when identical (a must-gather holds
    /// each object in its namespace's List and in a file of its own), else the
    /// later one wins and a warning names both places. True when replaced.
    fn replace(&mut self, existing: usize, source: usize, key: &ObjectKey, object: Object) -> bool {
        if self.objects.get(existing) == Some(&object) {
            self.summary.duplicates_merged += 1;
            return false;
        }
        let (kind, namespace, name) = key;
        let shown = if namespace.is_empty() {
            name.clone()
        } else {
            format!("{namespace}/{name}")
        };
        let first = self
            .places
            .get(existing)
            .and_then(|&i| self.sources.get(i))
            .cloned()
            .unwrap_or_default();
        let here = self.sources.get(source).cloned().unwrap_or_default();
        let message = if first == here {
            format!("{kind} {shown} appears more than once; the last one wins")
        } else {
            format!(
                "{kind} {shown} appears more than once, differently (also in {first}); the last one wins"
            )
        };
        self.summary.conflicts += 1;
        self.warn(&here, message);
        if let Some(slot) = self.objects.get_mut(existing) {
            *slot = object;
        }
        if let Some(place) = self.places.get_mut(existing) {
            *place = source;
        }
        true
    }
}

/// A whole object without the metadata no part of rollcall reads.
fn slim_raw(mut raw: Value) -> Value {
    if let Some(metadata) = raw.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    raw
}

/// Whether a kind-less map is one of Kubernetes' internal types as Go's JSON
/// encoder writes them (no json tags): `Items`, `Spec`, `Status`, or the
/// embedded `ObjectMeta`/`TypeMeta`/`ListMeta` under their Go names. The API
/// form spells every field in lower camel case.
fn is_internal_form(map: &Map<String, Value>) -> bool {
    const GO_FIELDS: [&str; 6] = [
        "Items",
        "Spec",
        "Status",
        "ObjectMeta",
        "TypeMeta",
        "ListMeta",
    ];
    GO_FIELDS.iter().any(|field| map.contains_key(*field))
}

/// Whether the map has `metadata.name` (an object, not a kind-less List).
fn has_name(map: &Map<String, Value>) -> bool {
    map.get("metadata")
        .and_then(|m| m.get("name"))
        .is_some_and(Value::is_string)
}
