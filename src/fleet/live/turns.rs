//! Turns at the first lists: at most [`AT_ONCE`] clusters connect and
//! list at the same time, so on a busy machine the first rows come in
//! while the rest wait, instead of every cluster sharing the cores and
//! finishing together (and every cluster's first lists decoded at once,
//! the peak of the matrix's memory). A turn ends when its row is first
//! read (live, failed, not found) or after [`HEAD_START`], whichever comes
//! first: a cluster that hangs delays the others by that much at most.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Clusters at their first lists at once.
pub const AT_ONCE: usize = 8;

/// The longest one cluster keeps its turn.
pub const HEAD_START: Duration = Duration::from_secs(2);

/// The turns, shared by every cluster's task.
#[derive(Clone, Debug)]
pub struct Turns(Arc<Semaphore>);

impl Default for Turns {
    fn default() -> Self {
        Turns(Arc::new(Semaphore::new(AT_ONCE)))
    }
}

impl Turns {
    /// Waits for a turn; it ends by [`Turn::end`] or after [`HEAD_START`].
    pub async fn take(&self) -> Turn {
        let permit = Arc::clone(&self.0).acquire_owned().await.ok();
        let turn = Turn(Arc::new(Mutex::new(permit)));
        let timed = turn.clone();
        tokio::spawn(async move {
            tokio::time::sleep(HEAD_START).await;
            timed.end();
        });
        turn
    }
}

/// A turn that ends when dropped, for a one-shot read whose lists are
/// dropped with it (`fleet status`, `fleet preflight`, `fleet plan`).
#[derive(Debug)]
pub struct Held(Turn);

impl Held {
    /// Waits for a turn of `turns`, held until dropped (or the head start).
    pub async fn take(turns: &Turns) -> Held {
        Held(turns.take().await)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// One cluster's turn (cheap to clone; ends once).
#[derive(Clone, Debug)]
pub struct Turn(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl Turn {
    /// Ends the turn: the next cluster may start.
    pub fn end(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_turn_ends_when_ended_or_after_its_head_start() {
        let turns = Turns::default();
        let mut taken = Vec::new();
        for _ in 0..AT_ONCE {
            taken.push(turns.take().await);
        }
        let started = tokio::time::Instant::now();
        let next = tokio::spawn({
            let turns = turns.clone();
            async move { turns.take().await }
        });
        taken[0].end();
        let _ninth = next.await.expect("the ninth gets a turn");
        assert_eq!(started.elapsed(), Duration::ZERO, "ended early: at once");
        // Nobody ends theirs: the tenth waits out a head start.
        let _tenth = turns.take().await;
        assert_eq!(started.elapsed(), HEAD_START);
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_turn_ends_when_dropped() {
        let turns = Turns::default();
        let mut held = Vec::new();
        for _ in 0..AT_ONCE {
            held.push(Held::take(&turns).await);
        }
        let started = tokio::time::Instant::now();
        drop(held.pop());
        let _next = Held::take(&turns).await;
        assert_eq!(started.elapsed(), Duration::ZERO);
    }
}
