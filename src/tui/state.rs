//! UI state: which screen is shown, selection and scroll positions, sort,
//! group and filter, the status message. Plain data changed only by
//! `App::update`; no I/O.

use super::index::{Filter, GroupKey, SortKey};
use super::keymap::Context;
use crate::model::Target;

/// The screen under any overlay, with the state only that screen has (a
/// screen starts fresh each time it opens). The grid's selection lives in
/// [`UiState`]: the detail pane shows the selected node beside the grid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Screen {
    /// The list of DaemonSets to pick from.
    Picker(PickerView),
    /// The per-node grid.
    #[default]
    Grid,
    /// The selected node in full.
    Detail(DetailView),
    /// Revision history with template diff.
    History(HistoryView),
}

impl Screen {
    /// Whether `self` and `other` are the same screen (whatever their state).
    pub fn same_as(self, other: Self) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// The picker's position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PickerView {
    /// Selected DaemonSet (index into the filtered list).
    pub selected: usize,
    /// First line shown.
    pub offset: usize,
}

/// The detail pane's position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetailView {
    /// Scroll, in lines.
    pub scroll: usize,
}

/// The history's selection and diff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistoryView {
    /// Selected revision (index into the revision list, newest first).
    pub selected: usize,
    /// Revision number the diff is taken against (default: the one before the selected).
    pub diff_base: Option<i64>,
    /// Scroll of the diff, in lines.
    pub diff_scroll: usize,
}

/// How a status message is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Neutral information.
    Info,
    /// Something failed.
    Error,
}

/// A message in the status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The text (already sanitised if it came from the API).
    pub text: String,
    /// Info or error.
    pub level: Level,
}

/// Everything about the UI that is not cluster data.
#[derive(Clone, Debug, Default)]
pub struct UiState {
    /// The screen.
    pub screen: Screen,
    /// Help overlay shown.
    pub help: bool,
    /// The filter being typed, while typing.
    pub filter_input: Option<String>,
    /// The applied filter as typed.
    pub filter_text: String,
    /// The applied filter.
    pub filter: Filter,
    /// Grid sort order.
    pub sort: SortKey,
    /// Grid grouping.
    pub group: GroupKey,
    /// Selected position among the grid's node rows.
    pub selected: usize,
    /// The selected node, so the selection follows it when the order changes.
    pub selected_node: Option<String>,
    /// First grid line shown (index into the grid's entries).
    pub offset: usize,
    /// Scroll of the help overlay, in lines.
    pub help_scroll: usize,
    /// Scroll of the open rollout dialog: its title and the scroll in lines
    /// (a dialog with another title starts at the top).
    pub dialog_scroll: Option<(String, usize)>,
    /// The status line message.
    pub message: Option<Message>,
    /// The message was set by the action being applied (so a screen change
    /// in the same action keeps it).
    pub message_is_new: bool,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// The DaemonSet shown.
    pub target: Option<Target>,
}

impl UiState {
    /// The keymap context for the current screen and input.
    pub fn context(&self) -> Context {
        if self.filter_input.is_some() {
            return Context::FilterInput;
        }
        match self.screen {
            Screen::Picker(_) => Context::Picker,
            Screen::Grid => Context::Grid,
            Screen::Detail(_) => Context::Detail,
            Screen::History(_) => Context::History,
        }
    }

    /// The picker's position (the top when the picker is not shown).
    pub fn picker(&self) -> PickerView {
        match self.screen {
            Screen::Picker(view) => view,
            _ => PickerView::default(),
        }
    }

    /// The detail pane's position (the top when it is not shown).
    pub fn detail(&self) -> DetailView {
        match self.screen {
            Screen::Detail(view) => view,
            _ => DetailView::default(),
        }
    }

    /// The history's selection (the newest revision when it is not shown).
    pub fn history(&self) -> HistoryView {
        match self.screen {
            Screen::History(view) => view,
            _ => HistoryView::default(),
        }
    }

    /// Shows an informational message.
    pub fn info(&mut self, text: impl Into<String>) {
        self.status_line().info(text);
    }

    /// Shows an error message.
    pub fn error(&mut self, text: impl Into<String>) {
        self.status_line().error(text);
    }

    /// The status line alone.
    pub fn status_line(&mut self) -> StatusLine<'_> {
        StatusLine {
            message: &mut self.message,
            is_new: &mut self.message_is_new,
        }
    }

    /// The status line beside what a component reads of the UI state: the
    /// DaemonSet shown and the selected node (borrowed apart).
    pub fn status_with_selection(&mut self) -> (StatusLine<'_>, Option<&Target>, Option<&str>) {
        (
            StatusLine {
                message: &mut self.message,
                is_new: &mut self.message_is_new,
            },
            self.target.as_ref(),
            self.selected_node.as_deref(),
        )
    }
}

/// The status line, borrowed apart from the rest of the UI state so a
/// component can report on it while it reads other parts.
#[derive(Debug)]
pub struct StatusLine<'a> {
    message: &'a mut Option<Message>,
    is_new: &'a mut bool,
}

impl StatusLine<'_> {
    /// Shows an informational message.
    pub fn info(&mut self, text: impl Into<String>) {
        self.show(text.into(), Level::Info);
    }

    /// Shows an error message.
    pub fn error(&mut self, text: impl Into<String>) {
        self.show(text.into(), Level::Error);
    }

    fn show(&mut self, text: String, level: Level) {
        *self.is_new = true;
        *self.message = Some(Message { text, level });
    }
}
