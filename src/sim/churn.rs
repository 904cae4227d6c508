//! Churn generator: a steady, seeded stream of small changes to the embedded
//! cluster's nodes and pods (container restarts, readiness flaps, node
//! condition changes, label and taint edits) at a given rate, so that the
//! watch path of a client can be loaded (`rollcall sim --churn N`, the scale
//! benchmark). The edits are pure functions over object JSON; the task only
//! picks targets and writes them through the store like any client would.
//!
//! Churn never changes what a DaemonSet controller decides: the taint it
//! flips is `PreferNoSchedule` and the labels are its own, so eligibility and
//! the rollout stay as they were.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::sim::resources::ResourceKind;
use crate::sim::store::{ObjectKey, Store, StoreError, Subresource};
use targets::Targets;

mod targets;

/// The label key churn rewrites on nodes.
pub const CHURN_LABEL: &str = "churn.rollcall.dev/tick";
/// The taint key churn adds and removes on nodes (effect `PreferNoSchedule`).
pub const CHURN_TAINT: &str = "churn.rollcall.dev/flap";

/// One kind of change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChurnKind {
    /// A pod's first container restarts (restartCount + 1).
    PodRestart,
    /// A running pod's readiness flips.
    PodReadiness,
    /// A node's DiskPressure condition flips.
    NodeCondition,
    /// A node's churn label gets a new value.
    NodeLabel,
    /// A node's churn taint appears or disappears.
    NodeTaint,
}

impl ChurnKind {
    /// Every kind, in the order the generator cycles through them.
    pub const ALL: [ChurnKind; 5] = [
        ChurnKind::PodRestart,
        ChurnKind::PodReadiness,
        ChurnKind::NodeCondition,
        ChurnKind::NodeLabel,
        ChurnKind::NodeTaint,
    ];

    fn resource(self) -> (ResourceKind, Subresource) {
        match self {
            ChurnKind::PodRestart | ChurnKind::PodReadiness => {
                (ResourceKind::Pod, Subresource::Status)
            }
            ChurnKind::NodeCondition => (ResourceKind::Node, Subresource::Status),
            ChurnKind::NodeLabel | ChurnKind::NodeTaint => (ResourceKind::Node, Subresource::Main),
        }
    }
}

/// Applies one change of `kind` to `object` (`tick` numbers it, `now` is
/// RFC 3339). Returns `None` when the object has nothing to change (a pod
/// without container statuses, a node without conditions).
pub fn edit(kind: ChurnKind, object: &Value, tick: u64, now: &str) -> Option<Value> {
    let mut next = object.clone();
    match kind {
        ChurnKind::PodRestart => {
            let status = next["status"]["containerStatuses"].get_mut(0)?;
            let restarts = status["restartCount"].as_u64().unwrap_or(0);
            status["restartCount"] = json!(restarts + 1);
            status["lastState"] = json!({"terminated": {
                "exitCode": 137, "reason": "Error", "finishedAt": now,
            }});
        }
        ChurnKind::PodReadiness => {
            let conditions = next["status"]["conditions"].as_array_mut()?;
            let ready = conditions.iter_mut().find(|c| c["type"] == "Ready")?;
            let flipped = if ready["status"] == "True" {
                "False"
            } else {
                "True"
            };
            ready["status"] = json!(flipped);
            ready["lastTransitionTime"] = json!(now);
            if let Some(statuses) = next["status"]["containerStatuses"].as_array_mut() {
                for status in statuses {
                    status["ready"] = json!(flipped == "True");
                }
            }
        }
        ChurnKind::NodeCondition => {
            let conditions = next["status"]["conditions"].as_array_mut()?;
            let disk = conditions
                .iter_mut()
                .find(|c| c["type"] == "DiskPressure")?;
            let flipped = if disk["status"] == "True" {
                "False"
            } else {
                "True"
            };
            disk["status"] = json!(flipped);
            disk["lastTransitionTime"] = json!(now);
        }
        ChurnKind::NodeLabel => {
            if !next["metadata"]["labels"].is_object() {
                next["metadata"]["labels"] = json!({});
            }
            next["metadata"]["labels"][CHURN_LABEL] = json!(tick.to_string());
        }
        ChurnKind::NodeTaint => {
            if !next["spec"]["taints"].is_array() {
                next["spec"]["taints"] = json!([]);
            }
            let taints = next["spec"]["taints"].as_array_mut()?;
            let before = taints.len();
            taints.retain(|t| t["key"] != CHURN_TAINT);
            if taints.len() == before {
                taints.push(json!({"key": CHURN_TAINT, "effect": "PreferNoSchedule"}));
            }
        }
    }
    Some(next)
}

