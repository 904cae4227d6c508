//! The embedded cluster's scheduler: binds every unbound pod that names the
//! default scheduler (or none) to a node where it fits, as upstream's
//! kube-scheduler does with its default plugins that matter here —
//! NodeUnschedulable, TaintToleration, NodeAffinity (with its PreFilter that
//! sends a daemon pod straight to the node its `matchFields metadata.name`
//! names), NodePorts and NodeResourcesFit — and, when a pod fits nowhere,
//! says so (PodScheduled False `Unschedulable`, a `FailedScheduling` event
//! with upstream's FitError message) and preempts lower-priority pods where
//! that makes room (DefaultPreemption).
//!
//! One task serves the whole cluster: a cache of nodes and the pods counted
//! on each, kept from store events ([`cache`]), a priority queue with
//! upstream's back-off ([`queue`]), one decision per attempt ([`decide`],
//! pure: placement on the engine's selector, affinity and taint rules, fit,
//! victims and the FailedScheduling message from the fit engine) and its
//! writes ([`writes`]). Scoring, inter-pod affinity, topology spread,
//! volumes, DRA and nominated pods' reservations are not modelled; among the
//! nodes that fit, the least requested one is chosen.
//!
//! Writes only pod bindings, pod status, victims' deletions and Events.

pub mod attempt;
pub mod cache;
pub mod decide;
pub mod diagnosis;
pub mod intake;
pub mod placement;
pub mod preempt;
pub mod queue;
pub mod writes;

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::sim::kubelet::clock::SimClock;
use crate::sim::offload::Offload;
use crate::sim::store::Store;
use crate::sim::wake::sleep_until;
use cache::ClusterCache;
use queue::SchedulingQueue;
use writes::Writes;

/// How many attempts one turn of the loop makes before it looks at new
/// store events again (a start with 130,000 unbound daemon pods must not
/// hold the cache's view back for the whole batch).
const ATTEMPTS_PER_TURN: usize = 512;

/// Tuning the scheduler reads.
#[derive(Clone, Copy, Debug)]
pub struct SchedulerOptions {
    /// A new pod's delay before its first attempt (the scenario's
    /// `timing.schedule`), divided by `speed` like every other delay.
    pub first_attempt_after: Duration,
    /// The time multiplier (the first attempt's delay is divided by it;
    /// back-offs are upstream's, in real time).
    pub speed: f64,
    /// Where its attempts and intake run (see [`Offload`]).
    pub offload: Offload,
}

/// The running scheduler.
#[derive(Debug)]
pub struct SchedulerHandle {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl SchedulerHandle {
    /// Stops the scheduler.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// The scheduler's state: what it knows, what it waits to try, how it writes.
#[derive(Debug)]
pub struct Scheduler {
    store: Store,
    cache: ClusterCache,
    queue: SchedulingQueue,
    writes: Writes,
    options: SchedulerOptions,
}

/// Starts the scheduler on the current tokio runtime.
pub fn spawn(store: Store, clock: SimClock, options: SchedulerOptions) -> SchedulerHandle {
    let (stop, stopped) = watch::channel(false);
    let scheduler = Scheduler::new(store, clock, options);
    let task = tokio::spawn(run(scheduler, stopped));
    SchedulerHandle { stop, task }
}

impl Scheduler {
    /// A scheduler that knows nothing yet.
    pub fn new(store: Store, clock: SimClock, options: SchedulerOptions) -> Scheduler {
        Scheduler {
            writes: Writes::new(store.clone(), clock),
            store,
            cache: ClusterCache::new(),
            queue: SchedulingQueue::new(),
            options,
        }
    }

    /// Makes the attempts due by `now`, at most `budget`; true when more are due.
    pub fn run_due(&mut self, now: Instant, budget: usize) -> bool {
        for _ in 0..budget {
            let Some(key) = self.queue.pop(now) else {
                return false;
            };
            self.attempt(&key, now);
        }
        true
    }

    fn scaled(&self, delay: Duration) -> Duration {
        delay.div_f64(self.options.speed.max(0.001))
    }
}

/// Lists everything afresh (the informers' list), as `offload` says: the
/// lists of a rehearsal's fifty members were seconds of one thread.
async fn relist(scheduler: Scheduler, offload: Offload) -> Scheduler {
    let now = Instant::now();
    offload.run(scheduler, move |s| s.list_all(now)).await.0
}

async fn run(mut scheduler: Scheduler, mut stopped: watch::Receiver<bool>) {
    let mut changes = scheduler.store.subscribe();
    let offload = scheduler.options.offload;
    scheduler = relist(scheduler, offload).await;
    loop {
        let (back, more) = if scheduler.queue.anything_due(Instant::now()) {
            offload
                .run(scheduler, |s| s.run_due(Instant::now(), ATTEMPTS_PER_TURN))
                .await
        } else {
            (scheduler, false)
        };
        scheduler = back;
        let wake = if more {
            Some(Instant::now())
        } else {
            scheduler.queue.next_deadline()
        };
        tokio::select! {
            () = sleep_until(wake) => {}
            batch = changes.next_batch() => match batch {
                Ok(events) => {
                    if events.iter().any(|e| Scheduler::takes_in(e.kind)) {
                        let now = Instant::now();
                        scheduler = offload
                            .run(scheduler, move |s| events.iter().for_each(|e| s.apply(e, now)))
                            .await
                            .0;
                    }
                }
                Err(err) => {
                    tracing::info!(%err, "scheduler re-listing");
                    changes = scheduler.store.subscribe();
                    scheduler = relist(scheduler, offload).await;
                }
            },
            _ = stopped.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests;
