//! The grid's view model: the visible lines only, each node row turned into
//! one cell per visible column. Pure.

use std::fmt::Write as _;

use super::{Cell, Inputs, Tone, format};
use std::collections::BTreeSet;

use crate::engine::blockers::{Blocker, BlockerCode};
use crate::engine::vocabulary::Eligibility;
use crate::rows::{NodeRow, RowState};
use crate::tui::columns::{COLUMNS, Column, ColumnId, layout, list_height};
use crate::tui::fit::{Cut, display_width, fit};
use crate::tui::index::Entry;
use crate::tui::roster::RosterState;

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

/// The marks of a row (the MARK column): canary, problem, blocker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Marked as a canary (by hand or by the canary selector).
    pub canary: bool,
    /// Failing, missing or misscheduled.
    pub problem: bool,
    /// Holds the rollout back (the engine's blocker notion; set by whoever
    /// computes it, see [`marks`]).
    pub blocker: bool,
}

impl Marks {
    /// The mark cell: `◆` canary, then `×` blocker or `!` problem.
    pub fn cell(self) -> Cell {
        let canary = if self.canary { '◆' } else { ' ' };
        let (flag, tone) = match (self.blocker, self.problem) {
            (true, _) => ('×', Tone::Bad),
            (false, true) => ('!', Tone::Bad),
            (false, false) => (
                ' ',
                if self.canary {
                    Tone::Accent
                } else {
                    Tone::Normal
                },
            ),
        };
        Cell::new(&format!("{canary}{flag}"), tone)
    }
}

/// The marks of a node row. `canary` comes from the rollout state stored on
/// the DaemonSet; the problem flag from the row's state; `blocker` from the
/// engine's rollout blocker (the nodes holding up a RollingUpdate budget or
/// stuck terminating; see [`blocking_nodes`]).
pub fn marks(row: &NodeRow, canary: bool, blocker: bool) -> Marks {
    Marks {
        canary,
        problem: matches!(
            row.state,
            RowState::Failing | RowState::Missing | RowState::Misscheduled
        ),
        blocker,
    }
}

/// The nodes that hold the rollout up, as the engine's blocker names them
/// (the header says why). Only blockers that are nodes' doing count: an
/// OnDelete rollout waiting for an operator is not blocked by any node.
pub fn blocking_nodes(blocker: Option<&Blocker>) -> BTreeSet<&str> {
    match blocker {
        Some(blocker)
            if matches!(
                blocker.code,
                BlockerCode::MaxUnavailableSpent
                    | BlockerCode::MaxSurgeSpent
                    | BlockerCode::StuckTerminating
            ) =>
        {
            blocker.nodes.iter().map(|n| n.node.as_str()).collect()
        }
        _ => BTreeSet::new(),
    }
}

/// Which nodes are canaries: marked by hand or matched by the canary selector
/// (both stored on the DaemonSet by the rollout operations).
struct Canaries {
    names: BTreeSet<String>,
    selector: Option<crate::engine::selector::Selector>,
}

impl Canaries {
    fn of(input: &Inputs<'_>) -> Self {
        let state = input
            .ui
            .target
            .as_ref()
            .and_then(|target| input.cache.daemonset(target))
            .and_then(|ds| {
                crate::ops::state::RolloutState::from_annotations(ds.metadata.annotations.as_ref())
                    .ok()
            });
        let Some(state) = state else {
            return Self {
                names: BTreeSet::new(),
                selector: None,
            };
        };
        let selector = state
            .canary_selector
            .as_deref()
            .and_then(|text| crate::engine::selector::Selector::parse(text).ok());
        Self {
            names: state.canaries,
            selector,
        }
    }

    fn contains(&self, input: &Inputs<'_>, node: &str) -> bool {
        self.names.contains(node)
            || self.selector.as_ref().is_some_and(|selector| {
                input
                    .cache
                    .node(node)
                    .is_some_and(|n| selector.matches(Some(&n.labels)))
            })
    }
}

