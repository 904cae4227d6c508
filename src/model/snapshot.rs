//! Snapshot loading: the objects of a cluster as `kubectl get ... -o json` or
//! `-o yaml` prints them, from one or more files (or stdin), into a [`Snapshot`].
//!
//! Accepts single objects, Lists (`List`, `NodeList`, `PodList`, ... — items of a
//! typed List may omit `kind`), concatenated JSON documents and multi-document
//! YAML. Kinds other than Node, Pod, DaemonSet, ControllerRevision and Event are
//! skipped with a warning; a repeated object (same kind, namespace and name)
//! replaces the earlier one, with a warning. Warnings are returned as data: this
//! module never prints. Malformed input is an error naming the source and, when
//! the parser knows it, the line and column; hostile input never panics.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{ControllerRevision, DaemonSet, Event, Node, Pod, slim_metadata};

/// The source name used for `-f -`.
pub const STDIN_NAME: &str = "<stdin>";

/// The objects of a cluster snapshot, in the order first seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Pods (all namespaces given).
    pub pods: Vec<Pod>,
    /// DaemonSets.
    pub daemonsets: Vec<DaemonSet>,
    /// ControllerRevisions (the DaemonSets' template history).
    pub revisions: Vec<ControllerRevision>,
    /// core/v1 Events (events.k8s.io/v1 events are converted).
    pub events: Vec<Event>,
}

/// A snapshot together with what was skipped or replaced while loading it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadedSnapshot {
    /// The objects.
    pub snapshot: Snapshot,
    /// Skipped kinds, replaced duplicates, list items without a kind.
    pub warnings: Vec<SnapshotWarning>,
}

/// Something the loader skipped or replaced; not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotWarning {
    /// The file (or `<stdin>`) it came from.
    pub source_name: String,
    /// What happened, in words.
    pub message: String,
}

impl fmt::Display for SnapshotWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source_name, self.message)
    }
}

/// Why a snapshot could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file (or stdin) could not be read.
    #[error("cannot read {source_name}: {error}")]
    Read {
        /// The file.
        source_name: String,
        /// The I/O error.
        #[source]
        error: std::io::Error,
    },
    /// The text is not valid JSON or YAML.
    #[error("{source_name}{}: invalid {format}: {message}", position(*line, *column))]
    Syntax {
        /// The file.
        source_name: String,
        /// `JSON` or `YAML`.
        format: &'static str,
        /// 1-based line, when the parser reports it.
        line: Option<usize>,
        /// 1-based column, when the parser reports it.
        column: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// A document parsed but an object in it does not have the shape of its kind.
    #[error("{source_name}: {kind} {name:?}: {message}")]
    Object {
        /// The file.
        source_name: String,
        /// The object's kind.
        kind: String,
        /// The object's namespace/name, as far as known.
        name: String,
        /// What is wrong.
        message: String,
    },
}

fn position(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(": line {line}, column {column}"),
        (Some(line), None) => format!(": line {line}"),
        _ => String::new(),
    }
}

/// Loads every path in order (`-` is stdin) into one snapshot.
pub fn load_paths<P: AsRef<Path>>(paths: &[P]) -> Result<LoadedSnapshot, SnapshotError> {
    let mut loader = SnapshotLoader::default();
    for path in paths {
        loader.add_path(path.as_ref())?;
    }
    Ok(loader.finish())
}

