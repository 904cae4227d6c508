//! The grid's view model: the visible lines only, each node row turned into
//! one cell per visible column. Pure.

use std::fmt::Write as _;

use super::{Cell, Inputs, Tone, format};
use crate::tui::columns::{Column, ColumnId, list_height, visible_columns};
use crate::tui::index::Entry;
use crate::tui::roster::RosterState;
use crate::tui::rows::{NodeRow, RowState};

/// One grid line on screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GridLine {
    /// A group heading.
    Heading(Cell),
    /// A node row.
    Row {
        /// One cell per column.
        cells: Vec<Cell>,
        /// The selected row.
        selected: bool,
    },
}

/// The grid's content.
#[derive(Clone, Debug, PartialEq)]
pub struct GridVm {
    /// The visible columns.
    pub columns: Vec<Column>,
    /// The visible lines.
    pub lines: Vec<GridLine>,
    /// Title: position, sort, group, filter.
    pub title: String,
    /// Shown instead of lines when nothing matches.
    pub empty: Option<Cell>,
}

/// Builds the visible part of the grid; `compact` is the narrow grid beside the detail pane.
pub fn build(input: &Inputs<'_>, compact: bool) -> GridVm {
    let ui = input.ui;
    let index = input.index;
    let width = if compact { ui.size.0 / 2 } else { ui.size.0 };
    let columns = visible_columns(width);
    let height = list_height(ui.size);
    let offset = ui.offset.min(index.entries.len().saturating_sub(1));
    let selected_entry = index.rows.get(ui.selected).copied();
    let lines = index
        .entries
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .filter_map(|(at, entry)| match entry {
            Entry::Heading { label, count } => Some(GridLine::Heading(Cell::new(
                &format!("▾ {label} ({count})"),
                Tone::Accent,
            ))),
            Entry::Row(name) => match (input.rows.get(name), input.roster) {
                (Some(row), roster) => Some(GridLine::Row {
                    cells: columns
                        .iter()
                        .map(|c| {
                            let plain = cell(c.id, row, &columns, input.now);
                            match roster {
                                Some(roster) => roster.mark(c.id, name, plain),
                                None => plain,
                            }
                        })
                        .collect(),
                    selected: Some(at) == selected_entry,
                }),
                // A roster node absent from the cluster keeps a row of its own.
                (None, Some(roster)) if roster.is_absent(name) => Some(GridLine::Row {
                    cells: RosterState::absent_cells(&columns, name),
                    selected: Some(at) == selected_entry,
                }),
                (None, _) => None,
            },
        })
        .collect();
    let shown = index.rows.len();
    let total = input.rows.len() + input.roster.map_or(0, |r| r.absent().len());
    let mut title = if shown == 0 {
        format!("nodes 0/{total}")
    } else {
        format!("node {}/{shown}", ui.selected.min(shown - 1) + 1)
    };
    if shown != total {
        let _ = write!(title, " (of {total})");
    }
    let _ = write!(
        title,
        " · sort {} · group {}",
        ui.sort.label(),
        ui.group.label()
    );
    if ui.filter.is_active() {
        let _ = write!(title, " · filter {}", ui.filter_text);
    }
    let empty = (shown == 0).then(|| {
        let text = if total == 0 {
            "no nodes"
        } else {
            "no node matches the filter"
        };
        Cell::new(text, Tone::Dim)
    });
    GridVm {
        columns,
        lines,
        title: super::super::sanitize::sanitize(&title).into_owned(),
        empty,
    }
}

