//! Says in the console what this user may not do: when the access review
//! (`ops::rbac`) denies the writes the rollout keys need, the header's
//! limitations line (right after the first thing the user may not read:
//! both matter more than missing events) and the top of the `?` help say so,
//! and the footer shows those keys together as `not allowed`. The keys
//! themselves refuse with the reason when pressed (`OpsConsole::allowed`).
//! Pure: edits a built view model.

use super::keymap::{Action, BINDINGS};
use super::view_model::pane::{Overlay, overlay_inner_width, wrap_all};
use super::view_model::{Cell, Tone, ViewModel};
use crate::ops::rbac::{Operation, Permissions};

/// The keys behind each operation.
fn actions(operation: Operation) -> &'static [Action] {
    match operation {
        Operation::Advance => &[Action::AdvanceSelected, Action::AdvanceNext],
        Operation::Auto => &[Action::ToggleAuto],
        Operation::Pause => &[Action::TogglePause],
        Operation::Rollback => &[Action::Rollback],
        Operation::EditPlan => &[Action::ToggleCanary],
    }
}

/// Folds the footer hints of the disabled keys into one `a n … not allowed`.
fn fold_hints(hints: &mut Vec<(String, &'static str)>, permissions: &Permissions) {
    let disabled: Vec<(String, &'static str)> = Operation::ALL
        .iter()
        .filter(|op| permissions.allows(**op).is_err())
        .flat_map(|op| actions(*op))
        .filter_map(|action| {
            let binding = BINDINGS.iter().find(|b| b.action == *action)?;
            Some((binding.keys.first()?.label(), binding.hint?))
        })
        .collect();
    let first = hints.iter().position(|hint| disabled.contains(hint));
    let keys: Vec<String> = hints
        .iter()
        .filter(|hint| disabled.contains(hint))
        .map(|hint| hint.0.clone())
        .collect();
    hints.retain(|hint| !disabled.contains(hint));
    if let Some(first) = first {
        // Where the first of them was, so the footer keeps its order.
        hints.insert(first, (keys.join(" "), "not allowed"));
    }
}

/// Adds the denied-writes note to the header and the help overlay;
/// `body_width`: the width of the body region (the help is sized from it).
pub fn decorate(view: &mut ViewModel, permissions: Option<&Permissions>, body_width: u16) {
    let Some(note) = permissions.and_then(Permissions::denied_summary) else {
        return;
    };
    let note = format!("not allowed: {note}");
    if let Some(permissions) = permissions {
        fold_hints(&mut view.hints, permissions);
    }
    if let Some(header) = view.header.as_mut() {
        let at = header.limits.len().min(1);
        header.limits.insert(at, Cell::new(&note, Tone::Warn));
    }
    if let Some(help) = view.help.as_mut() {
        let lines = vec![
            vec![Cell::new("Access", Tone::Accent)],
            vec![Cell::new(&format!("  {note}"), Tone::Warn)],
            Vec::new(),
        ];
        let width = overlay_inner_width(Overlay::Help, body_width);
        let mut wrapped = wrap_all(&lines, width);
        wrapped.append(&mut help.lines);
        help.lines = wrapped;
    }
}
