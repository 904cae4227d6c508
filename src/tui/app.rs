//! The console application: turns terminal events into [`Action`]s (via the
//! keymap), applies each action in one `update`, keeps the engine rows and
//! grid order in step with the cache, and builds the view model. Effects that
//! leave the UI (quit, refocus the watches; later rollout operations) are
//! returned as [`Effect`] values for the event loop to run.

use crossterm::event::{Event, MouseButton, MouseEventKind};

use super::columns::detail_split;
use super::columns::{areas, list_height};
use super::effect::{Effect, Handled};
use super::fit::clamp_scroll;
use super::index::{Filter, GridIndex, GroupKey, SortKey};
use super::keymap::{Action, action_for};
use super::logs::{self, LogsResult, LogsView};
use super::ops::{OpsConsole, OpsEvent, OpsScope};
use super::roster::RosterState;
use super::state::{DetailView, HistoryView, Level, PickerView, Screen, UiState};
use super::view_model::pane::{self, Overlay, TextPane};
use super::view_model::{self, Body, ConsoleInfo, Inputs, ViewModel, picker};
use crate::cluster::cache::Cache;
use crate::cluster::store::ObjectKey;
use crate::cluster::watch::Target;
use crate::rows::RowCache;

/// The console's state: UI state plus the cached engine rows and grid order.
pub struct App {
    /// UI state.
    pub ui: UiState,
    /// Engine results per node.
    pub rows: RowCache,
    /// Grid order.
    pub index: GridIndex,
    /// Where the console is connected.
    pub info: ConsoleInfo,
    /// The server is rollcall's embedded cluster: the title says SIMULATED.
    pub simulated: bool,
    /// Rollout operations: dialogs, auto-advance, writes in flight.
    pub ops: OpsConsole,
    /// The roster audit (`--roster FILE`), when one was given.
    pub roster: Option<RosterState>,
    /// The logs overlay, when open.
    pub logs: Option<LogsView>,
    /// Opened from the fleet matrix: `Esc` on the bare grid (nothing open,
    /// no filter) leaves the console, back to the matrix.
    pub leave_on_back: bool,
}

impl App {
    /// A console on `target`, or on the DaemonSet list when `None`.
    pub fn new(info: ConsoleInfo, target: Option<Target>, size: (u16, u16)) -> Self {
        let mut ui = UiState {
            screen: if target.is_some() {
                Screen::Grid
            } else {
                Screen::Picker(PickerView::default())
            },
            target,
            size,
            ..UiState::default()
        };
        // The note (e.g. "no kubeconfig found: embedded cluster") also opens the
        // status line, where a narrow terminal still shows it.
        if let Some(note) = &info.note {
            ui.info(note.clone());
        }
        Self {
            ui,
            rows: RowCache::default(),
            index: GridIndex::default(),
            info,
            simulated: false,
            ops: OpsConsole::default(),
            roster: None,
            logs: None,
            leave_on_back: false,
        }
    }

    /// The action a terminal event asks for, if any.
    pub fn action_for_event(&self, event: &Event) -> Option<Action> {
        match event {
            Event::Key(key) if key.kind != crossterm::event::KeyEventKind::Release => {
                let context = if self.ui.help {
                    super::keymap::Context::Help
                } else {
                    self.ops
                        .context()
                        .or_else(|| self.logs.as_ref().map(|_| super::keymap::Context::Logs))
                        .unwrap_or_else(|| self.ui.context())
                };
                action_for(context, key)
            }
            Event::Mouse(mouse) => match mouse.kind {
                MouseEventKind::ScrollUp => Some(Action::ScrollUp),
                MouseEventKind::ScrollDown => Some(Action::ScrollDown),
                MouseEventKind::Down(MouseButton::Left) => Some(Action::ClickRow(mouse.row)),
                _ => None,
            },
            Event::Resize(width, height) => Some(Action::Resize(*width, *height)),
            _ => None,
        }
    }

