//! The scheduling queue (upstream `PriorityQueue`, reduced to what the sim
//! needs): pods waiting out a delay (the scenario's `timing.schedule` for a
//! new pod, the back-off after a failed attempt), pods ready to try (highest
//! priority first, then first come), and pods parked as unschedulable until
//! a cluster change could help them.
//!
//! Pure: `now` is an argument. Parked pods are filed under the node they are
//! pinned to (a daemon pod's `matchFields metadata.name`), so a change on one
//! node wakes only the pods pinned there plus the unpinned ones, never all
//! 130,000 daemon pods of a large cluster.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::time::Duration;

use tokio::time::Instant;

/// A pod's namespace and name.
pub type PodKey = (String, String);

/// Upstream's defaults: `podInitialBackoffSeconds` 1, `podMaxBackoffSeconds` 10.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// See [`INITIAL_BACKOFF`].
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Upstream's `podMaxInUnschedulablePodsDuration`: a parked pod is retried
/// after this long even when nothing it waits for has changed.
pub const MAX_PARKED: Duration = Duration::from_secs(300);

/// Where a queued pod is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// In the timer heap (a delay or a back-off).
    Waiting,
    /// In the active heap.
    Active,
    /// Parked as unschedulable.
    Parked,
    /// Popped and being decided.
    InFlight,
}

#[derive(Debug)]
struct Entry {
    priority: i32,
    /// Scheduling attempts that failed so far (drives the back-off).
    attempts: u32,
    /// When the last attempt ended.
    last_attempt: Option<Instant>,
    place: Place,
    /// The token of the entry's current heap position; older ones are stale.
    token: u64,
    pinned: Option<String>,
}

#[derive(Debug, PartialEq, Eq)]
struct Ready {
    priority: i32,
    token: u64,
    key: PodKey,
}

impl Ord for Ready {
    fn cmp(&self, other: &Self) -> Ordering {
        // Higher priority first; among equals the earlier token (first come).
        self.priority
            .cmp(&other.priority)
            .then_with(|| other.token.cmp(&self.token))
    }
}

impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The queue.
#[derive(Debug, Default)]
pub struct SchedulingQueue {
    entries: HashMap<PodKey, Entry>,
    active: BinaryHeap<Ready>,
    timers: BinaryHeap<Reverse<(Instant, u64, PodKey)>>,
    parked: Parked,
    next_token: u64,
}

/// The parked pods, filed by the node they are pinned to.
#[derive(Debug, Default)]
struct Parked {
    by_node: HashMap<String, HashSet<PodKey>>,
    unpinned: HashSet<PodKey>,
}

impl Parked {
    fn insert(&mut self, key: &PodKey, pinned: Option<&str>) {
        match pinned {
            Some(node) => {
                self.by_node
                    .entry(node.to_owned())
                    .or_default()
                    .insert(key.clone());
            }
            None => {
                self.unpinned.insert(key.clone());
            }
        }
    }

    fn remove(&mut self, key: &PodKey, pinned: Option<&str>) {
        match pinned {
            Some(node) => {
                if let Some(set) = self.by_node.get_mut(node) {
                    set.remove(key);
                    if set.is_empty() {
                        self.by_node.remove(node);
                    }
                }
            }
            None => {
                self.unpinned.remove(key);
            }
        }
    }

    /// The pods pinned to `node` and the unpinned ones, taken out.
    fn take_for(&mut self, node: &str) -> Vec<PodKey> {
        let mut taken: Vec<PodKey> = self.by_node.remove(node).into_iter().flatten().collect();
        taken.extend(self.unpinned.drain());
        taken
    }

    /// Every parked pod, taken out.
    fn take_all(&mut self) -> Vec<PodKey> {
        let mut taken: Vec<PodKey> = self.unpinned.drain().collect();
        for (_, set) in self.by_node.drain() {
            taken.extend(set);
        }
        taken
    }
}

impl SchedulingQueue {
    /// An empty queue.
    pub fn new() -> SchedulingQueue {
        SchedulingQueue::default()
    }

    /// How many pods are queued in any state.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no pod is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the pod is queued.
    pub fn contains(&self, key: &PodKey) -> bool {
        self.entries.contains_key(key)
    }

    /// Adds a pod first seen unbound: it is tried after `delay`. A pod already
    /// queued keeps its place (and its back-off).
    pub fn add(
        &mut self,
        key: &PodKey,
        priority: i32,
        pinned: Option<String>,
        delay: Duration,
        now: Instant,
    ) {
        if let Some(entry) = self.entries.get_mut(key) {
            entry.priority = priority;
            return;
        }
        let entry = Entry {
            priority,
            attempts: 0,
            last_attempt: None,
            place: Place::InFlight,
            token: 0,
            pinned,
        };
        self.entries.insert(key.clone(), entry);
        self.wait(key, now + delay);
    }

    /// Forgets a pod (bound, deleted, or no longer the default scheduler's).
    pub fn remove(&mut self, key: &PodKey) {
        if let Some(entry) = self.entries.remove(key)
            && matches!(entry.place, Place::Parked)
        {
            self.parked.remove(key, entry.pinned.as_deref());
        }
    }

