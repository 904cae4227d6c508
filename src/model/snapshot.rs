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

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use super::{ControllerRevision, DaemonSet, Event, Node, Pod};

mod insert;
mod logs;
mod objects;
mod stream;
mod summary;

use logs::LogSections;
use objects::Object;
use stream::Context;
pub use summary::LoadSummary;

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
    /// Skipped kinds, replaced duplicates, list items without a kind,
    /// excluded objects and ignored fields, files skipped for a reason of note.
    pub warnings: Vec<SnapshotWarning>,
    /// What was read, skipped and excluded, counted (for the stderr summary).
    pub summary: LoadSummary,
    /// With [`SnapshotLoader::keep_whole`]: the nodes and pods as read, whole
    /// (managed fields dropped), in the order of `snapshot.nodes` and
    /// `snapshot.pods` — what the embedded cluster loads.
    pub whole: Option<WholeObjects>,
}

/// Nodes and pods with every field the API gave (tolerations, affinity, host
/// IPs, ...), without `kind`/`apiVersion`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WholeObjects {
    /// One per `snapshot.nodes` entry.
    pub nodes: Vec<Value>,
    /// One per `snapshot.pods` entry.
    pub pods: Vec<Value>,
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
        if self.source_name.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.source_name, self.message)
        }
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
    /// Nothing of a kind rollcall reads was found.
    #[error("no Node, Pod, DaemonSet, ControllerRevision or Event in {inputs}: {found}")]
    Empty {
        /// The inputs as given.
        inputs: String,
        /// What was there instead, in words.
        found: String,
    },
    /// An archive or directory was refused: hostile, too large or too deep.
    #[error("{source_name}: {message}")]
    Refused {
        /// The archive, or the entry in it.
        source_name: String,
        /// Which bound was hit, or what is wrong with it.
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

/// Loads every path in order (`-` is stdin; directories and archives are
/// walked, see [`crate::model::dump`]) into one snapshot. Input without a single
/// object of a kind rollcall reads is an error saying what was there.
pub fn load_paths<P: AsRef<Path>>(paths: &[P]) -> Result<LoadedSnapshot, SnapshotError> {
    load_with(SnapshotLoader::default(), paths)
}

/// [`load_paths`], keeping nodes and pods whole for the embedded cluster.
pub fn load_paths_whole<P: AsRef<Path>>(paths: &[P]) -> Result<LoadedSnapshot, SnapshotError> {
    load_with(SnapshotLoader::keep_whole(), paths)
}

fn load_with<P: AsRef<Path>>(
    mut loader: SnapshotLoader,
    paths: &[P],
) -> Result<LoadedSnapshot, SnapshotError> {
    for path in paths {
        crate::model::dump::add_input(&mut loader, path.as_ref())?;
    }
    let result = loader.finish();
    if result.snapshot.is_empty() {
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.as_ref().display().to_string())
            .collect();
        let mut found = result.summary.found_instead();
        let first: Vec<String> = result
            .warnings
            .iter()
            .take(3)
            .map(ToString::to_string)
            .collect();
        if !first.is_empty() {
            found = format!("{found} ({})", first.join("; "));
        }
        return Err(SnapshotError::Empty {
            inputs: names.join(", "),
            found,
        });
    }
    Ok(result)
}

