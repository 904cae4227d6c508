//! The console's rollout dialogs as data: a confirmation holding the action
//! value it will run (nothing happens until the user says yes), and the
//! rollback picker (revisions newest first, the template diff of the selected
//! one). Plus their view model (drawn by the console's scrolling pane). No I/O.

use super::view_model::{Cell, Tone};
use crate::ops::write::WriteRequest;

/// What a confirmed dialog runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Intent {
    /// Send these writes, in order.
    Writes(Vec<WriteRequest>),
    /// Stop this console's run (it pauses the rollout: console closed), then quit.
    StopAndQuit,
    /// Start auto-advance with the form's settings (past failing pods: only
    /// inside [`Intent::DespiteFailing`]).
    StartAuto(super::auto_form::AutoForm),
    /// The inner intent moves nodes onto a revision whose pods are failing:
    /// `y` does not answer it, only its own key (`F`) does.
    DespiteFailing(Box<Intent>),
    /// Patch the template back; on OnDelete, then the run that moves nodes back.
    Rollback(Box<crate::ops::run::rollback::RollbackStart>),
}

/// A pending confirmation.
#[derive(Clone, Debug, PartialEq)]
pub struct Confirm {
    /// The question.
    pub title: String,
    /// What exactly will happen (pods, revisions, diff).
    pub lines: Vec<String>,
    /// What runs on yes.
    pub intent: Intent,
}

/// The rollback picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RollbackPicker {
    /// `(number, label)` newest first.
    pub revisions: Vec<(i64, String)>,
    /// Selected position.
    pub selected: usize,
    /// The diff from the live template to the selected revision.
    pub diff: Vec<String>,
}

/// The open dialog.
#[derive(Clone, Debug, PartialEq)]
pub enum Modal {
    /// Confirm an action.
    Confirm(Box<Confirm>),
    /// Choose a revision.
    Rollback(RollbackPicker),
    /// The auto-advance settings, editable before the start.
    AutoForm(Box<super::auto_form::AutoForm>),
    /// The pause's reason being typed (optional, as `pause --reason`);
    /// Enter goes on to the confirmation, which shows it.
    PauseReason(String),
    /// Read-only text (the rollout plan).
    Info {
        /// Title.
        title: String,
        /// Lines.
        lines: Vec<String>,
    },
}

/// What the dialog widget draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialogVm {
    /// Title.
    pub title: String,
    /// Lines, each with a tone.
    pub lines: Vec<Cell>,
}

impl Modal {
    /// The view model of the dialog.
    pub fn view(&self) -> DialogVm {
        match self {
            Self::Confirm(confirm) => {
                let keys = match confirm.intent {
                    Intent::DespiteFailing(_) => Some(
                        "F: go on past the failing pods    n / Esc: no    (y does nothing here)",
                    ),
                    // Its lines are its keys (y: …, Esc: …): not said twice.
                    Intent::StopAndQuit => None,
                    _ => Some("y: yes    n / Esc: no    (Enter does nothing here)"),
                };
                let mut lines: Vec<Cell> = confirm
                    .lines
                    .iter()
                    .map(|l| Cell::new(l, diff_tone(l)))
                    .collect();
                if let Some(keys) = keys {
                    lines.extend([Cell::empty(), Cell::new(keys, Tone::Accent)]);
                }
                DialogVm {
                    title: format!(" {} ", confirm.title),
                    lines,
                }
            }
            Self::Rollback(picker) => {
                let mut lines: Vec<Cell> = picker
                    .revisions
                    .iter()
                    .enumerate()
                    .map(|(i, (_, label))| {
                        let marker = if i == picker.selected { "▶ " } else { "  " };
                        Cell::new(
                            &format!("{marker}{label}"),
                            if i == picker.selected {
                                Tone::Accent
                            } else {
                                Tone::Normal
                            },
                        )
                    })
                    .collect();
                lines.push(Cell::empty());
                lines.extend(picker.diff.iter().map(|l| Cell::new(l, diff_tone(l))));
                DialogVm {
                    title: " roll back to which revision? ".to_owned(),
                    lines,
                }
            }
            Self::AutoForm(form) => DialogVm {
                title: " start auto-advance with these settings? ".to_owned(),
                lines: form.lines(),
            },
            Self::PauseReason(reason) => DialogVm {
                title: " pause the rollout: why? ".to_owned(),
                lines: vec![
                    Cell::new(
                        "the reason is recorded on the DaemonSet with who paused, for every console and `status` (optional)",
                        Tone::Normal,
                    ),
                    Cell::empty(),
                    Cell::new(&format!("reason: {reason}▏"), Tone::Accent),
                    Cell::empty(),
                    Cell::new("Enter: on to the confirmation    Esc: cancel", Tone::Accent),
                ],
            },
            Self::Info { title, lines } => DialogVm {
                title: format!(" {title} "),
                lines: lines
                    .iter()
                    .map(|l| {
                        Cell::new(
                            l,
                            if l.starts_with("skip") {
                                Tone::Dim
                            } else {
                                Tone::Normal
                            },
                        )
                    })
                    .collect(),
            },
        }
    }
}

fn diff_tone(line: &str) -> Tone {
    if line.starts_with('+') && !line.starts_with("+++") {
        Tone::Good
    } else if line.starts_with('-') && !line.starts_with("---") {
        Tone::Bad
    } else {
        Tone::Normal
    }
}
