//! The matrix's view model: one pure function from the [`Matrix`], `now`
//! and the terminal's size to display-ready, sanitised, width-fitted cells.
//! Columns and the order they are dropped in on a narrow terminal are
//! const data ([`COLUMNS`]), as the grid's are.

use crate::fleet::live::matrix::{Matrix, MatrixTotals};
use crate::fleet::live::row::{ClusterView, Link};
use crate::fleet::template::TemplateIdentity;
use crate::tui::fit::{Cut, display_width, fit};
use crate::tui::view_model::{Cell, Tone};

/// A matrix column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixColumn {
    /// The kubeconfig context.
    Context,
    /// `live`, `stale 12s`, `unreachable: …`.
    Connection,
    /// `OnDelete` / `RollingUpdate`.
    Strategy,
    /// desired/updated/ready/available.
    Counts,
    /// The current template's short digest.
    Template,
    /// Nodes per running template (`a1b2c3d4:600 e5f6a7b8:400`).
    Revisions,
    /// Who holds the rollout, or its state word.
    Rollout,
    /// The GitOps tool that owns the spec.
    Owner,
    /// The most frequent problem with its node count.
    Problem,
    /// The fields the template differs in from the reference.
    Drift,
}

/// A column's layout rules.
#[derive(Clone, Copy, Debug)]
pub struct ColumnRule {
    /// Which.
    pub id: MatrixColumn,
    /// Heading.
    pub title: &'static str,
    /// Narrowest useful width.
    pub min: u16,
    /// Widest.
    pub max: u16,
    /// Kept while the terminal allows; lower ranks are kept longest.
    pub keep: u8,
    /// Takes spare width in this order (lower first).
    pub grow: u8,
}

const fn rule(
    id: MatrixColumn,
    title: &'static str,
    (min, max): (u16, u16),
    keep: u8,
    grow: u8,
) -> ColumnRule {
    ColumnRule {
        id,
        title,
        min,
        max,
        keep,
        grow,
    }
}

/// Every column, in display order.
pub const COLUMNS: [ColumnRule; 10] = [
    rule(MatrixColumn::Context, "CONTEXT", (14, 32), 0, 3),
    rule(MatrixColumn::Connection, "CONNECTION", (14, 44), 0, 0),
    rule(MatrixColumn::Strategy, "STRATEGY", (8, 13), 6, 7),
    rule(MatrixColumn::Counts, "D/U/R/A", (9, 23), 1, 4),
    rule(MatrixColumn::Template, "TEMPLATE", (9, 9), 2, 9),
    rule(MatrixColumn::Revisions, "REVISIONS", (12, 40), 5, 5),
    rule(MatrixColumn::Rollout, "ROLLOUT", (14, 44), 3, 1),
    rule(MatrixColumn::Owner, "OWNER", (8, 30), 8, 8),
    rule(MatrixColumn::Problem, "PROBLEM", (12, 44), 4, 2),
    rule(MatrixColumn::Drift, "DRIFT", (6, 40), 7, 6),
];

/// Lines above and below the table: title, totals, reference; column
/// headings; the selected cluster's detail and the footer.
pub const CHROME_LINES: u16 = 6;

/// What the screen shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixVm {
    /// The title line.
    pub title: Vec<Cell>,
    /// The totals line.
    pub totals: Vec<Cell>,
    /// The reference template, sort and filter.
    pub context: Vec<Cell>,
    /// The headings, fitted.
    pub headings: Vec<(String, u16)>,
    /// The visible rows' cells, fitted to the headings' widths.
    pub rows: Vec<Vec<Cell>>,
    /// Which of `rows` is selected.
    pub selected: Option<usize>,
    /// The selected cluster in full: its error, its drift.
    pub detail: Cell,
    /// Keys, or the filter being typed.
    pub footer: Cell,
}

/// Builds the screen for a `width` × `height` terminal.
pub fn matrix_vm(
    matrix: &Matrix,
    simulated: bool,
    now: jiff::Timestamp,
    (width, height): (u16, u16),
) -> MatrixVm {
    let reference = matrix.reference_identity();
    let visible = matrix.visible();
    let room = usize::from(height.saturating_sub(CHROME_LINES)).max(1);
    let offset = (matrix.selected + 1).saturating_sub(room);
    let all: Vec<Vec<String>> = visible
        .iter()
        .map(|&index| cells(matrix, index, reference, now))
        .collect();
    let widths = layout(&all, width);
    let rows = all
        .iter()
        .skip(offset)
        .take(room)
        .zip(visible.iter().skip(offset))
        .map(|(texts, &index)| {
            let tone = row_tone(matrix, index, reference);
            widths
                .iter()
                .map(|&(column, w)| {
                    let text = &texts[column];
                    let tone = if column == 1 { tone } else { Tone::Normal };
                    Cell::new(&fit(text, w, Cut::End), tone)
                })
                .collect()
        })
        .collect();
    MatrixVm {
        title: title(matrix, simulated),
        totals: totals_line(&matrix.totals(), width),
        context: context_line(matrix, reference),
        headings: widths
            .iter()
            .map(|&(column, w)| (fit(COLUMNS[column].title, w, Cut::End), w))
            .collect(),
        rows,
        selected: (!visible.is_empty()).then(|| matrix.selected - offset),
        detail: detail(matrix, reference, now),
        footer: footer(matrix),
    }
}