/// The identity that decides "same object": kind, namespace, name.
type ObjectKey = (&'static str, String, String);

/// Accumulates objects from several sources; identical duplicates merge,
/// conflicting ones are replaced by the later one with a warning.
#[derive(Debug, Default)]
pub struct SnapshotLoader {
    objects: Vec<Object>,
    /// Per object, the index in `sources` of where it was read.
    places: Vec<usize>,
    sources: Vec<String>,
    index: HashMap<ObjectKey, usize>,
    warnings: Vec<SnapshotWarning>,
    summary: LoadSummary,
    /// (source, kind) pairs already warned about as skipped kinds.
    warned_kinds: HashSet<(usize, String)>,
    /// Per object, the whole object when `keep_whole` (nodes and pods only).
    whole: Option<Vec<Option<Value>>>,
}

impl SnapshotLoader {
    /// A loader that also keeps nodes and pods whole ([`LoadedSnapshot::whole`]).
    pub fn keep_whole() -> SnapshotLoader {
        SnapshotLoader {
            whole: Some(Vec::new()),
            ..SnapshotLoader::default()
        }
    }

    /// Reads and adds one plain file; `-` reads stdin. Directories and
    /// archives go through [`crate::model::dump::add_input`].
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
        self.add_reader_as(source_name, reader, None)
    }

    /// [`Self::add_reader`], with `hint` the kind of objects that carry none
    /// (implied by the file's place in a dump layout, e.g. Sonobuoy's `Nodes.json`).
    pub fn add_reader_as(
        &mut self,
        source_name: &str,
        reader: impl Read,
        hint: Option<&str>,
    ) -> Result<(), SnapshotError> {
        self.summary.files_read += 1;
        let mut reader = BufReader::with_capacity(64 * 1024, reader);
        let first = first_significant_byte(&mut reader).map_err(|e| read_error(source_name, e))?;
        if !matches!(first, Some(b'{' | b'[')) {
            let mut text = String::new();
            reader
                .read_to_string(&mut text)
                .map_err(|e| read_error(source_name, e))?;
            return self.read_text(source_name, &text, hint);
        }
        // `kubectl cluster-info dump` interleaves container logs between its
        // JSON Lists; the filter drops those sections line by line.
        let mut filter = LogSections::new(reader);
        let mut context = Context {
            loader: self,
            source_name,
            hint,
            failure: None,
        };
        let mut deserializer = serde_json::Deserializer::from_reader(&mut filter);
        let syntax = stream::read_json(&mut context, &mut deserializer).err();
        let failure = context.failure;
        if filter.skipped > 0 {
            self.summary.log_sections += filter.skipped;
        }
        conclude(failure, syntax.map(|e| json_error(source_name, e)))
    }

    /// Adds the documents of one source's text (JSON when it starts with `{` or
    /// `[`, YAML otherwise; a leading byte-order mark is ignored).
    pub fn add_text(&mut self, source_name: &str, text: &str) -> Result<(), SnapshotError> {
        self.summary.files_read += 1;
        self.read_text(source_name, text, None)
    }

    fn read_text(
        &mut self,
        source_name: &str,
        text: &str,
        hint: Option<&str>,
    ) -> Result<(), SnapshotError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut context = Context {
            loader: self,
            source_name,
            hint,
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

    /// Records a file that was not read, and why (for the summary); `warn`
    /// also makes it a warning (for reasons worth a line of their own).
    pub fn skip_file(&mut self, source_name: &str, reason: &str, warn: bool) {
        *self
            .summary
            .files_skipped
            .entry(reason.to_owned())
            .or_default() += 1;
        if warn {
            self.warn(source_name, format!("skipped: {reason}"));
        }
    }

    /// Records a problem that stopped one file of a dump (the others go on).
    pub fn file_failed(&mut self, error: &SnapshotError) {
        *self
            .summary
            .files_skipped
            .entry("unreadable or malformed".to_owned())
            .or_default() += 1;
        self.warnings.push(SnapshotWarning {
            source_name: String::new(),
            message: format!("{error} (objects read before the error are kept)"),
        });
    }

    /// The snapshot and the warnings gathered so far.
    pub fn finish(self) -> LoadedSnapshot {
        let mut snapshot = Snapshot::default();
        let keep = self.whole.is_some();
        let mut whole = WholeObjects::default();
        let mut raws = self.whole.unwrap_or_default().into_iter();
        for object in self.objects {
            let raw = raws.next().flatten();
            match object {
                Object::Node(node) => {
                    snapshot.nodes.push(node);
                    whole.nodes.extend(raw);
                }
                Object::Pod(pod) => {
                    snapshot.pods.push(pod);
                    whole.pods.extend(raw);
                }
                Object::DaemonSet(ds) => snapshot.daemonsets.push(*ds),
                Object::Revision(revision) => snapshot.revisions.push(*revision),
                Object::Event(event) => snapshot.events.push(event),
            }
        }
        LoadedSnapshot {
            snapshot,
            warnings: self.warnings,
            summary: self.summary,
            whole: keep.then_some(whole),
        }
    }

    pub(super) fn warn(&mut self, source_name: &str, message: String) {
        self.warnings.push(SnapshotWarning {
            source_name: source_name.to_owned(),
            message,
        });
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
