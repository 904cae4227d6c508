//! The roster: an independently kept JSON object mapping node name to node UID.
//!
//! Owns reading, validating and writing roster files. The UID is part of the
//! identity so that a node replaced under the same name is caught. Validation is
//! strict because a silently shortened roster hides exactly the gaps the audit
//! exists to find: anything but a non-empty object of non-empty string keys and
//! values is rejected, and duplicate keys (which serde_json would silently
//! collapse to the last one) are detected while parsing. Does no cluster I/O.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::Path;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::engine::selector::Selector;
use crate::input::limits::{InputError, MAX_ROSTER_BYTES, MAX_ROSTER_NODES, read_text};
use crate::model::Node;

/// The nodes that must be covered: node name to node UID, sorted by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Roster {
    nodes: BTreeMap<String, String>,
}

/// A roster file that cannot be used, naming the file and the problem.
#[derive(Debug, thiserror::Error)]
#[error("roster {path}: {problem}")]
pub struct RosterError {
    /// The file (or `-` / a label) the roster came from.
    pub path: String,
    /// What is wrong with it (shown in the message, so not also a `source`:
    /// `error: {err:#}` would print it twice).
    pub problem: RosterProblem,
}

/// What can be wrong with a roster.
#[derive(Debug, thiserror::Error)]
pub enum RosterProblem {
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Read(#[source] std::io::Error),
    /// Not a regular file or pipe (`/dev/zero`, a directory).
    #[error("is {0}, not a regular file")]
    NotAFile(&'static str),
    /// The file is larger than [`MAX_ROSTER_BYTES`].
    #[error("is larger than the {} MiB limit for a roster", MAX_ROSTER_BYTES >> 20)]
    TooLarge,
    /// More nodes than [`MAX_ROSTER_NODES`].
    #[error("lists {0} nodes, more than the limit of {MAX_ROSTER_NODES}")]
    TooManyNodes(usize),
    /// The file is not UTF-8 text.
    #[error("is not UTF-8 text")]
    NotText,
    /// The file is not JSON at all.
    #[error("not valid JSON: {0}")]
    Syntax(#[source] serde_json::Error),
    /// The top-level value is not an object.
    #[error("must be a JSON object mapping node name to node UID, found {0}")]
    NotObject(&'static str),
    /// The object has no entries.
    #[error("is empty: list at least one node (name → UID)")]
    Empty,
    /// A key is the empty string.
    #[error("a node name is the empty string")]
    EmptyName,
    /// A value is not a non-empty string.
    #[error("node {node:?}: the UID must be a non-empty string, found {found}")]
    BadUid {
        /// The node whose value is wrong.
        node: String,
        /// What was found instead (`a number`, `an empty string`, ...).
        found: &'static str,
    },
    /// The same node name appears twice.
    #[error("node {0:?} is listed more than once")]
    Duplicate(String),
    /// No node to write a roster from.
    #[error("no node matches the selector {0:?}; a roster must not be empty")]
    NoMatchingNodes(String),
    /// A node to write has no UID.
    #[error("node {0:?} has no UID in its metadata")]
    NodeWithoutUid(String),
    /// The file to write exists and `--force` was not given.
    #[error("already exists; pass --force to overwrite it")]
    Exists,
    /// The file could not be written.
    #[error("cannot write the file: {0}")]
    Write(#[source] std::io::Error),
}

impl Roster {
    /// Builds a roster from (name, UID) pairs, applying the same rules as a file.
    pub fn from_entries<I>(entries: I) -> Result<Self, RosterProblem>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        let mut nodes = BTreeMap::new();
        for (name, uid) in entries {
            if name.is_empty() {
                return Err(RosterProblem::EmptyName);
            }
            if uid.is_empty() {
                return Err(RosterProblem::BadUid {
                    node: name,
                    found: "an empty string",
                });
            }
            if nodes.contains_key(&name) {
                return Err(RosterProblem::Duplicate(name));
            }
            nodes.insert(name, uid);
        }
        if nodes.is_empty() {
            return Err(RosterProblem::Empty);
        }
        Ok(Self { nodes })
    }

    /// A first roster from the nodes whose labels match `selector` (never the
    /// DaemonSet's own selector: the roster must be independent of it).
    pub fn from_matching_nodes(nodes: &[Node], selector: &Selector) -> Result<Self, RosterProblem> {
        let mut pairs = Vec::new();
        for node in nodes.iter().filter(|n| selector.matches(Some(&n.labels))) {
            if node.uid().is_empty() {
                return Err(RosterProblem::NodeWithoutUid(node.name().to_owned()));
            }
            pairs.push((node.name().to_owned(), node.uid().to_owned()));
        }
        if pairs.is_empty() {
            return Err(RosterProblem::NoMatchingNodes(selector.to_string()));
        }
        Self::from_entries(pairs)
    }

    /// Parses roster JSON; `path` only labels errors.
    pub fn parse(text: &str, path: &str) -> Result<Self, RosterError> {
        parse_entries(text).map_err(|problem| RosterError {
            path: path.to_owned(),
            problem,
        })
    }

    /// Reads and parses a roster file, bounded: at most [`MAX_ROSTER_BYTES`]
    /// and [`MAX_ROSTER_NODES`]; devices and directories are refused.
    pub fn load(path: &Path) -> Result<Self, RosterError> {
        let label = path.display().to_string();
        let text = read_text(path, "a roster", MAX_ROSTER_BYTES).map_err(|e| RosterError {
            path: label.clone(),
            problem: match e {
                InputError::Io { source, .. } => RosterProblem::Read(source),
                InputError::NotAFile { kind, .. } => RosterProblem::NotAFile(kind),
                InputError::TooLarge { .. } => RosterProblem::TooLarge,
                InputError::NotText { .. } => RosterProblem::NotText,
            },
        })?;
        Self::parse(&text, &label)
    }

    /// The UID the roster expects for `node`, if the node is on it.
    pub fn uid(&self, node: &str) -> Option<&str> {
        self.nodes.get(node).map(String::as_str)
    }

    /// Whether `node` is on the roster.
    pub fn contains(&self, node: &str) -> bool {
        self.nodes.contains_key(node)
    }

    /// (name, UID) pairs sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.nodes.iter().map(|(n, u)| (n.as_str(), u.as_str()))
    }

    /// How many nodes the roster lists.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false for a validated roster; present for API completeness.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The roster as pretty JSON with a trailing newline (what `--write-roster` writes).
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.nodes).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Writes the roster to `path`; without `force`, refuses to replace an
    /// existing file (checked atomically with create-new, not by a racy exists()).
    pub fn write(&self, path: &Path, force: bool) -> Result<(), RosterError> {
        let wrap = |problem| RosterError {
            path: path.display().to_string(),
            problem,
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true);
        if force {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        let mut file = options.open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                wrap(RosterProblem::Exists)
            } else {
                wrap(RosterProblem::Write(e))
            }
        })?;
        file.write_all(self.to_json_pretty().as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| wrap(RosterProblem::Write(e)))
    }
}

