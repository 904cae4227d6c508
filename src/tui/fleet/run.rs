//! The fleet console's event loop: `select!` over terminal input, fleet
//! events, a one-second tick (stale ages) and termination signals; keys
//! become [`FleetAction`]s, one `update` applies them; frames coalesced as
//! the single-cluster console's are. `Enter` on a cluster asks for its
//! console and, once wired, runs the single-cluster console
//! ([`crate::tui::run::run_nested`]) on that cluster's running watch, in
//! this terminal; it returns here.

use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

use super::picker::{DaemonSetList, picker_vm};
use super::view::matrix_vm;
use super::{FleetEvent, FleetRequest};
use crate::cluster::watch::WatchHandle;
use crate::fleet::live::matrix::Matrix;
use crate::fleet::live::row::Link;
use crate::tui::run::{ConsoleEnd, ConsoleError, FRAME_INTERVAL, Nested};
use crate::tui::terminal::TerminalGuard;

/// What the fleet console opens on.
pub struct FleetScreen {
    /// The contexts, in order.
    pub contexts: Vec<String>,
    /// The DaemonSet (`None`: the list to choose from comes first).
    pub daemonset: Option<String>,
    /// `--reference`.
    pub reference: Option<String>,
    /// The clusters are embedded (`demo --fleet`): the title says
    /// SIMULATED from the start; else once a server says it is.
    pub simulated: bool,
}

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetAction {
    /// Leave.
    Quit,
    /// Move the selection.
    Move(isize),
    /// Open the selected cluster's console, or choose the selected DaemonSet.
    Open,
    /// Start typing a filter.
    StartFilter,
    /// A character of the filter.
    FilterChar(char),
    /// Remove the filter's last character.
    FilterBackspace,
    /// Apply the filter typed.
    ApplyFilter,
    /// `Esc`: stop typing, else clear the filter.
    Back,
    /// The next sort order.
    CycleSort,
    /// `A`: the auto-advance form for the clusters shown, or a halt of the
    /// run it started.
    Auto,
    /// The form's previous (`true`) or next field.
    FormField(bool),
    /// The form's value down (`true`) or up.
    FormAdjust(bool),
    /// The form's `y`: start.
    FormStart,
    /// The form's `Esc`.
    FormCancel,
    /// Halt the fleet run (Ctrl-C while it runs).
    Halt,
}

/// The screen's state.
pub enum Mode {
    /// Choosing a DaemonSet.
    Picking(DaemonSetList),
    /// The matrix.
    Matrix(Matrix),
}

/// The fleet console's state.
pub struct FleetState {
    /// What is shown.
    pub mode: Mode,
    /// The contexts, in order.
    pub contexts: Vec<String>,
    /// `--reference`.
    pub reference: Option<String>,
    /// A cluster is embedded (said by the command, or by its server).
    pub simulated: bool,
    /// The cluster whose console was asked for and is being wired.
    pub opening: Option<usize>,
    /// The last thing said in the footer's place (an error opening a console).
    pub message: Option<String>,
    /// The auto-advance form and the clusters it names, while open.
    pub form: Option<super::auto::ClustersForm>,
    /// The fleet run started from the form, on the status line.
    pub run: Option<super::auto::RunLine>,
}

impl FleetState {
    /// The state a screen opens in.
    pub fn new(screen: FleetScreen) -> Self {
        let mode = match screen.daemonset {
            Some(daemonset) => Mode::Matrix(Matrix::new(
                daemonset,
                screen.contexts.clone(),
                screen.reference.clone(),
            )),
            None => Mode::Picking(DaemonSetList::new(screen.contexts.len())),
        };
        Self {
            mode,
            contexts: screen.contexts,
            reference: screen.reference,
            simulated: screen.simulated,
            opening: None,
            message: None,
            form: None,
            run: None,
        }
    }