    /// Takes the cache's change set and brings rows and order up to date
    /// (rows that changed by the clock alone too: a pod turned available).
    /// Returns whether anything changed (a redraw is due).
    pub fn refresh(&mut self, cache: &mut Cache, now: jiff::Timestamp) -> bool {
        let changes = cache.take_changes();
        if changes.is_empty() && !self.rows.due(now) {
            return false;
        }
        if let Some(roster) = &mut self.roster {
            roster.note_changes(&changes, cache, self.ui.target.as_ref());
        }
        let rows = self
            .rows
            .refresh(cache, self.ui.target.as_ref(), &changes, now);
        let labels_matter =
            matches!(self.ui.filter, Filter::Labels(_)) && !changes.nodes.is_empty();
        // Name order without groups cannot change when a row's state does.
        let order_matters = self.ui.sort != SortKey::Name || self.ui.group != GroupKey::None;
        if rows.membership || self.roster.is_some() {
            if rows.membership || (rows.reorder && order_matters) || labels_matter {
                self.rebuild_index(cache);
            }
        } else if (rows.reorder && order_matters) || labels_matter {
            self.move_rows(cache, &rows.nodes, &changes.nodes);
        }
        true
    }

    /// The rollout operations and what they take from the console (borrowed apart).
    fn ops_and_scope(&mut self) -> (&mut OpsConsole, OpsScope<'_>) {
        let (status, target, selected_node) = self.ui.status_with_selection();
        let scope = OpsScope {
            target,
            selected_node,
            rows: &self.rows,
            status,
        };
        (&mut self.ops, scope)
    }

    /// Steps the run this console drives (on cache changes and ticks) and
    /// follows the nodes advanced by hand; returns the writes to send.
    pub fn ops_on_change(&mut self, cache: &Cache, now: jiff::Timestamp) -> Option<Effect> {
        let (ops, mut scope) = self.ops_and_scope();
        ops.on_change(&mut scope, cache, now)
    }

    /// Applies a rollout result from the effects side.
    pub fn ops_on_event(&mut self, event: OpsEvent, now: jiff::Timestamp) {
        let (ops, mut scope) = self.ops_and_scope();
        ops.on_event(&mut scope, event, now);
    }

    /// Takes a log fetch's answer from the effects side.
    pub fn logs_on_result(&mut self, result: LogsResult) {
        let page = self.logs_page();
        if let Some(view) = &mut self.logs {
            view.receive(result, page);
        }
    }

    /// Lines the logs overlay shows at once.
    pub fn logs_page(&self) -> usize {
        logs::page(self.ui.size)
    }

    /// On the event loop's tick: collects and starts roster comparisons, and
    /// re-orders the grid when a new report arrived. Returns whether to redraw.
    pub fn roster_tick(&mut self, cache: &Cache, now: std::time::Instant) -> bool {
        let Some(roster) = &mut self.roster else {
            return false;
        };
        if !roster.poll(cache, self.ui.target.as_ref(), now) {
            return false;
        }
        self.rebuild_index(cache);
        true
    }

    /// Moves a few changed rows within the order (a full rebuild when many
    /// changed), keeping the selected node selected.
    fn move_rows(
        &mut self,
        cache: &Cache,
        rows: &std::collections::HashSet<ObjectKey>,
        nodes: &std::collections::HashSet<ObjectKey>,
    ) {
        let changed: std::collections::BTreeSet<&str> = rows
            .iter()
            .chain(nodes.iter())
            .map(ObjectKey::as_str)
            .collect();
        if changed.len() > super::index_update::INCREMENTAL_LIMIT {
            self.rebuild_index(cache);
            return;
        }
        let order = (self.ui.sort, self.ui.group);
        self.index
            .update(&self.rows, cache, order, &self.ui.filter, changed);
        self.follow_selection();
    }

