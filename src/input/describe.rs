//! What a load held, in words, for the commands that need DaemonSets: a
//! failed `kubectl get > file` leaves an empty file and a wrong command other
//! kinds, and the refusal must say which. Counts objects (never Lists or
//! warnings), the same counts as the load summary. Pure.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::input::error::SnapshotError;
use crate::input::loaded::LoadedSnapshot;

/// An error when the snapshot has no DaemonSet:
/// `no DaemonSets found in FILE (N objects of kinds …)`.
pub fn require_daemonsets(files: &[PathBuf], loaded: &LoadedSnapshot) -> Result<(), SnapshotError> {
    if !loaded.snapshot.daemonsets.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    Err(SnapshotError::NoDaemonSets {
        inputs: names.join(", "),
        found: describe(loaded),
    })
}

/// `N objects of kinds Node (3), Service (1)`, or `0 objects`: every object
/// read, by kind, whether rollcall reads the kind or skipped it.
pub fn describe(loaded: &LoadedSnapshot) -> String {
    let snapshot = &loaded.snapshot;
    let summary = &loaded.summary;
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for (kind, count) in [
        ("Node", snapshot.nodes.len()),
        ("Pod", snapshot.pods.len()),
        ("DaemonSet", snapshot.daemonsets.len()),
        ("ControllerRevision", snapshot.revisions.len()),
        ("Event", snapshot.events.len()),
        ("<no kind>", summary.without_kind),
    ] {
        if count > 0 {
            kinds.insert(kind, count);
        }
    }
    for (kind, count) in &summary.skipped_kinds {
        *kinds.entry(kind).or_default() += count;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::loader::SnapshotLoader;

    fn loaded(sources: &[&str]) -> LoadedSnapshot {
        let mut loader = SnapshotLoader::default();
        for (index, text) in sources.iter().enumerate() {
            loader.add_text(&format!("in-{index}.json"), text).unwrap();
        }
        loader.finish()
    }

    const ROLES: &str = r#"{"kind":"List","items":[
        {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"a"}},
        {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"b"}},
        {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"c"}}]}"#;

    #[test]
    fn what_the_input_held_is_counted_by_kind() {
        let cases: [(&str, &[&str], &str); 6] = [
            ("empty", &[""], "0 objects"),
            (
                "empty list",
                &[r#"{"apiVersion":"v1","kind":"List","items":[]}"#],
                "0 objects",
            ),
            (
                "one skipped object",
                &[
                    r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"d"}}"#,
                ],
                "1 object of kind Service (1)",
            ),
            (
                "kind-less item and nodes",
                &[
                    r#"{"kind":"List","items":[{"metadata":{"name":"x"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"}}]}"#,
                ],
                "3 objects of kinds <no kind> (1), Node (2)",
            ),
            // A List of 3 ClusterRoles counts 3 objects, not 1 (issue 30: the
            // count followed the one warning per file and kind).
            (
                "objects of a list, not lists",
                &[ROLES],
                "3 objects of kind ClusterRole (3)",
            ),
            (
                "the same kind in two files",
                &[ROLES, ROLES],
                "6 objects of kind ClusterRole (6)",
            ),
        ];
        for (name, sources, expected) in cases {
            let loaded = loaded(sources);
            assert_eq!(describe(&loaded), expected, "{name}");
            let err = require_daemonsets(&[PathBuf::from("in.json")], &loaded).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("no DaemonSets found in in.json ({expected})"),
                "{name}"
            );
        }
    }
}