/// How to churn.
#[derive(Clone, Debug, Default)]
pub struct ChurnOptions {
    /// Changes per second (0 does nothing).
    pub events_per_second: f64,
    /// RNG seed: the same seed picks the same targets in the same order.
    pub seed: u64,
    /// Change only this DaemonSet's pods (and nodes), the ones a console
    /// focused on it watches, so every change is an event it receives;
    /// `None` changes any pod.
    pub daemon_set: Option<ObjectKey>,
}

/// The running generator; [`ChurnHandle::shutdown`] stops it.
#[derive(Debug)]
pub struct ChurnHandle {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<u64>,
}

impl ChurnHandle {
    /// Stops the generator and returns how many changes it wrote.
    pub async fn shutdown(self) -> u64 {
        let _ = self.stop.send(true);
        self.task.await.unwrap_or(0)
    }
}

/// How many seconds of churn the store's history keeps, as upstream's watch
/// cache keeps at least 75 s of events (`DefaultEventFreshDuration`), so a
/// client whose list took a while still resumes from it instead of getting
/// 410 Gone and listing again (2 s were too short for a 65,000-node list on
/// a busy machine: every list expired before it was done).
pub const HISTORY_SECS: f64 = 75.0;

/// The most events that history holds. Upstream bounds its window at
/// 102,400 events per resource (`DefaultUpperBoundCapacity`) of decoded
/// objects; here an event keeps the object's JSON (and its previous
/// version's), 102,400 of them took the embedded cluster from 1.6 to over
/// 3 GB at 65,000 nodes. 30,000 keep 15 s of churn at 2,000 changes/s (a
/// 65,000-node list takes 2–8 s here).
pub const HISTORY_MAX_EVENTS: usize = 30_000;

/// Starts the generator on the current tokio runtime; widens the store's
/// history to [`HISTORY_SECS`] of churn (at most [`HISTORY_MAX_EVENTS`])
/// when the default holds less.
pub fn spawn(store: Store, options: ChurnOptions) -> ChurnHandle {
    let window = (options.events_per_second.max(0.0) * HISTORY_SECS).ceil();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "non-negative, rounded; capped below"
    )]
    let window = (window.min(1e9) as usize).min(HISTORY_MAX_EVENTS);
    if window > crate::sim::store::StoreOptions::default().history_limit {
        store.set_history_limit(window);
    }
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(run(store, options, stopped));
    ChurnHandle { stop, task }
}

/// How often the generator wakes up; each wake writes the changes due since the last.
const TICK: Duration = Duration::from_millis(10);
/// Writes between two yields to the runtime within one wake-up.
const YIELD_EVERY: u64 = 64;
/// How often the lists of targets are re-read (pods come and go).
const REFRESH_EVERY: u32 = 200;
/// At most this many ticks' worth of changes are written in one wake-up:
/// a generator that falls behind (the store cannot take the rate) drops the
/// rest instead of writing an ever larger backlog in one go, which kept it
/// from noticing `shutdown` for minutes. It reports what it wrote.
const CATCH_UP_TICKS: f64 = 4.0;

async fn run(store: Store, options: ChurnOptions, mut stopped: watch::Receiver<bool>) -> u64 {
    let mut rng = StdRng::seed_from_u64(options.seed);
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let started = tokio::time::Instant::now();
    let mut written: u64 = 0;
    let mut attempted: u64 = 0;
    let mut targets = Targets::read(&store, options.daemon_set.as_ref());
    let mut ticks = 0u32;
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            _ = stopped.changed() => return written,
        }
        ticks = ticks.wrapping_add(1);
        if ticks.is_multiple_of(REFRESH_EVERY) {
            targets = Targets::read(&store, options.daemon_set.as_ref());
        }
        let due = due_by(started.elapsed(), options.events_per_second);
        let most = due_by(TICK.mul_f64(CATCH_UP_TICKS), options.events_per_second).max(1);
        attempted = skip_backlog(attempted, due, most);
        // One timestamp per wake-up: the changes of a tick happen together.
        let now = jiff::Timestamp::now().to_string();
        while attempted < due {
            attempted += 1;
            let kind = ChurnKind::ALL[rng.random_range(0..ChurnKind::ALL.len())];
            if let Some(key) = targets.pick(kind.resource().0 == ResourceKind::Pod, &mut rng)
                && write(&store, kind, key, attempted, &now).is_ok()
            {
                written += 1;
            }
            if attempted.is_multiple_of(YIELD_EVERY) {
                // Let the watches serve what was just written: a wake-up's
                // burst in one poll starved them on a 2-core machine.
                tokio::task::yield_now().await;
            }
        }
    }
}

