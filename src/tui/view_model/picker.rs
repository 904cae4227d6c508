//! The DaemonSet list to pick from: namespace, name, counts, strategy, age. Pure.

use super::{Cell, Tone, format};
use crate::cluster::cache::Cache;
use crate::model::{DaemonSet, Target};
use crate::tui::columns::list_height;
use crate::tui::index::natural_cmp;
use crate::tui::state::UiState;

/// Column headings of the picker.
pub const PICKER_COLUMNS: &[(&str, u16)] = &[
    ("NAMESPACE", 16),
    ("NAME", 24),
    ("DESIRED", 8),
    ("READY", 6),
    ("UPDATED", 8),
    ("STRATEGY", 14),
    ("AGE", 5),
];

/// The picker's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickerVm {
    /// Visible rows: cells and whether selected.
    pub rows: Vec<(Vec<Cell>, bool)>,
    /// Title with the count.
    pub title: String,
}

/// The DaemonSets the picker lists, in order (`namespace/name` keys), filtered
/// by the name substring of the applied filter.
pub fn entries(cache: &Cache, filter: &str) -> Vec<Target> {
    let filter = filter.to_lowercase();
    // Filtered and ordered by the `namespace/name` text people read.
    let mut keyed: Vec<(String, Target)> = cache
        .daemonsets()
        .map(Target::of)
        .map(|target| (target.key(), target))
        .filter(|(key, _)| key.to_lowercase().contains(&filter))
        .collect();
    keyed.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    keyed.into_iter().map(|(_, target)| target).collect()
}

/// Builds the visible part of the picker.
pub fn build(cache: &Cache, ui: &UiState, now: jiff::Timestamp) -> PickerVm {
    let keys = entries(cache, &ui.filter_text);
    let height = list_height(ui.size);
    let rows = keys
        .iter()
        .enumerate()
        .skip(ui.picker().offset)
        .take(height)
        .filter_map(|(at, target)| {
            cache
                .daemonset(target)
                .map(|ds| (cells(ds, now), at == ui.picker().selected))
        })
        .collect();
    PickerVm {
        rows,
        title: format!("daemonsets ({}) · Enter opens one", keys.len()),
    }
}

fn cells(ds: &DaemonSet, now: jiff::Timestamp) -> Vec<Cell> {
    let status = ds.status.clone().unwrap_or_default();
    let desired = status.desired_number_scheduled;
    let strategy = crate::engine::rolling::update_strategy(ds).type_name();
    let updated = status.updated_number_scheduled.unwrap_or(0);
    vec![
        Cell::new(
            ds.metadata.namespace.as_deref().unwrap_or_default(),
            Tone::Dim,
        ),
        Cell::new(
            ds.metadata.name.as_deref().unwrap_or_default(),
            Tone::Normal,
        ),
        Cell::new(&desired.to_string(), Tone::Normal),
        Cell::new(
            &status.number_ready.to_string(),
            if status.number_ready < desired {
                Tone::Warn
            } else {
                Tone::Good
            },
        ),
        Cell::new(
            &updated.to_string(),
            if updated < desired {
                Tone::Old
            } else {
                Tone::Updated
            },
        ),
        Cell::new(strategy, Tone::Normal),
        Cell::new(
            &format::age(ds.metadata.creation_timestamp.as_ref().map(|t| t.0), now),
            Tone::Dim,
        ),
    ]
}
