//! The controller's work queue: each DaemonSet key at most once in the ready
//! queue however often it is added, plus delayed re-adds on tokio time.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use super::cache::DsKey;

/// Ready keys (deduplicated, FIFO) and keys waiting for a time.
#[derive(Debug, Default)]
pub struct WorkQueue {
    ready: VecDeque<DsKey>,
    queued: HashSet<DsKey>,
    later: BTreeMap<Instant, Vec<DsKey>>,
    /// How long a changed key waits for more changes ([`WorkQueue::add_changed`]).
    window: Duration,
    /// Keys waiting out the window.
    gathering: HashSet<DsKey>,
}

impl WorkQueue {
    /// A queue whose changed keys wait `window` for more changes before
    /// their sync (zero: synced at once).
    pub fn with_window(window: Duration) -> WorkQueue {
        WorkQueue {
            window,
            ..WorkQueue::default()
        }
    }

    /// Adds keys a store change concerns: at once, or once the window has
    /// passed, each key once however many changes name it meanwhile. A real
    /// controller's syncs take time, and the changes that arrive during one
    /// coalesce in its workqueue; on a paused clock a sync takes none, so a
    /// rehearsal asks for the window instead (one sync of a 1,000-node
    /// DaemonSet per pod transition would be most of its CPU).
    pub fn add_changed(&mut self, keys: impl IntoIterator<Item = DsKey>) {
        for key in keys {
            if self.window.is_zero() {
                self.add(key);
            } else if !self.queued.contains(&key) && self.gathering.insert(key.clone()) {
                self.add_after(key, self.window);
            }
        }
    }

    /// Adds a key unless it is already waiting.
    pub fn add(&mut self, key: DsKey) {
        if self.queued.insert(key.clone()) {
            self.ready.push_back(key);
        }
    }

    /// Adds several keys.
    pub fn add_all(&mut self, keys: impl IntoIterator<Item = DsKey>) {
        for key in keys {
            self.add(key);
        }
    }

    /// Adds a key once `after` has passed.
    pub fn add_after(&mut self, key: DsKey, after: Duration) {
        if after.is_zero() {
            self.add(key);
        } else {
            self.later
                .entry(Instant::now() + after)
                .or_default()
                .push(key);
        }
    }

    /// The next ready key, after moving due delayed keys in.
    pub fn pop(&mut self) -> Option<DsKey> {
        self.promote_due();
        let key = self.ready.pop_front()?;
        self.queued.remove(&key);
        Some(key)
    }

    fn promote_due(&mut self) {
        let now = Instant::now();
        while let Some(entry) = self.later.first_entry() {
            if *entry.key() > now {
                break;
            }
            let keys = entry.remove();
            for key in &keys {
                self.gathering.remove(key);
            }
            self.add_all(keys);
        }
    }

    /// Waits until the earliest delayed key is due (forever when none is).
    pub async fn next_due(&self) {
        match self.later.keys().next() {
            Some(at) => tokio::time::sleep_until(*at).await,
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn keys_are_deduplicated_and_delays_honoured() {
        let mut queue = WorkQueue::default();
        let a = DsKey::new("ns", "a");
        queue.add(a.clone());
        queue.add(a.clone());
        assert_eq!(queue.pop(), Some(a.clone()));
        assert_eq!(queue.pop(), None);
        queue.add_after(a.clone(), Duration::from_secs(5));
        assert_eq!(queue.pop(), None);
        queue.next_due().await;
        assert_eq!(queue.pop(), Some(a));
    }

    #[tokio::test(start_paused = true)]
    async fn changes_within_the_window_make_one_sync() {
        let mut queue = WorkQueue::with_window(Duration::from_secs(1));
        let a = DsKey::new("ns", "a");
        queue.add_changed([a.clone()]);
        tokio::time::advance(Duration::from_millis(400)).await;
        queue.add_changed([a.clone(), a.clone()]);
        assert_eq!(queue.pop(), None);
        queue.next_due().await;
        assert_eq!(queue.pop(), Some(a.clone()));
        assert_eq!(queue.pop(), None);
        // After the sync, a new change waits a new window.
        queue.add_changed([a.clone()]);
        assert_eq!(queue.pop(), None);
        queue.next_due().await;
        assert_eq!(queue.pop(), Some(a));
        assert!(queue.later.is_empty());
    }
}