    /// Builds the view model for the current state.
    pub fn view_model(&self, cache: &Cache, now: jiff::Timestamp) -> ViewModel {
        let mut view = view_model::build(&Inputs {
            cache,
            rows: &self.rows,
            index: &self.index,
            ui: &self.ui,
            info: &self.info,
            simulated: self.simulated,
            roster: self.roster.as_ref(),
            now,
        });
        if let Some(roster) = &self.roster {
            roster.decorate(&mut view, self.ui.selected_node.as_deref());
        }
        if let Some(logs) = &self.logs {
            view.logs = Some(logs.view(self.logs_page()));
            view.hints = super::keymap::hints(super::keymap::Context::Logs);
        }
        if self.leave_on_back {
            // Opened from the fleet matrix: quitting goes back to it.
            for (_, hint) in &mut view.hints {
                if *hint == "quit" {
                    *hint = "fleet";
                }
            }
        }
        let body = self.body_area();
        super::access::decorate(&mut view, self.ops.permissions.as_ref(), body.width);
        if let (Some(modal), Some(context)) = (&self.ops.modal, self.ops.context()) {
            let dialog = modal.view();
            let width = pane::overlay_inner_width(Overlay::Dialog, body.width);
            let lines: Vec<Vec<_>> = dialog.lines.into_iter().map(|c| vec![c]).collect();
            let lines = pane::wrap_all(&lines, width);
            let area = pane::overlay_area(Overlay::Dialog, body, lines.len());
            let scroll = match &self.ui.dialog_scroll {
                Some((title, scroll)) if *title == dialog.title => *scroll,
                _ => 0,
            };
            let visible = pane::visible(area.height, lines.len());
            view.dialog = Some(TextPane {
                title: dialog.title,
                scroll: clamp_scroll(scroll, visible, lines.len()),
                lines,
            });
            view.hints = super::keymap::hints(context);
        }
        if let Body::Detail(grid, detail) = &mut view.body {
            let [left, right] = detail_split(body);
            let area = if grid.is_some() {
                right
            } else {
                left.union(right)
            };
            detail.lines = pane::wrap_all(&detail.lines, area.width.saturating_sub(2));
            let visible = pane::visible(area.height, detail.lines.len());
            detail.scroll = clamp_scroll(detail.scroll, visible, detail.lines.len());
        }
        view
    }

    /// The body region of the current terminal.
    fn body_area(&self) -> ratatui::layout::Rect {
        areas(ratatui::layout::Rect::new(
            0,
            0,
            self.ui.size.0,
            self.ui.size.1,
        ))
        .body
    }

    /// Scrolls the help, the open dialog or the detail pane, when one has
    /// the list keys; returns whether one did.
    fn scroll_text(&mut self, action: Action, cache: &Cache, now: jiff::Timestamp) -> bool {
        let on_text =
            self.ui.help || self.ops.modal.is_some() || matches!(self.ui.screen, Screen::Detail(_));
        if !on_text {
            return false;
        }
        let view = self.view_model(cache, now);
        let body = self.body_area();
        let (pane, height) = if let Some(help) = &view.help {
            let area = pane::overlay_area(Overlay::Help, body, help.lines.len());
            (help, area.height)
        } else if let Some(dialog) = &view.dialog {
            let area = pane::overlay_area(Overlay::Dialog, body, dialog.lines.len());
            (dialog, area.height)
        } else if let Body::Detail(_, detail) = &view.body {
            (detail, body.height)
        } else {
            return false;
        };
        let total = pane.lines.len();
        let visible = pane::visible(height, total);
        let last = total.saturating_sub(visible);
        let next = match action {
            Action::Up => pane.scroll.saturating_sub(1),
            Action::Down => pane.scroll + 1,
            Action::PageUp => pane.scroll.saturating_sub(visible),
            Action::PageDown => pane.scroll + visible,
            Action::Top => 0,
            _ => last,
        }
        .min(last);
        if self.ui.help {
            self.ui.help_scroll = next;
        } else if view.dialog.is_some() {
            self.ui.dialog_scroll = view.dialog.as_ref().map(|d| (d.title.clone(), next));
        } else if let Screen::Detail(detail) = &mut self.ui.screen {
            detail.scroll = next;
        }
        true
    }

    /// Applies one action at `now` (stamped on the rollout state it writes,
    /// as the view model is built at a given time); returns the effect for
    /// the event loop, if any.
    pub fn update(
        &mut self,
        action: Action,
        cache: &Cache,
        now: jiff::Timestamp,
    ) -> Option<Effect> {
        let before = (self.ui.screen, self.ops.modal.is_some());
        let effect = self.apply(action, cache, now);
        // A note about one screen ("diff base: revision 2") does not follow
        // the user into another screen or a dialog; errors stay.
        let after = (self.ui.screen, self.ops.modal.is_some());
        let opened = after.1 && !before.1;
        let moved = !after.0.same_as(before.0);
        // The connection note stays until something replaces it.
        let passing =
            self.ui.message.as_ref().is_some_and(|m| {
                m.level == Level::Info && Some(&m.text) != self.info.note.as_ref()
            });
        if (moved || opened) && passing && !self.ui.message_is_new {
            self.ui.message = None;
        }
        self.ui.message_is_new = false;
        effect
    }

