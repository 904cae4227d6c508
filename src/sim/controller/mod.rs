//! The embedded DaemonSet controller, shaped like the upstream one: store
//! events only enqueue DaemonSet keys (a node change concerns every
//! DaemonSet, a pod or revision change its owner); a worker pops each key once
//! however many events named it and runs [`sync::Controller::sync`], which
//! plans with the engine (`engine::reconcile`), acts, and writes status only
//! when it changed. Revisions, pods and events are written through the store.
//!
//! Does not simulate kubelets or the scheduler (see [`crate::sim::kubelet`]).

pub mod backoff;
pub mod cache;
pub mod events;
pub mod history;
pub mod node_change;
pub mod pod;
mod queue;
pub mod status;
pub mod sync;
pub mod verdicts;

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::sim::kubelet::clock::SimClock;
use crate::sim::offload::Offload;
use crate::sim::store::{EventType, Store, StoreError};
use cache::Cache;
use queue::WorkQueue;
pub use sync::{Controller, SyncOutcome};

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// A write to the store failed.
    #[error("cannot write {what}")]
    Write {
        /// What was being written.
        what: &'static str,
        /// The store's answer.
        #[source]
        source: StoreError,
    },
}

/// The running controller task.
#[derive(Debug)]
pub struct ControllerHandle {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl ControllerHandle {
    /// Stops the controller and waits for it to finish its current sync.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Starts the controller on the current tokio runtime.
pub fn spawn(store: Store, clock: SimClock) -> ControllerHandle {
    spawn_with(store, clock, Duration::ZERO, Offload::Inline)
}

/// [`spawn`], a changed DaemonSet synced once per `window` at most (see
/// `WorkQueue::add_changed`; zero: at once), its syncs run as `offload` says.
pub fn spawn_with(
    store: Store,
    clock: SimClock,
    window: Duration,
    offload: Offload,
) -> ControllerHandle {
    let (stop, stopped) = watch::channel(false);
    let controller = Controller::new(store, clock);
    let task = tokio::spawn(run(controller, stopped, window, offload));
    ControllerHandle { stop, task }
}

/// How long to wait before retrying a DaemonSet whose sync failed.
const RETRY_AFTER: Duration = Duration::from_secs(1);

async fn run(
    mut controller: Controller,
    mut stopped: watch::Receiver<bool>,
    window: Duration,
    offload: Offload,
) {
    let mut changes = controller.store.subscribe();
    controller = offload.run(controller, Controller::list_all).await.0;
    let mut queue = WorkQueue::with_window(window);
    queue.add_all(controller.cache.all_daemon_sets());
    loop {
        while let Some(key) = queue.pop() {
            let synced = key.clone();
            let (back, result) = offload.run(controller, move |c| c.sync(&synced)).await;
            controller = back;
            match result {
                Ok(outcome) => {
                    if let Some(after) = outcome.requeue_after {
                        queue.add_after(key, after);
                    }
                }
                Err(err) => {
                    tracing::warn!(daemonset = %key, error = %err, "daemonset sync failed");
                    queue.add_after(key, RETRY_AFTER);
                }
            }
            // Take in what changed meanwhile, so work coalesces per key.
            let batch = changes.try_batch();
            controller = apply(controller, &mut changes, &mut queue, batch, offload).await;
            tokio::task::yield_now().await;
        }
        tokio::select! {
            () = queue.next_due() => {}
            batch = changes.next_batch() => {
                controller = apply(controller, &mut changes, &mut queue, batch, offload).await;
            }
            _ = stopped.changed() => return,
        }
    }
}

async fn apply(
    controller: Controller,
    changes: &mut crate::sim::store::Subscription,
    queue: &mut WorkQueue,
    batch: Result<Vec<std::sync::Arc<crate::sim::store::StoreEvent>>, StoreError>,
    offload: Offload,
) -> Controller {
    match batch {
        Ok(events) => {
            // Other kinds (most writes are Events) are never parsed here.
            if !events.iter().any(|e| Cache::holds(e.kind)) {
                return controller;
            }
            let (controller, keys) = offload
                .run(controller, move |controller| {
                    let mut keys = Vec::new();
                    for event in events.iter().filter(|e| Cache::holds(e.kind)) {
                        keys.extend(match event.event_type {
                            EventType::Deleted => {
                                controller.cache.remove(event.kind, &event.object.value())
                            }
                            EventType::Added | EventType::Modified => {
                                controller.cache.upsert_stored(event.kind, &event.object)
                            }
                        });
                    }
                    keys
                })
                .await;
            queue.add_changed(keys);
            controller
        }
        Err(err) => {
            // Fell behind the store's history: re-list, like an informer after 410.
            tracing::info!(error = %err, "controller re-listing");
            *changes = controller.store.subscribe();
            let (controller, ()) = offload.run(controller, Controller::list_all).await;
            queue.add_all(controller.cache.all_daemon_sets());
            controller
        }
    }
}