fn title(matrix: &Matrix, simulated: bool) -> Vec<Cell> {
    let mut title = vec![Cell::new("rollcall fleet", Tone::Accent)];
    if simulated {
        title.push(Cell::new(" SIMULATED", Tone::Warn));
    }
    title.push(Cell::new(
        &format!(
            "  daemonset {} · {} clusters",
            matrix.daemonset,
            matrix.rows.len()
        ),
        Tone::Normal,
    ));
    title
}

fn totals_line(totals: &MatrixTotals, width: u16) -> Vec<Cell> {
    let mut line = vec![Cell::new(&format!("live {}", totals.live), Tone::Good)];
    let mut add = |text: String, tone: Tone, count: usize| {
        line.push(Cell::new(" · ", Tone::Dim));
        line.push(Cell::new(
            &text,
            if count > 0 { tone } else { Tone::Normal },
        ));
    };
    add(format!("stale {}", totals.stale), Tone::Warn, totals.stale);
    add(
        format!("not read {}", totals.other),
        Tone::Bad,
        totals.other,
    );
    add(
        format!("drift {}", totals.drifted),
        Tone::Warn,
        totals.drifted,
    );
    add(
        format!("problems {}", totals.with_problems),
        Tone::Warn,
        totals.with_problems,
    );
    let used: u16 = line.iter().map(|cell| display_width(&cell.text)).sum();
    let words = format!(
        "desired {} updated {} ready {} available {}",
        totals.desired, totals.updated, totals.ready, totals.available
    );
    // The column's short form when the words do not fit.
    let counts = if used + 3 + display_width(&words) <= width {
        words
    } else {
        format!(
            "D/U/R/A {}/{}/{}/{}",
            totals.desired, totals.updated, totals.ready, totals.available
        )
    };
    line.push(Cell::new(" · ", Tone::Dim));
    line.push(Cell::new(&counts, Tone::Normal));
    line
}

fn context_line(matrix: &Matrix, reference: Option<&TemplateIdentity>) -> Vec<Cell> {
    let reference = reference.map_or_else(
        || "reference: none read yet".to_owned(),
        |r| {
            format!(
                "reference {} {}",
                short_digest(&r.digest),
                r.images.join(",")
            )
        },
    );
    let mut line = vec![
        Cell::new(&reference, Tone::Dim),
        Cell::new(&format!(" · sort {}", matrix.sort.label()), Tone::Dim),
    ];
    if !matrix.filter.is_empty() {
        line.push(Cell::new(
            &format!(" · filter /{}", matrix.filter),
            Tone::Accent,
        ));
    }
    line
}

/// The first 8 hex digits: what a person compares across rows.
fn short_digest(digest: &str) -> &str {
    digest.get(..8).unwrap_or(digest)
}

