//! The process's one wall clock. Run code (ops, the cluster layer's
//! timestamps, the fleet run) and the embedded cluster (object timestamps,
//! kubelets) read the time here, never `jiff::Timestamp::now()` themselves,
//! so a rehearsal (`rollcall fleet rehearse`) can run them all on a
//! simulated clock: once [`simulate`] is called, "now" is the moment it was
//! called plus the tokio time elapsed since. Under tokio's paused time with
//! auto-advance, hours of soak and bake then pass in the moments the
//! runtime is idle, and every soak check, Ready transition and journal line
//! agrees on the same simulated time. Monotonic waits already use tokio's
//! clock (`tokio::time::{sleep, timeout, Instant}`).
//!
//! Real by default; switching is one way (a process that rehearses does
//! nothing else).

use std::sync::OnceLock;

use jiff::{SignedDuration, Timestamp};
use tokio::time::Instant;

/// Where the simulated clock started: that wall time at that tokio instant.
#[derive(Clone, Copy, Debug)]
struct Anchor {
    wall: Timestamp,
    instant: Instant,
}

static SIMULATED: OnceLock<Anchor> = OnceLock::new();

/// The wall-clock time now: the system's, or the simulated one.
pub fn now() -> Timestamp {
    match SIMULATED.get() {
        Some(anchor) => anchor.at(Instant::now()),
        None => Timestamp::now(),
    }
}

/// Switches the process to the simulated clock, starting at `wall` now (at
/// the calling runtime's tokio instant); later calls change nothing. Call
/// it inside the runtime whose (paused) time should drive the clock.
pub fn simulate(wall: Timestamp) {
    let _ = SIMULATED.set(Anchor {
        wall,
        instant: Instant::now(),
    });
}

/// Whether the process runs on the simulated clock.
pub fn is_simulated() -> bool {
    SIMULATED.get().is_some()
}

impl Anchor {
    fn at(self, instant: Instant) -> Timestamp {
        let elapsed = instant.saturating_duration_since(self.instant);
        let elapsed = SignedDuration::try_from(elapsed).unwrap_or(SignedDuration::MAX);
        self.wall.checked_add(elapsed).unwrap_or(self.wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_anchor_moves_with_tokio_time() {
        let anchor = Anchor {
            wall: Timestamp::UNIX_EPOCH,
            instant: Instant::now(),
        };
        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        assert_eq!(anchor.at(Instant::now()).as_second(), 3600);
        // Before the anchor (an instant taken earlier): the anchor itself.
        assert_eq!(
            anchor.at(anchor.instant - std::time::Duration::from_secs(1)),
            Timestamp::UNIX_EPOCH
        );
    }
}
