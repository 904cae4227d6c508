//! A cluster's connection in one word, as the fleet shows it: `live`,
//! `stale`, `unreachable`, `auth`, `forbidden` or `notFound` (the DaemonSet
//! is absent there), with the error's own words as the message. Pure:
//! classifies the errors connecting and reading produce.

use serde::Serialize;

use crate::cluster::connect::ConnectError;
use crate::ops::error::OpsError;

/// How the fleet reached one cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ConnectionState {
    /// Connected and read.
    Live,
    /// Read once, but nothing has arrived for a while.
    Stale,
    /// No answer: refused, timed out, TLS or proxy failure.
    Unreachable,
    /// No credential: the exec plugin failed, or the server said 401.
    Auth,
    /// The server refused to show the DaemonSet (403).
    Forbidden,
    /// The DaemonSet is not in that cluster.
    NotFound,
}

impl ConnectionState {
    /// The word, as in JSON.
    pub fn word(self) -> &'static str {
        match self {
            ConnectionState::Live => "live",
            ConnectionState::Stale => "stale",
            ConnectionState::Unreachable => "unreachable",
            ConnectionState::Auth => "auth",
            ConnectionState::Forbidden => "forbidden",
            ConnectionState::NotFound => "notFound",
        }
    }
}

/// The state a failure to connect leaves a cluster in.
pub fn of_connect_error(error: &ConnectError) -> ConnectionState {
    match error {
        ConnectError::Exec(_) => ConnectionState::Auth,
        _ => ConnectionState::Unreachable,
    }
}

/// The state a failed read leaves a cluster in. A 401 arrives as an API
/// error whose message ends in its code (see [`crate::ops::error::from_status`]).
pub fn of_ops_error(error: &OpsError) -> ConnectionState {
    match error {
        OpsError::Forbidden { .. } => ConnectionState::Forbidden,
        OpsError::NotFound { .. } => ConnectionState::NotFound,
        OpsError::Api { message, .. } if message.contains("(401 ") => ConnectionState::Auth,
        _ => ConnectionState::Unreachable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_get_their_word() {
        let cases = [
            (
                OpsError::Forbidden {
                    verb: "get".into(),
                    resource: "daemonsets.apps".into(),
                    message: "no".into(),
                },
                "forbidden",
            ),
            (
                OpsError::NotFound {
                    what: "daemonset x/y".into(),
                    message: "gone".into(),
                },
                "notFound",
            ),
            (
                OpsError::Api {
                    attempt: "get".into(),
                    message: "Unauthorized (401 Unauthorized)".into(),
                },
                "auth",
            ),
            (
                OpsError::Unreachable {
                    attempt: "get".into(),
                    message: "connection refused".into(),
                },
                "unreachable",
            ),
            (
                OpsError::Transient {
                    attempt: "get".into(),
                    message: "503".into(),
                },
                "unreachable",
            ),
        ];
        for (error, word) in cases {
            assert_eq!(of_ops_error(&error).word(), word, "{error}");
        }
        assert_eq!(
            of_connect_error(&ConnectError::NoAnswer {
                server: "s".into(),
                after: std::time::Duration::from_secs(1)
            })
            .word(),
            "unreachable"
        );
    }
}
