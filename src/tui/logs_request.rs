//! What the logs overlay asks the effects side for and what comes back:
//! plain values shared by the overlay (`logs`), the fetcher (`logs_link`) and
//! the event loop's `Effect`, a floor below all three. No I/O, no console
//! state.

/// Lines asked for (the tail of the log).
pub const TAIL_LINES: i64 = 500;
/// Bytes asked for, at most (and kept, at most).
pub const LIMIT_BYTES: i64 = 256 * 1024;

/// Which log to fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogsRequest {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod.
    pub pod: String,
    /// The container, when the pod status names one.
    pub container: Option<String>,
    /// The last terminated container instead of the current one.
    pub previous: bool,
}

impl LogsRequest {
    /// `ns/pod · container c · previous container`, for the overlay's title.
    pub fn describe(&self) -> String {
        let mut text = format!("{}/{}", self.namespace, self.pod);
        if let Some(container) = &self.container {
            text.push_str(" · container ");
            text.push_str(container);
        }
        if self.previous {
            text.push_str(" · previous container (it crashed)");
        }
        text
    }
}

/// What the effects side answers: the log text, or what went wrong in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogsResult {
    /// The request answered.
    pub request: LogsRequest,
    /// The log text, or the error in words.
    pub outcome: Result<String, String>,
}
