//! The errors of rollout operations, and the mapping from kube's errors to
//! messages that say what happened and what to do (403, 404, 409, unreachable).
//!
//! Owns classification only; never retries (a retried delete could delete twice).

/// What went wrong in a rollout operation.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    /// `--read-only` (or the console's read-only mode) forbids writes.
    #[error("read-only mode: {action} is not allowed (drop --read-only to act)")]
    ReadOnly {
        /// The refused action, e.g. `advance`.
        action: String,
    },
    /// The server (RBAC or another authorizer) refused the request.
    #[error("forbidden: {message} (ask for `{verb}` on {resource}, or use an account that has it)")]
    Forbidden {
        /// The verb attempted (`delete`, `patch`, ...).
        verb: String,
        /// The resource, e.g. `pods` or `daemonsets.apps`.
        resource: String,
        /// The server's message.
        message: String,
    },
    /// The object is gone.
    #[error("not found: {what} ({message})")]
    NotFound {
        /// What was looked for, e.g. `pod kube-system/agent-x`.
        what: String,
        /// The server's message.
        message: String,
    },
    /// A precondition (UID or resourceVersion) failed: someone else changed the
    /// object since it was read. Nothing was changed; re-read, re-plan, ask again.
    #[error(
        "conflict on {what}: {message} (nothing was changed; the view was refreshed, review the plan and try again)"
    )]
    Conflict {
        /// The object, e.g. `pod kube-system/agent-x`.
        what: String,
        /// The server's message.
        message: String,
    },
    /// The API server could not be reached (connection refused, TLS, timeout).
    #[error("cannot reach the API server while trying to {attempt}: {message}")]
    Unreachable {
        /// What was being attempted.
        attempt: String,
        /// The transport error.
        message: String,
    },
    /// A failure that may pass by itself: a 429 from a throttling server, a
    /// 5xx, or an answer that was cut off. What was asked may or may not have
    /// happened; reads and rollcall's own state patches are retried with
    /// backoff, a delete is resolved by reading the pod again.
    #[error("the API server failed to {attempt}: {message}")]
    Transient {
        /// What was being attempted.
        attempt: String,
        /// The server's message with its code, or the transport error.
        message: String,
    },
    /// Any other API error (422, ...).
    #[error("the API server refused to {attempt}: {message}")]
    Api {
        /// What was being attempted.
        attempt: String,
        /// The server's message with its code.
        message: String,
    },
    /// The request itself is not possible in the current state
    /// (node already updated, no previous revision, ...).
    #[error("{0}")]
    Invalid(String),
    /// The journal could not be written; the action's result is still reported.
    #[error("cannot write the journal {path}")]
    Journal {
        /// The journal file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A write succeeded, but the watch did not show it in time: nothing is
    /// decided from the older view it still holds.
    #[error(
        "the watch of {what} has not shown this process's own write (resourceVersion \
         {written}) after {waited}; not deciding from an older view"
    )]
    Unechoed {
        /// The object written.
        what: String,
        /// The resourceVersion the write returned.
        written: String,
        /// How long the watch was given.
        waited: String,
    },
    /// Stored rollout state on the DaemonSet could not be understood.
    #[error("bad rollout state annotation {key}: {message}")]
    BadState {
        /// The annotation key.
        key: String,
        /// Why it is unreadable.
        message: String,
    },
}

/// The object and verb a kube call was about, for messages.
#[derive(Clone, Debug)]
pub struct Attempt {
    /// `delete`, `patch`, `get`, `list`, `create`.
    pub verb: &'static str,
    /// `pods`, `daemonsets.apps`, `controllerrevisions.apps`, ...
    pub resource: &'static str,
    /// `kube-system/agent-x`, or the namespace for lists.
    pub name: String,
}

impl Attempt {
    /// `delete pods kube-system/agent-x`.
    pub fn describe(&self) -> String {
        format!("{} {} {}", self.verb, self.resource, self.name)
    }

    fn object(&self) -> String {
        let kind = self.resource.split('.').next().unwrap_or(self.resource);
        let singular = kind.strip_suffix('s').unwrap_or(kind);
        format!("{singular} {}", self.name)
    }
}

