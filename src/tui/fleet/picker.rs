//! `rollcall fleet` without a DaemonSet: every DaemonSet that exists in at
//! least one cluster, one row each with the number of clusters it runs
//! in, filled in as each cluster answers; `Enter` chooses. Pure state and
//! its view model.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::Target;
use crate::tui::fit::{Cut, fit};
use crate::tui::view_model::{Cell, Tone};

/// What the clusters answered so far.
#[derive(Clone, Debug, Default)]
pub struct DaemonSetList {
    /// Clusters asked.
    pub clusters: usize,
    /// Clusters that answered with a list.
    pub listed: usize,
    /// Clusters that could not be listed: context and why.
    pub failed: Vec<(String, String)>,
    /// `namespace/name` to the number of clusters it is in.
    pub counts: BTreeMap<String, usize>,
    /// The selected entry.
    pub selected: usize,
}

impl DaemonSetList {
    /// An empty list of `clusters` still to answer.
    pub fn new(clusters: usize) -> Self {
        Self {
            clusters,
            ..Self::default()
        }
    }

    /// One cluster's answer (the selection kept on the same DaemonSet).
    pub fn add(&mut self, context: &str, answer: Result<Vec<Target>, String>) {
        let keep = self.chosen();
        match answer {
            Ok(daemonsets) => {
                self.listed += 1;
                for target in daemonsets {
                    *self.counts.entry(target.key()).or_default() += 1;
                }
            }
            Err(message) => self.failed.push((context.to_owned(), message)),
        }
        if let Some(keep) = keep {
            self.selected = self.counts.keys().position(|k| *k == keep).unwrap_or(0);
        }
    }

    /// The selected DaemonSet, `namespace/name`.
    pub fn chosen(&self) -> Option<String> {
        self.counts.keys().nth(self.selected).cloned()
    }

    /// Moves the selection by `delta`.
    pub fn move_by(&mut self, delta: isize) {
        let last = self.counts.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }
}

/// The list's screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickerVm {
    /// The title line.
    pub title: Vec<Cell>,
    /// How many clusters answered, and the failures.
    pub progress: Cell,
    /// The column headings.
    pub heading: String,
    /// One line per DaemonSet (the visible ones).
    pub rows: Vec<Cell>,
    /// Which of `rows` is selected.
    pub selected: Option<usize>,
    /// Keys.
    pub footer: Cell,
}

/// Builds the list's screen for a `width` × `height` terminal.
pub fn picker_vm(list: &DaemonSetList, simulated: bool, (width, height): (u16, u16)) -> PickerVm {
    let mut title = vec![Cell::new("rollcall fleet", Tone::Accent)];
    if simulated {
        title.push(Cell::new(" SIMULATED", Tone::Warn));
    }
    title.push(Cell::new(
        &format!("  choose a DaemonSet · {} clusters", list.clusters),
        Tone::Normal,
    ));
    let mut progress = format!("{} of {} clusters listed", list.listed, list.clusters);
    if let Some((context, message)) = list.failed.first() {
        let _ = write!(
            progress,
            " · {} failed ({context}: {message})",
            list.failed.len()
        );
    }
    let room = usize::from(height.saturating_sub(4)).max(1);
    let offset = (list.selected + 1).saturating_sub(room);
    let rows = list
        .counts
        .iter()
        .skip(offset)
        .take(room)
        .map(|(key, clusters)| {
            let text = format!("{clusters:>8}  {key}");
            Cell::new(&fit(&text, width, Cut::End), Tone::Normal)
        })
        .collect();
    PickerVm {
        title,
        progress: Cell::new(
            &fit(&progress, width, Cut::End),
            if list.failed.is_empty() {
                Tone::Dim
            } else {
                Tone::Warn
            },
        ),
        heading: "CLUSTERS  DAEMONSET".to_owned(),
        rows,
        selected: (!list.counts.is_empty()).then(|| list.selected - offset),
        footer: Cell::new("↑↓ j/k move · Enter open the matrix · q quit", Tone::Dim),
    }
}
