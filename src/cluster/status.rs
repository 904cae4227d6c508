//! Connection state of each watch stream: loading its first list, live,
//! re-listing, or reconnecting after an error (with the error and since when
//! the data is stale). Pure state; the watch task feeds it, the console shows it.

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
}

/// Connection bookkeeping for one stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamStatus {
    synced_once: bool,
    listing: bool,
    error: Option<(String, jiff::Timestamp)>,
}

impl StreamStatus {
    /// The state to show.
    pub fn state(&self) -> StreamState {
        if let Some((error, since)) = &self.error {
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

    /// Records a failure at `now`; keeps the time of the first failure in a row.
    pub fn failed(&mut self, message: String, now: jiff::Timestamp) {
        let since = self.error.as_ref().map_or(now, |(_, since)| *since);
        self.error = Some((message, since));
    }

    /// Records a successful watcher event; `listing` is whether a (re)list is in
    /// progress after it. Returns whether the shown state changed.
    pub fn received(&mut self, listing: bool, _now: jiff::Timestamp) -> bool {
        let before = self.state();
        self.error = None;
        self.listing = listing;
        if !listing {
            self.synced_once = true;
        }
        before != self.state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
