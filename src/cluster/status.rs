//! Connection state of each watch stream: loading its first list, live,
//! re-listing, reconnecting after an error or a stall, or throttled (with why,
//! since when the data is stale and when the next try is). Health is evidence:
//! only delivered data (an event, a completed list, a bookmark) clears a
//! failure; a re-list that has not completed keeps the data stale. A stream
//! the server forbids (403) is not retried: it stays [`StreamState::Forbidden`]
//! and the console states the limitation instead. Pure state; the watch task
//! feeds it, the console shows it.

/// The watched kinds, in the order the console lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StreamKind {
    /// Nodes (cluster-wide).
    Nodes,
    /// DaemonSets in scope.
    DaemonSets,
    /// The target DaemonSet's pods.
    Pods,
    /// The target's ControllerRevisions.
    Revisions,
    /// Events of the target's pods.
    PodEvents,
    /// Events of nodes.
    NodeEvents,
    /// Every pod of every namespace, as what it takes from its node
    /// ([`crate::model::UsagePod`]): what fit reads. Optional: nothing waits
    /// for it, and without it (forbidden, failing) fit is unknown.
    NodeUsage,
}

impl StreamKind {
    /// Short lowercase name for the status line.
    pub fn label(self) -> &'static str {
        match self {
            Self::Nodes => "nodes",
            Self::DaemonSets => "daemonsets",
            Self::Pods => "pods",
            Self::Revisions => "revisions",
            Self::PodEvents => "pod events",
            Self::NodeEvents => "node events",
            Self::NodeUsage => "node usage",
        }
    }
}

/// What the console says about one stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamState {
    /// The first list has not finished: data is incomplete.
    Loading,
    /// Up to date.
    Live,
    /// A re-list is in progress; the previous data is shown meanwhile.
    Resyncing,
    /// The stream failed and is retrying with backoff; data is stale since `since`.
    Reconnecting {
        /// The last error, in words.
        error: String,
        /// When the stream first failed (data is stale since then).
        since: jiff::Timestamp,
    },
    /// The server answered 429; the stream waits until `retry_at`.
    Throttled {
        /// When the stream tries again.
        retry_at: jiff::Timestamp,
        /// Since when the data is stale.
        since: jiff::Timestamp,
    },
    /// The server forbids this user to list or watch the kind (403): the
    /// stream stopped and is not retried; the view goes without it.
    Forbidden {
        /// The server's answer, in words.
        error: String,
    },
}

/// How far a list being loaded has come, in words: `1000 of 3000 (33%)`
/// where the server counted the list (an estimate: objects come and go
/// meanwhile), else `1000 so far`.
pub fn progress_words(count: u64, expected: Option<u64>) -> String {
    match expected {
        Some(total) => {
            let total = total.max(count);
            let percent = count * 100 / total.max(1);
            format!("{count} of {total} ({percent}%)")
        }
        None => format!("{count} so far"),
    }
}

/// What a headless command says while its first lists load, `None` when
/// none is loading: `still loading the cluster: nodes 500 of 3000 (16%),
/// pods 2000 so far` (each list: its kind, objects so far, the server's count).
pub fn still_loading(
    lists: impl IntoIterator<Item = (StreamKind, u64, Option<u64>)>,
) -> Option<String> {
    let lists: Vec<String> = lists
        .into_iter()
        .map(|(kind, count, expected)| {
            format!("{} {}", kind.label(), progress_words(count, expected))
        })
        .collect();
    (!lists.is_empty()).then(|| format!("still loading the cluster: {}", lists.join(", ")))
}

/// Connection bookkeeping for one stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamStatus {
    synced_once: bool,
    listing: bool,
    error: Option<(String, jiff::Timestamp)>,
    retry_at: Option<jiff::Timestamp>,
    forbidden: Option<String>,
    /// The server's estimate of the list being loaded (`remainingItemCount`).
    expected: Option<u64>,
}

