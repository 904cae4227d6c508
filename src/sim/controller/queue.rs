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
}

impl WorkQueue {
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
}
