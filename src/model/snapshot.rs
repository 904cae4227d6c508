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
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};

use super::{ControllerRevision, DaemonSet, Event, Node, Pod, slim_metadata};

mod objects;
mod stream;

use objects::{Object, decode_object, object_name};
use stream::Context;

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

impl Snapshot {
    /// The DaemonSet `namespace/name`, if the snapshot has it.
    pub fn daemonset(&self, namespace: &str, name: &str) -> Option<&DaemonSet> {
        self.daemonsets.iter().find(|ds| {
            ds.metadata.namespace.as_deref().unwrap_or_default() == namespace
                && ds.metadata.name.as_deref() == Some(name)
        })
    }

    /// Whether the snapshot holds no objects at all.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.pods.is_empty()
            && self.daemonsets.is_empty()
            && self.revisions.is_empty()
            && self.events.is_empty()
    }
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
            return self.add_reader(STDIN_NAME, std::io::stdin().lock());
        }
        let source_name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|error| read_error(&source_name, error))?;
        self.add_reader(&source_name, file)
    }

    /// Adds the documents read from `reader`. JSON is decoded as it streams in;
    /// YAML is read whole first (the YAML parser needs the text).
    pub fn add_reader(
        &mut self,
        source_name: &str,
        reader: impl Read,
    ) -> Result<(), SnapshotError> {
        let mut reader = BufReader::with_capacity(64 * 1024, reader);
        let first = first_significant_byte(&mut reader).map_err(|e| read_error(source_name, e))?;
        if !matches!(first, Some(b'{' | b'[')) {
            let mut text = String::new();
            reader
                .read_to_string(&mut text)
                .map_err(|e| read_error(source_name, e))?;
            return self.add_text(source_name, &text);
        }
        let mut context = Context {
            loader: self,
            source_name,
            failure: None,
        };
        let mut deserializer = serde_json::Deserializer::from_reader(reader);
        let syntax = stream::read_json(&mut context, &mut deserializer).err();
        conclude(context.failure, syntax.map(|e| json_error(source_name, e)))
    }

    /// Adds the documents of one source's text (JSON when it starts with `{` or
    /// `[`, YAML otherwise; a leading byte-order mark is ignored).
    pub fn add_text(&mut self, source_name: &str, text: &str) -> Result<(), SnapshotError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut context = Context {
            loader: self,
            source_name,
            failure: None,
        };
        let syntax = if text.trim_start().starts_with(['{', '[']) {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            let error = stream::read_json(&mut context, &mut deserializer).err();
            error.map(|e| json_error(source_name, e))
        } else {
            let error = stream::read_yaml(&mut context, text).err();
            error.map(|e| yaml_error(source_name, &e))
        };
        conclude(context.failure, syntax)
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

    pub(super) fn warn(&mut self, source_name: &str, message: String) {
        self.warnings.push(SnapshotWarning {
            source_name: source_name.to_owned(),
            message,
        });
    }

    /// One object or one List; `item_kind` is the kind implied by an enclosing typed List.
    pub(super) fn add_map(
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
                            stream::short(&other.to_string())
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
        map: Map<String, Value>,
    ) -> Result<(), SnapshotError> {
        let name = object_name(&map);
        match decode_object(kind, map) {
            Ok(Some(object)) => self.insert(source_name, object),
            Ok(None) => self.warn(
                source_name,
                format!(
                    "skipped {kind} {name}: rollcall reads only Node, Pod, DaemonSet, ControllerRevision and Event"
                ),
            ),
            Err(message) => {
                return Err(SnapshotError::Object {
                    source_name: source_name.to_owned(),
                    kind: kind.to_owned(),
                    name,
                    message,
                });
            }
        }
        Ok(())
    }

    fn insert(&mut self, source_name: &str, mut object: Object) {
        let kind = object.kind();
        let metadata = object.metadata_mut();
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

/// The loader's own error wins over the parser's (which then only echoes it).
fn conclude(
    failure: Option<SnapshotError>,
    syntax: Option<SnapshotError>,
) -> Result<(), SnapshotError> {
    match (failure, syntax) {
        (Some(error), _) | (None, Some(error)) => Err(error),
        (None, None) => Ok(()),
    }
}

fn read_error(source_name: &str, error: std::io::Error) -> SnapshotError {
    SnapshotError::Read {
        source_name: source_name.to_owned(),
        error,
    }
}

/// Skips a UTF-8 byte-order mark and peeks at the first non-whitespace byte
/// within the buffer, without consuming it (so line numbers stay right).
fn first_significant_byte(reader: &mut impl BufRead) -> std::io::Result<Option<u8>> {
    if reader.fill_buf()?.starts_with(b"\xef\xbb\xbf") {
        reader.consume(3);
    }
    let buffer = reader.fill_buf()?;
    Ok(buffer.iter().copied().find(|b| !b.is_ascii_whitespace()))
}

fn json_error(source_name: &str, error: serde_json::Error) -> SnapshotError {
    if error.is_io() {
        return read_error(source_name, error.into());
    }
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
}

fn yaml_error(source_name: &str, error: &serde_norway::Error) -> SnapshotError {
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
}

#[cfg(test)]
mod tests;