/// Maps a kube error to an [`OpsError`]. Uses the HTTP code as well as the
/// reason, because kube 5 matches `reason` only (a server without reasons
/// would otherwise look like a generic failure).
pub fn from_kube(err: &kube::Error, attempt: &Attempt) -> OpsError {
    match err {
        kube::Error::Api(status) => {
            from_status(status.code, &status.reason, &status.message, attempt)
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => OpsError::Unreachable {
            attempt: attempt.describe(),
            message: root_cause(err),
        },
        // A body that could not be read or decoded: the answer was lost.
        other => OpsError::Transient {
            attempt: attempt.describe(),
            message: error_chain(other),
        },
    }
}

/// Maps an API `Status` (code, reason, message) to an [`OpsError`].
pub fn from_status(code: u16, reason: &str, message: &str, attempt: &Attempt) -> OpsError {
    let message = message.to_owned();
    match (code, reason) {
        (403, _) | (_, "Forbidden") => OpsError::Forbidden {
            verb: attempt.verb.to_owned(),
            resource: attempt.resource.to_owned(),
            message,
        },
        (404, _) | (_, "NotFound") => OpsError::NotFound {
            what: attempt.object(),
            message,
        },
        (409, _) | (_, "Conflict") => OpsError::Conflict {
            what: attempt.object(),
            message,
        },
        (429 | 500 | 502 | 503 | 504, _) => OpsError::Transient {
            attempt: attempt.describe(),
            message: format!("{message} ({code} {reason})"),
        },
        _ => OpsError::Api {
            attempt: attempt.describe(),
            message: format!("{message} ({code} {reason})"),
        },
    }
}

impl OpsError {
    /// Whether the caller should re-read the cluster before offering the action again.
    pub fn needs_refresh(&self) -> bool {
        matches!(self, Self::Conflict { .. } | Self::NotFound { .. })
    }

    /// Whether the failure may pass by itself (unreachable, throttled, 5xx,
    /// answer lost): worth retrying a read or an idempotent state patch.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unreachable { .. } | Self::Transient { .. })
    }
}

/// The innermost cause of a transport error (`Connection refused (os error
/// 111)`): the layers above it (`ServiceError: client error (Connect): tcp
/// connect error: …`) say nothing an operator can act on.
fn root_cause(err: &dyn std::error::Error) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delete_pod() -> Attempt {
        Attempt {
            verb: "delete",
            resource: "pods",
            name: "kube-system/agent-a".into(),
        }
    }

    #[test]
    fn status_codes_map_to_variants() {
        type Case = (&'static str, u16, &'static str, fn(&OpsError) -> bool);
        let cases: &[Case] = &[
            ("forbidden by code", 403, "", |e| {
                matches!(e, OpsError::Forbidden { .. })
            }),
            ("forbidden by reason", 0, "Forbidden", |e| {
                matches!(e, OpsError::Forbidden { .. })
            }),
            ("not found", 404, "NotFound", |e| {
                matches!(e, OpsError::NotFound { .. })
            }),
            ("conflict without reason", 409, "", |e| {
                matches!(e, OpsError::Conflict { .. })
            }),
            ("invalid", 422, "Invalid", |e| {
                matches!(e, OpsError::Api { .. })
            }),
            ("server error", 500, "InternalError", |e| {
                matches!(e, OpsError::Transient { .. })
            }),
        ];
        for (name, code, reason, check) in cases {
            let err = from_status(*code, reason, "msg", &delete_pod());
            assert!(check(&err), "{name}: {err:?}");
        }
    }

    #[test]
    fn messages_say_what_to_do() {
        let forbidden = from_status(
            403,
            "Forbidden",
            "pods \"agent-a\" is forbidden",
            &delete_pod(),
        );
        assert_eq!(
            forbidden.to_string(),
            "forbidden: pods \"agent-a\" is forbidden (ask for `delete` on pods, or use an account that has it)"
        );
        let conflict = from_status(
            409,
            "Conflict",
            "Precondition failed: UID in precondition: a",
            &delete_pod(),
        );
        let text = conflict.to_string();
        assert!(
            text.starts_with("conflict on pod kube-system/agent-a"),
            "{text}"
        );
        assert!(text.contains("nothing was changed"), "{text}");
        assert!(conflict.needs_refresh());
        let gone = from_status(404, "NotFound", "pods \"agent-a\" not found", &delete_pod());
        assert_eq!(
            gone.to_string(),
            "not found: pod kube-system/agent-a (pods \"agent-a\" not found)"
        );
    }

    #[test]
    fn kube_api_error_uses_status() {
        let status = kube::core::Status::failure("denied", "Forbidden").with_code(403);
        let err = kube::Error::Api(status.boxed());
        assert!(matches!(
            from_kube(&err, &delete_pod()),
            OpsError::Forbidden { .. }
        ));
    }

    #[test]
    fn daemonset_object_name_is_singular() {
        let attempt = Attempt {
            verb: "patch",
            resource: "daemonsets.apps",
            name: "kube-system/agent".into(),
        };
        let err = from_status(409, "Conflict", "modified", &attempt);
        assert!(
            err.to_string()
                .starts_with("conflict on daemonset kube-system/agent"),
            "{err}"
        );
    }
}