/// The visible lines with every column's cell, before the layout.
fn raw_lines(
    input: &Inputs<'_>,
    canaries: &Canaries,
    blockers: &BTreeSet<&str>,
    height: usize,
) -> Vec<Raw> {
    let ui = input.ui;
    let index = input.index;
    let offset = ui.offset.min(index.entries.len().saturating_sub(1));
    let selected_entry = index.rows.get(ui.selected).copied();
    index
        .entries
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .filter_map(|(at, entry)| match entry {
            Entry::Heading { label, count } => Some(Raw::Heading(Cell::new(
                &format!("▾ {label} ({count})"),
                Tone::Accent,
            ))),
            Entry::Row(name) => match (input.rows.get(name), input.roster) {
                (Some(row), roster) => {
                    let canary = canaries.contains(input, name);
                    let blocker = blockers.contains(name.as_str());
                    Some(Raw::Row {
                        cells: COLUMNS
                            .iter()
                            .map(|c| {
                                let mut plain = cell(c.id, row, canary, blocker, input.now);
                                // Green means good: never on a row that is not.
                                if troubled(row) && matches!(plain.tone, Tone::Good | Tone::Updated)
                                {
                                    plain.tone = Tone::Normal;
                                }
                                match roster {
                                    Some(roster) => roster.mark(c.id, name, plain),
                                    None => plain,
                                }
                            })
                            .collect(),
                        selected: Some(at) == selected_entry,
                    })
                }
                // A roster node absent from the cluster keeps a row of its own.
                (None, Some(roster)) if roster.is_absent(name) => Some(Raw::Row {
                    cells: RosterState::absent_cells(COLUMNS, name),
                    selected: Some(at) == selected_entry,
                }),
                (None, _) => None,
            },
        })
        .collect()
}

/// Lays the visible lines out in `width` cells: columns by priority, each
/// value cut (and marked) to its column.
fn project(raw: Vec<Raw>, width: u16) -> (Vec<Column>, Vec<GridLine>) {
    let position = |id: ColumnId| COLUMNS.iter().position(|c| c.id == id).unwrap_or(0);
    let (why_at, event_at) = (position(ColumnId::Why), position(ColumnId::Event));
    let wanted = |id: ColumnId| {
        let at = position(id);
        raw.iter()
            .filter_map(|line| match line {
                Raw::Row { cells, .. } => {
                    let mut w = display_width(&cells[at].text);
                    // WHY shows the latest event when it has no reason.
                    if id == ColumnId::Why && cells[at].text.is_empty() {
                        w = display_width(&cells[event_at].text);
                    }
                    Some(w)
                }
                Raw::Heading(_) => None,
            })
            .max()
            .unwrap_or(0)
    };
    let columns = layout(width, wanted);
    let has_event = columns.iter().any(|c| c.id == ColumnId::Event);
    let lines = raw
        .into_iter()
        .map(|line| match line {
            Raw::Heading(cell) => GridLine::Heading(Cell {
                text: fit(&cell.text, width, Cut::End),
                ..cell
            }),
            Raw::Row { cells, selected } => {
                let why_is_event = !has_event && cells[why_at].text.is_empty();
                GridLine::Row {
                    cells: columns
                        .iter()
                        .map(|c| {
                            let at = if c.id == ColumnId::Why && why_is_event {
                                event_at
                            } else {
                                position(c.id)
                            };
                            let cell = &cells[at];
                            Cell {
                                text: fit(&cell.text, c.width, c.cut),
                                tone: cell.tone,
                            }
                        })
                        .collect(),
                    selected,
                }
            }
        })
        .collect();
    (columns, lines)
}

/// A visible line before the layout: every column's cell, in [`COLUMNS`] order.
enum Raw {
    Heading(Cell),
    Row { cells: Vec<Cell>, selected: bool },
}

