//! The headless executor of rollout runs and the other async flows behind
//! the commands: advance (and wait), runs (auto-advance, an OnDelete
//! rollback's node moves) to their end, pause and resume. A run's every step
//! is decided by [`crate::ops::run::Run`]; this module only executes its
//! writes through the one [`Executor`], in order, never retrying a delete, and
//! prints its words. A 409 on a state write re-reads and decides again (at
//! most a few times) because the decision itself is redone from fresh data.

use std::time::Duration;

use crate::ops::advance::{AdvanceTarget, InFlight, Victim, choose, delete_requests};
use crate::ops::auto::{AutoPolicy, AutoRun, Step};
use crate::ops::error::OpsError;
use crate::ops::follow::Follower;
use crate::ops::interrupt::Interrupt;
use crate::ops::journal_action::JournalAction;
use crate::ops::run::settings::ensure_advance_by_hand;
use crate::ops::run::{Run, RunEnd, Started, Turn, words};
use crate::ops::shared_budget::SharedBudget;
use crate::ops::snapshot::Snapshot;
use crate::ops::write::{Executor, Outcome, Write, WriteRequest};

/// One step of a long headless run, for progress lines (stderr) or JSON lines.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// When.
    pub time: jiff::Timestamp,
    /// `start`, `delete`, `waiting`, `passed`, `pause`, `done`, `takeover`, `retry`.
    pub event: &'static str,
    /// The node, when the step is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The revision the node moves from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_from: Option<i64>,
    /// The revision it moves to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_to: Option<i64>,
    /// The step in words (API text sanitised by the printer).
    pub message: String,
}

impl Progress {
    /// A progress line at `now`.
    pub fn new(event: &'static str, node: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            time: crate::clock::now(),
            event,
            node: node.map(str::to_owned),
            revision_from: None,
            revision_to: None,
            message: message.into(),
        }
    }
}

/// What a long run needs besides its settings: the writer, the live view, the
/// process's one interrupt flag, and where progress goes.
pub struct RunContext<'a> {
    /// The one writer.
    pub executor: &'a Executor,
    /// The live view of the DaemonSet.
    pub follower: &'a Follower,
    /// Set by the first Ctrl-C/SIGTERM.
    pub interrupt: &'a Interrupt,
    /// Receives one line per step.
    pub progress: &'a (dyn Fn(Progress) + Send + Sync),
    /// A limit shared with other runs, reserved before each batch (a fleet
    /// run's budget); `None` for a run on its own.
    pub budget: Option<&'a dyn SharedBudget>,
}

/// Deletes the chosen pods one by one, stopping at the first refusal; returns
/// the nodes now in flight.
pub async fn delete_victims(
    executor: &Executor,
    snapshot: &Snapshot<'_>,
    victims: &[Victim],
    action: JournalAction,
    preempts: &[(String, String)],
) -> Result<Vec<InFlight>, OpsError> {
    let revision_to = snapshot.index().current().map(|c| c.number);
    let mut flights = Vec::new();
    let mut requests = delete_requests(&snapshot.target(), victims, revision_to, action);
    crate::ops::run::fit::note_preemptions(&mut requests, preempts);
    for (victim, request) in victims.iter().zip(requests) {
        executor.run(&request).await?;
        flights.push(InFlight {
            victim: victim.clone(),
            started: crate::clock::now(),
            new_pod_uid: None,
        });
    }
    Ok(flights)
}

/// `rollcall advance`: deletes the old pods on the chosen nodes; with `wait`,
/// follows the replacements until Ready and available (or a failure).
pub async fn advance(
    executor: &Executor,
    snapshot: &Snapshot<'_>,
    target: &AdvanceTarget,
    preempts: &[(String, String)],
) -> Result<Vec<InFlight>, OpsError> {
    let state = snapshot.state()?;
    ensure_advance_by_hand(snapshot, &state)?;
    let index = snapshot.index();
    let rows = snapshot.rows(&index, crate::clock::now());
    let no_exclusion = std::collections::BTreeSet::new();
    let plan = snapshot.plan_for(&rows, &state, target, &no_exclusion, false)?;
    let victims = choose(&plan, target, &no_exclusion)?;
    delete_victims(
        executor,
        snapshot,
        &victims,
        JournalAction::Advance,
        preempts,
    )
    .await
}

