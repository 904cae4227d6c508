//! The requests the server was asked, oldest first, as an API server's audit
//! log keeps them: who asked, the method, the path and the query. Tests read
//! it as evidence that a client did something the client itself does not
//! show (a re-watch after a server-side timeout, a list it did not retry).
//!
//! Bounded: the newest [`CAPACITY`] requests are kept, so a long `rollcall
//! sim` session holds a fixed few hundred kilobytes whatever its traffic.

use std::collections::VecDeque;
use std::sync::Mutex;

/// How many requests are kept.
pub const CAPACITY: usize = 4096;

/// One request as it arrived (after authentication and impersonation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    /// Its number since the server started (from 0; gaps show dropped ones).
    pub seq: u64,
    /// The user it was made as.
    pub user: String,
    /// `GET`, `POST`, ….
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The raw query string (empty when none).
    pub query: String,
    /// Its `Accept-Encoding` allowed gzip.
    pub accepts_gzip: bool,
    /// Its `Accept` header put Kubernetes protobuf first.
    pub prefers_protobuf: bool,
}

impl RequestRecord {
    /// The value of one query parameter, if present (not percent-decoded:
    /// the parameters tests look at, `watch` and `resourceVersion`, need none).
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query
            .split('&')
            .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// Whether it asked for a watch (`watch=true` or `watch=1`).
    pub fn is_watch(&self) -> bool {
        matches!(self.param("watch"), Some("true" | "1"))
    }
}

/// What a request's headers accept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Accepts {
    /// `Accept-Encoding` allows gzip.
    pub gzip: bool,
    /// `Accept` puts Kubernetes protobuf first.
    pub protobuf: bool,
}

/// The log.
#[derive(Debug)]
pub struct RequestLog {
    inner: Mutex<Inner>,
    /// How many requests are kept.
    capacity: usize,
}

impl Default for RequestLog {
    fn default() -> RequestLog {
        RequestLog::with_capacity(CAPACITY)
    }
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    kept: VecDeque<RequestRecord>,
}

impl RequestLog {
    /// A log keeping the newest `capacity` requests (0: none, only their
    /// count: an in-process client's requests are nobody's evidence, and a
    /// rehearsal's 50 members would hold 4,096 each).
    pub fn with_capacity(capacity: usize) -> RequestLog {
        RequestLog {
            inner: Mutex::default(),
            capacity,
        }
    }

    /// Appends one request, dropping the oldest beyond the capacity.
    pub fn record(&self, user: &str, method: &str, path: &str, query: &str, accepts: Accepts) {
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let seq = inner.next;
        inner.next += 1;
        if self.capacity == 0 {
            return;
        }
        if inner.kept.len() >= self.capacity {
            inner.kept.pop_front();
        }
        inner.kept.push_back(RequestRecord {
            seq,
            user: user.to_owned(),
            method: method.to_owned(),
            path: path.to_owned(),
            query: query.to_owned(),
            accepts_gzip: accepts.gzip,
            prefers_protobuf: accepts.protobuf,
        });
    }

    /// The requests kept, oldest first.
    pub fn snapshot(&self) -> Vec<RequestRecord> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .kept
            .iter()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_requests_in_order_with_their_query() {
        let log = RequestLog::default();
        for i in 0..CAPACITY + 2 {
            log.record(
                "admin",
                "GET",
                "/api/v1/nodes",
                &format!("watch=1&resourceVersion={i}"),
                Accepts::default(),
            );
        }
        let kept = log.snapshot();
        assert_eq!(kept.len(), CAPACITY);
        assert_eq!(kept[0].seq, 2);
        assert_eq!(kept[0].param("resourceVersion"), Some("2"));
        assert!(kept[0].is_watch());
        log.record("viewer", "GET", "/api/v1/pods", "", Accepts::default());
        let last = log.snapshot().pop().expect("a request");
        assert_eq!((last.user.as_str(), last.param("watch")), ("viewer", None));
        assert!(!last.is_watch());
    }

    #[test]
    fn a_log_of_no_capacity_keeps_nothing_but_counts() {
        let log = RequestLog::with_capacity(0);
        log.record("admin", "GET", "/api/v1/nodes", "", Accepts::default());
        assert!(log.snapshot().is_empty());
        let small = RequestLog::with_capacity(1);
        small.record("admin", "GET", "/api/v1/nodes", "", Accepts::default());
        small.record("admin", "GET", "/api/v1/pods", "", Accepts::default());
        let kept = small.snapshot();
        assert_eq!((kept.len(), kept[0].seq), (1, 1));
    }
}
