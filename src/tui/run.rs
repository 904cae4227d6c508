//! The one event loop: `select!` over terminal input, cache notifications, a
//! one-second tick (ages) and termination signals; every event updates state
//! as it arrives, and frames are coalesced to at most ~30 per second.

use std::time::Duration;

use crossterm::event::EventStream;
use futures::StreamExt;
use tokio::time::Instant;

use super::app::App;
use super::effect::Effect;
use super::logs_link::LogsLink;
use super::logs_request::LogsResult;
use super::ops::{OpsConsole, OpsEvent};
use super::ops_link::OpsLink;
use super::terminal::TerminalGuard;
use super::view_model::ConsoleInfo;
use crate::cluster::watch::WatchHandle;

/// Shortest time between two frames.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(33);

/// Errors that end the console.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// The terminal could not be set up, read or drawn.
    #[error("terminal i/o failed")]
    Terminal(#[from] std::io::Error),
}

/// How the console ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleEnd {
    /// The user quit (`q`, Ctrl-C as a key, or input closed).
    Quit,
    /// A signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ended it: the command exits
    /// 130, "interrupted", like every other command.
    Signalled,
}

/// Runs the console until the user quits or the process is told to stop.
/// The terminal is restored on every way out.
pub async fn run(
    watch: WatchHandle,
    info: ConsoleInfo,
    target: Option<crate::model::Target>,
) -> Result<ConsoleEnd, ConsoleError> {
    run_with_ops(watch, info, false, target, None, None, None).await
}

/// As [`run`], with rollout operations wired to the effects task, the log
/// fetcher for the logs overlay and, with a roster, its audit marked in the
/// grid; `simulated`: the server is the embedded cluster (the title says so).
pub async fn run_with_ops(
    watch: WatchHandle,
    info: ConsoleInfo,
    simulated: bool,
    target: Option<crate::model::Target>,
    ops: Option<(OpsLink, OpsConsole)>,
    roster: Option<crate::audit::Roster>,
    logs: Option<LogsLink>,
) -> Result<ConsoleEnd, ConsoleError> {
    let mut guard = TerminalGuard::enter()?;
    let size = guard.terminal.size()?;
    let mut app = App::new(info, target, (size.width, size.height));
    app.simulated = simulated;
    app.roster = roster.map(super::roster::RosterState::new);
    let mut link = None;
    if let Some((ops_link, console)) = ops {
        app.ops = console;
        link = Some(ops_link);
    }
    let mut links = Links { ops: link, logs };
    let mut input = EventStream::new();
    let result = event_loop(&mut guard, &mut input, &mut app, &watch, &mut links).await;
    drop(guard);
    result
}

/// A console opened from inside another screen (the fleet matrix) on a
/// watch that keeps running after it: the terminal and its input stream are
/// the caller's; quitting (`q`) or `Esc` on the bare grid returns. Returns
/// how it ended and the DaemonSet it was on last (the user may have picked
/// another from its list).
pub async fn run_nested(
    guard: &mut TerminalGuard,
    input: &mut EventStream,
    watch: &WatchHandle,
    nested: Nested,
) -> Result<(ConsoleEnd, Option<crate::model::Target>), ConsoleError> {
    let size = guard.terminal.size()?;
    let mut app = App::new(nested.info, nested.target, (size.width, size.height));
    app.simulated = nested.simulated;
    app.leave_on_back = true;
    let mut link = None;
    if let Some((ops_link, console)) = nested.ops {
        app.ops = console;
        link = Some(ops_link);
    }
    let mut links = Links {
        ops: link,
        logs: nested.logs,
    };
    // No clear: the one terminal diffs every frame against the last one
    // drawn, whichever screen drew it (and ratatui's clear would ask the
    // terminal for the cursor while the input stream reads the answer).
    let end = event_loop(guard, input, &mut app, watch, &mut links).await;
    if let Some(task) = nested.until_closed {
        task.abort();
    }
    Ok((end?, app.ui.target))
}

/// What a nested console is opened with (see [`run_with_ops`]).
pub struct Nested {
    /// Where it is connected.
    pub info: ConsoleInfo,
    /// The server is the embedded cluster.
    pub simulated: bool,
    /// The DaemonSet.
    pub target: Option<crate::model::Target>,
    /// Rollout operations.
    pub ops: Option<(OpsLink, OpsConsole)>,
    /// The log fetcher.
    pub logs: Option<LogsLink>,
    /// A task that lives as long as the console (aborted when it closes).
    pub until_closed: Option<tokio::task::JoinHandle<()>>,
}

/// The effects side's ends the event loop holds.
struct Links {
    ops: Option<OpsLink>,
    logs: Option<LogsLink>,
}

