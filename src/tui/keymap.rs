//! The one keymap: every key binding as const data, which drives key dispatch,
//! the footer hints and the help overlay, so they never drift apart. Also the
//! [`Action`] values keys turn into. No state, no I/O.
//!
//! To add a command: add an [`Action`] variant, one [`Binding`] row in
//! [`BINDINGS`] (with the [`Context`]s where it applies), and its arm in
//! `app::App::update`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything the user can ask the console to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Leave the console.
    Quit,
    /// Selection up one row.
    Up,
    /// Selection down one row.
    Down,
    /// Selection up one page.
    PageUp,
    /// Selection down one page.
    PageDown,
    /// First row.
    Top,
    /// Last row.
    Bottom,
    /// Select a row by its position on screen (mouse click).
    ClickRow(u16),
    /// Scroll the list up (mouse wheel).
    ScrollUp,
    /// Scroll the list down (mouse wheel).
    ScrollDown,
    /// Open the selected item (node detail, or the picked DaemonSet).
    Open,
    /// Close the current view or input.
    Back,
    /// Show the revision history of the DaemonSet.
    History,
    /// In the history, mark the selected revision as the diff base.
    MarkDiffBase,
    /// Toggle the help overlay.
    Help,
    /// Start typing a filter.
    StartFilter,
    /// Apply the filter being typed.
    ApplyFilter,
    /// Add a character to the filter being typed.
    FilterChar(char),
    /// Remove the last character of the filter being typed.
    FilterBackspace,
    /// Next sort order.
    CycleSort,
    /// Next grouping.
    CycleGroup,
    /// Back to the DaemonSet list.
    PickDaemonSet,
    /// The terminal was resized to (columns, rows); not bound to a key.
    Resize(u16, u16),
    /// Rollout: advance the selected node (delete its old pod, after confirming).
    AdvanceSelected,
    /// Rollout: advance the next node of the plan.
    AdvanceNext,
    /// Rollout: mark or unmark the selected node as a canary.
    ToggleCanary,
    /// Rollout: start or stop auto-advance.
    ToggleAuto,
    /// Rollout: pause or resume.
    TogglePause,
    /// Rollout: pick a revision to roll back to.
    Rollback,
    /// Rollout: show the plan (order, canaries, skipped nodes with reasons).
    ShowPlan,
    /// Show the selected node's pod log (the previous container's after a crash).
    ShowLogs,
    /// Show in full what the header and the status line had to cut: the
    /// rollout state (a long pause reason), the last message.
    ShowInFull,
    /// In a dialog: previous entry.
    DialogUp,
    /// In a dialog: next entry.
    DialogDown,
    /// Confirm the pending action of the dialog.
    Confirm,
    /// In the failing-pods dialog: go on past the failing pods (`y` does not).
    ConfirmDespite,
    /// Cancel the pending action of the dialog.
    Cancel,
    /// In a form: the selected value one step down.
    FormLess,
    /// In a form: the selected value one step up.
    FormMore,
}

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Everywhere (unless a text input has the keyboard).
    Global,
    /// Any list: the grid, the DaemonSet picker, the history.
    List,
    /// The per-node grid.
    Grid,
    /// The DaemonSet picker.
    Picker,
    /// The node detail pane.
    Detail,
    /// The revision history.
    History,
    /// Typing a filter.
    FilterInput,
    /// A confirmation dialog is open.
    Confirm,
    /// The dialog that asks to advance past failing pods: answered only by
    /// its own key, never by the `y` of an ordinary confirmation.
    FailingConfirm,
    /// Picking a revision to roll back to.
    RollbackPicker,
    /// Reading the rollout plan.
    PlanView,
    /// The help overlay is open: it scrolls, everything else waits.
    Help,
    /// Editing the auto-advance settings.
    AutoForm,
    /// Reading a pod's log (the list keys scroll it).
    Logs,
    /// Typing the pause's reason.
    ReasonInput,
}

impl Context {
    /// Heading in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Self::Global => "Everywhere",
            Self::List => "Lists",
            Self::Grid => "Node grid",
            Self::Picker => "DaemonSet list",
            Self::Detail => "Node detail",
            Self::History => "Revision history",
            Self::FilterInput => "Filter input",
            Self::Confirm => "Confirmation",
            Self::FailingConfirm => "Failing-pods dialog",
            Self::RollbackPicker => "Rollback dialog",
            Self::PlanView => "Rollout plan",
            Self::Help => "Help",
            Self::AutoForm => "Auto-advance settings",
            Self::Logs => "Pod log",
            Self::ReasonInput => "Pause reason",
        }
    }
}