impl StreamStatus {
    /// The state to show.
    pub fn state(&self) -> StreamState {
        if let Some(error) = &self.forbidden {
            return StreamState::Forbidden {
                error: error.clone(),
            };
        }
        if let Some((error, since)) = &self.error {
            if let Some(retry_at) = self.retry_at {
                return StreamState::Throttled {
                    retry_at,
                    since: *since,
                };
            }
            return StreamState::Reconnecting {
                error: error.clone(),
                since: *since,
            };
        }
        match (self.synced_once, self.listing) {
            (false, _) => StreamState::Loading,
            (true, true) => StreamState::Resyncing,
            (true, false) => StreamState::Live,
        }
    }

    /// Whether the first list has completed (the data may be shown as complete).
    pub fn synced(&self) -> bool {
        self.synced_once
    }

    /// Whether nothing more is awaited before the view may be shown: the first
    /// list completed, or the stream is forbidden (its data will never come;
    /// the view states the limitation instead).
    pub fn settled(&self) -> bool {
        self.synced_once || self.forbidden.is_some()
    }

    /// While a list loads: how many objects it will hold, when the server
    /// said (it does for lists without selectors, such as nodes).
    pub fn expected(&self) -> Option<u64> {
        self.expected
    }

    /// Records the server's estimate of the list being loaded.
    pub fn expecting(&mut self, total: u64) {
        self.expected = Some(total);
    }

    /// The server's refusal, when the stream is forbidden.
    pub fn forbidden(&self) -> Option<&str> {
        self.forbidden.as_deref()
    }

    /// Records a 403: the stream stopped for good (a permanent limitation,
    /// not staleness: the data was never there to go stale).
    pub fn forbid(&mut self, error: String) {
        self.forbidden = Some(error);
        self.error = None;
        self.retry_at = None;
    }

    /// Since when the data is known stale (a failure, stall or throttle not yet
    /// cleared by fresh data); `None` when the stream is live or loading.
    /// Gates decide only on fresh data: "waiting: view stale since T".
    pub fn stale_since(&self) -> Option<jiff::Timestamp> {
        self.error.as_ref().map(|(_, since)| *since)
    }

    /// Records a failure at `now`; keeps the time of the first failure in a row.
    pub fn failed(&mut self, message: String, now: jiff::Timestamp) {
        let since = self.error.as_ref().map_or(now, |(_, since)| *since);
        self.error = Some((message, since));
        self.retry_at = None;
    }

    /// Records a stall: nothing was delivered since `last_delivery`, so the
    /// data is stale since then (or since an earlier failure).
    pub fn stalled(&mut self, message: String, last_delivery: jiff::Timestamp) {
        let since = self
            .error
            .as_ref()
            .map_or(last_delivery, |(_, since)| (*since).min(last_delivery));
        self.error = Some((message, since));
        self.retry_at = None;
    }

    /// Records a 429: the stream retries at `retry_at`.
    pub fn throttled(&mut self, retry_at: jiff::Timestamp, now: jiff::Timestamp) {
        self.failed("throttled (429)".into(), now);
        self.retry_at = Some(retry_at);
    }

    /// Records a bookmark: proof the stream is alive and caught up. Clears a
    /// failure once the data is complete. Returns whether the shown state changed.
    pub fn alive(&mut self) -> bool {
        let before = self.state();
        if !self.listing && self.synced_once {
            self.error = None;
            self.retry_at = None;
        }
        before != self.state()
    }

