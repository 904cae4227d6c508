//! Snapshot input for the commands that read files (`-f/--filename`): load,
//! print the loader's warnings, and refuse input that holds no DaemonSet with a
//! message that says what the files did hold (a failed `kubectl get > file`
//! leaves an empty file; a wrong command leaves other kinds).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;

use crate::model::{LoadedSnapshot, snapshot::load_paths};

/// Loads `files` (`-` is stdin) into one snapshot.
pub fn load(files: &[PathBuf]) -> anyhow::Result<LoadedSnapshot> {
    load_paths(files).context("cannot load the snapshot")
}

/// An error (exit 2) when the snapshot has no DaemonSet:
/// `no DaemonSets found in FILE (N objects of kinds …)`.
pub fn require_daemonsets(files: &[PathBuf], loaded: &LoadedSnapshot) -> anyhow::Result<()> {
    if !loaded.snapshot.daemonsets.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    anyhow::bail!(
        "no DaemonSets found in {} ({})",
        names.join(", "),
        describe(loaded)
    )
}

/// `N objects of kinds Node (3), Service (1)`, or `0 objects`: what was read,
/// counting the kinds the loader skipped (from its warnings) too.
pub fn describe(loaded: &LoadedSnapshot) -> String {
    let snapshot = &loaded.snapshot;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for (kind, count) in [
        ("Node", snapshot.nodes.len()),
        ("Pod", snapshot.pods.len()),
        ("DaemonSet", snapshot.daemonsets.len()),
        ("ControllerRevision", snapshot.revisions.len()),
        ("Event", snapshot.events.len()),
    ] {
        if count > 0 {
            kinds.insert(kind.to_owned(), count);
        }
    }
    for warning in &loaded.warnings {
        if let Some(kind) = skipped_kind(&warning.message) {
            *kinds.entry(kind).or_default() += 1;
        }
    }
    let total: usize = kinds.values().sum();
    if total == 0 {
        return "0 objects".to_owned();
    }
    let list: Vec<String> = kinds
        .iter()
        .map(|(kind, count)| format!("{kind} ({count})"))
        .collect();
    format!(
        "{total} object{} of kind{} {}",
        if total == 1 { "" } else { "s" },
        if kinds.len() == 1 { "" } else { "s" },
        list.join(", ")
    )
}

/// The kind of an object the loader skipped, from its warning: `skipped KIND
/// NAME: …`, `skipped an object without a kind` → `<no kind>`.
fn skipped_kind(message: &str) -> Option<String> {
    let rest = message.strip_prefix("skipped ")?;
    if rest.starts_with("an object without a kind") {
        return Some("<no kind>".to_owned());
    }
    if rest.starts_with("a ") || rest.starts_with("an ") || rest.contains("that is not an object") {
        return Some("<not an object>".to_owned());
    }
    rest.split_whitespace()
        .next()
        .filter(|kind| kind.chars().next().is_some_and(char::is_alphabetic))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snapshot::SnapshotLoader;

    fn loaded(text: &str) -> LoadedSnapshot {
        let mut loader = SnapshotLoader::default();
        loader.add_text("in.json", text).unwrap();
        loader.finish()
    }

    #[test]
    fn what_the_input_held_is_counted_by_kind() {
        let cases = [
            ("", "0 objects"),
            (
                r#"{"apiVersion":"v1","kind":"List","items":[]}"#,
                "0 objects",
            ),
            (
                r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"d"}}"#,
                "1 object of kind Service (1)",
            ),
            (
                r#"{"kind":"List","items":[{"metadata":{"name":"x"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"}}]}"#,
                "3 objects of kinds <no kind> (1), Node (2)",
            ),
        ];
        for (text, expected) in cases {
            let loaded = loaded(text);
            assert_eq!(describe(&loaded), expected, "{text}");
            let err = require_daemonsets(&[PathBuf::from("in.json")], &loaded).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("no DaemonSets found in in.json ({expected})")
            );
        }
    }
}
