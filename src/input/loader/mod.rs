//! The snapshot loader: documents (`kubectl get ... -o json` or `-o yaml`
//! output) from any number of sources into one [`Snapshot`].
//!
//! Accepts single objects, Lists (`List`, `NodeList`, `PodList`, ... — items of a
//! typed List may omit `kind`), concatenated JSON documents and multi-document
//! YAML. Kinds other than Node, Pod, DaemonSet, ControllerRevision and Event are
//! counted per kind and skipped; a repeated object (same kind, namespace and
//! name) replaces the earlier one, with a warning. Warnings are returned as
//! data: this module never prints. Malformed input is an error naming the
//! source and, when the parser knows it, the line and column; hostile input
//! never panics. Opening files, archives and stdin is the `dump` module's.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};

use serde_json::Value;

use crate::input::error::{SnapshotError, SnapshotWarning, json_error, read_error, yaml_error};
use crate::input::loaded::{LoadedSnapshot, WholeObjects};
use crate::input::summary::LoadSummary;
use crate::model::Snapshot;
use crate::model::decode::Object;

mod insert;
mod logs;
mod split;
mod stream;

use insert::ItemError;
use logs::LogSections;
use split::{Piece, Position};
use stream::Context;

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

    /// Adds the documents read from `reader`. JSON is decoded as it streams in;
    /// YAML is read whole first (the YAML parser needs the text), up to
    /// [`split::MAX_HELD_BYTES`] as JSON's largest piece.
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
            // YAML is held whole, as JSON's largest piece may be.
            let most = split::MAX_HELD_BYTES as u64;
            let mut text = String::new();
            (&mut reader)
                .take(most + 1)
                .read_to_string(&mut text)
                .map_err(|e| read_error(source_name, e))?;
            if text.len() as u64 > most {
                return Err(read_error(
                    source_name,
                    split::held_too_much(split::MAX_HELD_BYTES),
                ));
            }
            return self.read_text(source_name, &text, hint);
        }
        // `kubectl cluster-info dump` interleaves container logs between its
        // JSON Lists; the filter drops those sections line by line.
        let mut filter = LogSections::new(reader);
        let result = self.read_json(source_name, &mut filter, hint);
        self.summary.log_sections += filter.skipped;
        result
    }

    /// JSON documents, each List's items decoded one by one as they stream
    /// in (see `split`), the rest of each document as a whole.
    fn read_json(
        &mut self,
        source_name: &str,
        reader: impl Read,
        hint: Option<&str>,
    ) -> Result<(), SnapshotError> {
        // Items with no kind of their own wait for their List's `kind`.
        let mut waiting = Vec::new();
        let sink = |piece: Piece<'_>| match piece {
            Piece::Item {
                bytes,
                at,
                list_kind,
            } => {
                let implied = list_kind.and_then(stream::item_kind_of_list);
                match self.add_json_item(source_name, bytes, implied, hint) {
                    Ok(Some(item)) => {
                        waiting.push(item);
                        Ok(())
                    }
                    Ok(None) => Ok(()),
                    Err(ItemError::Loader(error)) => Err(error),
                    Err(ItemError::Syntax(error)) => {
                        Err(moved(json_error(source_name, error), |l, c| {
                            at.offset(l, c)
                        }))
                    }
                }
            }
            Piece::Document {
                envelope,
                list_kind,
            } => {
                let mut context = Context {
                    loader: &mut *self,
                    source_name,
                    hint,
                    failure: None,
                };
                let mut deserializer = serde_json::Deserializer::from_slice(&envelope.bytes);
                let syntax = stream::read_json(&mut context, &mut deserializer).err();
                let syntax = syntax
                    .map(|e| moved(json_error(source_name, e), |l, c| envelope.position(l, c)));
                conclude(context.failure, syntax)?;
                let implied = list_kind.and_then(stream::item_kind_of_list);
                for item in waiting.drain(..) {
                    self.add_map(source_name, item, implied.or(hint))?;
                }
                Ok(())
            }
        };
        split::split(reader, sink, |error| read_error(source_name, error))
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
        if text.trim_start().starts_with(['{', '[']) {
            return self.read_json(source_name, text.as_bytes(), hint);
        }
        let mut context = Context {
            loader: self,
            source_name,
            hint,
            failure: None,
        };
        let syntax = stream::read_yaml(&mut context, text).err();
        conclude(context.failure, syntax.map(|e| yaml_error(source_name, &e)))
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

/// A syntax error's position moved from a piece of the input to the whole.
fn moved(error: SnapshotError, to_whole: impl Fn(usize, usize) -> Position) -> SnapshotError {
    match error {
        SnapshotError::Syntax {
            source_name,
            format,
            line: Some(line),
            column: Some(column),
            message,
        } => {
            let at = to_whole(line, column);
            SnapshotError::Syntax {
                source_name,
                format,
                line: Some(at.line),
                column: Some(at.column),
                message,
            }
        }
        other => other,
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

#[cfg(test)]
mod tests;
