//! The simulation clock: wall-clock timestamps that advance with tokio time,
//! so tests that pause and advance tokio's clock see object timestamps
//! (lastTransitionTime, startTime, event times) move by the same amount.

use jiff::{SignedDuration, Timestamp};
use tokio::time::Instant;

/// Maps tokio instants to wall-clock timestamps.
#[derive(Clone, Copy, Debug)]
pub struct SimClock {
    wall_at_start: Timestamp,
    instant_at_start: Instant,
}

impl SimClock {
    /// A clock anchored at the current wall time and tokio instant.
    pub fn start() -> SimClock {
        SimClock::anchored(crate::clock::now())
    }

    /// A clock whose "now" is `wall` at the current tokio instant.
    pub fn anchored(wall: Timestamp) -> SimClock {
        SimClock {
            wall_at_start: wall,
            instant_at_start: Instant::now(),
        }
    }

    /// The wall-clock time now.
    pub fn now(&self) -> Timestamp {
        self.at(Instant::now())
    }

    /// The wall-clock time of a tokio instant.
    pub fn at(&self, instant: Instant) -> Timestamp {
        let elapsed = instant.saturating_duration_since(self.instant_at_start);
        let elapsed = SignedDuration::try_from(elapsed).unwrap_or(SignedDuration::MAX);
        self.wall_at_start
            .checked_add(elapsed)
            .unwrap_or(self.wall_at_start)
    }

    /// [`SimClock::now`] as an RFC 3339 string with second precision, the form
    /// Kubernetes writes (`2026-01-01T00:00:00Z`).
    pub fn now_rfc3339(&self) -> String {
        rfc3339(self.now())
    }
}

/// A timestamp as Kubernetes writes it: RFC 3339, UTC, whole seconds.
pub fn rfc3339(at: Timestamp) -> String {
    let whole = Timestamp::from_second(at.as_second()).unwrap_or(at);
    whole.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn advances_with_tokio_time() {
        let clock = SimClock::anchored(Timestamp::UNIX_EPOCH);
        tokio::time::advance(std::time::Duration::from_secs(90)).await;
        assert_eq!(clock.now_rfc3339(), "1970-01-01T00:01:30Z");
    }
}
