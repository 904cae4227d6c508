//! The view model: flat, display-ready text with semantic tones, built by one
//! pure function ([`build`]) from the cache, the cached engine rows, the grid
//! order and the UI state, with `now` passed in. Widgets draw only this. All
//! API text is sanitised here, on its way in.

pub mod cell;
pub mod detail;
mod detail_fit;
mod format;
mod grid;
mod header;
pub mod history;
pub mod pane;
pub mod picker;

pub use cell::{Cell, Tone};
pub use format::age;

use crate::cluster::cache::Cache;
use crate::cluster::status::{StreamKind, StreamState, StreamStatus};
use crate::model::Target;

use super::fit;
use super::index::GridIndex;
use super::keymap;
use super::state::{Level, Screen, UiState};
use crate::rows::RowCache;

pub use detail::DetailVm;
pub use grid::{GridLine, GridVm};
pub use header::{HeaderVm, KubeletNotice};
pub use history::{HistoryRow, HistoryVm};
pub use picker::PickerVm;

/// Where the console is connected, for the title line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsoleInfo {
    /// Kubeconfig context (or `embedded`).
    pub context: String,
    /// API server URL.
    pub server: String,
    /// A note shown in the title, e.g. that the embedded cluster was started.
    pub note: Option<String>,
}

/// The main region of the screen.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// Initial lists still loading: one line per stream.
    Loading(Vec<Cell>),
    /// Nothing to show, with why.
    Empty(Cell),
    /// The DaemonSet list.
    Picker(PickerVm),
    /// The node grid.
    Grid(GridVm),
    /// The node detail (with the grid beside it on wide terminals).
    Detail(Option<GridVm>, DetailVm),
    /// The revision history.
    History(HistoryVm),
}

/// The status line: stream states, then the message or the filter being typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusVm {
    /// One cell per stream that is not live, or a single "live" cell.
    pub streams: Vec<Cell>,
    /// The message or input.
    pub message: Option<Cell>,
}

/// Everything the widgets draw.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewModel {
    /// Title line cells.
    pub title: Vec<Cell>,
    /// The DaemonSet summary, when one is shown.
    pub header: Option<HeaderVm>,
    /// The main region.
    pub body: Body,
    /// The help overlay, when shown.
    pub help: Option<pane::TextPane>,
    /// Status line.
    pub status: StatusVm,
    /// Footer key hints.
    pub hints: Vec<(String, &'static str)>,
    /// A rollout dialog (confirmation, plan or rollback picker), drawn over the body.
    pub dialog: Option<pane::TextPane>,
    /// The logs overlay, when open.
    pub logs: Option<crate::tui::logs::LogsVm>,
}

/// What [`build`] reads.
pub struct Inputs<'a> {
    /// The cluster cache.
    pub cache: &'a Cache,
    /// Engine results per node.
    pub rows: &'a RowCache,
    /// Grid order.
    pub index: &'a GridIndex,
    /// UI state.
    pub ui: &'a UiState,
    /// Connection info.
    pub info: &'a ConsoleInfo,
    /// The server is rollcall's embedded cluster.
    pub simulated: bool,
    /// The roster audit, when the console has a roster.
    pub roster: Option<&'a super::roster::RosterState>,
    /// The time ages are measured against.
    pub now: jiff::Timestamp,
}

/// Builds the view model. Pure: same inputs, same output.
pub fn build(input: &Inputs<'_>) -> ViewModel {
    let ui = input.ui;
    let ds = ui
        .target
        .as_ref()
        .and_then(|target| input.cache.daemonset(target));
    let blocker = ds.map(|ds| input.rows.blocker(ds));
    let blocking = grid::blocking_nodes(blocker);
    let header = ds.zip(blocker).map(|(ds, blocker)| HeaderVm {
        limits: header::limits(input.cache),
        ..header::build(ds, input.rows, blocker.clone(), input.now)
    });
    ViewModel {
        title: title(input.info, input.simulated, ui.target.as_ref(), ui.size.0),
        header,
        body: body(input, &blocking),
        help: ui.help.then(|| help(input)),
        status: status(input),
        hints: keymap::hints(ui.context()),
        dialog: None,
        logs: None,
    }
}

