//! What kind of API server is at the other end, read once from `/version`:
//! a kube-apiserver, or rollcall's embedded cluster (`rollcall demo`,
//! `rollcall sim`), which says so there. The kind decides two things: the
//! console's title says SIMULATED on the embedded cluster, and the bookmark
//! rhythm a watch may assume before it has learnt one (see
//! `cluster::rhythm`). Owns no connection; never fails a caller:
//! a server that does not answer `/version` is taken for a kube-apiserver.

use std::time::Duration;

/// The `gitCommit` the embedded cluster reports in `/version`.
pub const EMBEDDED_GIT_COMMIT: &str = "rollcall-sim";

/// The field of the embedded cluster's `/version` that says how often its
/// watches get a BOOKMARK, in milliseconds (real servers have no such field;
/// Go and kube clients ignore fields they do not know).
pub const BOOKMARK_FIELD: &str = "rollcallBookmarkIntervalMillis";

/// How often a kube-apiserver sends a BOOKMARK on a watch that asked for them:
/// the watch cache's `defaultBookmarkFrequency` (one minute; kubernetes/kubernetes
/// `staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go`), plus one
/// 2 s before the watch's deadline (`cache_watcher.go` `nextBookmarkTime`).
/// The cacher's dispatch loop looks for due bookmarks about once a second
/// (jittered by a quarter), so they come a second or so late at most.
pub const KUBERNETES_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// The kind of API server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ServerKind {
    /// A kube-apiserver (or anything that is not the embedded cluster).
    #[default]
    Kubernetes,
    /// rollcall's embedded cluster, with the bookmark interval it serves.
    Embedded {
        /// How often its watches get a BOOKMARK.
        bookmark_interval: Duration,
    },
}

impl ServerKind {
    /// Reads the kind from a `/version` answer.
    pub fn from_version(version: &serde_json::Value) -> Self {
        let embedded = version["gitCommit"].as_str() == Some(EMBEDDED_GIT_COMMIT);
        if !embedded {
            return ServerKind::Kubernetes;
        }
        let bookmark_interval = version[BOOKMARK_FIELD]
            .as_u64()
            .filter(|ms| *ms > 0)
            .map_or(KUBERNETES_BOOKMARK_INTERVAL, Duration::from_millis);
        ServerKind::Embedded { bookmark_interval }
    }

    /// Whether the server is rollcall's simulation.
    pub fn simulated(self) -> bool {
        matches!(self, ServerKind::Embedded { .. })
    }

    /// How often the server sends a BOOKMARK on a watch that asked for them.
    pub fn bookmark_interval(self) -> Duration {
        match self {
            ServerKind::Kubernetes => KUBERNETES_BOOKMARK_INTERVAL,
            ServerKind::Embedded { bookmark_interval } => bookmark_interval,
        }
    }
}

/// `GET /version` as JSON, through `client`.
pub async fn version(client: &kube::Client) -> Result<serde_json::Value, kube::Error> {
    let request = http::Request::get("/version")
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    let text = client.request_text(request).await?;
    serde_json::from_str(&text).map_err(kube::Error::SerdeError)
}

/// The kind of the server behind `client`; a kube-apiserver when
/// `/version` does not answer within `within` or answers nothing readable.
pub async fn detect(client: &kube::Client, within: Duration) -> ServerKind {
    match tokio::time::timeout(within, version(client)).await {
        Ok(Ok(version)) => ServerKind::from_version(&version),
        Ok(Err(error)) => {
            tracing::debug!(%error, "no /version: assuming a kube-apiserver");
            ServerKind::Kubernetes
        }
        Err(_) => ServerKind::Kubernetes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_kind_comes_from_version() {
        let cases = [
            (
                "a kube-apiserver",
                json!({"major": "1", "minor": "32", "gitCommit": "4cb5f07"}),
                ServerKind::Kubernetes,
            ),
            (
                "the embedded cluster saying its rhythm",
                json!({"gitCommit": "rollcall-sim", "rollcallBookmarkIntervalMillis": 500}),
                ServerKind::Embedded {
                    bookmark_interval: Duration::from_millis(500),
                },
            ),
            (
                "an embedded cluster that does not say it",
                json!({"gitCommit": "rollcall-sim"}),
                ServerKind::Embedded {
                    bookmark_interval: KUBERNETES_BOOKMARK_INTERVAL,
                },
            ),
            (
                "the field alone is not the embedded cluster",
                json!({"gitCommit": "abc", "rollcallBookmarkIntervalMillis": 500}),
                ServerKind::Kubernetes,
            ),
            ("nothing", json!(null), ServerKind::Kubernetes),
        ];
        for (case, version, expected) in cases {
            assert_eq!(ServerKind::from_version(&version), expected, "{case}");
        }
        // What the embedded cluster answers (it keeps its own copy of the two names).
        let served = crate::sim::api::discovery::version(Duration::from_millis(700));
        assert_eq!(
            ServerKind::from_version(&served),
            ServerKind::Embedded {
                bookmark_interval: Duration::from_millis(700)
            }
        );
        assert!(!ServerKind::Kubernetes.simulated());
        assert_eq!(
            ServerKind::Kubernetes.bookmark_interval(),
            Duration::from_secs(60)
        );
    }
}