    /// Moves due timers to the active heap and pops the next pod to try; it
    /// is in flight until [`SchedulingQueue::done`] or
    /// [`SchedulingQueue::failed`].
    pub fn pop(&mut self, now: Instant) -> Option<PodKey> {
        self.promote_due(now);
        while let Some(ready) = self.active.pop() {
            if let Some(entry) = self.entries.get_mut(&ready.key)
                && entry.token == ready.token
                && entry.place == Place::Active
            {
                entry.place = Place::InFlight;
                return Some(ready.key);
            }
        }
        None
    }

    /// Whether [`SchedulingQueue::pop`] may have a pod at `now` (an active
    /// one, or a timer due).
    pub fn anything_due(&self, now: Instant) -> bool {
        !self.active.is_empty() || self.next_deadline().is_some_and(|at| at <= now)
    }

    /// When the next timer is due (a waiting pod's delay or a parked pod's
    /// time limit).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The attempt succeeded: the pod leaves the queue.
    pub fn done(&mut self, key: &PodKey) {
        self.remove(key);
    }

    /// The attempt failed: the pod is parked until a change could help it,
    /// or, when `retry` says the failure was no verdict on the cluster (a
    /// write that lost a race), waits out its back-off.
    ///
    /// An attempt is decided in one step of the scheduler's loop, between two
    /// batches of store events, so no change can arrive while it is in
    /// flight: a change the decision did not see yet is still to be
    /// delivered, and wakes the parked pod then.
    pub fn failed(&mut self, key: &PodKey, retry: bool, now: Instant) {
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        entry.attempts = entry.attempts.saturating_add(1);
        entry.last_attempt = Some(now);
        if retry {
            let until = now + backoff(entry.attempts);
            self.wait(key, until);
        } else {
            self.park(key, now);
        }
    }

    /// A change on `node` (a pod there gone or finished, the node added or
    /// changed) could help the pods pinned to it and every unpinned pod.
    pub fn node_changed(&mut self, node: &str, now: Instant) {
        for key in self.parked.take_for(node) {
            self.requeue(&key, now);
        }
    }

    /// A change that could help any pod (a node deleted frees nothing, but
    /// a new PriorityClass or a changed pod might): every parked pod retries.
    pub fn everything_changed(&mut self, now: Instant) {
        for key in self.parked.take_all() {
            self.requeue(&key, now);
        }
    }

    /// A parked pod goes back: to the active heap when its back-off is over,
    /// else to wait for the rest of it.
    fn requeue(&mut self, key: &PodKey, now: Instant) {
        let Some(entry) = self.entries.get(key) else {
            return;
        };
        let until = entry
            .last_attempt
            .map_or(now, |at| at + backoff(entry.attempts));
        if until <= now {
            self.activate(key);
        } else {
            self.wait(key, until);
        }
    }

    fn promote_due(&mut self, now: Instant) {
        while let Some(Reverse((at, token, _))) = self.timers.peek() {
            if *at > now {
                break;
            }
            let token = *token;
            let Some(Reverse((_, _, key))) = self.timers.pop() else {
                break;
            };
            let Some(entry) = self.entries.get(&key) else {
                continue;
            };
            if entry.token != token {
                continue;
            }
            match entry.place {
                Place::Waiting => self.activate(&key),
                Place::Parked => {
                    // Parked too long: retried whatever happened (upstream's
                    // flush of leftover unschedulable pods).
                    self.parked.remove(&key, entry.pinned.as_deref());
                    self.activate(&key);
                }
                Place::Active | Place::InFlight => {}
            }
        }
    }

    fn take_token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    fn wait(&mut self, key: &PodKey, until: Instant) {
        let token = self.take_token();
        if let Some(entry) = self.entries.get_mut(key) {
            entry.place = Place::Waiting;
            entry.token = token;
            self.timers.push(Reverse((until, token, key.clone())));
        }
    }

    fn activate(&mut self, key: &PodKey) {
        let token = self.take_token();
        if let Some(entry) = self.entries.get_mut(key) {
            entry.place = Place::Active;
            entry.token = token;
            self.active.push(Ready {
                priority: entry.priority,
                token,
                key: key.clone(),
            });
        }
    }

    fn park(&mut self, key: &PodKey, now: Instant) {
        let token = self.take_token();
        let Some(entry) = self.entries.get_mut(key) else {
            return;
        };
        entry.place = Place::Parked;
        entry.token = token;
        self.timers
            .push(Reverse((now + MAX_PARKED, token, key.clone())));
        self.parked.insert(key, entry.pinned.as_deref());
    }
}

/// The back-off after `attempts` failed attempts: 1 s doubling to 10 s
/// (upstream `calculateBackoffDuration`).
pub fn backoff(attempts: u32) -> Duration {
    let doublings = attempts.saturating_sub(1).min(16);
    INITIAL_BACKOFF
        .saturating_mul(2u32.saturating_pow(doublings))
        .min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests;