fn help(input: &Inputs<'_>) -> pane::TextPane {
    let ui = input.ui;
    let body = super::columns::areas(ratatui::layout::Rect::new(0, 0, ui.size.0, ui.size.1)).body;
    let lines = pane::help_lines(
        input.info,
        pane::overlay_inner_width(pane::Overlay::Help, body.width),
    );
    let area = pane::overlay_area(pane::Overlay::Help, body, lines.len());
    let visible = pane::visible(area.height, lines.len());
    pane::TextPane {
        title: " keys · ? or Esc closes ".to_owned(),
        scroll: crate::tui::fit::clamp_scroll(ui.help_scroll, visible, lines.len()),
        lines,
    }
}

/// The title line. On the embedded cluster `SIMULATED` comes right after the
/// name, before anything that may be cut at the right edge: it is never
/// mistaken for a real cluster. Too long for `width`, the server URL is cut
/// first (the help has it whole), then the DaemonSet's name at the right
/// edge; the context, which says which cluster, stays.
fn title(info: &ConsoleInfo, simulated: bool, target: Option<&Target>, width: u16) -> Vec<Cell> {
    let mut cells = vec![Cell::new("rollcall", Tone::Accent)];
    if simulated {
        cells.push(Cell::new(" SIMULATED", Tone::Warn));
    }
    cells.extend([
        Cell::new(&format!(" {} ", info.context), Tone::Normal),
        Cell::new(&info.server, Tone::Dim),
    ]);
    if let Some(target) = target {
        cells.push(Cell::new(&format!("  daemonset {target}"), Tone::Normal));
    }
    let total: u16 = cells.iter().map(|c| fit::display_width(&c.text)).sum();
    let over = total.saturating_sub(width);
    let server = cells.len() - 1 - usize::from(target.is_some());
    if over > 0 {
        let cell = &mut cells[server];
        let keep = fit::display_width(&cell.text).saturating_sub(over);
        // Less than a few cells of it says nothing: gone, not `h…`.
        cell.text = if keep < 8 {
            String::new()
        } else {
            fit::fit(&cell.text, keep, fit::Cut::End)
        };
    }
    // The connection note (long: it holds the kubeconfig path) is in the
    // status line at start and always in full in the help.
    cells
}

/// The streams the screen needs before it may show data as complete.
fn required_streams(screen: Screen) -> &'static [StreamKind] {
    match screen {
        Screen::Picker(_) => &[StreamKind::DaemonSets],
        _ => &[
            StreamKind::Nodes,
            StreamKind::DaemonSets,
            StreamKind::Pods,
            StreamKind::Revisions,
        ],
    }
}

fn body(input: &Inputs<'_>, blocking: &std::collections::BTreeSet<&str>) -> Body {
    let ui = input.ui;
    let streams = input.cache.streams();
    // A forbidden stream is settled: its data will never come, the header
    // states the limitation and the view goes without it.
    let synced = |kind: &StreamKind| streams.get(kind).is_some_and(StreamStatus::settled);
    // Without DaemonSets there is nothing to show, and nothing will come.
    if input.cache.forbidden(StreamKind::DaemonSets) {
        // Listing them (no DaemonSet named): say how to name a namespace.
        let text = if ui.target.is_some() {
            format!(
                "view limited: {}",
                crate::cluster::access::limitation(StreamKind::DaemonSets)
            )
        } else {
            "view limited: cannot list daemonsets here (forbidden): name a namespace you may read with -n NAMESPACE, or a DaemonSet as NAMESPACE/NAME".to_owned()
        };
        return Body::Empty(Cell::new(&text, Tone::Warn));
    }
    let missing_target = ui.target.as_ref().filter(|target| {
        !matches!(ui.screen, Screen::Picker(_))
            && synced(&StreamKind::DaemonSets)
            && input.cache.daemonset(target).is_none()
    });
    if let Some(target) = missing_target {
        return Body::Empty(Cell::new(
            &format!("daemonset {target} not found (waiting for it to appear; D lists daemonsets)"),
            Tone::Warn,
        ));
    }
    let loading: Vec<StreamKind> = required_streams(ui.screen)
        .iter()
        .copied()
        .filter(|kind| !synced(kind))
        .collect();
    if !loading.is_empty() {
        return loading_body(input, &loading);
    }
    if matches!(ui.screen, Screen::Picker(_)) {
        return Body::Picker(picker::build(input.cache, ui, input.now));
    }
    let Some(ds) = ui
        .target
        .as_ref()
        .and_then(|target| input.cache.daemonset(target))
    else {
        return Body::Empty(Cell::new(
            "no daemonset selected: D lists daemonsets",
            Tone::Dim,
        ));
    };
    match ui.screen {
        Screen::Detail(_) => {
            let detail = detail::build(input, ds);
            let split = ui.size.0 >= super::columns::SPLIT_DETAIL_WIDTH;
            Body::Detail(split.then(|| grid::build(input, split, blocking)), detail)
        }
        Screen::History(_) => Body::History(history::build(input, ds)),
        Screen::Grid | Screen::Picker(_) => Body::Grid(grid::build(input, false, blocking)),
    }
}

