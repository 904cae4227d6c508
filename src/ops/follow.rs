//! Following a DaemonSet live for the headless commands (`advance --wait`,
//! `auto`, `rollback`): the console's own watch layer
//! ([`crate::cluster::watch`]) fills its cache; this wraps it to hand out
//! [`Snapshot`]s once the streams have listed, and to wait for the next
//! change or a deadline. Never polls the API.
//!
//! A loop that decides on every change ([`Follower::decide`]) decides from a
//! live snapshot over the console's own row cache ([`RowCache`]), kept up to
//! date with what changed: its cost follows the change, not the cluster, and
//! the console and the headless commands decide from the same rows.
//!
//! While it waits for the first lists, a follower given a notice sink
//! ([`Follower::with_notices`]) says which streams fail and why, once per
//! new answer: a command waiting out a burst of 500s is not silent; and
//! every [`PROGRESS_EVERY`] while the lists are still coming, how far they
//! have come: over a slow link a large cluster's lists take minutes.

use std::sync::{Arc, Mutex, PoisonError};

use crate::cluster::cache::{Cache, Changes};
use crate::cluster::status::{StreamKind, StreamState, StreamStatus, still_loading};
use crate::cluster::watch::{self, WatchHandle};
use crate::ops::echo;
use crate::ops::error::OpsError;
use crate::ops::snapshot::{Snapshot, Target, with_not_found_hint};
use crate::rows::RowCache;

/// Where a follower says what it waits for (a headless command: stderr).
pub type Notices = Arc<dyn Fn(&str) + Send + Sync>;

/// A live view of one DaemonSet.
pub struct Follower {
    handle: WatchHandle,
    /// For fresh reads past the watch (a gate about to fail a node on a
    /// view that may be stale).
    client: kube::Client,
    target: Target,
    /// The rows [`Follower::decide`] hands out, refreshed from the cache's changes.
    rows: Mutex<RowCache>,
    notices: Option<Notices>,
    /// The stream failures already said (each is said once).
    said: Mutex<std::collections::BTreeSet<String>>,
    /// When the loading progress was last said (or the follower started).
    progress_said: Mutex<tokio::time::Instant>,
}

