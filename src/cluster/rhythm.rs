//! The bookmark rhythm of one server, shared by every watch stream on it:
//! how often a watch that asked for bookmarks hears from the server even
//! when nothing changes, and so how long a silence means the watch is dead.
//!
//! Until a stream has seen two bookmarks in one watch, the rhythm is assumed
//! from the server's kind ([`crate::cluster::server_kind`]: a kube-apiserver
//! sends one about once a minute, the embedded cluster says its own interval).
//! A learnt gap replaces the assumption for every stream of the server and
//! is kept across reconnects and re-lists; it is forgotten only when the
//! server changed (restarted or replaced). Plain state behind a watch channel
//! so a stream waiting on a silence can re-arm when the rhythm changes.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::server_kind::ServerKind;

/// The rhythm as known now (what [`Rhythm::subscribe`] watches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// From the server's kind.
    assumed: Duration,
    /// The last gap between two bookmarks of one watch, once seen.
    learnt: Option<Duration>,
}

/// The bookmark rhythm of one server (cheap to clone; clones share it).
#[derive(Clone, Debug)]
pub struct Rhythm {
    known: Arc<watch::Sender<Known>>,
}

impl Default for Rhythm {
    /// A kube-apiserver's, until told otherwise.
    fn default() -> Self {
        Rhythm::of(ServerKind::Kubernetes)
    }
}

impl Rhythm {
    /// The rhythm a server of `kind` is assumed to keep.
    pub fn of(kind: ServerKind) -> Self {
        Rhythm {
            known: Arc::new(watch::Sender::new(Known {
                assumed: kind.bookmark_interval(),
                learnt: None,
            })),
        }
    }

    /// The server turned out to be of `kind`: assume its rhythm until one is learnt.
    pub fn assume(&self, kind: ServerKind) {
        let assumed = kind.bookmark_interval();
        self.known.send_if_modified(|known| {
            let changed = known.assumed != assumed;
            known.assumed = assumed;
            changed
        });
    }

    /// Two bookmarks of one watch came `gap` apart.
    pub fn learn(&self, gap: Duration) {
        self.known.send_if_modified(|known| {
            let changed = known.learnt != Some(gap);
            known.learnt = Some(gap);
            changed
        });
    }

    /// The server changed (restarted or replaced): what was learnt from the
    /// old one no longer holds.
    pub fn forget(&self) {
        self.known
            .send_if_modified(|known| known.learnt.take().is_some());
    }

    /// The interval between bookmarks: learnt, else assumed.
    pub fn interval(&self) -> Duration {
        let known = *self.known.borrow();
        known.learnt.unwrap_or(known.assumed)
    }

    /// Whether the interval was learnt from this server's bookmarks.
    pub fn learnt(&self) -> bool {
        self.known.borrow().learnt.is_some()
    }

    /// The longest silence a live watch keeps: twice the interval plus a
    /// second (one bookmark may be late or lost), within `floor..=ceiling`.
    pub fn silence_bound(&self, floor: Duration, ceiling: Duration) -> Duration {
        silence_bound(self.interval(), floor, ceiling)
    }

    /// A receiver that wakes when the rhythm changes.
    pub fn subscribe(&self) -> watch::Receiver<Known> {
        self.known.subscribe()
    }
}

/// Twice `interval` plus a second, within `floor..=ceiling`.
pub fn silence_bound(interval: Duration, floor: Duration, ceiling: Duration) -> Duration {
    (interval
        .saturating_mul(2)
        .saturating_add(Duration::from_secs(1)))
    .clamp(floor, ceiling.max(floor))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOOR: Duration = Duration::from_secs(3);
    const CEILING: Duration = Duration::from_secs(75);

    #[test]
    fn assumed_from_the_kind_until_learnt_and_kept_until_the_server_changes() {
        let rhythm = Rhythm::default();
        // A kube-apiserver's minute: 121 s, within the ceiling.
        assert_eq!(rhythm.silence_bound(FLOOR, CEILING), CEILING);
        rhythm.assume(ServerKind::Embedded {
            bookmark_interval: Duration::from_secs(5),
        });
        assert!(!rhythm.learnt());
        assert_eq!(
            rhythm.silence_bound(FLOOR, CEILING),
            Duration::from_secs(11)
        );
        let shared = rhythm.clone();
        shared.learn(Duration::from_secs(2));
        assert!(rhythm.learnt());
        assert_eq!(rhythm.silence_bound(FLOOR, CEILING), Duration::from_secs(5));
        // A later assumption does not override what was learnt.
        rhythm.assume(ServerKind::Kubernetes);
        assert_eq!(rhythm.interval(), Duration::from_secs(2));
        rhythm.forget();
        assert_eq!(rhythm.interval(), Duration::from_secs(60));
    }

    #[test]
    fn the_bound_stays_within_floor_and_ceiling() {
        let cases = [
            (Duration::from_millis(100), FLOOR),
            (Duration::from_secs(1), FLOOR),
            (Duration::from_secs(5), Duration::from_secs(11)),
            (Duration::from_secs(30), Duration::from_secs(61)),
            (Duration::from_secs(60), CEILING),
            (Duration::MAX, CEILING),
        ];
        for (interval, bound) in cases {
            assert_eq!(
                silence_bound(interval, FLOOR, CEILING),
                bound,
                "{interval:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_waiting_stream_hears_when_the_rhythm_changes() {
        let rhythm = Rhythm::default();
        let mut changes = rhythm.subscribe();
        rhythm.assume(ServerKind::Kubernetes);
        assert!(
            !changes.has_changed().unwrap(),
            "the same rhythm is no change"
        );
        rhythm.learn(Duration::from_secs(5));
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        rhythm.learn(Duration::from_secs(5));
        assert!(!changes.has_changed().unwrap());
    }
}