/// A key with modifiers, as bindings name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Ctrl/Alt/Shift held.
    pub modifiers: KeyModifiers,
}

impl Key {
    /// A key without modifiers.
    pub const fn plain(code: KeyCode) -> Self {
        Self {
            code,
            modifiers: KeyModifiers::NONE,
        }
    }

    /// A character key.
    pub const fn char(c: char) -> Self {
        Self::plain(KeyCode::Char(c))
    }

    /// Ctrl + a character.
    pub const fn ctrl(c: char) -> Self {
        Self {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::CONTROL,
        }
    }

    /// Whether a terminal key event is this key (Shift is ignored for
    /// characters, since the character already says it: `G` vs `g`).
    pub fn matches(&self, event: &KeyEvent) -> bool {
        let mut modifiers = event.modifiers;
        if matches!(event.code, KeyCode::Char(_)) {
            modifiers.remove(KeyModifiers::SHIFT);
        }
        self.code == event.code && self.modifiers == modifiers
    }

    /// How the key is written in hints and help.
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_owned(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".to_owned(),
            KeyCode::Down => "↓".to_owned(),
            KeyCode::Left => "←".to_owned(),
            KeyCode::Right => "→".to_owned(),
            KeyCode::PageUp => "PgUp".to_owned(),
            KeyCode::PageDown => "PgDn".to_owned(),
            KeyCode::Home => "Home".to_owned(),
            KeyCode::End => "End".to_owned(),
            KeyCode::Enter => "Enter".to_owned(),
            KeyCode::Esc => "Esc".to_owned(),
            KeyCode::Backspace => "Bksp".to_owned(),
            KeyCode::Tab => "Tab".to_owned(),
            other => format!("{other:?}"),
        };
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            format!("Ctrl-{base}")
        } else {
            base
        }
    }
}

/// One key binding.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    /// Where it applies (checked most specific first).
    pub contexts: &'static [Context],
    /// The keys (the first is shown in the footer).
    pub keys: &'static [Key],
    /// What it does.
    pub action: Action,
    /// Short footer label; `None` keeps it out of the footer.
    pub hint: Option<&'static str>,
    /// The help overlay's line.
    pub help: &'static str,
}

/// Lists, and the overlays that scroll line by line with the same keys
/// (help, node detail, plan, confirmations).
const SCROLLS: &[Context] = &[
    Context::List,
    Context::Confirm,
    Context::FailingConfirm,
    Context::PlanView,
];
/// As [`SCROLLS`], plus the rollback dialog (where ↑/↓ pick a revision).
const PAGES: &[Context] = &[
    Context::List,
    Context::Confirm,
    Context::FailingConfirm,
    Context::PlanView,
    Context::RollbackPicker,
];