    /// The action a key asks for.
    pub fn action_for(&self, key: &KeyEvent) -> Option<FleetAction> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let typing = matches!(&self.mode, Mode::Matrix(m) if m.filter_input.is_some());
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            let halt = if self.running() {
                FleetAction::Halt
            } else {
                FleetAction::Quit
            };
            return (key.code == KeyCode::Char('c')).then_some(halt);
        }
        if self.form.is_some() {
            return Self::form_action(key);
        }
        if typing {
            return match key.code {
                KeyCode::Char(c) => Some(FleetAction::FilterChar(c)),
                KeyCode::Backspace => Some(FleetAction::FilterBackspace),
                KeyCode::Enter => Some(FleetAction::ApplyFilter),
                KeyCode::Esc => Some(FleetAction::Back),
                _ => None,
            };
        }
        match key.code {
            KeyCode::Char('q') => Some(FleetAction::Quit),
            KeyCode::Char('j') | KeyCode::Down => Some(FleetAction::Move(1)),
            KeyCode::Char('k') | KeyCode::Up => Some(FleetAction::Move(-1)),
            KeyCode::PageDown => Some(FleetAction::Move(10)),
            KeyCode::PageUp => Some(FleetAction::Move(-10)),
            KeyCode::Enter => Some(FleetAction::Open),
            KeyCode::Char('/') => Some(FleetAction::StartFilter),
            KeyCode::Char('s') => Some(FleetAction::CycleSort),
            KeyCode::Char('A') => Some(FleetAction::Auto),
            KeyCode::Esc => Some(FleetAction::Back),
            _ => None,
        }
    }

    /// Applies an action; returns what to ask the fleet side, or `Err(())`
    /// to quit.
    #[allow(clippy::result_unit_err, reason = "quitting carries nothing")]
    pub fn update(&mut self, action: FleetAction) -> Result<Option<FleetRequest>, ()> {
        self.message = None;
        if action == FleetAction::Quit
            && let Some(run) = self.run.as_mut().filter(|r| r.running && !r.halting)
        {
            // Leaving would end the run unattended: halt it first.
            run.halting = true;
            self.message = Some(
                "halting the fleet run first (q again leaves once it has paused what it touched)"
                    .to_owned(),
            );
            return Ok(Some(FleetRequest::HaltAuto));
        }
        if Self::is_auto(action) {
            return Ok(self.update_auto(action));
        }
        match (&mut self.mode, action) {
            (_, FleetAction::Quit) => return Err(()),
            (Mode::Picking(list), FleetAction::Move(delta)) => list.move_by(delta),
            (Mode::Picking(list), FleetAction::Open) => {
                if let Some(chosen) = list.chosen() {
                    self.mode = Mode::Matrix(Matrix::new(
                        chosen.clone(),
                        self.contexts.clone(),
                        self.reference.clone(),
                    ));
                    return Ok(Some(FleetRequest::Choose(chosen)));
                }
            }
            (Mode::Picking(_), _)
            | (
                Mode::Matrix(_),
                FleetAction::Auto
                | FleetAction::Halt
                | FleetAction::FormStart
                | FleetAction::FormField(_)
                | FleetAction::FormAdjust(_)
                | FleetAction::FormCancel,
            ) => {}
            (Mode::Matrix(matrix), FleetAction::Move(delta)) => matrix.move_by(delta),
            (Mode::Matrix(matrix), FleetAction::Open) => {
                let index = matrix.selected_row();
                if let Some(index) = index {
                    self.opening = Some(index);
                    self.message =
                        Some(format!("opening the console on {}…", self.contexts[index]));
                    return Ok(Some(FleetRequest::Open(index)));
                }
            }
            (Mode::Matrix(matrix), FleetAction::StartFilter) => {
                matrix.filter_input = Some(String::new());
            }
            (Mode::Matrix(matrix), FleetAction::FilterChar(c)) => {
                matrix.filter_input.get_or_insert_with(String::new).push(c);
            }
            (Mode::Matrix(matrix), FleetAction::FilterBackspace) => {
                if let Some(input) = &mut matrix.filter_input {
                    input.pop();
                }
            }
            (Mode::Matrix(matrix), FleetAction::ApplyFilter) => matrix.apply_filter(),
            (Mode::Matrix(matrix), FleetAction::Back) => {
                if matrix.filter_input.take().is_none() {
                    matrix.clear_filter();
                }
            }
            (Mode::Matrix(matrix), FleetAction::CycleSort) => matrix.cycle_sort(),
        }
        Ok(None)
    }

    /// Takes in a fleet event that is not about a console or a watch.
    pub fn on_event(&mut self, index: usize, event: RowEvent) {
        match (&mut self.mode, event) {
            (Mode::Matrix(matrix), RowEvent::Link(link)) => matrix.set_link(index, link),
            (Mode::Matrix(matrix), RowEvent::Observed(observation)) => {
                matrix.observe(index, *observation);
            }
            (Mode::Picking(list), RowEvent::Listed(answer)) => {
                list.add(&self.contexts[index], answer);
            }
            (Mode::Picking(list), RowEvent::Link(Link::Failed { message, .. })) => {
                list.add(&self.contexts[index], Err(message));
            }
            _ => {}
        }
    }

    /// Cluster `index` connected; its server says whether it is simulated
    /// (one simulated member is enough for the title to say so).
    pub fn on_connected(&mut self, simulated: bool) {
        self.simulated |= simulated;
    }

    /// Draws the screen.
    pub fn render(&self, frame: &mut ratatui::Frame<'_>, now: jiff::Timestamp) {
        let area = frame.area();
        let size = (area.width, area.height);
        match &self.mode {
            Mode::Matrix(matrix) => {
                let mut view = matrix_vm(matrix, self.simulated, now, size);
                if let Some(run) = &self.run {
                    view.detail = run.cell();
                }
                if let Some(message) = &self.message {
                    view.footer = crate::tui::view_model::Cell::new(
                        message,
                        crate::tui::view_model::Tone::Warn,
                    );
                }
                frame.render_widget(&view, area);
                if let Some(form) = &self.form {
                    super::auto::render_form(&form.settings, area, frame.buffer_mut());
                }
            }
            Mode::Picking(list) => {
                frame.render_widget(&picker_vm(list, self.simulated, size), area);
            }
        }
    }
}

