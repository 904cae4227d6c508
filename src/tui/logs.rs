//! The logs overlay (`l`): which log to ask for (the selected node's daemon
//! pod; the previous container's when the container crashed and is not
//! back), the overlay's state while the request is out and once the text or
//! the error is in, scrolling, and the view it draws from. Every line of API
//! text is sanitised on its way in. Pure: the fetch itself is
//! `logs_link`'s, on the effects side; results come back as
//! [`LogsResult`] values.

use super::columns::list_height;
use super::effect::{Effect, Handled};
use super::keymap::Action;
use super::sanitize::sanitize;
use super::state::UiState;
use super::view_model::cell::{Cell, Tone};
use crate::cluster::cache::Cache;
use crate::model::Pod;

pub use super::logs_request::{LIMIT_BYTES, LogsRequest, LogsResult, TAIL_LINES};

/// The overlay's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogsContent {
    /// The request is out.
    Loading,
    /// The log, one sanitised line each.
    Lines(Vec<String>),
    /// Why there is no log (already sanitised).
    Failed(String),
}

/// The open overlay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogsView {
    /// What was asked for.
    pub request: LogsRequest,
    /// What is shown.
    pub content: LogsContent,
    /// First line shown.
    pub scroll: usize,
}

/// What the overlay widget draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogsVm {
    /// Title (sanitised).
    pub title: String,
    /// The lines shown, from `scroll` on.
    pub lines: Vec<Cell>,
    /// Position: `lines 12–40 of 40`, `loading…`, `error`.
    pub position: String,
    /// Wrap long lines (a message); log lines are cut instead, so scrolling
    /// stays one line per row and the end of the log stays on screen.
    pub wrap: bool,
}

impl LogsView {
    fn len(&self) -> usize {
        match &self.content {
            LogsContent::Lines(lines) => lines.len(),
            _ => 0,
        }
    }

    /// Moves the view; `page` is the number of lines on screen.
    pub fn scroll_by(&mut self, action: Action, page: usize) {
        let last = self.len().saturating_sub(page.max(1));
        self.scroll = match action {
            Action::Up | Action::ScrollUp => self.scroll.saturating_sub(1),
            Action::Down | Action::ScrollDown => self.scroll.saturating_add(1),
            Action::PageUp => self.scroll.saturating_sub(page),
            Action::PageDown => self.scroll.saturating_add(page),
            Action::Top => 0,
            Action::Bottom => last,
            _ => self.scroll,
        }
        .min(last);
    }

    /// Takes the answer (if it is for this request); the view opens on the
    /// end of the log, where a crash says why.
    pub fn receive(&mut self, result: LogsResult, page: usize) {
        if result.request != self.request {
            return;
        }
        self.content = match result.outcome {
            Ok(text) => LogsContent::Lines(lines_of(&text)),
            Err(message) => LogsContent::Failed(sanitize(&message).into_owned()),
        };
        self.scroll = 0;
        self.scroll_by(Action::Bottom, page);
    }

    /// The view model: the visible `page` lines and where they are.
    pub fn view(&self, page: usize) -> LogsVm {
        let (lines, position) = match &self.content {
            LogsContent::Loading => (
                vec![Cell::new("fetching the log…", Tone::Dim)],
                "loading…".to_owned(),
            ),
            LogsContent::Failed(message) => (
                vec![
                    Cell::new("no log:", Tone::Bad),
                    Cell::new(message, Tone::Warn),
                ],
                "error".to_owned(),
            ),
            LogsContent::Lines(lines) if lines.is_empty() => (
                vec![Cell::new("the log is empty", Tone::Dim)],
                "0 lines".to_owned(),
            ),
            LogsContent::Lines(lines) => {
                let shown: Vec<Cell> = lines
                    .iter()
                    .skip(self.scroll)
                    .take(page.max(1))
                    .map(|line| Cell {
                        text: line.clone(),
                        tone: tone_of(line),
                    })
                    .collect();
                let position = format!(
                    "lines {}–{} of {}",
                    self.scroll + 1,
                    self.scroll + shown.len(),
                    lines.len()
                );
                (shown, position)
            }
        };
        LogsVm {
            title: sanitize(&self.request.describe()).into_owned(),
            wrap: !matches!(self.content, LogsContent::Lines(_)),
            lines,
            position,
        }
    }
}