/// Every column's text for row `index`, in [`COLUMNS`] order.
fn cells(
    matrix: &Matrix,
    index: usize,
    reference: Option<&TemplateIdentity>,
    now: jiff::Timestamp,
) -> Vec<String> {
    let row = &matrix.rows[index];
    let view = row.view.as_ref();
    let dash = || "-".to_owned();
    let of = |pick: fn(&ClusterView) -> String| view.map_or_else(dash, pick);
    let drift: Vec<String> = matrix
        .drift_of(index, reference)
        .into_iter()
        .map(|d| d.field)
        .collect();
    COLUMNS
        .iter()
        .map(|column| match column.id {
            MatrixColumn::Context => row.context.clone(),
            MatrixColumn::Connection => row.link.text(now),
            MatrixColumn::Strategy => of(|v| v.row.strategy.clone()),
            MatrixColumn::Counts => of(|v| {
                let t = &v.row.totals;
                format!("{}/{}/{}/{}", t.desired, t.updated, t.ready, t.available)
            }),
            MatrixColumn::Template => view.map_or_else(dash, |v| {
                let mark = if drift.is_empty() { "" } else { "≠" };
                format!("{}{mark}", short_digest(&v.template.digest))
            }),
            MatrixColumn::Revisions => of(|v| {
                v.identities
                    .iter()
                    .map(|i| format!("{}:{}", short_digest(&i.digest), i.nodes))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            MatrixColumn::Rollout => of(|v| v.rollout.clone()),
            MatrixColumn::Owner => view.and_then(|v| v.owner.clone()).unwrap_or_default(),
            MatrixColumn::Problem => view
                .and_then(|v| v.row.top_problem.clone())
                .unwrap_or_default(),
            MatrixColumn::Drift => drift.join(", "),
        })
        .collect()
}

/// The connection cell's tone: how far from live the row is.
fn row_tone(matrix: &Matrix, index: usize, reference: Option<&TemplateIdentity>) -> Tone {
    let row = &matrix.rows[index];
    match &row.link {
        Link::Live if !matrix.drift_of(index, reference).is_empty() => Tone::Warn,
        Link::Live => Tone::Good,
        Link::Connecting | Link::Loading { .. } => Tone::Dim,
        Link::Stale { .. } => Tone::Warn,
        Link::Failed { .. } => Tone::Bad,
    }
}

/// The columns shown and their widths: kept by rank while they fit at
/// their narrowest (one space between), then widened in their `grow`
/// order up to what their cells hold.
fn layout(rows: &[Vec<String>], width: u16) -> Vec<(usize, u16)> {
    // What each column's cells and heading want, within its bounds.
    let wanted: Vec<u16> = COLUMNS
        .iter()
        .enumerate()
        .map(|(column, rule)| {
            rows.iter()
                .map(|cells| display_width(&cells[column]))
                .chain(std::iter::once(display_width(rule.title)))
                .max()
                .unwrap_or(0)
                .clamp(rule.min, rule.max)
        })
        .collect();
    // Counts cut are counts lost: that column is shown whole or not at all.
    let narrowest = |column: usize| match COLUMNS[column].id {
        MatrixColumn::Counts => wanted[column],
        _ => COLUMNS[column].min,
    };
    let mut ranked: Vec<usize> = (0..COLUMNS.len()).collect();
    ranked.sort_by_key(|&c| (COLUMNS[c].keep, c));
    let mut shown: Vec<usize> = Vec::new();
    let mut used: u16 = 0;
    for column in ranked {
        let need = narrowest(column) + u16::from(!shown.is_empty());
        if used + need > width && COLUMNS[column].keep > 0 {
            continue;
        }
        used = used.saturating_add(need);
        shown.push(column);
    }
    let mut widths: Vec<(usize, u16)> = shown.iter().map(|&c| (c, narrowest(c))).collect();
    let mut spare = width.saturating_sub(used);
    widths.sort_by_key(|&(column, _)| COLUMNS[column].grow);
    for (column, w) in &mut widths {
        let extra = wanted[*column].saturating_sub(*w).min(spare);
        *w += extra;
        spare -= extra;
    }
    widths.sort_unstable();
    widths
}

fn detail(matrix: &Matrix, reference: Option<&TemplateIdentity>, now: jiff::Timestamp) -> Cell {
    let Some(index) = matrix.selected_row() else {
        return Cell::new("no cluster matches the filter", Tone::Dim);
    };
    let row = &matrix.rows[index];
    let drift = matrix.drift_of(index, reference);
    let text = match &row.link {
        Link::Failed { message, .. } => format!("{}: {message}", row.context),
        Link::Stale { why, .. } => format!("{}: {} ({why})", row.context, row.link.text(now)),
        _ if !drift.is_empty() => format!(
            "{}: drift: {}",
            row.context,
            drift
                .iter()
                .map(|d| d.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        _ => match row.view.as_ref() {
            Some(view) => format!(
                "{}: {} · images {}",
                row.context,
                view.rollout,
                view.template.images.join(", ")
            ),
            None => format!("{}: {}", row.context, row.link.text(now)),
        },
    };
    let tone = match row.link {
        Link::Failed { .. } => Tone::Bad,
        Link::Stale { .. } => Tone::Warn,
        _ if !drift.is_empty() => Tone::Warn,
        _ => Tone::Dim,
    };
    Cell::new(&text, tone)
}

fn footer(matrix: &Matrix) -> Cell {
    match &matrix.filter_input {
        Some(typing) => Cell::new(
            &format!("/{typing}▏ context or digest · Enter apply · Esc cancel"),
            Tone::Accent,
        ),
        None => Cell::new(
            // Fits 80 columns whole (j/k move too).
            "↑↓ move · Enter console · / filter · Esc clear · s sort · A auto · q quit",
            Tone::Dim,
        ),
    }
}
