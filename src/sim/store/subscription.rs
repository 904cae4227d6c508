//! A reader's cursor over the store's change history: replays what it has
//! not seen, waits for more, and reports `Gone` when the window moved past it.

use std::collections::VecDeque;
use std::sync::Arc;

use super::history::StoreEvent;
use super::{Store, StoreError};

/// A stream of store changes for one reader. Readers share the events; a
/// reader that falls behind the history window gets `Gone` and must re-list.
pub struct Subscription {
    store: Store,
    cursor: u64,
    changed: tokio::sync::watch::Receiver<u64>,
    buffer: VecDeque<Arc<StoreEvent>>,
}

impl Subscription {
    /// A reader positioned after `cursor`.
    pub(super) fn new(
        store: Store,
        cursor: u64,
        changed: tokio::sync::watch::Receiver<u64>,
    ) -> Subscription {
        Subscription {
            store,
            cursor,
            changed,
            buffer: VecDeque::new(),
        }
    }

    /// The resourceVersion of the last event handed out (or the start point).
    pub fn resource_version(&self) -> u64 {
        self.cursor
    }

    /// The next change, waiting for one if needed. `Err(Gone)` means this
    /// reader fell behind the history window; re-list and subscribe again.
    pub async fn recv(&mut self) -> Result<Arc<StoreEvent>, StoreError> {
        loop {
            if let Some(event) = self.buffer.pop_front() {
                return Ok(event);
            }
            let batch = self.next_batch().await?;
            self.buffer.extend(batch);
        }
    }

    /// Every change not yet seen (at least one), waiting if there is none.
    pub async fn next_batch(&mut self) -> Result<Vec<Arc<StoreEvent>>, StoreError> {
        if !self.buffer.is_empty() {
            return Ok(self.buffer.drain(..).collect());
        }
        loop {
            let batch = self.try_batch()?;
            if !batch.is_empty() {
                return Ok(batch);
            }
            if self.changed.changed().await.is_err() {
                // The store is gone; nothing will ever change again.
                return std::future::pending().await;
            }
        }
    }

    /// Changes not yet seen, without waiting (possibly none).
    pub fn try_batch(&mut self) -> Result<Vec<Arc<StoreEvent>>, StoreError> {
        // Mark the notification seen before reading, so a write racing with
        // this read still wakes the next `changed()`.
        self.changed.borrow_and_update();
        let state = self.store.read();
        let oldest = state.history.oldest_replayable();
        let batch = state.history.since(self.cursor).ok_or(StoreError::Gone {
            requested: self.cursor,
            oldest,
        })?;
        if let Some(last) = batch.last() {
            self.cursor = last.resource_version;
        }
        Ok(batch)
    }
}
