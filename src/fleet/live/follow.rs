//! One cluster's row builder: wakes on its watch cache's change
//! notification, looks at the cache under its lock (cheap: pointers), builds
//! the status report off the lock, and hands the observation on. Rebuilds
//! at most once per [`MIN_GAP`] once the row is live (a rollout on a large
//! cluster changes the cache many times a second, and the matrix row needs
//! no more); while it loads, at most once per [`LOADING_GAP`], so the first
//! live row shows as soon as its lists are in. Stands
//! aside while `hold` is set (the cluster's own console is then the
//! cache's one reader, and its notifications are the console's). An idle
//! cluster still wakes it (every bookmark notifies): when no object event
//! was applied and no stream changed state since the last look, the report
//! is not rebuilt, except once per [`REFRESH`] for what changes by the clock
//! alone (a pod turning available). A row still loading is looked at
//! again when its first lists' bound runs out (a silent server changes
//! nothing in the cache), so it turns unreachable on time.

use std::sync::Arc;
use std::time::Duration;

use super::row::{FirstList, Link, Observation, look, view_of};
use crate::cluster::watch::Shared;
use crate::model::Target;

/// The least time between two observations of one cluster.
pub const MIN_GAP: Duration = Duration::from_secs(1);

/// The least time between two observations while the row is not yet live.
pub const LOADING_GAP: Duration = Duration::from_millis(100);

/// The longest a row goes without a rebuild while its cache is quiet (for
/// what changes by the clock alone). Each rebuild of a 1,000-node cluster's
/// report costs milliseconds: at 10 s, 50 such clusters idled at 4.4 % of
/// a core (`examples/fleet_scale`).
pub const REFRESH: Duration = Duration::from_secs(60);

/// What says a cache changed: object events applied, and each stream's state.
type Mark = (
    u64,
    std::collections::BTreeMap<
        crate::cluster::status::StreamKind,
        crate::cluster::status::StreamStatus,
    >,
);

/// Follows `target` in `shared` (its first lists bounded by `first`),
/// calling `send` with each observation until `send` says the receiver is
/// gone.
pub async fn follow(
    shared: Arc<Shared>,
    target: Target,
    first: FirstList,
    mut hold: tokio::sync::watch::Receiver<bool>,
    send: impl Fn(Observation) -> bool,
) {
    let mut last: Option<(Mark, tokio::time::Instant)> = None;
    let mut gap = LOADING_GAP;
    let mut loading = true;
    loop {
        while *hold.borrow() {
            if hold.changed().await.is_err() {
                return;
            }
        }
        let started = tokio::time::Instant::now();
        let past_bound = loading && jiff::Timestamp::now() >= first.deadline();
        let seen = last.as_ref().filter(|_| !past_bound);
        if let Some((mark, observation)) =
            observe_if_changed(&shared, &target, &first, seen, started)
        {
            gap = if observation.link.is_live() && observation.view.is_some() {
                MIN_GAP
            } else {
                LOADING_GAP
            };
            loading = matches!(observation.link, Link::Loading { .. });
            if !send(observation) {
                return;
            }
            last = Some((mark, started));
        }
        tokio::select! {
            () = shared.changed() => {}
            () = tokio::time::sleep(until(first.deadline())), if loading => {}
            changed = hold.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
        }
        tokio::time::sleep_until(started + gap).await;
    }
}

/// Observes the cache unless it is as quiet as at `last` (and that was
/// less than [`REFRESH`] ago). The lock is held for the look only; the
/// report is built after.
fn observe_if_changed(
    shared: &Shared,
    target: &Target,
    first: &FirstList,
    last: Option<&(Mark, tokio::time::Instant)>,
    now: tokio::time::Instant,
) -> Option<(Mark, Observation)> {
    let (mark, (link, snapshot)) = {
        let cache = shared.lock();
        let mark: Mark = (cache.applied(), cache.streams().clone());
        if last.is_some_and(|(seen, at)| *seen == mark && now - *at < REFRESH) {
            return None;
        }
        let looked = look(&cache, target, first, jiff::Timestamp::now());
        (mark, looked)
    };
    let view = snapshot.and_then(|snapshot| view_of(&snapshot, jiff::Timestamp::now()));
    Some((mark, Observation { link, view }))
}

/// The time left until `deadline` on the wall clock (the bound is said in
/// wall time: the link's `since`).
fn until(deadline: jiff::Timestamp) -> Duration {
    let left = deadline.duration_since(jiff::Timestamp::now());
    Duration::try_from(left).unwrap_or_default()
}
