//! Where a simulated component (controller, scheduler, kubelets) does its
//! synchronous work: inline on its task (the default), or on tokio's
//! blocking pool. A rehearsal runs a whole fleet on one thread under
//! tokio's paused clock; offloaded, the members' syncs and kubelet steps of
//! one simulated instant run on the machine's other cores while the thread
//! goes on with the rest. Simulated time stays put meanwhile: the paused
//! clock does not jump ahead while a blocking task is running, so a step
//! still happens at the instant it was due.
//!
//! Offloading moves the component's state to the blocking thread and back,
//! so work is offloaded in whole batches (one instant's due steps, one batch
//! of store events), never a call at a time.

/// Inline, or on the blocking pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Offload {
    /// On the component's own task (tests, `sim`, `demo`: one order of
    /// events, every run alike).
    #[default]
    Inline,
    /// On tokio's blocking pool (a rehearsal's members).
    Blocking,
}

impl Offload {
    /// Runs `work` on `state` here or on the blocking pool, and hands the
    /// state back with the answer. A panic in `work` is the caller's panic.
    pub async fn run<S, R>(
        self,
        mut state: S,
        work: impl FnOnce(&mut S) -> R + Send + 'static,
    ) -> (S, R)
    where
        S: Send + 'static,
        R: Send + 'static,
    {
        match self {
            Offload::Inline => {
                let answer = work(&mut state);
                (state, answer)
            }
            Offload::Blocking => {
                let task = tokio::task::spawn_blocking(move || {
                    let answer = work(&mut state);
                    (state, answer)
                });
                match task.await {
                    Ok(done) => done,
                    Err(err) => std::panic::resume_unwind(err.into_panic()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_paused_clock_waits_for_offloaded_work() {
        let before = tokio::time::Instant::now();
        // A timer that would fire at once if the clock jumped while the
        // blocking task runs.
        let timer = tokio::spawn(tokio::time::sleep(Duration::from_secs(3600)));
        let (state, seen) = Offload::Blocking
            .run(0_u32, |n| {
                std::thread::sleep(Duration::from_millis(50));
                *n += 1;
                tokio::time::Instant::now()
            })
            .await;
        assert_eq!(state, 1);
        assert_eq!(seen, before, "no simulated time passed during the work");
        assert!(!timer.is_finished());
        timer.abort();
    }

    #[tokio::test]
    async fn inline_and_blocking_give_the_same_answer() {
        for offload in [Offload::Inline, Offload::Blocking] {
            let (state, answer) = offload
                .run(vec![1, 2], |v| {
                    v.push(3);
                    v.len()
                })
                .await;
            assert_eq!((state, answer), (vec![1, 2, 3], 3), "{offload:?}");
        }
    }
}