/// Every binding, in the order the footer and help show them.
#[rustfmt::skip]
pub const BINDINGS: &[Binding] = &[
    Binding { contexts: &[Context::Global], keys: &[Key::char('q')], action: Action::Quit, hint: Some("quit"), help: "quit the console" },
    Binding { contexts: &[Context::Global, Context::FilterInput], keys: &[Key::ctrl('c')], action: Action::Quit, hint: None, help: "quit the console" },
    Binding { contexts: &[Context::Global, Context::FilterInput, Context::Confirm, Context::FailingConfirm, Context::RollbackPicker, Context::PlanView, Context::AutoForm], keys: &[Key::char('?')], action: Action::Help, hint: Some("help"), help: "show or hide this help" },
    Binding { contexts: &[Context::Global], keys: &[Key::plain(KeyCode::Esc)], action: Action::Back, hint: Some("back"), help: "close the view, overlay or filter" },
    Binding { contexts: SCROLLS, keys: &[Key::plain(KeyCode::Up), Key::char('k')], action: Action::Up, hint: None, help: "move / scroll up" },
    Binding { contexts: SCROLLS, keys: &[Key::plain(KeyCode::Down), Key::char('j')], action: Action::Down, hint: None, help: "move / scroll down" },
    Binding { contexts: PAGES, keys: &[Key::plain(KeyCode::PageUp), Key::ctrl('b')], action: Action::PageUp, hint: None, help: "page up" },
    Binding { contexts: PAGES, keys: &[Key::plain(KeyCode::PageDown), Key::ctrl('f')], action: Action::PageDown, hint: None, help: "page down" },
    Binding { contexts: PAGES, keys: &[Key::char('g'), Key::plain(KeyCode::Home)], action: Action::Top, hint: None, help: "first row / top" },
    Binding { contexts: PAGES, keys: &[Key::char('G'), Key::plain(KeyCode::End)], action: Action::Bottom, hint: None, help: "last row / bottom" },
    Binding { contexts: &[Context::Grid, Context::Picker], keys: &[Key::plain(KeyCode::Enter)], action: Action::Open, hint: Some("open"), help: "open the node detail / the DaemonSet" },
    Binding { contexts: &[Context::Grid, Context::Picker], keys: &[Key::char('/')], action: Action::StartFilter, hint: Some("filter"), help: "filter: name substring, or a label selector (pool=gpu)" },
    Binding { contexts: &[Context::Grid], keys: &[Key::char('s')], action: Action::CycleSort, hint: Some("sort"), help: "sort by name, revision, state, age" },
    Binding { contexts: &[Context::Grid], keys: &[Key::char('o')], action: Action::CycleGroup, hint: Some("group"), help: "group by none, revision, pool/zone, state" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('h')], action: Action::History, hint: Some("history"), help: "revision history with template diff" },
    Binding { contexts: &[Context::Grid], keys: &[Key::char('D')], action: Action::PickDaemonSet, hint: Some("daemonsets"), help: "back to the DaemonSet list" },
    Binding { contexts: &[Context::History], keys: &[Key::char(' '), Key::char('m')], action: Action::MarkDiffBase, hint: Some("diff base"), help: "diff the selected revision against this one" },
    Binding { contexts: &[Context::FilterInput], keys: &[Key::plain(KeyCode::Enter)], action: Action::ApplyFilter, hint: Some("apply"), help: "apply the filter" },
    Binding { contexts: &[Context::FilterInput], keys: &[Key::plain(KeyCode::Esc)], action: Action::Back, hint: Some("cancel"), help: "clear the filter" },
    Binding { contexts: &[Context::FilterInput], keys: &[Key::plain(KeyCode::Backspace)], action: Action::FilterBackspace, hint: None, help: "delete a character" },
    Binding { contexts: &[Context::Confirm], keys: &[Key::char('y')], action: Action::Confirm, hint: Some("yes"), help: "do it (only y: Enter does nothing here)" },
    Binding { contexts: &[Context::FailingConfirm], keys: &[Key::char('F')], action: Action::ConfirmDespite, hint: Some("advance anyway"), help: "move nodes onto the failing revision anyway (y does nothing here)" },
    Binding { contexts: &[Context::Confirm, Context::FailingConfirm], keys: &[Key::char('n'), Key::plain(KeyCode::Esc)], action: Action::Cancel, hint: Some("cancel"), help: "do nothing" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('a')], action: Action::AdvanceSelected, hint: Some("advance"), help: "advance the selected node (delete its old pod; asks first)" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('n')], action: Action::AdvanceNext, hint: Some("next"), help: "advance the next node of the plan (asks first)" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('c'), Key::char(' ')], action: Action::ToggleCanary, hint: Some("canary"), help: "mark or unmark the selected node as a canary" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('A')], action: Action::ToggleAuto, hint: Some("auto"), help: "start or stop auto-advance (gated batches)" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('p')], action: Action::TogglePause, hint: Some("pause"), help: "pause or resume the rollout for every console" },
    Binding { contexts: &[Context::Grid, Context::Detail, Context::History], keys: &[Key::char('r')], action: Action::Rollback, hint: Some("rollback"), help: "roll back: pick a revision, see the diff, confirm" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('P')], action: Action::ShowPlan, hint: Some("plan"), help: "show the rollout plan: order, canaries, skipped nodes and why" },
    Binding { contexts: &[Context::Grid, Context::Detail], keys: &[Key::char('l')], action: Action::ShowLogs, hint: Some("logs"), help: "the node's pod log; after a crash, the previous run's" },
    Binding { contexts: &[Context::Grid, Context::Detail, Context::Picker], keys: &[Key::char('m')], action: Action::ShowInFull, hint: Some("in full"), help: "the rollout state and the last message in full (what the header and status line cut)" },
    Binding { contexts: &[Context::Confirm, Context::FailingConfirm, Context::RollbackPicker, Context::PlanView], keys: &[Key::ctrl('c')], action: Action::Quit, hint: None, help: "quit the console" },
    Binding { contexts: &[Context::PlanView], keys: &[Key::plain(KeyCode::Esc), Key::plain(KeyCode::Enter), Key::char('P')], action: Action::Cancel, hint: Some("close"), help: "close the plan" },
    Binding { contexts: &[Context::RollbackPicker], keys: &[Key::plain(KeyCode::Up), Key::char('k')], action: Action::DialogUp, hint: None, help: "newer revision" },
    Binding { contexts: &[Context::RollbackPicker], keys: &[Key::plain(KeyCode::Down), Key::char('j')], action: Action::DialogDown, hint: None, help: "older revision" },
    Binding { contexts: &[Context::RollbackPicker], keys: &[Key::plain(KeyCode::Enter)], action: Action::Confirm, hint: Some("roll back to this"), help: "roll back to the selected revision (asks again)" },
    Binding { contexts: &[Context::RollbackPicker], keys: &[Key::plain(KeyCode::Esc)], action: Action::Cancel, hint: Some("cancel"), help: "close without rolling back" },
    Binding { contexts: &[Context::AutoForm], keys: &[Key::plain(KeyCode::Up), Key::char('k')], action: Action::DialogUp, hint: None, help: "previous setting" },
    Binding { contexts: &[Context::AutoForm], keys: &[Key::plain(KeyCode::Down), Key::char('j')], action: Action::DialogDown, hint: None, help: "next setting" },
    Binding { contexts: &[Context::AutoForm], keys: &[Key::plain(KeyCode::Left), Key::char('-'), Key::char('h')], action: Action::FormLess, hint: Some("less"), help: "smaller value" },
    Binding { contexts: &[Context::AutoForm], keys: &[Key::plain(KeyCode::Right), Key::char('+'), Key::char('l')], action: Action::FormMore, hint: Some("more"), help: "larger value" },
    Binding { contexts: &[Context::AutoForm], keys: &[Key::char('y')], action: Action::Confirm, hint: Some("start"), help: "start auto-advance with these settings (y only: Enter does nothing)" },
    Binding { contexts: &[Context::AutoForm], keys: &[Key::plain(KeyCode::Esc), Key::char('n')], action: Action::Cancel, hint: Some("cancel"), help: "close without starting" },
    Binding { contexts: &[Context::AutoForm], keys: &[Key::ctrl('c')], action: Action::Quit, hint: None, help: "quit the console" },
    Binding { contexts: &[Context::ReasonInput], keys: &[Key::plain(KeyCode::Enter)], action: Action::Confirm, hint: Some("on to the confirmation"), help: "the reason is typed: show the pause's confirmation (y pauses there)" },
    Binding { contexts: &[Context::ReasonInput], keys: &[Key::plain(KeyCode::Esc)], action: Action::Cancel, hint: Some("cancel"), help: "close without pausing" },
    Binding { contexts: &[Context::ReasonInput], keys: &[Key::plain(KeyCode::Backspace)], action: Action::FilterBackspace, hint: None, help: "delete a character" },
    Binding { contexts: &[Context::ReasonInput], keys: &[Key::ctrl('c')], action: Action::Quit, hint: None, help: "quit the console" },
];