/// The identity that decides "same object": kind, namespace, name.
type ObjectKey = (&'static str, String, String);

/// One decoded object.
#[derive(Clone, Debug)]
enum Object {
    Node(Node),
    Pod(Pod),
    DaemonSet(Box<DaemonSet>),
    Revision(Box<ControllerRevision>),
    Event(Event),
}

/// Accumulates objects from several sources; later duplicates win.
#[derive(Debug, Default)]
pub struct SnapshotLoader {
    objects: Vec<Object>,
    index: HashMap<ObjectKey, usize>,
    warnings: Vec<SnapshotWarning>,
}

impl SnapshotLoader {
    /// Reads and adds a file; `-` reads stdin.
    pub fn add_path(&mut self, path: &Path) -> Result<(), SnapshotError> {
        if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|error| SnapshotError::Read {
                    source_name: STDIN_NAME.to_owned(),
                    error,
                })?;
            return self.add_text(STDIN_NAME, &text);
        }
        let source_name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| SnapshotError::Read {
            source_name: source_name.clone(),
            error,
        })?;
        self.add_text(&source_name, &text)
    }

    /// Adds the documents of one source's text (JSON when it starts with `{` or
    /// `[`, YAML otherwise).
    pub fn add_text(&mut self, source_name: &str, text: &str) -> Result<(), SnapshotError> {
        let documents = if text.trim_start().starts_with(['{', '[']) {
            json_documents(source_name, text)?
        } else {
            yaml_documents(source_name, text)?
        };
        for document in documents {
            self.add_document(source_name, document)?;
        }
        Ok(())
    }

    /// The snapshot and the warnings gathered so far.
    pub fn finish(self) -> LoadedSnapshot {
        let mut snapshot = Snapshot::default();
        for object in self.objects {
            match object {
                Object::Node(node) => snapshot.nodes.push(node),
                Object::Pod(pod) => snapshot.pods.push(pod),
                Object::DaemonSet(ds) => snapshot.daemonsets.push(*ds),
                Object::Revision(revision) => snapshot.revisions.push(*revision),
                Object::Event(event) => snapshot.events.push(event),
            }
        }
        LoadedSnapshot {
            snapshot,
            warnings: self.warnings,
        }
    }

    fn warn(&mut self, source_name: &str, message: String) {
        self.warnings.push(SnapshotWarning {
            source_name: source_name.to_owned(),
            message,
        });
    }

    fn add_document(&mut self, source_name: &str, document: Value) -> Result<(), SnapshotError> {
        match document {
            Value::Null => Ok(()),
            Value::Array(items) => {
                for item in items {
                    self.add_document(source_name, item)?;
                }
                Ok(())
            }
            Value::Object(map) => self.add_map(source_name, map, None),
            other => {
                self.warn(
                    source_name,
                    format!(
                        "skipped a document that is not an object: {}",
                        short(&other)
                    ),
                );
                Ok(())
            }
        }
    }

    /// One object or one List; `item_kind` is the kind implied by an enclosing typed List.
    fn add_map(
        &mut self,
        source_name: &str,
        mut map: Map<String, Value>,
        item_kind: Option<&str>,
    ) -> Result<(), SnapshotError> {
        let kind = map
            .get("kind")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .map(str::to_owned)
            .or_else(|| item_kind.map(str::to_owned));
        if let Some(Value::Array(items)) = map.get_mut("items")
            && kind.as_deref().is_none_or(|k| k.ends_with("List"))
        {
            let items = std::mem::take(items);
            let implied = kind
                .as_deref()
                .and_then(|k| k.strip_suffix("List"))
                .filter(|k| !k.is_empty())
                .map(str::to_owned);
            for item in items {
                match item {
                    Value::Object(item) => self.add_map(source_name, item, implied.as_deref())?,
                    other => self.warn(
                        source_name,
                        format!(
                            "skipped a list item that is not an object: {}",
                            short(&other)
                        ),
                    ),
                }
            }
            return Ok(());
        }
        let Some(kind) = kind else {
            let name = object_name(&map);
            self.warn(
                source_name,
                format!("skipped an object without a kind ({name})"),
            );
            return Ok(());
        };
        self.add_object(source_name, &kind, map)
    }

    fn add_object(
        &mut self,
        source_name: &str,
        kind: &str,
        mut map: Map<String, Value>,
    ) -> Result<(), SnapshotError> {
        let name = object_name(&map);
        let api_version = map
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        // We dispatch on kind ourselves; k8s-openapi rejects a differing apiVersion.
        map.remove("kind");
        map.remove("apiVersion");
        let object_error = |message: String| SnapshotError::Object {
            source_name: source_name.to_owned(),
            kind: kind.to_owned(),
            name: name.clone(),
            message,
        };
        let value = Value::Object(map);
        let (key_kind, object) = match kind {
            "Node" => ("Node", Object::Node(decode(value).map_err(object_error)?)),
            "Pod" => ("Pod", Object::Pod(decode(value).map_err(object_error)?)),
            "DaemonSet" => (
                "DaemonSet",
                Object::DaemonSet(Box::new(decode(value).map_err(object_error)?)),
            ),
            "ControllerRevision" => (
                "ControllerRevision",
                Object::Revision(Box::new(decode(value).map_err(object_error)?)),
            ),
            "Event" => {
                let value = if api_version.starts_with("events.k8s.io/") {
                    events_v1_to_core(value)
                } else {
                    value
                };
                ("Event", Object::Event(decode(value).map_err(object_error)?))
            }
            other => {
                self.warn(source_name, format!("skipped {other} {name}: rollcall reads only Node, Pod, DaemonSet, ControllerRevision and Event"));
                return Ok(());
            }
        };
        self.insert(source_name, key_kind, object);
        Ok(())
    }

    fn insert(&mut self, source_name: &str, kind: &'static str, mut object: Object) {
        let metadata = match &mut object {
            Object::Node(o) => &mut o.metadata,
            Object::Pod(o) => &mut o.metadata,
            Object::DaemonSet(o) => &mut o.metadata,
            Object::Revision(o) => &mut o.metadata,
            Object::Event(o) => &mut o.metadata,
        };
        slim_metadata(metadata);
        let key = (
            kind,
            metadata.namespace.clone().unwrap_or_default(),
            metadata.name.clone().unwrap_or_default(),
        );
        if let Some(&existing) = self.index.get(&key) {
            let (_, namespace, name) = &key;
            let shown = if namespace.is_empty() {
                name.clone()
            } else {
                format!("{namespace}/{name}")
            };
            self.warn(
                source_name,
                format!("{kind} {shown} appears more than once; the last one wins"),
            );
            if let Some(slot) = self.objects.get_mut(existing) {
                *slot = object;
            }
            return;
        }
        self.index.insert(key, self.objects.len());
        self.objects.push(object);
    }
}