/// The gate for nodes advanced by hand: one batch, no soak, Ready within
/// `timeout` (`advance --wait` and the console's `n` follow nodes with it).
pub fn follow_policy(timeout: Duration) -> AutoPolicy {
    AutoPolicy {
        batch: 1,
        soak: Duration::ZERO,
        timeout,
    }
}

/// Follows nodes in flight until every replacement is Ready and available
/// (`Ok`), or one fails (`Err((node, reason))`).
pub async fn follow_flights(
    follower: &Follower,
    flights: Vec<InFlight>,
    timeout: Duration,
) -> Result<Result<(), (String, String)>, OpsError> {
    let mut run = AutoRun::new(follow_policy(timeout)).with_fresh_reads();
    run.adopt(flights);
    loop {
        let now = crate::clock::now();
        let step = follower
            .decide(|snapshot| {
                let index = snapshot.index();
                let rows = snapshot.rows(&index, now);
                let min_ready = crate::engine::coverage::min_ready_seconds(&snapshot.ds);
                Ok(run.judge_only(&|node| rows.fresh(node), min_ready, now))
            })
            .await?;
        match step {
            None => return Ok(Ok(())),
            Some(Step::Pause { node, reason }) => return Ok(Err((node, reason))),
            Some(Step::Verify { node }) => match follower.read_pods_on(&node).await {
                Ok(()) => run.verified(&node),
                // No verdict: wait longer and read again.
                Err(_) => run.read_failed(&node, crate::clock::now()),
            },
            Some(Step::Wait { wake_at, .. }) => follower.changed_or(wake_at).await,
            Some(_) => follower.changed_or(None).await,
        }
    }
}

/// Executes a started run to its end: the start write, then each turn the
/// run decides, then the write that records the end. Every exit path leaves
/// the stored state consistent: idle, or paused with the reason (an error
/// pauses with the error, and is returned).
pub async fn run(ctx: &RunContext<'_>, run: Run, started: Started) -> Result<RunEnd, OpsError> {
    // This executor can read past the watch: a timeout is confirmed first.
    let mut run = run.with_fresh_reads();
    for note in &started.notes {
        let kind = if note == crate::ops::run::fit::UNKNOWN_FIT {
            "note"
        } else {
            "takeover"
        };
        (ctx.progress)(Progress::new(kind, None, note.clone()));
    }
    if let Err(err) = write_recorded(ctx, &started.write).await {
        // The start may be on the DaemonSet but unseen: pause it rather than
        // leave a run marked as going that nothing drives.
        if matches!(err, OpsError::Unechoed { .. }) {
            stop_on_error(ctx, &run, &err).await;
        }
        return Err(err);
    }
    let end = match turns(ctx, &mut run).await {
        Ok(end) => end,
        Err(err) => {
            stop_on_error(ctx, &run, &err).await;
            return Err(err);
        }
    };
    close(ctx, &run, &end).await?;
    Ok(end)
}

