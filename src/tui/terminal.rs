//! Terminal setup and teardown: raw mode, alternate screen and mouse capture
//! on; all of it undone on every exit path — normal return, error, panic (a
//! panic hook), drop of the guard, and SIGTERM/SIGHUP/SIGQUIT (the event loop
//! in `run.rs` ends on them like on `q`).

use std::io::stdout;

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;

/// The terminal while the console owns it; restores it when dropped.
pub struct TerminalGuard {
    /// The ratatui terminal.
    pub terminal: ratatui::DefaultTerminal,
}

impl TerminalGuard {
    /// Takes over the terminal and installs the panic hook that gives it back.
    pub fn enter() -> std::io::Result<Self> {
        let terminal = ratatui::try_init()?;
        // ratatui's hook restores raw mode and the screen; ours runs first and
        // also stops mouse reporting, so the shell is usable after a panic.
        // Only a panic of the console's own thread ends the console: one on a
        // worker (a watch task, a fleet run's member) is caught there and the
        // console goes on, so the screen is left alone and the panic logged.
        let console_thread = std::thread::current().id();
        let ratatui_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() != console_thread {
                let thread = std::thread::current();
                tracing::error!(thread = thread.name().unwrap_or("unnamed"), "panic: {info}");
                return;
            }
            let _ = execute!(stdout(), DisableMouseCapture);
            ratatui_hook(info);
        }));
        if let Err(err) = execute!(stdout(), EnableMouseCapture) {
            restore();
            return Err(err);
        }
        Ok(Self { terminal })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back: mouse capture off, raw mode off, main screen,
/// cursor shown. Each step is tried on its own, so one failing (a hung-up
/// terminal after SIGHUP) does not skip the others.
pub fn restore() {
    let _ = execute!(stdout(), DisableMouseCapture);
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = execute!(
        stdout(),
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}