fn decode<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// `namespace/name`, `name` or `(unnamed)` for messages.
fn object_name(map: &Map<String, Value>) -> String {
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

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
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

fn json_documents(source_name: &str, text: &str) -> Result<Vec<Value>, SnapshotError> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .map(|document| {
            document.map_err(|error| {
                let (line, column) = (error.line(), error.column());
                let message = error.to_string();
                let suffix = format!(" at line {line} column {column}");
                SnapshotError::Syntax {
                    source_name: source_name.to_owned(),
                    format: "JSON",
                    line: (line > 0).then_some(line),
                    column: (line > 0).then_some(column),
                    message: message.strip_suffix(&suffix).unwrap_or(&message).to_owned(),
                }
            })
        })
        .collect()
}

fn yaml_documents(source_name: &str, text: &str) -> Result<Vec<Value>, SnapshotError> {
    let mut documents = Vec::new();
    for document in serde_norway::Deserializer::from_str(text) {
        let value = Value::deserialize(document).map_err(|error| {
            let location = error.location();
            let message = error.to_string();
            let message = match &location {
                Some(at) => {
                    let suffix = format!(" at line {} column {}", at.line(), at.column());
                    message.strip_suffix(&suffix).unwrap_or(&message).to_owned()
                }
                None => message,
            };
            SnapshotError::Syntax {
                source_name: source_name.to_owned(),
                format: "YAML",
                line: location.as_ref().map(serde_norway::Location::line),
                column: location.as_ref().map(serde_norway::Location::column),
                message,
            }
        })?;
        documents.push(value);
    }
    Ok(documents)
}

#[cfg(test)]
mod tests;