fn parse_entries(text: &str) -> Result<Roster, RosterProblem> {
    // First pass: syntax only, with serde_json's own positions, keeping nothing.
    serde_json::from_str::<IgnoredAny>(text).map_err(RosterProblem::Syntax)?;
    let kind = top_level_kind(text);
    if kind != "an object" {
        return Err(RosterProblem::NotObject(kind));
    }
    // Second pass: every entry in document order, duplicates kept, at most
    // MAX_ROSTER_NODES of them held.
    let raw: RawEntries = serde_json::from_str(text).map_err(RosterProblem::Syntax)?;
    if raw.total > MAX_ROSTER_NODES {
        return Err(RosterProblem::TooManyNodes(raw.total));
    }
    let mut pairs = Vec::with_capacity(raw.entries.len());
    for (name, value) in raw.entries {
        match value {
            serde_json::Value::String(uid) if !uid.is_empty() => pairs.push((name, uid)),
            serde_json::Value::String(_) => {
                return Err(RosterProblem::BadUid {
                    node: name,
                    found: "an empty string",
                });
            }
            other => {
                return Err(RosterProblem::BadUid {
                    node: name,
                    found: json_kind(&other),
                });
            }
        }
    }
    Roster::from_entries(pairs)
}

/// The kind of a syntactically valid JSON document, from its first byte.
fn top_level_kind(text: &str) -> &'static str {
    match text.trim_start().bytes().next() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(s) if s.is_empty() => "an empty string",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// An object's entries in document order, duplicates included: the first
/// [`MAX_ROSTER_NODES`] + 1 kept, the rest only counted.
struct RawEntries {
    entries: Vec<(String, serde_json::Value)>,
    total: usize,
}

impl<'de> Deserialize<'de> for RawEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RawEntriesVisitor)
    }
}

struct RawEntriesVisitor;