/// Where to resume when `attempted` of `due` changes were tried: at most
/// `most` behind, the older ones dropped.
fn skip_backlog(attempted: u64, due: u64, most: u64) -> u64 {
    attempted.max(due.saturating_sub(most))
}

/// How many changes are due after `elapsed` at `rate` per second.
fn due_by(elapsed: Duration, rate: f64) -> u64 {
    let due = (elapsed.as_secs_f64() * rate.max(0.0)).floor();
    // A float in u64 range after floor and max(0): the cast only drops nothing.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "non-negative, floored, far below u64::MAX"
    )]
    let due = due as u64;
    due
}

fn write(
    store: &Store,
    kind: ChurnKind,
    key: &ObjectKey,
    tick: u64,
    now: &str,
) -> Result<(), StoreError> {
    let (resource, sub) = kind.resource();
    store.modify_off_lock(resource, &key.namespace, &key.name, sub, |current| {
        edit(kind, current, tick, now)
            .ok_or_else(|| StoreError::BadRequest("nothing to churn".to_owned()))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "c", "ready": true, "restartCount": 2}],
            },
        })
    }

    fn node() -> Value {
        json!({
            "metadata": {"name": "n"},
            "spec": {},
            "status": {"conditions": [{"type": "DiskPressure", "status": "False"}]},
        })
    }

    #[test]
    fn a_restart_counts_up() {
        let next = edit(ChurnKind::PodRestart, &pod(), 1, "t").unwrap();
        assert_eq!(next["status"]["containerStatuses"][0]["restartCount"], 3);
    }

    #[test]
    fn readiness_flips_and_flips_back() {
        let once = edit(ChurnKind::PodReadiness, &pod(), 1, "t").unwrap();
        assert_eq!(once["status"]["conditions"][0]["status"], "False");
        assert_eq!(once["status"]["containerStatuses"][0]["ready"], false);
        let twice = edit(ChurnKind::PodReadiness, &once, 2, "t").unwrap();
        assert_eq!(twice["status"]["conditions"][0]["status"], "True");
    }

    #[test]
    fn node_edits_touch_only_their_own_fields() {
        let cond = edit(ChurnKind::NodeCondition, &node(), 1, "t").unwrap();
        assert_eq!(cond["status"]["conditions"][0]["status"], "True");
        let label = edit(ChurnKind::NodeLabel, &node(), 7, "t").unwrap();
        assert_eq!(label["metadata"]["labels"][CHURN_LABEL], "7");
        let tainted = edit(ChurnKind::NodeTaint, &node(), 1, "t").unwrap();
        assert_eq!(tainted["spec"]["taints"][0]["effect"], "PreferNoSchedule");
        let untainted = edit(ChurnKind::NodeTaint, &tainted, 2, "t").unwrap();
        assert_eq!(untainted["spec"]["taints"], json!([]));
    }

    #[test]
    fn nothing_to_change_is_none() {
        let bare = json!({"metadata": {"name": "p"}});
        assert!(edit(ChurnKind::PodRestart, &bare, 1, "t").is_none());
        assert!(edit(ChurnKind::NodeCondition, &bare, 1, "t").is_none());
    }

    #[test]
    fn the_rate_sets_how_many_are_due() {
        assert_eq!(due_by(Duration::from_millis(1500), 1000.0), 1500);
        assert_eq!(due_by(Duration::from_secs(3), 0.0), 0);
    }

    #[test]
    fn a_generator_behind_drops_its_backlog() {
        // On time: everything due is written.
        assert_eq!(skip_backlog(990, 1000, 200), 990);
        // 10,000 behind: only the last 200 are written.
        assert_eq!(skip_backlog(0, 10_000, 200), 9_800);
        assert_eq!(skip_backlog(0, 100, 200), 0);
    }

    #[tokio::test]
    async fn the_generator_writes_to_the_store() {
        let store = Store::new();
        store.create(ResourceKind::Node, node()).unwrap();
        let handle = spawn(
            store.clone(),
            ChurnOptions {
                events_per_second: 2000.0,
                seed: 7,
                daemon_set: None,
            },
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let written = handle.shutdown().await;
        assert!(written > 0, "node edits were written");
        assert!(store.resource_version() > 1);
    }
}