/// Executes the run's turns until it ends, or an interrupt comes (between
/// steps only: a delete and its journal line are never split).
async fn turns(ctx: &RunContext<'_>, run: &mut Run) -> Result<RunEnd, OpsError> {
    let dry_run = ctx.executor.dry_run().is_some();
    let mut said = std::collections::BTreeMap::<Option<String>, String>::new();
    loop {
        if ctx.interrupt.requested() {
            if let Some(reason) = ctx.interrupt.halt_reason() {
                return Ok(RunEnd::Halted { reason });
            }
            return Ok(RunEnd::Interrupted {
                by: ctx.executor.actor().to_owned(),
                how: "Ctrl-C or SIGTERM",
            });
        }
        let now = crate::clock::now();
        // Decided under the cache lock from the follower's rows (kept up to
        // date change by change); the writes and waits come after.
        let turn = ctx
            .follower
            .decide(|snapshot| run.turn(snapshot, now))
            .await?;
        match turn {
            Turn::Wait { wake_at, waiting } => {
                // One line when what a node waits for changes, not on every wake.
                for (node, text) in waiting.into_iter().take(3) {
                    if said.get(&node) != Some(&text) {
                        (ctx.progress)(Progress::new("waiting", node.as_deref(), text.clone()));
                        said.insert(node, text);
                    }
                }
                wait_or_interrupt(ctx, wake_at).await;
            }
            Turn::Renewed(heartbeat) => write_recorded(ctx, &heartbeat).await?,
            Turn::Verify { node } => {
                // A failed read is not a verdict: the wait is extended and
                // the node read again, never failed on a view that may be stale.
                match ctx.follower.read_pods_on(&node).await {
                    Ok(()) => run.verified(&node),
                    Err(err) => {
                        (ctx.progress)(Progress::new(
                            "retry",
                            Some(&node),
                            format!("could not read the node's pods afresh: {err}"),
                        ));
                        run.read_failed(&node, crate::clock::now());
                    }
                }
            }
            Turn::BatchChosen { record, deletes } => {
                write_recorded(ctx, &record).await?;
                if let Some(budget) = ctx.budget.filter(|_| !dry_run) {
                    // A batch is chosen only once the one before passed.
                    budget.settled();
                    match reserve(ctx, run, budget, deletes.len()).await? {
                        Reserved::Yes => {}
                        // The loop's top ends the run (interrupted or halted).
                        Reserved::Interrupted => continue,
                        Reserved::Ended(end) => return Ok(end),
                    }
                }
                let mut sent = 0;
                for (victim, request) in &deletes {
                    say_preemption(ctx, victim, request, dry_run);
                    let result = ctx.executor.run(request).await.map(|_| ());
                    say_delete(ctx, run, victim, request, result.as_ref(), dry_run);
                    run.deleted(&victim.node, result.as_ref().copied(), crate::clock::now());
                    if result.is_err() {
                        break;
                    }
                    sent += 1;
                }
                // Only the nodes whose pods were deleted are at risk.
                if let Some(budget) = ctx.budget.filter(|_| !dry_run && sent < deletes.len()) {
                    budget.unreserve(deletes.len() - sent);
                }
                // A dry run shows the first batch: what follows waits for the
                // cluster to react, which it never will.
                if dry_run {
                    return Ok(RunEnd::DryRun);
                }
            }
            Turn::Finished(end) => {
                if let (Some(budget), RunEnd::Completed { .. }) = (ctx.budget, &end) {
                    budget.settled();
                }
                return Ok(end);
            }
        }
    }
}

/// The answer of [`reserve`].
enum Reserved {
    /// The batch may start.
    Yes,
    /// A stop was asked for while waiting: no delete.
    Interrupted,
    /// The run ended while waiting (someone paused it).
    Ended(RunEnd),
}

/// How often a batch waiting for room in a shared budget asks again.
const RESERVE_POLL: Duration = Duration::from_millis(250);

/// Waits for room for a batch of `nodes` in `budget`, keeping the run's
/// lease renewed meanwhile (its turns only renew or wait while its batch
/// awaits its deletes) and ending if someone pauses it.
async fn reserve(
    ctx: &RunContext<'_>,
    run: &mut Run,
    budget: &dyn SharedBudget,
    nodes: usize,
) -> Result<Reserved, OpsError> {
    let mut said = false;
    loop {
        if ctx.interrupt.requested() {
            return Ok(Reserved::Interrupted);
        }
        if budget.try_reserve(nodes) {
            return Ok(Reserved::Yes);
        }
        if !said {
            let text = format!("waiting for room in the shared budget for {nodes} node(s)");
            (ctx.progress)(Progress::new("waiting", None, text));
            said = true;
        }
        tokio::select! {
            () = tokio::time::sleep(RESERVE_POLL) => {}
            () = ctx.interrupt.wait() => {}
        }
        let now = crate::clock::now();
        match ctx
            .follower
            .decide(|snapshot| run.turn(snapshot, now))
            .await?
        {
            Turn::Renewed(heartbeat) => write_recorded(ctx, &heartbeat).await?,
            Turn::Finished(end) => return Ok(Reserved::Ended(end)),
            _ => {}
        }
    }
}

