//! The one event loop: `select!` over terminal input, cache notifications, a
//! one-second tick (ages) and termination signals; queued input is drained
//! before drawing, and frames are coalesced to at most ~30 per second.

use std::time::Duration;

use crossterm::event::EventStream;
use futures::{FutureExt, StreamExt};
use tokio::time::Instant;

use super::app::{App, Effect};
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

/// Runs the console until the user quits or the process is told to stop.
/// The terminal is restored on every way out.
pub async fn run(
    watch: WatchHandle,
    info: ConsoleInfo,
    target: Option<String>,
) -> Result<(), ConsoleError> {
    let mut guard = TerminalGuard::enter()?;
    let size = guard.terminal.size()?;
    let mut app = App::new(info, target, (size.width, size.height));
    let result = event_loop(&mut guard, &mut app, &watch).await;
    drop(guard);
    result
}

async fn event_loop(
    guard: &mut TerminalGuard,
    app: &mut App,
    watch: &WatchHandle,
) -> Result<(), ConsoleError> {
    let shared = std::sync::Arc::clone(&watch.shared);
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut terminate = terminate_signal()?;
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
                let Some(event) = event else { return Ok(()) };
                let mut events = vec![event?];
                // Drain what is already queued so a burst of keys costs one frame.
                while let Some(Some(more)) = input.next().now_or_never() {
                    events.push(more?);
                }
                for event in events {
                    let Some(action) = app.action_for_event(&event) else { continue };
                    let effect = app.update(action, &shared.lock());
                    dirty = true;
                    match effect {
                        Some(Effect::Quit) => return Ok(()),
                        Some(Effect::SetTarget(target)) => watch.set_target(target),
                        None => {}
                    }
                }
            }
            () = shared.changed() => {
                let now = jiff::Timestamp::now();
                dirty |= app.refresh(&mut shared.lock(), now);
            }
            _ = tick.tick() => dirty = true,
            () = tokio::time::sleep_until(next_frame), if dirty => {}
            _ = terminate.recv() => return Ok(()),
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

#[cfg(unix)]
fn terminate_signal() -> std::io::Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
}