/// A fleet event about a cluster's row or list.
pub enum RowEvent {
    /// How it is reached.
    Link(Link),
    /// A look at its cache.
    Observed(Box<crate::fleet::live::row::Observation>),
    /// Its DaemonSets.
    Listed(Result<Vec<crate::model::Target>, String>),
}

/// A cluster's running watch, kept for its console.
struct Warm {
    watch: WatchHandle,
    hold: tokio::sync::watch::Sender<bool>,
}

/// Runs the fleet console until the user quits or a signal ends it.
pub async fn run(
    screen: FleetScreen,
    mut events: UnboundedReceiver<FleetEvent>,
    requests: UnboundedSender<FleetRequest>,
) -> Result<ConsoleEnd, ConsoleError> {
    let mut guard = TerminalGuard::enter()?;
    let mut warm: Vec<Option<Warm>> = screen.contexts.iter().map(|_| None).collect();
    let mut state = FleetState::new(screen);
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut terminate = crate::tui::run::TerminateSignals::new()?;
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME_INTERVAL;
    loop {
        if dirty && last_draw.elapsed() >= FRAME_INTERVAL {
            let now = jiff::Timestamp::now();
            guard.terminal.draw(|frame| state.render(frame, now))?;
            last_draw = Instant::now();
            dirty = false;
        }
        let next_frame = last_draw + FRAME_INTERVAL;
        tokio::select! {
            event = input.next() => {
                let Some(event) = event else { return Ok(ConsoleEnd::Quit) };
                dirty = true;
                let Event::Key(key) = event? else { continue };
                let Some(action) = state.action_for(&key) else { continue };
                match state.update(action) {
                    Err(()) => return Ok(ConsoleEnd::Quit),
                    Ok(Some(request)) => {
                        // The fleet side lives as long as this loop.
                        let _ = requests.send(request);
                    }
                    Ok(None) => {}
                }
            }
            Some(event) = events.recv() => {
                dirty = true;
                match event {
                    FleetEvent::Link { index, link } => state.on_event(index, RowEvent::Link(link)),
                    FleetEvent::Connected { simulated, .. } => state.on_connected(simulated),
                    FleetEvent::Observed { index, observation } => {
                        state.on_event(index, RowEvent::Observed(observation));
                    }
                    FleetEvent::Listed { index, answer } => state.on_event(index, RowEvent::Listed(answer)),
                    FleetEvent::AutoStep(text) => state.on_run(text, false),
                    FleetEvent::AutoEnded(text) => state.on_run(text, true),
                    FleetEvent::Attached { index, watch, hold } => {
                        if let Some(slot) = warm.get_mut(index) {
                            *slot = Some(Warm { watch, hold });
                        }
                    }
                    FleetEvent::Console { index, console } => {
                        if state.opening.take() != Some(index) {
                            continue;
                        }
                        let Some(Some(cluster)) = warm.get(index) else {
                            state.message = Some("that cluster's watches are not running".to_owned());
                            continue;
                        };
                        match console {
                            Err(message) => state.message = Some(message),
                            Ok(nested) => {
                                state.message = None;
                                if open(&mut guard, &mut input, cluster, *nested).await? == ConsoleEnd::Signalled {
                                    return Ok(ConsoleEnd::Signalled);
                                }
                            }
                        }
                    }
                }
            }
            _ = tick.tick() => dirty = true,
            () = tokio::time::sleep_until(next_frame), if dirty => {}
            () = terminate.recv() => return Ok(ConsoleEnd::Signalled),
            _ = tokio::signal::ctrl_c() => return Ok(ConsoleEnd::Signalled),
        }
    }
}

/// Runs a cluster's console on its running watch; its row builder stands
/// aside meanwhile. A DaemonSet picked in the console is put back after.
async fn open(
    guard: &mut TerminalGuard,
    input: &mut EventStream,
    cluster: &Warm,
    nested: Nested,
) -> Result<ConsoleEnd, ConsoleError> {
    let target = nested.target.clone();
    let _ = cluster.hold.send(true);
    let result = crate::tui::run::run_nested(guard, input, &cluster.watch, nested).await;
    let _ = cluster.hold.send(false);
    let (end, last) = result?;
    if let Some(target) = target
        && last.as_ref() != Some(&target)
    {
        cluster.watch.set_target(target);
    }
    Ok(end)
}
