//! One attempt carried out: read the pod as it is now, decide, write. A
//! binding is "assumed" in the cache at once (upstream's `assume`), so the
//! next attempt counts it before its event arrives; a failed attempt parks
//! the pod (or backs it off when a write lost a race).

use tokio::time::Instant;

use super::Scheduler;
use super::decide::{Decision, Nomination, decide};
use super::intake::{is_ours, pending_pod};
use super::queue::PodKey;
use super::writes::PodRef;
use crate::sim::resources::ResourceKind;

impl Scheduler {
    /// Tries to schedule one pod popped from the queue.
    pub fn attempt(&mut self, key: &PodKey, now: Instant) {
        let Some(object) = self.store.get_object(ResourceKind::Pod, &key.0, &key.1) else {
            self.queue.remove(key);
            return;
        };
        let Some((pod, placement)) = pending_pod(&object) else {
            self.queue.remove(key);
            return;
        };
        // Upstream `skipPodSchedule`: a pod being deleted, or bound meanwhile.
        if pod.node_name().is_some() || pod.is_terminating() || !is_ours(placement.scheduler_name())
        {
            self.queue.remove(key);
            return;
        }
        let reference = PodRef {
            namespace: &key.0,
            name: &key.1,
            uid: pod.uid(),
        };
        match decide(&pod, &placement, &self.cache) {
            Decision::Bind(node) => match self.writes.bind(&reference, &node) {
                Ok(()) => {
                    self.cache.forget_nomination(key);
                    self.cache.count(key, &pod, &node);
                    self.queue.done(key);
                }
                Err(err) => {
                    tracing::debug!(pod = %key.1, %err, "binding lost a race");
                    self.queue.failed(key, true, now);
                }
            },
            Decision::Unschedulable {
                message,
                nomination,
                victims,
            } => {
                for (victim_key, victim_uid) in &victims {
                    let victim = PodRef {
                        namespace: &victim_key.0,
                        name: &victim_key.1,
                        uid: victim_uid,
                    };
                    let node = nomination.node().unwrap_or_default();
                    match self.writes.preempt(&victim, &reference, node) {
                        Ok(()) => self.cache.mark_preempted(victim_key),
                        Err(err) => {
                            tracing::debug!(victim = %victim_key.1, %err, "preemption write failed");
                        }
                    }
                }
                if let Err(err) = self.writes.unschedulable(&reference, &message, &nomination) {
                    tracing::debug!(pod = %key.1, %err, "unschedulable status write failed");
                }
                // Upstream's nominator learns at once, not from the status
                // write's event: the next attempt keeps this room for it.
                match &nomination {
                    Nomination::Set(node) => self.cache.nominate(key, &pod, node),
                    Nomination::Clear => self.cache.forget_nomination(key),
                    Nomination::Keep => {}
                }
                self.queue.failed(key, false, now);
            }
        }
    }
}