/// Before a delete whose replacement preempts workloads: which (the
/// delete's journal record carries the same words).
fn say_preemption(ctx: &RunContext<'_>, victim: &Victim, request: &WriteRequest, dry_run: bool) {
    let Some(preempts) = crate::ops::run::fit::preemption_of(request) else {
        return;
    };
    let text = if dry_run {
        format!("would {preempts}")
    } else {
        preempts.to_owned()
    };
    (ctx.progress)(Progress::new("preempt", Some(&victim.node), text));
}

/// The progress line of one delete of a batch.
fn say_delete(
    ctx: &RunContext<'_>,
    run: &Run,
    victim: &Victim,
    request: &WriteRequest,
    result: Result<&(), &OpsError>,
    dry_run: bool,
) {
    let text = words::delete_text(run.label(), victim, result.copied(), dry_run);
    let mut line = Progress::new("delete", Some(&victim.node), text);
    line.revision_from = victim.revision_from;
    line.revision_to = request.record.revision_to;
    (ctx.progress)(line);
}

/// Records the end the run decided (re-decided on a fresh read after a conflict).
async fn close(ctx: &RunContext<'_>, run: &Run, end: &RunEnd) -> Result<(), OpsError> {
    if ctx.executor.dry_run().is_some() {
        return Ok(());
    }
    let result = write_with_retries(
        ctx.follower,
        |snapshot| run.closing(end, snapshot, crate::clock::now()),
        ctx.executor,
    )
    .await;
    match result {
        // The end is written and nothing is decided after it: a watch slow to
        // show it does not make the run fail.
        Err(OpsError::Unechoed { .. }) => Ok(()),
        other => other,
    }
}

/// Pauses the run with the error as its reason; a failure to record that is
/// reported, not raised (the error itself is what the caller returns).
async fn stop_on_error(ctx: &RunContext<'_>, run: &Run, err: &OpsError) {
    let end = RunEnd::Failed {
        error: err.to_string(),
    };
    if let Err(pause_err) = close(ctx, run, &end).await {
        (ctx.progress)(Progress::new(
            "error",
            None,
            format!("could not record the stop: {pause_err}"),
        ));
    }
}

/// Waits for a change, `wake_at`, or an interrupt.
async fn wait_or_interrupt(ctx: &RunContext<'_>, wake_at: Option<jiff::Timestamp>) {
    tokio::select! {
        () = ctx.follower.changed_or(wake_at) => {}
        () = ctx.interrupt.wait() => {}
    }
}

/// Writes a run's own DaemonSet write (its start, heartbeat, batch): only the
/// keys that changed are sent, so others' keys survive; the patch is
/// idempotent, so a transient failure is retried for up to
/// [`STATE_RETRY_FOR`]; then the watch must show it before the next decision
/// (read-your-writes).
async fn write_recorded(ctx: &RunContext<'_>, request: &WriteRequest) -> Result<(), OpsError> {
    if let Write::PatchState { before, after, .. } = &request.write
        && before == after
    {
        return Ok(());
    }
    let mut retry = TransientRetry::new();
    let action = request.record.action.as_str();
    loop {
        match ctx.executor.run(request).await {
            Ok(Outcome::DaemonSetPatched {
                resource_version: Some(written),
            }) => return ctx.follower.reflects(&written, ECHO_PATIENCE).await,
            Ok(_) => return Ok(()),
            // A strategy switch carries a resourceVersion precondition: not resent.
            Err(err)
                if matches!(request.write, Write::PatchState { .. })
                    && retry.wait(&err, action, Some(ctx.progress)).await => {}
            Err(err) => return Err(err),
        }
    }
}

