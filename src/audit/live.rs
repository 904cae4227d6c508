//! Reads the audit's input from a live cluster: the DaemonSet, every node and
//! the pods of its namespace, as one consistent picture.
//!
//! The DaemonSet is read before and after the lists; if its UID or generation
//! changed in between (recreated, or its template edited), the lists may mix two
//! states, so the whole read is repeated, a bounded number of times. Lists are
//! paginated so a 65,000-node cluster is read in pages. Receives a
//! `kube::Client`, never builds one; only reads.

use kube::Api;
use kube::api::ListParams;

use crate::cluster::request::{self, Object, collection_url};
use crate::model::{DaemonSet, Event, Node, Pod, Target};

/// How many times the read is attempted before giving up on a moving DaemonSet.
pub const MAX_ATTEMPTS: u32 = 5;

/// Page size for list calls (what kubectl uses for `get` with chunking).
const PAGE_SIZE: u32 = 500;

/// One consistent read of the audit's input.
#[derive(Clone, Debug)]
pub struct LiveRead {
    /// The DaemonSet as read after the lists.
    pub daemonset: DaemonSet,
    /// Every node of the cluster.
    pub nodes: Vec<Node>,
    /// Every pod of the DaemonSet's namespace (ownership is decided later).
    pub pods: Vec<Pod>,
    /// Events of the namespace, to say more about why (empty when they could
    /// not be listed: they are optional to the audit).
    pub events: Vec<Event>,
    /// How many attempts it took (1 when nothing moved).
    pub attempts: u32,
}

/// Why the cluster could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The DaemonSet does not exist.
    #[error("daemonset {target} not found")]
    NotFound {
        /// The DaemonSet asked for.
        target: Target,
    },
    /// An API call failed.
    #[error("cannot {what}")]
    Api {
        /// What was attempted, e.g. `list nodes`.
        what: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// The DaemonSet kept changing between reads.
    #[error(
        "daemonset {target} changed (UID or generation) during each of {attempts} reads; try again when it is stable"
    )]
    Unstable {
        /// The DaemonSet.
        target: Target,
        /// Attempts made.
        attempts: u32,
    },
}

/// Reads the DaemonSet, nodes and pods so that the DaemonSet's UID and
/// generation are the same before and after the lists.
pub async fn read_consistent(
    client: &kube::Client,
    target: &Target,
    max_attempts: u32,
) -> Result<LiveRead, LiveError> {
    let namespace = target.namespace.as_str();
    let daemonsets: Api<DaemonSet> = Api::namespaced(client.clone(), namespace);
    for attempt in 1..=max_attempts.max(1) {
        let before = get_daemonset(&daemonsets, target).await?;
        let nodes = list_all::<Node>(client, None, "list nodes").await?;
        let pods = list_all::<Pod>(
            client,
            Some(namespace),
            &format!("list pods in namespace {namespace}"),
        )
        .await?;
        let events = list_events(client, namespace).await;
        let after = get_daemonset(&daemonsets, target).await?;
        if same_state(&before, &after) {
            return Ok(LiveRead {
                daemonset: after,
                nodes,
                pods,
                events,
                attempts: attempt,
            });
        }
        tracing::info!(
            attempt,
            "daemonset {target} changed during the read; reading again"
        );
    }
    Err(LiveError::Unstable {
        target: target.clone(),
        attempts: max_attempts.max(1),
    })
}

/// Every node of the cluster (for `--write-roster`).
pub async fn list_nodes(client: &kube::Client) -> Result<Vec<Node>, LiveError> {
    list_all::<Node>(client, None, "list nodes").await
}

/// Events of the namespace; a failure (often RBAC) only loses detail, so it is
/// logged and the audit goes on without them.
async fn list_events(client: &kube::Client, namespace: &str) -> Vec<Event> {
    let what = format!("list events in namespace {namespace}");
    match list_all::<Event>(client, Some(namespace), &what).await {
        Ok(events) => events,
        Err(err) => {
            tracing::warn!(error = %err, "audit continues without events");
            Vec::new()
        }
    }
}

/// Whether two reads of a DaemonSet describe the same object at the same spec.
pub fn same_state(before: &DaemonSet, after: &DaemonSet) -> bool {
    before.metadata.uid == after.metadata.uid
        && before.metadata.generation == after.metadata.generation
}

async fn get_daemonset(api: &Api<DaemonSet>, target: &Target) -> Result<DaemonSet, LiveError> {
    match api.get_opt(&target.name).await {
        Ok(Some(ds)) => Ok(ds),
        Ok(None) => Err(LiveError::NotFound {
            target: target.clone(),
        }),
        Err(source) => Err(LiveError::Api {
            what: format!("get daemonset {target}"),
            source,
        }),
    }
}

/// Lists every object, page by page.
async fn list_all<K: Object>(
    client: &kube::Client,
    namespace: Option<&str>,
    what: &str,
) -> Result<Vec<K>, LiveError> {
    let url = collection_url::<K>(namespace);
    request::list_all(client, &url, &ListParams::default().limit(PAGE_SIZE), None)
        .await
        .map_err(|source| LiveError::Api {
            what: what.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObjectMeta;

    fn ds(uid: &str, generation: i64, rv: &str) -> DaemonSet {
        DaemonSet {
            metadata: ObjectMeta {
                uid: Some(uid.into()),
                generation: Some(generation),
                resource_version: Some(rv.into()),
                ..ObjectMeta::default()
            },
            ..DaemonSet::default()
        }
    }

    #[test]
    fn status_only_changes_keep_the_read() {
        assert!(same_state(&ds("u", 2, "10"), &ds("u", 2, "11")));
    }

    #[test]
    fn recreated_or_edited_daemonset_forces_a_new_read() {
        assert!(!same_state(&ds("u", 2, "10"), &ds("v", 2, "10")));
        assert!(!same_state(&ds("u", 2, "10"), &ds("u", 3, "12")));
    }
}