pub use crate::ops::snapshot::PROGRESS_EVERY;

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("target", &self.target)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
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
        let handle = watch::spawn(
            client.clone(),
            Some(target.namespace.clone()),
            Some(watch_target),
        );
        Self {
            handle,
            client,
            target: target.clone(),
            rows: Mutex::default(),
            notices: None,
            said: Mutex::default(),
            progress_said: Mutex::new(tokio::time::Instant::now()),
        }
    }

    /// Says through `say` why it is still waiting for the cluster, and the
    /// retries of its writes ([`Follower::notice`]).
    #[must_use]
    pub fn with_notices(mut self, say: Notices) -> Self {
        self.notices = Some(say);
        self
    }

    /// Passes `text` to the notice sink, if any.
    pub fn notice(&self, text: &str) {
        if let Some(say) = &self.notices {
            say(text);
        }
    }

    /// While the first lists are not in: says which of them fail and why,
    /// each failure once.
    fn say_waiting(&self, cache: &Cache) {
        if self.notices.is_none() {
            return;
        }
        let mut said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
        for failure in failures(cache) {
            if said.insert(failure.clone()) {
                self.notice(&format!("waiting for the cluster (retrying): {failure}"));
            }
        }
        drop(said);
        let mut progress_said = self
            .progress_said
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if progress_said.elapsed() >= PROGRESS_EVERY
            && let Some(progress) = progress(cache)
        {
            *progress_said = tokio::time::Instant::now();
            self.notice(&progress);
        }
    }

    /// While the first lists load: the next change, or the time to say how
    /// far they are (a page over a slow link can take longer than that).
    async fn loading_wait(&self) {
        let _ = tokio::time::timeout(PROGRESS_EVERY, self.handle.shared.changed()).await;
    }

    /// The current snapshot, or `None` while the streams are still listing.
    /// A DaemonSet that is gone after its stream listed is an error.
    pub fn try_snapshot(&self) -> Result<Option<Snapshot<'static>>, OpsError> {
        let cache = self.handle.shared.lock();
        if !self.complete(&cache)? {
            return Ok(None);
        }
        Ok(Snapshot::from_cache(&cache, &self.target))
    }

    /// Whether every needed stream has listed and the DaemonSet is there;
    /// a DaemonSet that is gone after its stream listed is an error.
    fn complete(&self, cache: &Cache) -> Result<bool, OpsError> {
        let synced = |kind: StreamKind| {
            cache
                .streams()
                .get(&kind)
                .is_some_and(StreamStatus::settled)
        };
        match cache.daemonset(&self.target) {
            Some(_) => Ok(NEEDED.iter().all(|k| synced(*k))),
            None if synced(StreamKind::DaemonSets) => Err(OpsError::NotFound {
                what: format!("daemonset {}", self.target.key()),
                message: "it was deleted or never existed".to_owned(),
            }),
            None => Ok(false),
        }
    }

    /// Waits until a complete snapshot is available, then runs `decide` on
    /// it: the watch cache and the row cache, brought up to date with what
    /// changed since the last call (the first call computes every row).
    /// Runs under the cache lock: `decide` computes and returns; the caller
    /// awaits whatever it decided to do. Rows are as of now: a row whose pod
    /// turned available by the clock alone is recomputed too, and
    /// [`Follower::changed_or`] wakes for it.
    pub async fn decide<R>(
        &self,
        decide: impl FnOnce(&Snapshot<'_>) -> Result<R, OpsError>,
    ) -> Result<R, OpsError> {
        loop {
            let gone = {
                let mut cache = self.handle.shared.lock();
                match self.complete(&cache) {
                    Ok(true) => {
                        let changes = cache.take_changes();
                        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
                        if let Some(snapshot) =
                            refreshed_snapshot(&cache, &changes, &mut rows, &self.target)
                        {
                            return decide(&snapshot);
                        }
                        self.say_waiting(&cache);
                        None
                    }
                    Ok(false) => {
                        self.say_waiting(&cache);
                        None
                    }
                    Err(gone) => Some(gone),
                }
            };
            if let Some(gone) = gone {
                return Err(with_not_found_hint(&self.client, &self.target, gone).await);
            }
            self.loading_wait().await;
        }
    }

    /// Reads the pods on `node` afresh into the view, past the watch
    /// (see [`crate::ops::fresh_read`]).
    pub async fn read_pods_on(&self, node: &str) -> Result<(), OpsError> {
        crate::ops::fresh_read::read_pods_on(&self.client, &self.handle.shared, &self.target, node)
            .await
    }

    /// Waits until a complete snapshot is available.
    pub async fn snapshot(&self) -> Result<Snapshot<'static>, OpsError> {
        loop {
            match self.try_snapshot() {
                Ok(Some(snapshot)) => return Ok(snapshot),
                Ok(None) => {}
                Err(gone) => {
                    return Err(with_not_found_hint(&self.client, &self.target, gone).await);
                }
            }
            self.say_waiting(&self.handle.shared.lock());
            self.loading_wait().await;
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
                    .daemonset(&self.target)
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

    /// Waits for the next change, or until `wake_at` (if given) passes, or
    /// until a row of [`Follower::decide`] changes by the clock alone (a pod
    /// turning available once `minReadySeconds` pass).
    pub async fn changed_or(&self, wake_at: Option<jiff::Timestamp>) {
        let rows_due = self
            .rows
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next_due();
        let wake_at = match (wake_at, rows_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sleep = wake_at.map_or(std::time::Duration::from_secs(3600), |at| {
            let wait = at.duration_since(crate::clock::now());
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

/// The step [`Follower::decide`] takes under the cache lock: brings `rows` up
/// to date with `changes` (what changed in `cache` since they were last
/// brought up to date), then hands out the live snapshot over both; `None`
/// while `cache` has no such DaemonSet.
pub fn refreshed_snapshot<'a>(
    cache: &'a Cache,
    changes: &Changes,
    rows: &'a mut RowCache,
    target: &Target,
) -> Option<Snapshot<'a>> {
    rows.refresh(cache, Some(target), changes, crate::clock::now());
    Snapshot::live(cache, target, &*rows)
}

/// The notice of how far the needed first lists still loading have come, if any.
fn progress(cache: &Cache) -> Option<String> {
    still_loading(NEEDED.iter().filter_map(|&kind| {
        let status = cache.streams().get(&kind)?;
        (status.state() == StreamState::Loading)
            .then(|| (kind, cache.count(kind) as u64, status.expected()))
    }))
}

/// Why the needed streams have not listed yet: one text per failing stream
/// (none while they are just loading).
fn failures(cache: &Cache) -> Vec<String> {
    NEEDED
        .iter()
        .filter_map(|kind| {
            let status = cache.streams().get(kind)?;
            if status.settled() {
                return None;
            }
            match status.state() {
                StreamState::Reconnecting { error, .. } => {
                    Some(format!("{}: {error}", kind.label()))
                }
                StreamState::Throttled { .. } => {
                    Some(format!("{}: throttled by the server (429)", kind.label()))
                }
                _ => None,
            }
        })
        .collect()
}
