//! Following a DaemonSet live for the headless commands (`advance --wait`,
//! `auto`, `rollback`): the console's own watch layer
//! ([`crate::cluster::watch`]) fills its cache; this wraps it to hand out
//! [`Snapshot`]s once the streams have listed, and to wait for the next
//! change or a deadline. Never polls the API.

use crate::cluster::status::{StreamKind, StreamStatus};
use crate::cluster::watch::{self, WatchHandle};
use crate::ops::echo;
use crate::ops::error::OpsError;
use crate::ops::snapshot::{Snapshot, Target};

/// A live view of one DaemonSet.
#[derive(Debug)]
pub struct Follower {
    handle: WatchHandle,
    target: Target,
}

/// The streams that must have listed before a snapshot is complete.
const NEEDED: [StreamKind; 4] = [
    StreamKind::Nodes,
    StreamKind::DaemonSets,
    StreamKind::Pods,
    StreamKind::Revisions,
];

impl Follower {
    /// Starts watching `target` (its namespace's DaemonSets, all nodes, its pods and revisions).
    pub fn start(client: kube::Client, target: &Target) -> Self {
        let watch_target = watch::Target {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
        };
        let handle = watch::spawn(client, Some(target.namespace.clone()), Some(watch_target));
        Self {
            handle,
            target: target.clone(),
        }
    }

    /// The current snapshot, or `None` while the streams are still listing.
    /// A DaemonSet that is gone after its stream listed is an error.
    pub fn try_snapshot(&self) -> Result<Option<Snapshot<'static>>, OpsError> {
        let cache = self.handle.shared.lock();
        let synced = |kind: StreamKind| {
            cache
                .streams()
                .get(&kind)
                .is_some_and(StreamStatus::settled)
        };
        let ds_listed = synced(StreamKind::DaemonSets);
        match Snapshot::from_cache(&cache, &self.target) {
            Some(snapshot) if NEEDED.iter().all(|k| synced(*k)) => Ok(Some(snapshot)),
            None if ds_listed => Err(OpsError::NotFound {
                what: format!("daemonset {}", self.target.key()),
                message: "it was deleted or never existed".to_owned(),
            }),
            Some(_) | None => Ok(None),
        }
    }

    /// Waits until a complete snapshot is available.
    pub async fn snapshot(&self) -> Result<Snapshot<'static>, OpsError> {
        loop {
            if let Some(snapshot) = self.try_snapshot()? {
                return Ok(snapshot);
            }
            self.handle.shared.changed().await;
        }
    }

    /// Waits until the watch shows the DaemonSet at `written` (the
    /// resourceVersion of this process's own write) or later, so the next
    /// decision sees that write; gives up after `patience` (a stalled watch)
    /// with an error rather than deciding from a view without the write.
    pub async fn reflects(
        &self,
        written: &str,
        patience: std::time::Duration,
    ) -> Result<(), OpsError> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            {
                let cache = self.handle.shared.lock();
                let cached = cache
                    .daemonset(&self.target.key())
                    .and_then(|ds| ds.metadata.resource_version.as_deref());
                if echo::reflects(cached, written) {
                    return Ok(());
                }
            }
            // A change between the check and the wait is kept as a permit (`notify_one`).
            if tokio::time::timeout_at(deadline, self.handle.shared.changed())
                .await
                .is_err()
            {
                return Err(OpsError::Unechoed {
                    what: format!("daemonset {}", self.target.key()),
                    written: written.to_owned(),
                    waited: humantime::format_duration(patience).to_string(),
                });
            }
        }
    }

    /// Waits for the next change, or until `wake_at` (if given) passes.
    pub async fn changed_or(&self, wake_at: Option<jiff::Timestamp>) {
        let sleep = wake_at.map_or(std::time::Duration::from_secs(3600), |at| {
            let wait = at.duration_since(jiff::Timestamp::now());
            // Wake a little after the deadline so the gate sees it as passed.
            std::time::Duration::try_from(wait).unwrap_or_default()
                + std::time::Duration::from_millis(50)
        });
        tokio::select! {
            () = self.handle.shared.changed() => {}
            () = tokio::time::sleep(sleep) => {}
        }
    }
}
