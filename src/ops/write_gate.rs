//! The gate every write of a run passes ([`WriteGate`]): it counts the
//! writes in flight — from the request until its journal line is written —
//! and, once closed, lets no new one through. A run that must end at once
//! (a second Ctrl-C) closes it and waits, bounded, for the writes already
//! sent to be journalled: exiting between a delete and its journal line
//! would leave a pod deleted that no journal names.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// Writes in flight, and whether new ones may start.
#[derive(Clone, Debug, Default)]
pub struct WriteGate {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    in_flight: AtomicUsize,
    closed: AtomicBool,
    drained: Notify,
}

/// One write in flight; dropping it (after the journal line) lets it out.
#[derive(Debug)]
pub struct Pass {
    inner: Arc<Inner>,
}

impl Drop for Pass {
    fn drop(&mut self) {
        if self.inner.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.inner.drained.notify_waiters();
        }
    }
}

impl WriteGate {
    /// Lets one write in, or `None` once the gate is closed.
    pub fn enter(&self) -> Option<Pass> {
        // Counted before the check: a close that sees zero in flight has
        // seen every write that will ever pass.
        self.inner.in_flight.fetch_add(1, Ordering::SeqCst);
        let pass = Pass {
            inner: Arc::clone(&self.inner),
        };
        if self.inner.closed.load(Ordering::SeqCst) {
            return None;
        }
        Some(pass)
    }

    /// How many writes are in flight.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// Lets no new write in, then waits up to `patience` for those in
    /// flight to be journalled; whether they all were.
    pub async fn close_and_drain(&self, patience: Duration) -> bool {
        self.inner.closed.store(true, Ordering::SeqCst);
        let drained = async {
            loop {
                let notified = self.inner.drained.notified();
                if self.in_flight() == 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(patience, drained).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_closed_gate_waits_for_the_write_in_flight_and_lets_none_in() {
        let gate = WriteGate::default();
        let pass = gate.enter().expect("open");
        let closing = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.close_and_drain(Duration::from_secs(5)).await })
        };
        tokio::task::yield_now().await;
        assert!(!closing.is_finished(), "waits for the write in flight");
        assert!(gate.enter().is_none(), "a closed gate lets no write in");
        drop(pass);
        let drained = tokio::time::timeout(Duration::from_secs(1), closing)
            .await
            .expect("woken")
            .expect("joined");
        assert!(drained);
        assert_eq!(gate.in_flight(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_that_never_ends_is_waited_for_only_as_long_as_allowed() {
        let gate = WriteGate::default();
        let _stuck = gate.enter().expect("open");
        assert!(!gate.close_and_drain(Duration::from_secs(10)).await);
    }
}
