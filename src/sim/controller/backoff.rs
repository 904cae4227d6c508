//! The DaemonSet controller's failed-pod backoff clock (upstream
//! `failedPodsBackoff`, a client-go `flowcontrol.Backoff` of 1 s doubling to
//! 15 min, no jitter), keyed per DaemonSet uid, observed generation and node as
//! upstream `failedPodsBackoffKey`. The engine decides what a node in backoff
//! means for the plan; this only keeps the clock, with `now` passed in.

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;

/// The first delay after a failed daemon pod is deleted.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// The longest delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

#[derive(Clone, Copy, Debug)]
struct Entry {
    backoff: Duration,
    last_update: Timestamp,
}

/// Per-key exponential backoff.
#[derive(Debug, Default)]
pub struct FailedPodBackoff {
    entries: HashMap<String, Entry>,
}

/// Upstream `failedPodsBackoffKey`: `<ds uid>/<observed generation>/<node>`,
/// so a new generation of the DaemonSet starts every node afresh.
pub fn backoff_key(ds_uid: &str, observed_generation: i64, node: &str) -> String {
    format!("{ds_uid}/{observed_generation}/{node}")
}

/// Whether an entry last updated at `last_update` is forgotten at `now`
/// (client-go `hasExpired`: stable for twice the longest delay).
fn expired(now: Timestamp, last_update: Timestamp) -> bool {
    since(now, last_update) > MAX_BACKOFF * 2
}

fn since(now: Timestamp, then: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(then)).unwrap_or(Duration::ZERO)
}

impl FailedPodBackoff {
    /// client-go `IsInBackOffSinceUpdate`: the key's delay has not yet passed
    /// since its last update.
    pub fn in_backoff(&self, key: &str, now: Timestamp) -> bool {
        self.entries.get(key).is_some_and(|entry| {
            !expired(now, entry.last_update) && since(now, entry.last_update) < entry.backoff
        })
    }

    /// Whether no key is backing off (every node of a sync is then out of
    /// backoff, with no key to build).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The key's current delay (client-go `Get`), zero when unknown.
    pub fn delay(&self, key: &str) -> Duration {
        self.entries.get(key).map_or(Duration::ZERO, |e| e.backoff)
    }

    /// client-go `Next`: the initial delay for a new or expired key, else
    /// double the last one up to the maximum.
    pub fn next(&mut self, key: &str, now: Timestamp) {
        let backoff = match self.entries.get(key) {
            Some(entry) if !expired(now, entry.last_update) => (entry.backoff * 2).min(MAX_BACKOFF),
            _ => INITIAL_BACKOFF,
        };
        self.entries.insert(
            key.to_owned(),
            Entry {
                backoff,
                last_update: now,
            },
        );
    }

    /// Drops entries that have expired (client-go `GC`), so the map stays
    /// as small as the nodes with recent failures.
    pub fn forget_expired(&mut self, now: Timestamp) {
        self.entries
            .retain(|_, entry| !expired(now, entry.last_update));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).expect("timestamp")
    }

    #[test]
    fn doubles_from_one_second_to_fifteen_minutes() {
        let mut backoff = FailedPodBackoff::default();
        let key = backoff_key("uid", 1, "n1");
        assert!(!backoff.in_backoff(&key, at(0)), "unknown key is not held");
        let mut delays = Vec::new();
        for step in 0..12 {
            backoff.next(&key, at(step));
            delays.push(backoff.delay(&key).as_secs());
        }
        assert_eq!(
            delays,
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900],
            "client-go Backoff doubles and caps at the maximum"
        );
    }

    #[test]
    fn held_until_the_delay_has_passed_since_the_last_update() {
        let mut backoff = FailedPodBackoff::default();
        let key = backoff_key("uid", 1, "n1");
        backoff.next(&key, at(100));
        backoff.next(&key, at(100));
        assert!(backoff.in_backoff(&key, at(101)), "2 s delay, 1 s passed");
        assert!(!backoff.in_backoff(&key, at(102)), "the delay has passed");
        assert!(
            !backoff.in_backoff(&backoff_key("uid", 2, "n1"), at(101)),
            "a new generation is another key"
        );
    }

    #[test]
    fn an_entry_stable_for_twice_the_maximum_starts_again() {
        let mut backoff = FailedPodBackoff::default();
        let key = backoff_key("uid", 1, "n1");
        for _ in 0..5 {
            backoff.next(&key, at(0));
        }
        assert_eq!(backoff.delay(&key), Duration::from_secs(16));
        backoff.next(&key, at(1801));
        assert_eq!(backoff.delay(&key), INITIAL_BACKOFF);
        backoff.forget_expired(at(1801 + 1801));
        assert_eq!(backoff.delay(&key), Duration::ZERO);
    }
}