/// How a state write waits out a failure that may pass by itself
/// (unreachable, 429, 5xx, answer lost): doubling waits from 250 ms up to
/// 5 s, for at most [`STATE_RETRY_FOR`]. The state patches are idempotent,
/// so the same request is sent again.
struct TransientRetry {
    deadline: tokio::time::Instant,
    backoff: Duration,
}

impl TransientRetry {
    fn new() -> Self {
        TransientRetry {
            deadline: tokio::time::Instant::now() + STATE_RETRY_FOR,
            backoff: Duration::from_millis(250),
        }
    }

    /// Waits before the next try when `err` may pass and time is left;
    /// `false` when the caller should give `err` back.
    async fn wait(
        &mut self,
        err: &OpsError,
        action: &str,
        progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
    ) -> bool {
        if !err.is_transient() || tokio::time::Instant::now() + self.backoff >= self.deadline {
            return false;
        }
        let text = format!(
            "{action}: {err}; retrying in {}",
            humantime::format_duration(self.backoff)
        );
        if let Some(progress) = progress {
            progress(Progress::new("retry", None, text));
        } else {
            tracing::warn!("{text}");
        }
        tokio::time::sleep(self.backoff).await;
        self.backoff = (self.backoff * 2).min(Duration::from_secs(5));
        true
    }
}

/// How long a run waits for the watch to show its own state write.
pub const ECHO_PATIENCE: Duration = Duration::from_secs(30);

/// How long a state patch is retried through transient failures.
pub const STATE_RETRY_FOR: Duration = Duration::from_secs(30);

/// Runs a state write decided from a snapshot; on 409 (the DaemonSet changed
/// since it was read) re-reads and decides again, up to three times; through
/// a failure that may pass (a burst of 5xx) sends it again, as
/// [`write_state`] does (a pause that records why a run stopped must not be
/// lost to the burst that stopped it).
pub async fn write_with_retries<F>(
    follower: &Follower,
    decide: F,
    executor: &Executor,
) -> Result<(), OpsError>
where
    F: Fn(&Snapshot<'_>) -> Result<Option<WriteRequest>, OpsError>,
{
    let mut last = None;
    let mut retry = TransientRetry::new();
    let say = |progress: Progress| follower.notice(&progress.message);
    for _ in 0..3 {
        let snapshot = follower.snapshot().await?;
        let Some(request) = decide(&snapshot)? else {
            return Ok(());
        };
        let mut result = executor.run(&request).await;
        while let Err(err) = &result {
            if !retry
                .wait(err, request.record.action.as_str(), Some(&say))
                .await
            {
                break;
            }
            result = executor.run(&request).await;
        }
        match result {
            Ok(_) => return Ok(()),
            Err(err @ OpsError::Conflict { .. }) => {
                last = Some(err);
                follower
                    .changed_or(Some(
                        crate::clock::now() + jiff::SignedDuration::from_secs(1),
                    ))
                    .await;
            }
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| OpsError::Invalid("conflict".to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error() -> OpsError {
        OpsError::Transient {
            attempt: "patch daemonsets.apps kube-system/agent".to_owned(),
            message: "injected fault (500 InternalError)".to_owned(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_state_write_waits_out_a_burst_of_server_errors_then_gives_up() {
        let mut retry = TransientRetry::new();
        let started = tokio::time::Instant::now();
        let mut waits = 0;
        while retry.wait(&server_error(), "auto-pause", None).await {
            waits += 1;
        }
        // 0.25 + 0.5 + 1 + 2 + 4 + 5 + 5 + 5 + 5 s (27.75): one more would pass 30 s.
        assert_eq!(waits, 9);
        assert!(started.elapsed() <= STATE_RETRY_FOR);
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_given_back_at_once() {
        let mut retry = TransientRetry::new();
        let conflict = OpsError::Conflict {
            what: "daemonset kube-system/agent".to_owned(),
            message: "the object has been modified".to_owned(),
        };
        assert!(!retry.wait(&conflict, "auto-pause", None).await);
        assert!(
            !retry
                .wait(&OpsError::Invalid("not paused".to_owned()), "resume", None)
                .await
        );
    }
}
