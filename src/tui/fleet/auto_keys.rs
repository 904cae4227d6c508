//! The matrix's `A` keys on the fleet console's state: the form's keys,
//! the request a `y` makes, a halt, and the run's steps taken in
//! ([`super::auto`] has the form and the status line).

use crossterm::event::{KeyCode, KeyEvent};

use super::FleetRequest;
use super::run::{FleetAction, FleetState, Mode};

impl FleetState {
    /// Whether a fleet run started here is still going.
    pub(super) fn running(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.running)
    }

    /// The form's keys.
    pub(super) fn form_action(key: &KeyEvent) -> Option<FleetAction> {
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => Some(FleetAction::FormField(true)),
            KeyCode::Down | KeyCode::Char('j') => Some(FleetAction::FormField(false)),
            KeyCode::Left | KeyCode::Char('h' | '-') => Some(FleetAction::FormAdjust(true)),
            KeyCode::Right | KeyCode::Char('l' | '+') => Some(FleetAction::FormAdjust(false)),
            KeyCode::Char('y') => Some(FleetAction::FormStart),
            KeyCode::Esc => Some(FleetAction::FormCancel),
            _ => None,
        }
    }

    /// Whether `action` is the form's or the run's.
    pub(super) fn is_auto(action: FleetAction) -> bool {
        matches!(
            action,
            FleetAction::Auto
                | FleetAction::Halt
                | FleetAction::FormStart
                | FleetAction::FormField(_)
                | FleetAction::FormAdjust(_)
                | FleetAction::FormCancel
        )
    }

    /// Applies the form's and the run's actions on the matrix; what to ask
    /// the fleet side.
    pub(super) fn update_auto(&mut self, action: FleetAction) -> Option<FleetRequest> {
        let Mode::Matrix(matrix) = &self.mode else {
            return None;
        };
        match action {
            FleetAction::Auto | FleetAction::Halt if self.running() => {
                if let Some(run) = &mut self.run {
                    run.halting = true;
                }
                Some(FleetRequest::HaltAuto)
            }
            FleetAction::Auto => {
                let (contexts, drifted) = rollable(matrix);
                if contexts.is_empty() {
                    self.message = Some(if drifted.is_empty() {
                        "no cluster shown to roll (the / filter)".to_owned()
                    } else {
                        "no cluster shown can be rolled (drift, or not read)".to_owned()
                    });
                } else {
                    self.form = Some(super::auto::form(contexts, &drifted));
                }
                None
            }
            FleetAction::FormField(up) => {
                if let Some(form) = &mut self.form {
                    form.settings.select(up);
                }
                None
            }
            FleetAction::FormAdjust(less) => {
                if let Some(form) = &mut self.form {
                    form.settings.adjust(less);
                }
                None
            }
            FleetAction::FormCancel => {
                self.form = None;
                None
            }
            FleetAction::FormStart => {
                let super::auto::ClustersForm { settings, contexts } = self.form.take()?;
                self.run = Some(super::auto::RunLine::starting(contexts.len()));
                Some(FleetRequest::Auto {
                    daemonset: matrix.daemonset.clone(),
                    contexts,
                    policy: settings.policy,
                })
            }
            _ => None,
        }
    }

    /// Takes in a step of the fleet run started here, or its end.
    pub fn on_run(&mut self, text: String, ended: bool) {
        if let Some(run) = &mut self.run {
            run.text = text;
            run.running &= !ended;
        }
    }
}

/// The clusters `A` rolls: those shown that were read and run the fleet's
/// reference template; and those shown that it leaves out, with why: a
/// template that differs (`fleet plan` refuses such a member: rolling it
/// would move its nodes to a template the rest of the fleet does not run),
/// or a cluster that could not be read (unreachable, forbidden, no such
/// DaemonSet: nothing to decide on there).
fn rollable(matrix: &crate::fleet::live::matrix::Matrix) -> (Vec<String>, Vec<String>) {
    let reference = matrix.reference_identity();
    let mut take = Vec::new();
    let mut leave = Vec::new();
    for index in matrix.visible() {
        let row = &matrix.rows[index];
        if let crate::fleet::live::row::Link::Failed { state, .. } = &row.link {
            let why = match state {
                crate::fleet::connection::ConnectionState::NotFound => "not found",
                other => other.word(),
            };
            leave.push(format!("{} ({why})", row.context));
        } else if !matrix.drift_of(index, reference).is_empty() {
            leave.push(format!("{} (template differs)", row.context));
        } else {
            take.push(row.context.clone());
        }
    }
    (take, leave)
}