/// The contexts active for a screen, most specific first.
pub fn active_contexts(screen: Context) -> Vec<Context> {
    match screen {
        // Dialogs and text input are modal: only their own keys apply.
        Context::FilterInput
        | Context::Confirm
        | Context::FailingConfirm
        | Context::RollbackPicker
        | Context::PlanView
        | Context::AutoForm
        | Context::ReasonInput => {
            vec![screen]
        }
        Context::Grid | Context::Picker | Context::History | Context::Detail | Context::Logs => {
            vec![screen, Context::List, Context::Global]
        }
        Context::Help => vec![Context::List, Context::Global],
        other => vec![other, Context::Global],
    }
}

/// The action a key triggers on a screen, if any. In filter input, a plain
/// character that is not bound becomes [`Action::FilterChar`].
pub fn action_for(screen: Context, key: &KeyEvent) -> Option<Action> {
    for context in active_contexts(screen) {
        let bound = BINDINGS
            .iter()
            .filter(|b| b.contexts.contains(&context))
            .find(|b| b.keys.iter().any(|k| k.matches(key)));
        if let Some(binding) = bound {
            return Some(binding.action);
        }
    }
    if matches!(screen, Context::FilterInput | Context::ReasonInput)
        && let KeyCode::Char(c) = key.code
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    {
        return Some(Action::FilterChar(c));
    }
    None
}