/// The text as sanitised lines, at most [`TAIL_LINES`] (the last ones).
pub fn lines_of(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines
        .len()
        .saturating_sub(usize::try_from(TAIL_LINES).unwrap_or(usize::MAX));
    lines[skip..]
        .iter()
        .map(|line| sanitize(line).into_owned())
        .collect()
}

fn tone_of(line: &str) -> Tone {
    let lower = line.to_ascii_lowercase();
    if ["level=error", "level=fatal", "error:", "panic", "fatal"]
        .iter()
        .any(|w| lower.contains(w))
    {
        Tone::Bad
    } else if lower.contains("level=warn") || lower.contains("warning") {
        Tone::Warn
    } else {
        Tone::Normal
    }
}

/// The log to show for `node`: its newest daemon pod that is not being
/// deleted (else any), the first container that crashed (its previous run,
/// while it is not ready again) or is not ready, else the first one.
pub fn request_for(cache: &Cache, node: &str) -> Result<LogsRequest, String> {
    let pods = cache.pods_on(node);
    let created = |p: &&&Pod| p.metadata.creation_timestamp;
    let pod = (pods
        .iter()
        .filter(|p| !p.is_terminating())
        .max_by_key(created))
    .or_else(|| pods.iter().max_by_key(created))
    .ok_or_else(|| format!("no daemon pod on {node}: there is no log to show"))?;
    let statuses = &pod.status.container_statuses;
    let crashed = statuses
        .iter()
        .find(|c| !c.ready && c.last_state.terminated.is_some());
    let container = crashed
        .or_else(|| statuses.iter().find(|c| !c.ready))
        .map(|c| c.name.to_string())
        .or_else(|| statuses.first().map(|c| c.name.to_string()))
        .or_else(|| pod.spec.containers.first().map(|c| c.name.to_string()));
    Ok(LogsRequest {
        namespace: pod.namespace().to_owned(),
        pod: pod.name().to_owned(),
        container,
        previous: crashed.is_some(),
    })
}

/// Lines the overlay shows at once on a terminal of `size`.
pub fn page(size: (u16, u16)) -> usize {
    // The overlay covers the body inside its borders; lists also lose a
    // line to their column headings.
    list_height(size) + 1
}

/// Handles `l` and, while the overlay is open, its keys ([`Handled::Passed`]
/// when the action is not the overlay's: the console handles it as usual).
pub fn update(
    logs: &mut Option<LogsView>,
    ui: &mut UiState,
    action: Action,
    cache: &Cache,
) -> Handled {
    if action == Action::ShowLogs {
        return Handled::Took(open(logs, ui, cache));
    }
    let Some(view) = logs.as_mut() else {
        return Handled::Passed;
    };
    match action {
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom
        | Action::ScrollUp
        | Action::ScrollDown => view.scroll_by(action, page(ui.size)),
        Action::Back | Action::Cancel if !ui.help => *logs = None,
        // A click under the overlay must not move the grid's selection.
        Action::ClickRow(_) => {}
        _ => return Handled::Passed,
    }
    Handled::Took(None)
}

/// Opens the overlay on the selected node's log and asks for it.
fn open(logs: &mut Option<LogsView>, ui: &mut UiState, cache: &Cache) -> Option<Effect> {
    let Some(node) = ui.selected_node.clone() else {
        ui.error("select a node first: its pod's log is shown");
        return None;
    };
    match request_for(cache, &node) {
        Ok(request) => {
            *logs = Some(LogsView {
                request: request.clone(),
                content: LogsContent::Loading,
                scroll: 0,
            });
            Some(Effect::FetchLogs(request))
        }
        Err(message) => {
            ui.error(message);
            None
        }
    }
}
