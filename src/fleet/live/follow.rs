//! One cluster's row builder: wakes on its watch cache's change
//! notification, looks at the cache under its lock (cheap: pointers), builds
//! the status report off the lock, and hands the observation on. Rebuilds
//! at most once per [`MIN_GAP`]: a rollout on a large cluster changes the
//! cache many times a second, and the matrix row needs no more. Stands
//! aside while `hold` is set (the cluster's own console is then the
//! cache's one reader, and its notifications are the console's).

use std::sync::Arc;
use std::time::Duration;

use super::row::{Observation, look, view_of};
use crate::cluster::watch::Shared;
use crate::model::Target;

/// The least time between two observations of one cluster.
pub const MIN_GAP: Duration = Duration::from_secs(1);

/// Follows `target` in `shared`, calling `send` with each observation
/// until `send` says the receiver is gone.
pub async fn follow(
    shared: Arc<Shared>,
    target: Target,
    mut hold: tokio::sync::watch::Receiver<bool>,
    send: impl Fn(Observation) -> bool,
) {
    loop {
        while *hold.borrow() {
            if hold.changed().await.is_err() {
                return;
            }
        }
        let (link, snapshot) = {
            let cache = shared.lock();
            look(&cache, &target)
        };
        let view = snapshot.and_then(|snapshot| view_of(&snapshot, jiff::Timestamp::now()));
        if !send(Observation { link, view }) {
            return;
        }
        let started = tokio::time::Instant::now();
        tokio::select! {
            () = shared.changed() => {}
            changed = hold.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
        }
        tokio::time::sleep_until(started + MIN_GAP).await;
    }
}