/// Builds the visible part of the grid; `compact` is the narrow grid beside the detail pane.
pub fn build(input: &Inputs<'_>, compact: bool, blockers: &BTreeSet<&str>) -> GridVm {
    let ui = input.ui;
    let index = input.index;
    let width = if compact { ui.size.0 / 2 } else { ui.size.0 };
    let height = list_height(ui.size);
    let raw = raw_lines(input, &Canaries::of(input), blockers, height);
    let (columns, lines) = project(raw, width);
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

fn cell(id: ColumnId, row: &NodeRow, canary: bool, blocker: bool, now: jiff::Timestamp) -> Cell {
    let pod = row.pod();
    let verdict = &row.coverage.verdict;
    match id {
        ColumnId::Mark => marks(row, canary, blocker).cell(),
        ColumnId::Node => Cell::new(
            row.name(),
            if row.node_ready == Some(false) {
                Tone::Bad
            } else {
                Tone::Normal
            },
        ),
        // The words and their meanings are the engine's one vocabulary.
        ColumnId::Eligible => {
            let eligibility = Eligibility::of(verdict, pod.is_some());
            let tone = match eligibility {
                Eligibility::Yes => Tone::Normal,
                Eligibility::Keep | Eligibility::Unknown => Tone::Warn,
                Eligibility::No => Tone::Dim,
            };
            Cell::new(eligibility.word(), tone)
        }
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
        ColumnId::Age => Cell::new(
            &format::age(
                pod.and_then(|p| p.created)
                    .map(crate::model::Stamp::timestamp),
                now,
            ),
            Tone::Dim,
        ),
        ColumnId::NodeState => node_state_cell(row),
        ColumnId::Taints => match &*row.taints {
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
        ColumnId::Why => why_cell(row),
        ColumnId::Event => event_cell(row, now),
    }
}

/// WHY: the one thing to know about the row, in a few words: why no pod
/// belongs here (the eligibility reason), else why its pod fails, else that
/// the node is cordoned (and the plan skips it), else its next step's fit.
/// The detail pane has the whole text.
fn why_cell(row: &NodeRow) -> Cell {
    let verdict = &row.coverage.verdict;
    if let Some(reason) = verdict
        .reasons
        .first()
        .filter(|_| !verdict.should_run || !verdict.should_continue_running || verdict.is_unknown())
    {
        let tone = if row.state == RowState::Misscheduled {
            Tone::Bad
        } else {
            Tone::Dim
        };
        return Cell::new(&reason.message, tone);
    }
    scheduling_problem_cell(row)
        .or_else(|| cordon_cell(row))
        .or_else(|| fit_cell(row))
        .unwrap_or_else(Cell::empty)
}

/// A cordoned node says so, and whether the rollout plan skips it for that
/// (the plan's own [`skip_reason`](crate::engine::rollout::skip_reason),
/// worded as `P` words it): on a narrow grid NODE STATE is not shown.
fn cordon_cell(row: &NodeRow) -> Option<Cell> {
    use crate::engine::rollout::{PlanOptions, SkipReason, skip_reason};
    if !row.cordoned {
        return None;
    }
    let options = PlanOptions::default();
    let skipped = skip_reason(&row.coverage, row.plan_facts(&options), false);
    let text = match skipped {
        Some(reason @ SkipReason::Cordoned) => {
            format!("plan skips: {}", crate::ops::advance::skip_text(&reason))
        }
        _ => "cordoned".to_owned(),
    };
    Some(Cell::new(&text, Tone::Warn))
}

/// Why the node's daemon pod cannot start or keeps failing, in a few words:
/// `pending: Insufficient cpu` (the scheduler's reasons for this node,
/// without the other nodes' counts), `evicted: The node was low on resource:
/// memory.`, `rejected: OutOfcpu`, `sandbox: …`, `exit 1: exec format
/// error`. The detail pane has the whole text.
fn scheduling_problem_cell(row: &NodeRow) -> Option<Cell> {
    use crate::engine::health::ProblemCode;
    let pod = row.pod()?;
    let code = row.problem_code()?;
    let detail = pod.failure_detail.as_deref().unwrap_or_default();
    let text = match code {
        ProblemCode::Unschedulable => format!("pending: {}", scheduler_reason_here(detail)),
        ProblemCode::Evicted => format!("evicted: {}", first_sentence(detail)),
        ProblemCode::Rejected => format!("rejected: {}", pod.problem.as_deref().unwrap_or("")),
        ProblemCode::SandboxFailed => format!("sandbox: {}", first_sentence(detail)),
        // A container that fails: its cause (`exit 1: exec format error`),
        // not the kubelet's back-off text.
        _ if !detail.is_empty() => crate::engine::health::short_cause(detail),
        // Nothing said why (no last termination yet): that it loops, not
        // the kubelet's back-off event.
        ProblemCode::CrashLoop => format!("crash loop: {} restarts", pod.restarts),
        _ => return None,
    };
    Some(Cell::new(text.trim_end_matches([' ', ':']), Tone::Bad))
}

/// The reasons of a FailedScheduling message that are about a daemon pod's
/// own node: `0/12 nodes are available: 1 Insufficient cpu, 11 node(s)
/// didn't match Pod's node affinity/selector. preemption: …` → `Insufficient
/// cpu` (the other nodes are the pod's pinning, not its problem).
fn scheduler_reason_here(message: &str) -> String {
    let filters = message.split(". preemption:").next().unwrap_or(message);
    let listed = filters
        .split_once("are available: ")
        .map_or(filters, |(_, rest)| rest);
    let reasons: Vec<&str> = listed
        .trim_end_matches('.')
        .split(", ")
        .filter(|r| !r.contains("didn't match Pod's node affinity/selector"))
        .map(|r| {
            r.split_once(' ')
                .filter(|(count, _)| count.chars().all(|c| c.is_ascii_digit()))
                .map_or(r, |(_, reason)| reason)
        })
        .collect();
    if reasons.is_empty() {
        filters.to_owned()
    } else {
        reasons.join(", ")
    }
}

/// Up to the first `. ` (the kubelet's messages say the point first).
fn first_sentence(text: &str) -> &str {
    text.split_once(". ").map_or(text, |(first, _)| first)
}

/// The node's next step by fit (the rows' preflight): `won't fit: REASON`
/// when nothing makes room, `preempts N` when the replacement removes
/// workloads; `None` when it fits as is, or nothing is known.
fn fit_cell(row: &NodeRow) -> Option<Cell> {
    let fit = row.fit.as_deref()?;
    if !fit.fits {
        let reason = fit
            .reasons
            .first()
            .map_or_else(String::new, short_fit_reason);
        return Some(Cell::new(&format!("won't fit: {reason}"), Tone::Bad));
    }
    (!fit.preempts.is_empty())
        .then(|| Cell::new(&format!("preempts {}", fit.preempts.len()), Tone::Warn))
}

/// A fit reason in a few words for WHY (`cpu: needs 300m, 210m free`,
/// `port 9100/TCP taken`); the detail pane has the upstream sentence, the
/// holder and the allocatable.
fn short_fit_reason(reason: &crate::engine::fit::FitReason) -> String {
    use crate::engine::fit::Shortfall;
    use crate::model::quantity::{format_bytes, format_milli};
    match &reason.shortfall {
        Some(Shortfall::Resource {
            name,
            requested,
            used,
            allocatable,
        }) => {
            let amount = |value: i64| match name.as_str() {
                "cpu" => format_milli(value),
                "memory" | "ephemeral-storage" => format_bytes(value),
                _ => value.to_string(),
            };
            let free = allocatable.saturating_sub(*used).max(0);
            format!(
                "{name}: needs {}, {} free",
                amount(*requested),
                amount(free)
            )
        }
        Some(Shortfall::Pods { allowed, .. }) => format!("node full ({allowed} pods)"),
        Some(Shortfall::HostPort { port, .. }) => {
            format!("port {}/{} taken", port.port, port.protocol)
        }
        None => reason.message.clone(),
    }
}

/// A row that is not healthy: failing, missing, misscheduled or not ready.
fn troubled(row: &NodeRow) -> bool {
    matches!(
        row.state,
        RowState::Failing | RowState::Missing | RowState::Misscheduled | RowState::NotReady
    )
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
    if row.coverage.verdict.is_unknown() {
        // The node could not be read: nothing is known about it.
        return Cell::new("?", Tone::Dim);
    }
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

#[cfg(test)]
mod scheduling_words_tests {
    use super::scheduler_reason_here;

    #[test]
    fn a_daemon_pods_pending_reason_leaves_out_the_nodes_it_is_not_pinned_to() {
        // upstream FitError text for a daemon pod pinned to one node by matchFields.
        let message = "0/12 nodes are available: 1 Insufficient cpu, 11 node(s) didn't match Pod's node affinity/selector. preemption: 0/12 nodes are available: 1 No preemption victims found for incoming pod, 11 Preemption is not helpful for scheduling.";
        assert_eq!(scheduler_reason_here(message), "Insufficient cpu");
        let ports = "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 2 node(s) didn't match Pod's node affinity/selector.";
        assert_eq!(
            scheduler_reason_here(ports),
            "node(s) didn't have free ports for the requested pod ports"
        );
        assert_eq!(scheduler_reason_here("odd text"), "odd text");
    }
}