    /// Records a successful watcher event; `listing` is whether a (re)list is in
    /// progress after it. A failure clears only once the data is complete again
    /// (a re-list in progress after an error is still stale). Returns whether
    /// the shown state changed.
    pub fn received(&mut self, listing: bool, _now: jiff::Timestamp) -> bool {
        let before = self.state();
        if !listing {
            self.error = None;
            self.retry_at = None;
        }
        self.listing = listing;
        if !listing {
            self.synced_once = true;
            self.expected = None;
        }
        before != self.state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_counted_against_the_servers_estimate_when_there_is_one() {
        assert_eq!(progress_words(1000, Some(3000)), "1000 of 3000 (33%)");
        assert_eq!(progress_words(0, Some(3000)), "0 of 3000 (0%)");
        // Objects came in after the estimate: never past 100 %.
        assert_eq!(progress_words(3100, Some(3000)), "3100 of 3100 (100%)");
        assert_eq!(progress_words(1000, None), "1000 so far");
        assert_eq!(
            still_loading([
                (StreamKind::Nodes, 500, Some(3000)),
                (StreamKind::Pods, 2000, None)
            ])
            .as_deref(),
            Some("still loading the cluster: nodes 500 of 3000 (16%), pods 2000 so far")
        );
        assert_eq!(still_loading([]), None);
    }

    #[test]
    fn the_estimate_lasts_until_the_list_completes() {
        let mut status = StreamStatus::default();
        status.received(true, at(1));
        status.expecting(3000);
        assert_eq!(status.expected(), Some(3000));
        status.received(false, at(2));
        assert_eq!(status.expected(), None);
    }

    fn at(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(seconds).unwrap()
    }

    #[test]
    fn loading_until_first_list_done_then_live() {
        let mut status = StreamStatus::default();
        assert_eq!(status.state(), StreamState::Loading);
        assert!(!status.received(true, at(1)));
        assert_eq!(status.state(), StreamState::Loading);
        assert!(status.received(false, at(2)));
        assert_eq!(status.state(), StreamState::Live);
        assert!(status.received(true, at(3)));
        assert_eq!(status.state(), StreamState::Resyncing);
    }

    #[test]
    fn reconnecting_keeps_first_failure_time_until_an_event_arrives() {
        let mut status = StreamStatus::default();
        status.received(false, at(1));
        status.failed("connection refused".into(), at(10));
        status.failed("connection reset".into(), at(20));
        assert_eq!(
            status.state(),
            StreamState::Reconnecting {
                error: "connection reset".into(),
                since: at(10)
            }
        );
        assert!(status.received(false, at(30)));
        assert_eq!(status.state(), StreamState::Live);
    }

    #[test]
    fn a_relist_after_a_failure_stays_stale_until_it_completes() {
        let mut status = StreamStatus::default();
        status.received(false, at(1));
        status.failed("503".into(), at(10));
        status.received(true, at(11));
        assert!(matches!(status.state(), StreamState::Reconnecting { .. }));
        assert!(!status.alive(), "a bookmark mid-list proves nothing");
        status.received(false, at(12));
        assert_eq!(status.state(), StreamState::Live);
    }

    #[test]
    fn stalls_date_back_to_the_last_delivery_and_bookmarks_clear_them() {
        let mut status = StreamStatus::default();
        status.received(false, at(1));
        status.stalled("no data for 9s".into(), at(3));
        assert_eq!(
            status.state(),
            StreamState::Reconnecting {
                error: "no data for 9s".into(),
                since: at(3)
            }
        );
        assert!(status.alive());
        assert_eq!(status.state(), StreamState::Live);
    }

    #[test]
    fn stale_since_is_the_first_failure_until_fresh_data() {
        let mut status = StreamStatus::default();
        status.received(false, at(1));
        assert_eq!(status.stale_since(), None);
        status.failed("reset".into(), at(5));
        status.failed("refused".into(), at(6));
        assert_eq!(status.stale_since(), Some(at(5)));
        status.received(false, at(7));
        assert_eq!(status.stale_since(), None);
    }

    #[test]
    fn throttled_says_when_it_retries() {
        let mut status = StreamStatus::default();
        status.received(false, at(1));
        status.throttled(at(130), at(10));
        assert_eq!(
            status.state(),
            StreamState::Throttled {
                retry_at: at(130),
                since: at(10)
            }
        );
        status.received(false, at(131));
        assert_eq!(status.state(), StreamState::Live);
    }

    #[test]
    fn forbidden_settles_without_data_and_is_not_stale() {
        let mut status = StreamStatus::default();
        status.failed("connection reset".into(), at(1));
        assert!(!status.settled());
        status.forbid("403 Forbidden: nodes is forbidden".into());
        assert!(status.settled());
        assert!(!status.synced(), "no list ever completed");
        assert_eq!(status.stale_since(), None);
        assert_eq!(
            status.state(),
            StreamState::Forbidden {
                error: "403 Forbidden: nodes is forbidden".into()
            }
        );
    }
}