impl<'de> Visitor<'de> for RawEntriesVisitor {
    type Value = RawEntries;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object mapping node name to node UID")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEntries, A::Error> {
        let mut entries = Vec::new();
        while entries.len() <= MAX_ROSTER_NODES {
            let Some(entry) = map.next_entry::<String, serde_json::Value>()? else {
                let total = entries.len();
                return Ok(RawEntries { entries, total });
            };
            entries.push(entry);
        }
        let mut total = entries.len();
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
            total += 1;
        }
        Ok(RawEntries { entries, total })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> RosterProblem {
        Roster::parse(text, "r.json").unwrap_err().problem
    }

    #[test]
    fn valid_roster_is_sorted_by_name() {
        let roster = Roster::parse(r#"{"b":"uid-b","a":"uid-a"}"#, "r.json").unwrap();
        let names: Vec<_> = roster.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(roster.uid("b"), Some("uid-b"));
        assert!(roster.contains("a") && !roster.contains("c"));
        assert_eq!(roster.len(), 2);
    }

    #[test]
    fn rejections_name_the_problem() {
        let cases: &[(&str, &str, &str)] = &[
            ("array", r#"["a"]"#, "found an array"),
            ("string", r#""a""#, "found a string"),
            ("null", "null", "found null"),
            ("empty object", "{}", "is empty"),
            ("empty key", r#"{"":"u"}"#, "node name is the empty string"),
            (
                "number value",
                r#"{"a":1}"#,
                r#"node "a": the UID must be a non-empty string, found a number"#,
            ),
            ("empty value", r#"{"a":""}"#, "found an empty string"),
            ("null value", r#"{"a":null}"#, "found null"),
            ("object value", r#"{"a":{"uid":"x"}}"#, "found an object"),
            (
                "duplicate",
                r#"{"a":"u1","b":"u2","a":"u3"}"#,
                r#"node "a" is listed more than once"#,
            ),
            ("not json", "{a: b}", "not valid JSON"),
            ("trailing garbage", r#"{"a":"u"} x"#, "not valid JSON"),
        ];
        for (name, text, expected) in cases {
            let err = Roster::parse(text, "r.json").unwrap_err();
            let message = err.to_string();
            assert!(message.starts_with("roster r.json: "), "{name}: {message}");
            assert!(message.contains(expected), "{name}: {message}");
        }
    }

    #[test]
    fn duplicate_with_identical_value_is_still_rejected() {
        assert!(matches!(
            problem(r#"{"a":"u","a":"u"}"#),
            RosterProblem::Duplicate(n) if n == "a"
        ));
    }

    #[test]
    fn too_many_nodes_are_refused_with_the_limit() {
        use std::fmt::Write as _;
        let mut text = String::from("{");
        for i in 0..=MAX_ROSTER_NODES {
            let _ = write!(text, "\"n{i}\":\"u{i}\",");
        }
        text.push_str("\"last\":\"u\"}");
        let err = Roster::parse(&text, "big.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "roster big.json: lists {} nodes, more than the limit of {MAX_ROSTER_NODES}",
                MAX_ROSTER_NODES + 2
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_oversized_files_are_refused() {
        let err = Roster::load(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "roster /dev/zero: is a character device, not a regular file"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.json");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_ROSTER_BYTES + 1).unwrap();
        let err = Roster::load(&path).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("is larger than the 16 MiB limit for a roster"),
            "{err}"
        );
    }

    #[test]
    fn missing_file_names_the_file() {
        let err = Roster::load(Path::new("/nonexistent/roster.json")).unwrap_err();
        assert!(matches!(err.problem, RosterProblem::Read(_)));
        assert!(err.to_string().contains("/nonexistent/roster.json"));
    }

    #[test]
    fn write_refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roster.json");
        let roster = Roster::from_entries([("n1".to_owned(), "u1".to_owned())]).unwrap();
        roster.write(&path, false).unwrap();
        let err = roster.write(&path, false).unwrap_err();
        assert!(matches!(err.problem, RosterProblem::Exists), "{err}");
        let other = Roster::from_entries([("n2".to_owned(), "u2".to_owned())]).unwrap();
        other.write(&path, true).unwrap();
        assert_eq!(Roster::load(&path).unwrap(), other);
    }

    #[test]
    fn roster_from_matching_nodes() {
        use crate::audit::owned::fixtures::node;
        let mut gpu = node("g1", "ug1", "True");
        gpu.labels = [("pool", "gpu")].into_iter().collect();
        let mut cpu = node("c1", "uc1", "True");
        cpu.labels = [("pool", "cpu")].into_iter().collect();
        let nodes = [gpu, cpu, node("bare", "ub", "True")];
        let selector = Selector::parse("pool=gpu").unwrap();
        let roster = Roster::from_matching_nodes(&nodes, &selector).unwrap();
        assert_eq!(roster.iter().collect::<Vec<_>>(), [("g1", "ug1")]);
        let all = Roster::from_matching_nodes(&nodes, &Selector::parse("").unwrap()).unwrap();
        assert_eq!(all.len(), 3);
        let none = Roster::from_matching_nodes(&nodes, &Selector::parse("pool=tpu").unwrap());
        assert!(matches!(none, Err(RosterProblem::NoMatchingNodes(_))));
    }

    #[test]
    fn written_roster_round_trips() {
        let roster = Roster::from_entries([
            ("n2".to_owned(), "u2".to_owned()),
            ("n1".to_owned(), "u1".to_owned()),
        ])
        .unwrap();
        let text = roster.to_json_pretty();
        assert!(text.ends_with('\n'));
        assert_eq!(Roster::parse(&text, "x").unwrap(), roster);
    }
}