fn cell(id: ColumnId, row: &NodeRow, columns: &[Column], now: jiff::Timestamp) -> Cell {
    let pod = row.pod();
    let verdict = &row.coverage.verdict;
    match id {
        ColumnId::Node => Cell::new(
            row.name(),
            if row.node_ready == Some(false) {
                Tone::Bad
            } else {
                Tone::Normal
            },
        ),
        // "keep": no new pod would be placed, but the one running stays (an
        // untolerated NoSchedule taint); without a pod that is simply "no".
        ColumnId::Eligible => match (
            verdict.should_run,
            verdict.should_continue_running,
            pod.is_some(),
        ) {
            (true, _, _) => Cell::new("yes", Tone::Good),
            (false, true, true) => Cell::new("keep", Tone::Warn),
            (false, _, _) => Cell::new("no", Tone::Dim),
        },
        ColumnId::Pod => match pod {
            Some(p) if row.coverage.pods.len() > 1 => Cell::new(
                &format!("{} +{}", p.name, row.coverage.pods.len() - 1),
                Tone::Warn,
            ),
            Some(p) => Cell::new(&p.name, Tone::Normal),
            None => Cell::new("-", Tone::Dim),
        },
        ColumnId::Revision => revision_cell(row),
        ColumnId::Status => status_cell(row),
        ColumnId::Restarts => match pod {
            Some(p) => Cell::new(
                &p.restarts.to_string(),
                if p.restarts > 0 {
                    Tone::Warn
                } else {
                    Tone::Normal
                },
            ),
            None => Cell::new("-", Tone::Dim),
        },
        ColumnId::Age => Cell::new(&format::age(pod.and_then(|p| p.created), now), Tone::Dim),
        ColumnId::NodeState => node_state_cell(row),
        ColumnId::Taints => match row.taints.as_slice() {
            [] => Cell::new("-", Tone::Dim),
            [only] => Cell::new(only, Tone::Normal),
            [first, rest @ ..] => Cell::new(&format!("{first} +{}", rest.len()), Tone::Normal),
        },
        ColumnId::PoolZone => Cell::new(
            &format!(
                "{}/{}",
                row.pool.as_deref().unwrap_or("-"),
                row.zone.as_deref().unwrap_or("-")
            ),
            Tone::Dim,
        ),
        ColumnId::Why => {
            if let Some(reason) = verdict
                .reasons
                .first()
                .filter(|_| !verdict.should_run || !verdict.should_continue_running)
            {
                Cell::new(
                    &reason.message,
                    if row.state == RowState::Misscheduled {
                        Tone::Bad
                    } else {
                        Tone::Dim
                    },
                )
            } else if columns.iter().any(|c| c.id == ColumnId::Event) {
                Cell::empty()
            } else {
                event_cell(row, now)
            }
        }
        ColumnId::Event => event_cell(row, now),
    }
}

fn revision_cell(row: &NodeRow) -> Cell {
    match row.pod() {
        None => Cell::new("-", Tone::Dim),
        Some(p) => match (p.revision, p.updated) {
            (Some(n), true) => Cell::new(&format!("r{n} ✓"), Tone::Updated),
            (Some(n), false) => Cell::new(&format!("r{n} old"), Tone::Old),
            (None, true) => Cell::new("✓", Tone::Updated),
            (None, false) => Cell::new("? old", Tone::Old),
        },
    }
}

fn status_cell(row: &NodeRow) -> Cell {
    let Some(pod) = row.pod() else {
        return match row.state {
            RowState::Missing => Cell::new("missing", Tone::Bad),
            _ => Cell::new("-", Tone::Dim),
        };
    };
    if pod.terminating {
        return Cell::new("Terminating", Tone::Warn);
    }
    if let Some(problem) = &pod.problem {
        let tone = if row.state == RowState::Failing {
            Tone::Bad
        } else {
            Tone::Warn
        };
        return Cell::new(problem, tone);
    }
    if pod.ready {
        return Cell::new("Ready", Tone::Good);
    }
    let phase = pod.phase.as_deref().unwrap_or("Pending");
    let text = if phase == "Running" {
        "Running,Unready"
    } else {
        phase
    };
    Cell::new(
        text,
        if phase == "Failed" {
            Tone::Bad
        } else {
            Tone::Warn
        },
    )
}

fn node_state_cell(row: &NodeRow) -> Cell {
    let ready = match row.node_ready {
        Some(true) => "Ready",
        Some(false) => "NotReady",
        None => "Unknown",
    };
    let text = if row.cordoned {
        format!("{ready},Cordon")
    } else {
        ready.to_owned()
    };
    let tone = match (row.node_ready, row.cordoned) {
        (Some(true), false) => Tone::Good,
        (Some(true), true) => Tone::Warn,
        _ => Tone::Bad,
    };
    Cell::new(&text, tone)
}

fn event_cell(row: &NodeRow, now: jiff::Timestamp) -> Cell {
    match &row.event {
        Some(event) => Cell::new(
            &format!(
                "{} {}: {}",
                format::age(event.at, now),
                event.reason,
                event.message
            ),
            if event.warning { Tone::Warn } else { Tone::Dim },
        ),
        None => Cell::empty(),
    }
}