    fn apply(&mut self, action: Action, cache: &Cache, now: jiff::Timestamp) -> Option<Effect> {
        let scroll = matches!(
            action,
            Action::Up
                | Action::Down
                | Action::PageUp
                | Action::PageDown
                | Action::Top
                | Action::Bottom
        );
        // The help, when open, is what the list keys scroll.
        if self.ui.help && scroll {
            self.scroll_text(action, cache, now);
            return None;
        }
        let (ops, mut scope) = self.ops_and_scope();
        if let Handled::Took(effect) = ops.update(&mut scope, action, cache, now) {
            return effect;
        }
        if let Handled::Took(effect) = logs::update(&mut self.logs, &mut self.ui, action, cache) {
            return effect;
        }
        match action {
            Action::Quit => return Some(Effect::Quit),
            Action::Help => {
                self.ui.help = !self.ui.help;
                self.ui.help_scroll = 0;
            }
            Action::Back if self.leave_on_back && self.at_top() => return Some(Effect::Quit),
            Action::Back => self.back(cache),
            Action::Resize(width, height) => {
                self.ui.size = (width, height);
                self.scroll_into_view();
            }
            // A new filter starts empty (Esc keeps the applied one).
            Action::StartFilter => {
                self.ui.filter_input = Some(String::new());
                self.ui.message = None;
            }
            Action::FilterChar(c) => {
                self.ui.filter_input.get_or_insert_with(String::new).push(c);
                self.ui.message = None;
            }
            Action::FilterBackspace => {
                if let Some(input) = &mut self.ui.filter_input {
                    input.pop();
                }
                self.ui.message = None;
            }
            Action::ApplyFilter => self.apply_filter(cache),
            Action::CycleSort => {
                self.ui.sort = self.ui.sort.next();
                self.ui.info(format!("sorted by {}", self.ui.sort.label()));
                self.rebuild_index(cache);
            }
            Action::CycleGroup => {
                self.ui.group = self.ui.group.next();
                self.ui
                    .info(format!("grouped by {}", self.ui.group.label()));
                self.rebuild_index(cache);
            }
            Action::History => {
                self.ui.screen = Screen::History(HistoryView::default());
            }
            Action::MarkDiffBase => self.mark_diff_base(),
            Action::ShowInFull => self.show_in_full(cache, now),
            Action::PickDaemonSet => self.open_picker(cache),
            Action::Open => return self.open(cache),
            Action::ClickRow(row) => self.click(row, cache),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                if !self.scroll_text(action, cache, now) {
                    self.navigate(action, cache);
                }
            }
            Action::ScrollUp => self.navigate(Action::Up, cache),
            Action::ScrollDown => self.navigate(Action::Down, cache),
            // Handled by the rollout operations or the logs overlay above.
            Action::AdvanceSelected
            | Action::AdvanceNext
            | Action::ToggleCanary
            | Action::ToggleAuto
            | Action::TogglePause
            | Action::Rollback
            | Action::ShowPlan
            | Action::ShowLogs
            | Action::DialogUp
            | Action::FormLess
            | Action::FormMore
            | Action::DialogDown
            | Action::Confirm
            | Action::ConfirmDespite
            | Action::Cancel => {}
        }
        None
    }

    /// Opens what the header and the status line cut, whole: the rollout
    /// state (a pause reason of several lines), the spec's owner, the view's
    /// limitations, the kubelet skew and the last message.
    fn show_in_full(&mut self, cache: &Cache, now: jiff::Timestamp) {
        let view = self.view_model(cache, now);
        let mut lines = Vec::new();
        if let Some(header) = &view.header {
            lines.push(format!("rollout: {}", header.state.text));
            lines.extend(header.owner.iter().map(|owner| owner.text.clone()));
            lines.extend(header.limits.iter().map(|limit| limit.text.clone()));
            lines.extend(
                header
                    .kubelets
                    .iter()
                    .map(|notice| notice.full.text.clone()),
            );
        }
        if let Some(message) = &view.status.message {
            lines.push(format!("last message: {}", message.text));
        }
        if lines.is_empty() {
            lines.push("nothing was cut: no rollout state or message to show".to_owned());
        }
        self.ops.modal = Some(super::confirm::Modal::Info {
            title: "in full".to_owned(),
            lines,
        });
    }

    /// Whether `Esc` has nothing left to close: the bare grid.
    fn at_top(&self) -> bool {
        !self.ui.help
            && self.ui.filter_input.is_none()
            && matches!(self.ui.screen, Screen::Grid)
            && !self.ui.filter.is_active()
    }

    fn back(&mut self, cache: &Cache) {
        if self.ui.help {
            self.ui.help = false;
        } else if self.ui.filter_input.is_some() {
            self.ui.filter_input = None;
        } else {
            match self.ui.screen {
                Screen::Detail(_) | Screen::History(_) => self.ui.screen = Screen::Grid,
                Screen::Grid if self.ui.filter.is_active() => {
                    self.ui.filter = Filter::None;
                    self.ui.filter_text.clear();
                    self.rebuild_index(cache);
                }
                Screen::Picker(_) if self.ui.target.is_some() => self.ui.screen = Screen::Grid,
                Screen::Grid | Screen::Picker(_) => {}
            }
        }
    }

    fn apply_filter(&mut self, cache: &Cache) {
        let Some(text) = self.ui.filter_input.clone() else {
            return;
        };
        if let Screen::Picker(picker) = &mut self.ui.screen {
            *picker = PickerView::default();
            self.ui.filter_text = text;
            self.ui.filter_input = None;
            return;
        }
        match Filter::parse(&text) {
            Ok(filter) => {
                self.ui.filter = filter;
                self.ui.filter_text = text.trim().to_owned();
                self.ui.filter_input = None;
                self.ui.selected_node = None;
                self.ui.selected = 0;
                self.ui.offset = 0;
                self.rebuild_index(cache);
            }
            Err(message) => self.ui.error(message),
        }
    }

    fn mark_diff_base(&mut self) {
        let Some(index) = self.rows.revisions() else {
            return;
        };
        let Screen::History(history) = &mut self.ui.screen else {
            return;
        };
        let revisions = view_model::history::newest_first(index.list());
        if let Some(revision) = revisions.get(history.selected) {
            history.diff_base = Some(revision.number);
            self.ui
                .info(format!("diff base: revision {}", revision.number));
        }
    }

    fn open(&mut self, cache: &Cache) -> Option<Effect> {
        match self.ui.screen {
            Screen::Grid if self.ui.selected_node.is_some() => {
                self.ui.screen = Screen::Detail(DetailView::default());
                None
            }
            Screen::Picker(view) => {
                let keys = picker::entries(cache, &self.ui.filter_text);
                let target = keys.get(view.selected)?.clone();
                self.ui.target = Some(target.clone());
                self.ui.screen = Screen::Grid;
                self.ui.filter_text.clear();
                self.ui.filter = Filter::None;
                self.ui.selected = 0;
                self.ui.selected_node = None;
                self.ui.offset = 0;
                Some(Effect::SetTarget(target))
            }
            _ => None,
        }
    }

    /// Opens the DaemonSet list on the DaemonSet shown (the top when none is).
    fn open_picker(&mut self, cache: &Cache) {
        let keys = picker::entries(cache, &self.ui.filter_text);
        let selected = self
            .ui
            .target
            .as_ref()
            .and_then(|target| keys.iter().position(|key| key == target))
            .unwrap_or(0);
        let page = list_height(self.ui.size);
        self.ui.screen = Screen::Picker(PickerView {
            selected,
            offset: visible_offset(0, selected, page),
        });
    }

    /// Rebuilds the grid order, keeping the selected node selected.
    pub fn rebuild_index(&mut self, cache: &Cache) {
        self.index = GridIndex::build(
            &self.rows,
            cache,
            self.ui.sort,
            self.ui.group,
            &self.ui.filter,
        );
        if let Some(roster) = &self.roster {
            let index = std::mem::take(&mut self.index);
            self.index = roster.extend_index(index, self.ui.group, &self.ui.filter);
        }
        self.follow_selection();
    }

    /// Keeps the selected node selected after the order changed.
    fn follow_selection(&mut self) {
        let found = self
            .ui
            .selected_node
            .as_deref()
            .and_then(|n| self.index.position_of(n));
        self.ui.selected = found
            .unwrap_or(self.ui.selected)
            .min(self.index.rows.len().saturating_sub(1));
        self.ui.selected_node = self.index.node_at(self.ui.selected).map(str::to_owned);
        self.scroll_into_view();
    }

    fn navigate(&mut self, action: Action, cache: &Cache) {
        let page = list_height(self.ui.size);
        match self.ui.screen {
            Screen::Grid => {
                self.ui.selected = step(self.ui.selected, self.index.rows.len(), action, page);
                self.ui.selected_node = self.index.node_at(self.ui.selected).map(str::to_owned);
                self.scroll_into_view();
            }
            Screen::Picker(mut view) => {
                let len = picker::entries(cache, &self.ui.filter_text).len();
                view.selected = step(view.selected, len, action, page);
                view.offset = visible_offset(view.offset, view.selected, page);
                self.ui.screen = Screen::Picker(view);
            }
            // Scrolled by `scroll_text`.
            Screen::Detail(_) => {}
            Screen::History(mut view) => {
                match action {
                    Action::PageUp | Action::PageDown => {
                        let len = self.diff_length(cache);
                        view.diff_scroll = step(view.diff_scroll, len, action, page);
                    }
                    _ => {
                        let len = self.rows.revisions().map_or(0, |r| r.list().len());
                        // The marked diff base stays: select another revision to compare.
                        view.selected = step(view.selected, len, action, page);
                        view.diff_scroll = 0;
                    }
                }
                self.ui.screen = Screen::History(view);
            }
        }
    }

    /// Lines of the history's template diff (for clamping its scroll).
    fn diff_length(&self, cache: &Cache) -> usize {
        let Some(ds) = self
            .ui
            .target
            .as_ref()
            .and_then(|target| cache.daemonset(target))
        else {
            return 0;
        };
        let inputs = Inputs {
            cache,
            rows: &self.rows,
            index: &self.index,
            ui: &self.ui,
            info: &self.info,
            simulated: self.simulated,
            roster: self.roster.as_ref(),
            // Line counts do not depend on the time.
            now: jiff::Timestamp::UNIX_EPOCH,
        };
        view_model::history::build(&inputs, ds).diff.len()
    }

    fn click(&mut self, row: u16, cache: &Cache) {
        let body = areas(ratatui::layout::Rect::new(
            0,
            0,
            self.ui.size.0,
            self.ui.size.1,
        ))
        .body;
        // Lists start below the top border and the column headings.
        let Some(line) = row.checked_sub(body.y + 2).map(usize::from) else {
            return;
        };
        match self.ui.screen {
            Screen::Grid | Screen::Detail(_) => {
                let entry = self.ui.offset + line;
                if let Some(position) = self.index.rows.iter().position(|&at| at == entry) {
                    self.ui.selected = position;
                    self.ui.selected_node = self.index.node_at(position).map(str::to_owned);
                }
            }
            Screen::Picker(view) => {
                let at = view.offset + line;
                if at < picker::entries(cache, &self.ui.filter_text).len() {
                    self.ui.screen = Screen::Picker(PickerView {
                        selected: at,
                        ..view
                    });
                }
            }
            Screen::History(_) => {}
        }
    }

    /// Moves the grid's scroll offset so the selected row is on screen.
    fn scroll_into_view(&mut self) {
        let height = list_height(self.ui.size);
        let Some(&entry) = self.index.rows.get(self.ui.selected) else {
            self.ui.offset = 0;
            return;
        };
        self.ui.offset = visible_offset(self.ui.offset, entry, height);
        // Show a group heading right above the first row of a group.
        if self.ui.offset == entry && entry > 0 && !self.index.rows.contains(&(entry - 1)) {
            self.ui.offset -= 1;
        }
    }
}

/// The new position after a movement, within `0..len`.
fn step(current: usize, len: usize, action: Action, page: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let last = len - 1;
    let next = match action {
        Action::Up => current.saturating_sub(1),
        Action::Down => current.saturating_add(1),
        Action::PageUp => current.saturating_sub(page),
        Action::PageDown => current.saturating_add(page),
        Action::Top => 0,
        Action::Bottom => last,
        _ => current,
    };
    next.min(last)
}

/// The smallest change to `offset` that shows `at` in a window of `height` lines.
fn visible_offset(offset: usize, at: usize, height: usize) -> usize {
    if at < offset {
        at
    } else if at >= offset + height {
        at + 1 - height
    } else {
        offset
    }
}