/// Runs an effect; returns whether the console must quit.
fn dispatch(effect: Option<Effect>, app: &mut App, watch: &WatchHandle, links: &Links) -> bool {
    let link = links.ops.as_ref();
    match effect {
        Some(Effect::Quit) => return true,
        Some(Effect::SetTarget(target)) => {
            // Permissions are per namespace: ask again for the new one.
            app.ops.permissions = None;
            app.ops.unechoed = None;
            app.ops.followed = None;
            if let Some(link) = link {
                link.check_namespace(&target.namespace);
            }
            watch.set_target(target);
        }
        Some(Effect::Writes(writes)) => {
            for (id, request) in writes {
                let sent = link.is_some_and(|l| l.writes.send((id, request)).is_ok());
                if !sent {
                    app.ops.pending.remove(&id);
                    app.ui
                        .error("rollout writes are not available in this console");
                }
            }
        }
        Some(Effect::ReadPodsOn { target, node }) => {
            let asked = link.is_some_and(|l| l.read_pods_on(target, node.clone()));
            if !asked {
                let result = Err("fresh reads are not available in this console".to_owned());
                app.ops_on_event(OpsEvent::FreshRead { node, result }, jiff::Timestamp::now());
            }
        }
        Some(Effect::FetchLogs(request)) => match &links.logs {
            Some(logs) => logs.fetch(request),
            None => app.logs_on_result(LogsResult {
                request,
                outcome: Err("logs are not available in this console".to_owned()),
            }),
        },
        None => {}
    }
    false
}

async fn next_logs_result(logs: &mut Option<LogsLink>) -> Option<LogsResult> {
    match logs {
        Some(logs) => logs.results.recv().await,
        None => std::future::pending().await,
    }
}

async fn next_ops_event(link: &mut Option<OpsLink>) -> Option<OpsEvent> {
    match link {
        Some(link) => link.events.recv().await,
        None => std::future::pending().await,
    }
}

async fn event_loop(
    guard: &mut TerminalGuard,
    input: &mut EventStream,
    app: &mut App,
    watch: &WatchHandle,
    links: &mut Links,
) -> Result<ConsoleEnd, ConsoleError> {
    let shared = std::sync::Arc::clone(&watch.shared);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut terminate = TerminateSignals::new()?;
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME_INTERVAL;
    loop {
        if dirty && last_draw.elapsed() >= FRAME_INTERVAL {
            let now = jiff::Timestamp::now();
            let view = app.view_model(&shared.lock(), now);
            guard
                .terminal
                .draw(|frame| frame.render_widget(&view, frame.area()))?;
            last_draw = Instant::now();
            dirty = false;
        }
        let next_frame = last_draw + FRAME_INTERVAL;
        tokio::select! {
            event = input.next() => {
                // One event per turn: draws are already coalesced to one per
                // FRAME_INTERVAL. (Draining with `now_or_never` registered a no-op
                // waker on crossterm's EventStream, so the next key waited for the
                // one-second tick.)
                let Some(event) = event else { return Ok(ConsoleEnd::Quit) };
                if let Some(action) = app.action_for_event(&event?) {
                    let effect = app.update(action, &shared.lock(), jiff::Timestamp::now());
                    dirty = true;
                    if dispatch(effect, app, watch, links) {
                        return Ok(ConsoleEnd::Quit);
                    }
                }
            }
            () = shared.changed() => {
                let now = jiff::Timestamp::now();
                dirty |= app.refresh(&mut shared.lock(), now);
                let effect = app.ops_on_change(&shared.lock(), now);
                dispatch(effect, app, watch, links);
            }
            Some(result) = next_logs_result(&mut links.logs) => {
                app.logs_on_result(result);
                dirty = true;
            }
            Some(event) = next_ops_event(&mut links.ops) => {
                let now = jiff::Timestamp::now();
                // A fresh read is in the cache before its answer comes: the
                // rows take it in before the run judges on them.
                app.refresh(&mut shared.lock(), now);
                app.ops_on_event(event, now);
                let effect = app.ops_on_change(&shared.lock(), now);
                dispatch(effect, app, watch, links);
                dirty = true;
            }
            _ = tick.tick() => {
                dirty = true;
                let now = jiff::Timestamp::now();
                // Rows that change by the clock alone (a pod turning available).
                app.refresh(&mut shared.lock(), now);
                // Roster comparisons start here, at most once a second, off the draw path.
                app.roster_tick(&shared.lock(), std::time::Instant::now());
                let effect = app.ops_on_change(&shared.lock(), now);
                dispatch(effect, app, watch, links);
            }
            () = tokio::time::sleep_until(next_frame), if dirty => {}
            () = std::future::ready(()), if app.ops.quit_when_idle && app.ops.pending.is_empty() => return Ok(ConsoleEnd::Quit),
            () = terminate.recv() => return Ok(ConsoleEnd::Signalled),
            _ = tokio::signal::ctrl_c() => return Ok(ConsoleEnd::Signalled),
        }
    }
}

/// The signals that end the console like `q` does, so the terminal is
/// restored (alternate screen left, mouse reporting off, cursor shown):
/// SIGTERM, SIGHUP (the SSH session or terminal tab closed) and SIGQUIT.
/// Ctrl-C arrives as a key in raw mode, or as SIGINT from `kill`.
#[cfg(unix)]
pub(crate) struct TerminateSignals {
    term: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl TerminateSignals {
    pub(crate) fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    /// Waits for any of them.
    pub(crate) async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.hangup.recv() => {}
            _ = self.quit.recv() => {}
        }
    }
}

#[cfg(not(unix))]
pub(crate) struct TerminateSignals;

#[cfg(not(unix))]
impl TerminateSignals {
    #[allow(clippy::unnecessary_wraps, reason = "same shape as the unix version")]
    pub(crate) fn new() -> std::io::Result<Self> {
        Ok(Self)
    }

    pub(crate) async fn recv(&mut self) {
        std::future::pending::<()>().await;
    }
}
