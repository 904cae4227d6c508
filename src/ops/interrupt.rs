//! One interrupt handler for a whole headless run. The first Ctrl-C or SIGTERM
//! asks the run to stop after its current step (never between a delete and its
//! journal line): the driver then pauses the rollout with "interrupted by …"
//! and the command exits 130. A second signal ends the process at once, after
//! journalling that it did.
//!
//! Made once, before anything is written, so a signal that arrives during a
//! delete or a plan step is never lost (a `ctrl_c()` future made inside each wait
//! would drop it).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Exit code of an interrupted command (128 + SIGINT), as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// A shared "stop requested" flag fed by the process's signals.
#[derive(Clone, Debug, Default)]
pub struct Interrupt {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    requested: AtomicBool,
    notify: Notify,
    /// Set by [`Interrupt::halt`]: why a larger run stopped this one.
    halt: std::sync::Mutex<Option<String>>,
}

impl Interrupt {
    /// A flag no signal sets (the console, tests).
    pub fn never() -> Self {
        Self::default()
    }

    /// Listens for SIGINT and SIGTERM for the rest of the process. `on_second`
    /// runs before the process exits on a second signal (it journals).
    pub fn install(on_second: impl Fn() + Send + Sync + 'static) -> Self {
        let interrupt = Self::default();
        let flag = interrupt.clone();
        tokio::spawn(async move {
            loop {
                wait_for_signal().await;
                if flag.inner.requested.swap(true, Ordering::SeqCst) {
                    on_second();
                    say("interrupted again: exiting now");
                    std::process::exit(i32::from(EXIT_INTERRUPTED));
                }
                say("interrupt: stopping after the current step (Ctrl-C again to exit now)");
                flag.inner.notify.notify_waiters();
            }
        });
        interrupt
    }

    /// Asks the run to stop (what the first signal does).
    pub fn request(&self) {
        self.inner.requested.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Asks every run sharing this flag to stop because of `reason` (a fleet
    /// run stopping its clusters for a failure elsewhere); the first reason
    /// stands, and a run stopped so pauses with it ([`Interrupt::halt_reason`]).
    pub fn halt(&self, reason: String) {
        if let Ok(mut halt) = self.inner.halt.lock() {
            halt.get_or_insert(reason);
        }
        self.request();
    }

    /// The reason given to [`Interrupt::halt`], if the stop came from there.
    pub fn halt_reason(&self) -> Option<String> {
        self.inner.halt.lock().ok().and_then(|halt| halt.clone())
    }

    /// Whether a stop was requested.
    pub fn requested(&self) -> bool {
        self.inner.requested.load(Ordering::SeqCst)
    }

    /// Resolves once a stop is requested (at once if it already was).
    pub async fn wait(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.requested() {
                return;
            }
            notified.await;
        }
    }
}

/// One line to stderr, whatever became of it: Ctrl-C also ends the reader
/// of a pipe (`rollcall auto … 2>&1 | tee run.log`), and `eprintln!` panics
/// on the broken pipe — which killed this task before it told the run to
/// stop, leaving a run no Ctrl-C could end.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Resolves on the first SIGINT or SIGTERM (Ctrl-C only where there are no
/// Unix signals).
#[cfg(unix)]
pub async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Resolves on the first Ctrl-C.
#[cfg(not(unix))]
pub async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_halt_keeps_its_first_reason_and_a_signal_has_none() {
        let interrupt = Interrupt::never();
        interrupt.request();
        assert_eq!(interrupt.halt_reason(), None);
        interrupt.halt("prod-eu-1: node n1: CrashLoopBackOff".to_owned());
        interrupt.halt("later".to_owned());
        assert!(interrupt.requested());
        assert_eq!(
            interrupt.halt_reason().as_deref(),
            Some("prod-eu-1: node n1: CrashLoopBackOff")
        );
    }

    #[tokio::test]
    async fn wait_returns_once_requested_even_if_requested_before() {
        let interrupt = Interrupt::never();
        interrupt.request();
        tokio::time::timeout(std::time::Duration::from_secs(1), interrupt.wait())
            .await
            .expect("already requested");
        let later = Interrupt::never();
        let waiter = {
            let later = later.clone();
            tokio::spawn(async move { later.wait().await })
        };
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        later.request();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter)
            .await
            .expect("woken")
            .expect("joined");
    }
}