fn loading_body(input: &Inputs<'_>, loading: &[StreamKind]) -> Body {
    let lines = loading
        .iter()
        .map(|&kind| {
            let text = match input.cache.streams().get(&kind).map(StreamStatus::state) {
                None => format!("{}: waiting for the daemonset", kind.label()),
                Some(StreamState::Reconnecting { error, .. }) => {
                    format!("{}: cannot list yet, retrying: {error}", kind.label())
                }
                Some(StreamState::Throttled { retry_at, .. }) => {
                    let wait = retry_at.duration_since(input.now).as_secs().max(0);
                    format!(
                        "{}: cannot list yet, throttled (429), retrying in {wait}s",
                        kind.label()
                    )
                }
                Some(_) => format!(
                    "{}: loading… {}",
                    kind.label(),
                    input.cache.load_progress(kind)
                ),
            };
            Cell::new(&text, Tone::Dim)
        })
        .collect();
    Body::Loading(lines)
}

fn status(input: &Inputs<'_>) -> StatusVm {
    let mut streams = Vec::new();
    for (kind, status) in input.cache.streams() {
        match status.state() {
            StreamState::Live => {}
            StreamState::Loading => {
                streams.push(Cell::new(&format!("{}: loading", kind.label()), Tone::Warn));
            }
            StreamState::Resyncing => {
                let done = input
                    .cache
                    .relist_percent(*kind)
                    .map_or_else(String::new, |percent| format!(" {percent}%"));
                streams.push(Cell::new(
                    &format!("{}: resyncing{done}", kind.label()),
                    Tone::Warn,
                ));
            }
            StreamState::Reconnecting { error, since } => {
                let stale = format::age(Some(since), input.now);
                let text = format!("{}: stale {stale}, reconnecting ({error})", kind.label());
                streams.push(Cell::new(&text, Tone::Bad));
            }
            StreamState::Throttled { retry_at, since } => {
                let stale = format::age(Some(since), input.now);
                let wait = retry_at.duration_since(input.now).as_secs().max(0);
                let text = format!(
                    "{}: stale {stale}, throttled, retrying in {wait}s",
                    kind.label()
                );
                streams.push(Cell::new(&text, Tone::Bad));
            }
            // Not retried: the header says what the view goes without.
            StreamState::Forbidden { .. } => {
                streams.push(Cell::new(
                    &format!("{}: forbidden", kind.label()),
                    Tone::Warn,
                ));
            }
        }
    }
    if streams.is_empty() && !input.cache.streams().is_empty() {
        streams.push(Cell::new("● live", Tone::Good));
    }
    // "The server changed" stays on the status line for a minute after it was noticed.
    if let Some((notice, at)) = input.cache.notice()
        && input.now.duration_since(at).as_secs() < 60
    {
        streams.push(Cell::new(notice, Tone::Warn));
    }
    let message = match (&input.ui.filter_input, &input.ui.message) {
        // A filter that did not parse says why while it is still being typed.
        (Some(typing), Some(message)) if message.level == Level::Error => Some(Cell::new(
            &format!("/{typing}▏ {}", message.text),
            Tone::Bad,
        )),
        (Some(typing), _) => Some(Cell::new(&format!("/{typing}▏"), Tone::Accent)),
        (None, Some(message)) => Some(Cell::new(
            &message.text,
            if message.level == Level::Error {
                Tone::Bad
            } else {
                Tone::Normal
            },
        )),
        (None, None) => None,
    };
    StatusVm { streams, message }
}
