//! The revision history: every ControllerRevision of the DaemonSet (number,
//! hash, age, images, which is current, how many nodes run it) and the unified
//! diff of the pod template between the selected revision and a base. Pure.

use std::collections::HashMap;

use similar::{ChangeTag, TextDiff};

use super::{Cell, Inputs, Tone, format};
use crate::engine::revision::RevisionInfo;
use crate::model::DaemonSet;

/// One revision line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryRow {
    /// Cells: number, hash, age, nodes, change-cause, images.
    pub cells: Vec<Cell>,
    /// The selected revision.
    pub selected: bool,
    /// The diff base.
    pub base: bool,
}

/// The history view's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryVm {
    /// Revisions, newest first.
    pub rows: Vec<HistoryRow>,
    /// What the diff compares.
    pub diff_title: String,
    /// Diff lines, coloured.
    pub diff: Vec<Cell>,
    /// First diff line shown.
    pub diff_scroll: usize,
}

/// Revisions newest first (the order the history lists them).
pub fn newest_first(revisions: &[RevisionInfo]) -> Vec<&RevisionInfo> {
    revisions.iter().rev().collect()
}

/// Builds the history view.
pub fn build(input: &Inputs<'_>, _ds: &DaemonSet) -> HistoryVm {
    let Some(index) = input.rows.revisions() else {
        return empty("no revisions yet");
    };
    let revisions = newest_first(index.list());
    if revisions.is_empty() {
        return empty("no revisions yet");
    }
    let current = index.current().map(|c| c.number);
    let mut nodes: HashMap<i64, usize> = HashMap::new();
    for row in input.rows.iter() {
        if let Some(number) = row.pod().and_then(|p| p.revision) {
            *nodes.entry(number).or_default() += 1;
        }
    }
    let selected_at = input.ui.history().selected.min(revisions.len() - 1);
    let selected = revisions[selected_at];
    let base = input
        .ui
        .history()
        .diff_base
        .filter(|&n| n != selected.number)
        .and_then(|n| revisions.iter().find(|r| r.number == n).copied())
        .or_else(|| revisions.get(selected_at + 1).copied());
    let rows = revisions
        .iter()
        .enumerate()
        .map(|(at, revision)| HistoryRow {
            cells: row_cells(
                revision,
                current,
                base.is_some_and(|b| b.number == revision.number),
                nodes.get(&revision.number).copied().unwrap_or(0),
                change_cause(input, revision),
                input.now,
            ),
            selected: at == selected_at,
            base: base.is_some_and(|b| b.number == revision.number),
        })
        .collect();
    let (diff_title, diff) = match base {
        Some(base) => (
            format!(
                "template diff: revision {} → {}",
                base.number, selected.number
            ),
            diff_lines(&base.template, &selected.template),
        ),
        None => (
            format!(
                "template of revision {} (no earlier revision)",
                selected.number
            ),
            yaml(&selected.template)
                .lines()
                .map(|l| Cell::new(l, Tone::Normal))
                .collect(),
        ),
    };
    HistoryVm {
        rows,
        diff_title,
        diff_scroll: input
            .ui
            .history()
            .diff_scroll
            .min(diff.len().saturating_sub(1)),
        diff,
    }
}

fn empty(text: &str) -> HistoryVm {
    HistoryVm {
        rows: Vec::new(),
        diff_title: text.to_owned(),
        diff: Vec::new(),
        diff_scroll: 0,
    }
}

/// The `kubernetes.io/change-cause` annotation of a revision (what
/// `kubectl rollout history` shows), if set.
fn change_cause<'a>(input: &'a Inputs<'_>, revision: &RevisionInfo) -> Option<&'a str> {
    input
        .cache
        .revisions()
        .find(|r| r.metadata.name.as_deref() == Some(revision.name.as_str()))?
        .metadata
        .annotations
        .as_ref()?
        .get(CHANGE_CAUSE)
        .map(String::as_str)
}

/// The annotation `kubectl rollout history` reads.
const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";

fn row_cells(
    revision: &RevisionInfo,
    current: Option<i64>,
    base: bool,
    nodes: usize,
    cause: Option<&str>,
    now: jiff::Timestamp,
) -> Vec<Cell> {
    let is_current = current == Some(revision.number);
    vec![
        Cell::new(
            &format!(
                "{:>4}{}",
                revision.number,
                if is_current { " ✓" } else { "  " }
            ),
            if is_current { Tone::Updated } else { Tone::Old },
        ),
        if base {
            Cell::new(&format!("{} base", revision.hash), Tone::Accent)
        } else {
            Cell::new(&revision.hash, Tone::Dim)
        },
        Cell::new(&format::age(revision.created, now), Tone::Dim),
        Cell::new(
            &format!("{nodes} {}", if nodes == 1 { "node" } else { "nodes" }),
            if nodes > 0 { Tone::Normal } else { Tone::Dim },
        ),
        Cell::new(cause.unwrap_or("<none>"), Tone::Normal),
        Cell::new(&images(&revision.template).join(", "), Tone::Normal),
    ]
}

/// The container images of a stored pod template.
pub fn images(template: &serde_json::Value) -> Vec<String> {
    template
        .pointer("/spec/containers")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("image").and_then(serde_json::Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn yaml(value: &serde_json::Value) -> String {
    serde_norway::to_string(value).unwrap_or_else(|err| format!("cannot render template: {err}"))
}

/// A unified diff of two templates as YAML, one cell per line.
pub fn diff_lines(old: &serde_json::Value, new: &serde_json::Value) -> Vec<Cell> {
    let (old, new) = (yaml(old), yaml(new));
    let diff = TextDiff::from_lines(&old, &new);
    let mut lines = Vec::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        lines.push(Cell::new(&hunk.header().to_string(), Tone::Accent));
        for change in hunk.iter_changes() {
            let (sign, tone) = match change.tag() {
                ChangeTag::Delete => ('-', Tone::Bad),
                ChangeTag::Insert => ('+', Tone::Updated),
                ChangeTag::Equal => (' ', Tone::Dim),
            };
            let text = change.value().trim_end_matches('\n');
            lines.push(Cell::new(&format!("{sign}{text}"), tone));
        }
    }
    if lines.is_empty() {
        lines.push(Cell::new("templates are identical", Tone::Dim));
    }
    lines
}
