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
                let contexts: Vec<String> = matrix
                    .visible()
                    .into_iter()
                    .map(|index| matrix.rows[index].context.clone())
                    .collect();
                if contexts.is_empty() {
                    self.message = Some("no cluster shown to roll (the / filter)".to_owned());
                } else {
                    self.form = Some(super::auto::form(&contexts));
                }
                None
            }
            FleetAction::FormField(up) => {
                if let Some(form) = &mut self.form {
                    form.select(up);
                }
                None
            }
            FleetAction::FormAdjust(less) => {
                if let Some(form) = &mut self.form {
                    form.adjust(less);
                }
                None
            }
            FleetAction::FormCancel => {
                self.form = None;
                None
            }
            FleetAction::FormStart => {
                let form = self.form.take()?;
                let contexts: Vec<String> = matrix
                    .visible()
                    .into_iter()
                    .map(|index| matrix.rows[index].context.clone())
                    .collect();
                self.run = Some(super::auto::RunLine::starting(contexts.len()));
                Some(FleetRequest::Auto {
                    daemonset: matrix.daemonset.clone(),
                    contexts,
                    policy: form.policy,
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