/// The footer's first hints, most important first: the rollout keys, which
/// a narrow footer must never drop for the list keys (the help has those).
const FOOTER_FIRST: &[Action] = &[
    Action::AdvanceSelected,
    Action::AdvanceNext,
    Action::ToggleCanary,
    Action::ToggleAuto,
    Action::TogglePause,
    Action::Rollback,
    Action::ShowPlan,
    Action::ShowLogs,
];

/// Footer hints for a screen, by priority: `(key, label)`, the rollout keys
/// first ([`FOOTER_FIRST`]), then the rest in keymap order, most specific
/// first. The footer shows as many as fit, in this order.
pub fn hints(screen: Context) -> Vec<(String, &'static str)> {
    let mut out = hints_in_keymap_order(screen);
    out.sort_by_key(|(_, action)| {
        FOOTER_FIRST
            .iter()
            .position(|a| a == action)
            .unwrap_or(FOOTER_FIRST.len())
    });
    out.into_iter().map(|(hint, _)| hint).collect()
}

fn hints_in_keymap_order(screen: Context) -> Vec<((String, &'static str), Action)> {
    let mut out = Vec::new();
    let mut shown: Vec<Action> = Vec::new();
    for context in active_contexts(screen) {
        for binding in BINDINGS.iter().filter(|b| b.contexts.contains(&context)) {
            if shown.contains(&binding.action) {
                continue;
            }
            if let (Some(hint), Some(key)) = (binding.hint, binding.keys.first()) {
                out.push(((key.label(), hint), binding.action));
                shown.push(binding.action);
            }
        }
    }
    out
}

/// The help overlay's sections: context title and `(keys, description)` lines.
pub fn help_sections() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    let order = [
        Context::Global,
        Context::List,
        Context::Grid,
        Context::Picker,
        Context::Detail,
        Context::History,
        Context::FilterInput,
        Context::Confirm,
        Context::FailingConfirm,
        Context::RollbackPicker,
        Context::PlanView,
        Context::AutoForm,
        Context::ReasonInput,
    ];
    order
        .into_iter()
        .filter_map(|context| {
            let lines: Vec<(String, &'static str)> = BINDINGS
                .iter()
                .filter(|b| b.contexts.first() == Some(&context))
                .map(|b| {
                    let keys: Vec<String> = b.keys.iter().map(Key::label).collect();
                    (keys.join(" "), b.help)
                })
                .collect();
            (!lines.is_empty()).then_some((context.title(), lines))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn dispatch_by_context() {
        let cases = [
            (Context::Grid, key(KeyCode::Char('j')), Some(Action::Down)),
            (Context::Grid, key(KeyCode::Down), Some(Action::Down)),
            (
                Context::Grid,
                KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT),
                Some(Action::Bottom),
            ),
            (
                Context::Grid,
                key(KeyCode::Char('s')),
                Some(Action::CycleSort),
            ),
            (Context::Detail, key(KeyCode::Char('s')), None),
            (Context::Detail, key(KeyCode::Esc), Some(Action::Back)),
            (
                Context::History,
                key(KeyCode::Char('m')),
                Some(Action::MarkDiffBase),
            ),
            (
                Context::Grid,
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(Action::Quit),
            ),
            (
                Context::FilterInput,
                key(KeyCode::Char('q')),
                Some(Action::FilterChar('q')),
            ),
            (
                Context::FilterInput,
                key(KeyCode::Enter),
                Some(Action::ApplyFilter),
            ),
            (
                Context::FilterInput,
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Some(Action::Quit),
            ),
        ];
        for (screen, event, expected) in cases {
            assert_eq!(action_for(screen, &event), expected, "{screen:?} {event:?}");
        }
    }

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                let shared_context = a.contexts.iter().any(|c| b.contexts.contains(c));
                let shared_key = a.keys.iter().any(|k| b.keys.contains(k));
                assert!(!(shared_context && shared_key), "{a:?} and {b:?} collide");
            }
        }
    }

    /// Issue 33: the footer lists the rollout keys first, in their order of
    /// importance; the list keys come after.
    #[test]
    fn the_rollout_keys_lead_the_footer() {
        for screen in [Context::Grid, Context::Detail] {
            let keys: Vec<String> = hints(screen).into_iter().map(|(k, _)| k).collect();
            assert_eq!(
                keys[..8],
                ["a", "n", "c", "A", "p", "r", "P", "l"],
                "{screen:?}: {keys:?}"
            );
        }
    }

    #[test]
    fn every_binding_is_in_the_help() {
        let lines: usize = help_sections().iter().map(|(_, l)| l.len()).sum();
        assert_eq!(lines, BINDINGS.len());
    }
}
