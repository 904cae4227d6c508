//! The async flows behind the headless commands: advance (and wait), auto-advance
//! to completion or an automatic pause, rollback (and move OnDelete nodes back),
//! pause and resume. Each reads a snapshot, asks the pure modules what to do,
//! and runs their writes through the one [`Executor`], in order, never retrying
//! a delete. A 409 on a state write re-reads and decides again (at most a few
//! times) because the decision itself is redone from fresh data.

use std::time::Duration;

use crate::engine::rollout::rollback_order;
use crate::ops::advance::{AdvanceTarget, InFlight, Victim, choose, delete_requests};
use crate::ops::auto::{AutoPolicy, AutoRun, Step};
use crate::ops::decide::{Next, next_move};
use crate::ops::error::OpsError;
use crate::ops::follow::Follower;
use crate::ops::interrupt::Interrupt;
use crate::ops::pause::{PauseRequest, pause};
use crate::ops::preflight::{FailingNode, check_canary_selector, failing_text, failing_updated};
use crate::ops::snapshot::{Snapshot, Target};
use crate::ops::state::{LEASE_RENEW, Mode, RolloutState};
use crate::ops::write::{Executor, Outcome, Record, Write, WriteRequest};

/// How an auto-advance (or an OnDelete rollback) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoEnd {
    /// Every node the plan could move passed its gate. `left` names the nodes
    /// the run was meant to move but could not (cordoned, NotReady), with why:
    /// a rollback that leaves nodes on the bad revision is incomplete.
    Completed {
        /// Nodes moved by this run.
        advanced: usize,
        /// Nodes left behind, with the reason.
        left: Vec<(String, String)>,
    },
    /// A gate failed or a delete was refused; the rollout is now paused.
    Paused {
        /// The node.
        node: String,
        /// Why.
        reason: String,
    },
    /// Someone else paused the rollout.
    Stopped {
        /// Who paused it.
        by: String,
    },
    /// Ctrl-C or SIGTERM: the run stopped after its current step and paused the rollout.
    Interrupted {
        /// Who interrupted (the local user).
        by: String,
    },
}

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
            time: jiff::Timestamp::now(),
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
}

/// Refuses to act on a paused rollout or on a revision view the controller has
/// not caught up with (acting then could delete pods that are already current).
pub fn ensure_actionable(snapshot: &Snapshot<'_>, state: &RolloutState) -> Result<(), OpsError> {
    if let Some(pause) = &state.pause {
        return Err(OpsError::Invalid(format!(
            "the rollout is paused by {}; resume it first",
            pause.by
        )));
    }
    if !snapshot.index().current_matches_template() {
        return Err(OpsError::Invalid(
            "the controller has not yet recorded the current template as a revision; try again in a moment".to_owned(),
        ));
    }
    Ok(())
}

/// Deletes the chosen pods one by one, stopping at the first refusal; returns
/// the nodes now in flight.
pub async fn delete_victims(
    executor: &Executor,
    snapshot: &Snapshot<'_>,
    victims: &[Victim],
    action: &str,
) -> Result<Vec<InFlight>, OpsError> {
    let revision_to = snapshot.index().current().map(|c| c.number);
    let mut flights = Vec::new();
    for (victim, request) in victims.iter().zip(delete_requests(
        &snapshot.target(),
        victims,
        revision_to,
        action,
    )) {
        executor.run(&request).await?;
        flights.push(InFlight {
            victim: victim.clone(),
            started: jiff::Timestamp::now(),
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
) -> Result<Vec<InFlight>, OpsError> {
    let state = snapshot.state()?;
    ensure_actionable(snapshot, &state)?;
    let index = snapshot.index();
    let rows = snapshot.rows(&index, jiff::Timestamp::now());
    let no_exclusion = std::collections::BTreeSet::new();
    let plan = snapshot.plan_for(&rows, &state, target, &no_exclusion, false)?;
    let victims = choose(&plan, target, &no_exclusion)?;
    delete_victims(executor, snapshot, &victims, "advance").await
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
    let mut run = AutoRun::new(follow_policy(timeout));
    run.adopt(flights);
    loop {
        let now = jiff::Timestamp::now();
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
            Some(Step::Wait { wake_at, .. }) => follower.changed_or(wake_at).await,
            Some(_) => follower.changed_or(None).await,
        }
    }
}

/// Settings of an auto run: everything is given for this run, nothing is
/// inherited from the annotations an earlier run left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoSettings {
    /// Batch size, soak, timeout.
    pub policy: AutoPolicy,
    /// The canary selector of this run (`None`: no canary stage by selector).
    pub canary_selector: Option<String>,
    /// For a rollback: the nodes to move back, in order, and the revision moved to.
    pub rollback: Option<(Vec<String>, i64)>,
    /// Start although pods already on the target revision are failing.
    pub despite_failing: bool,
    /// Also move cordoned nodes.
    pub include_cordoned: bool,
}

/// Checks a run may start from `snapshot` at `now`: not paused (unless it is a
/// rollback), no live run elsewhere, a canary selector that matches, and no
/// failing updated pods (unless overridden). Shared by the console's `A`.
pub fn check_start(
    snapshot: &Snapshot<'_>,
    state: &RolloutState,
    settings: &AutoSettings,
    now: jiff::Timestamp,
) -> Result<(), StartRefusal> {
    // A rollback supersedes a pause of the rollout it undoes; auto-advance does not.
    if let (Some(pause), None) = (&state.pause, &settings.rollback) {
        return Err(StartRefusal::Invalid(OpsError::Invalid(format!(
            "the rollout is paused by {}; resume it first",
            pause.by
        ))));
    }
    if let Some(running) = state.run_in_progress(now) {
        return Err(StartRefusal::Invalid(OpsError::Invalid(running)));
    }
    let index = snapshot.index();
    let rows = snapshot.rows(&index, now);
    if let Some(text) = &settings.canary_selector {
        check_canary_selector(text, &rows, snapshot.nodes()).map_err(StartRefusal::Invalid)?;
    }
    if settings.rollback.is_none() && !settings.despite_failing {
        let failing = failing_updated(&rows);
        if !failing.is_empty() {
            return Err(StartRefusal::Failing(failing));
        }
    }
    Ok(())
}

/// Why a run may not start.
#[derive(Debug)]
pub enum StartRefusal {
    /// Bad settings or state (exit 2).
    Invalid(OpsError),
    /// Pods already on the target revision are failing (exit 1).
    Failing(Vec<FailingNode>),
}

impl std::fmt::Display for StartRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(err) => write!(f, "{err}"),
            Self::Failing(nodes) => f.write_str(&failing_text(nodes, 10)),
        }
    }
}

/// Runs auto-advance until completion, an automatic pause, a pause by someone
/// else, or an interrupt. Every exit path leaves the stored state consistent:
/// idle, or paused with the reason (an error pauses with the error).
pub async fn auto(ctx: &RunContext<'_>, settings: &AutoSettings) -> Result<AutoEnd, OpsError> {
    let snapshot = ctx.follower.snapshot().await?;
    let state = snapshot.state()?;
    let now = jiff::Timestamp::now();
    check_start(&snapshot, &state, settings, now).map_err(|refusal| match refusal {
        StartRefusal::Invalid(err) => err,
        StartRefusal::Failing(nodes) => OpsError::Invalid(failing_text(&nodes, 10)),
    })?;
    if let Some(text) = state.run_owner(now).expired_text() {
        (ctx.progress)(Progress::new(
            "takeover",
            None,
            format!("taking over: {text}"),
        ));
    }
    let started = start_state(&state, settings, ctx.executor.actor(), now);
    match write_state(
        ctx,
        &snapshot.target(),
        &state,
        &started,
        "auto-start",
        None,
    )
    .await
    {
        // The start is on the DaemonSet but unseen: pause it rather than leave
        // a run marked as going that nothing drives.
        Err(err @ OpsError::Unechoed { .. }) => {
            stop_on_error(ctx, &err).await;
            return Err(err);
        }
        other => other?,
    }
    let mut run = AutoRun::new(settings.policy);
    if let Some((order, _)) = &settings.rollback {
        run = run.only(order.clone());
    }
    let end = match auto_loop(ctx, &mut run, settings).await {
        Ok(end) => end,
        Err(err) => {
            stop_on_error(ctx, &err).await;
            return Err(err);
        }
    };
    finish(ctx, &end).await?;
    Ok(end)
}

/// Pauses the run with the error as its reason; a failure to record that is
/// reported, not raised (the error itself is what the caller returns).
async fn stop_on_error(ctx: &RunContext<'_>, err: &OpsError) {
    let reason = format!("stopped by an error: {err}");
    if let Err(pause_err) = pause_run(ctx, None, &reason).await {
        (ctx.progress)(Progress::new(
            "error",
            None,
            format!("could not record the stop: {pause_err}"),
        ));
    }
}

fn start_state(
    state: &RolloutState,
    settings: &AutoSettings,
    actor: &str,
    now: jiff::Timestamp,
) -> RolloutState {
    let policy = settings.policy;
    RolloutState {
        mode: if settings.rollback.is_some() {
            Mode::RollingBack
        } else {
            Mode::Auto
        },
        batch: Some(u32::try_from(policy.batch).unwrap_or(u32::MAX)),
        soak: Some(policy.soak),
        timeout: Some(policy.timeout),
        canary_selector: settings.canary_selector.clone(),
        rollback_to: settings.rollback.as_ref().map(|(_, to)| *to),
        // A rollback supersedes a pause of the rollout it undoes.
        pause: if settings.rollback.is_some() {
            None
        } else {
            state.pause.clone()
        },
        batch_nodes: Vec::new(),
        heartbeat: Some(now),
        ..state.clone()
    }
    .touched(actor, now)
}

/// Renews the run's heartbeat when it is due; returns when the next is due.
async fn renew_lease(
    ctx: &RunContext<'_>,
    target: &Target,
    state: &RolloutState,
    now: jiff::Timestamp,
) -> Result<jiff::Timestamp, OpsError> {
    let renew = jiff::SignedDuration::try_from(LEASE_RENEW).unwrap_or_default();
    let last = state.heartbeat.unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    if now.duration_since(last) < renew {
        return Ok(last + renew);
    }
    let renewed = RolloutState {
        heartbeat: Some(now),
        ..state.clone()
    };
    write_state(ctx, target, state, &renewed, "heartbeat", None).await?;
    Ok(now + renew)
}

async fn auto_loop(
    ctx: &RunContext<'_>,
    run: &mut AutoRun,
    settings: &AutoSettings,
) -> Result<AutoEnd, OpsError> {
    let mut said = std::collections::BTreeMap::<String, String>::new();
    loop {
        // Between steps only: a delete and its journal line are never split.
        if ctx.interrupt.requested() {
            return Ok(AutoEnd::Interrupted {
                by: ctx.executor.actor().to_owned(),
            });
        }
        let now = jiff::Timestamp::now();
        // Decided under the cache lock from the follower's rows (kept up to
        // date change by change); the writes and waits come after.
        let (target, revision_to, state, next) = ctx
            .follower
            .decide(|snapshot| {
                let state = snapshot.state()?;
                let next = next_move(run, snapshot, &state, settings, now)?;
                let revision_to = snapshot.index().current().map(|c| c.number);
                Ok((snapshot.target(), revision_to, state, next))
            })
            .await?;
        if let Next::Stopped { by } = next {
            return Ok(AutoEnd::Stopped { by });
        }
        let next_renewal = renew_lease(ctx, &target, &state, now).await?;
        match next {
            Next::Stopped { .. } => {}
            Next::Delete(victims) => {
                let batch = Batch {
                    target: &target,
                    revision_to,
                    victims: &victims,
                };
                delete_batch(ctx, run, settings, &state, &batch).await?;
            }
            Next::Wait { wake_at, waiting } => {
                // One line when what a node waits for changes, not on every wake.
                for (node, what) in waiting.iter().take(3) {
                    let text = waiting_text(what);
                    if said.get(node) != Some(&text) {
                        (ctx.progress)(Progress::new("waiting", Some(node), text.clone()));
                        said.insert(node.clone(), text);
                    }
                }
                let wake = wake_at.map_or(next_renewal, |w| w.min(next_renewal));
                wait_or_interrupt(ctx, Some(wake)).await;
            }
            Next::Pause { node, reason } => return Ok(AutoEnd::Paused { node, reason }),
            Next::Completed { advanced, left } => {
                return Ok(AutoEnd::Completed { advanced, left });
            }
        }
    }
}

/// A batch the run decided to delete: the DaemonSet, the revision its nodes
/// move to, and their pods.
struct Batch<'a> {
    target: &'a Target,
    revision_to: Option<i64>,
    victims: &'a [Victim],
}

/// Records the batch, then deletes its pods one by one (each journalled
/// before the next), reporting each result to the run; stops at a refusal.
async fn delete_batch(
    ctx: &RunContext<'_>,
    run: &mut AutoRun,
    settings: &AutoSettings,
    state: &RolloutState,
    batch: &Batch<'_>,
) -> Result<(), OpsError> {
    let Batch {
        target,
        revision_to,
        victims,
    } = *batch;
    let recorded = RolloutState {
        batch_nodes: victims.iter().map(|v| v.node.clone()).collect(),
        ..state.clone()
    };
    write_state(ctx, target, state, &recorded, "batch", None).await?;
    let (action, verb) = if settings.rollback.is_some() {
        ("rollback", "moving back")
    } else {
        ("auto-advance", "advancing")
    };
    for (victim, request) in
        victims
            .iter()
            .zip(delete_requests(target, victims, revision_to, action))
    {
        let result = ctx.executor.run(&request).await;
        let mut line = Progress::new(
            "delete",
            Some(&victim.node),
            match &result {
                Ok(_) => format!("{verb}: deleted pod {}", victim.pod),
                Err(err) => format!("{verb}: delete of pod {} failed: {err}", victim.pod),
            },
        );
        line.revision_from = victim.revision_from;
        line.revision_to = revision_to;
        (ctx.progress)(line);
        run.deleted(
            &victim.node,
            result.as_ref().map(|_| ()),
            jiff::Timestamp::now(),
        );
        if result.is_err() {
            break;
        }
    }
    Ok(())
}

fn waiting_text(what: &crate::engine::rollout::WaitingFor) -> String {
    use crate::engine::rollout::WaitingFor;
    match what {
        WaitingFor::ReplacementPod => {
            "waiting for the controller to create the replacement pod".to_owned()
        }
        WaitingFor::Ready { deadline } => {
            format!("waiting for Ready (until {})", second(*deadline))
        }
        WaitingFor::Available { at } => {
            format!("waiting for minReadySeconds (until {})", second(*at))
        }
        WaitingFor::Soak { until } => format!("soaking (until {})", second(*until)),
    }
}

fn second(at: jiff::Timestamp) -> jiff::Timestamp {
    at.round(jiff::Unit::Second).unwrap_or(at)
}

/// Waits for a change, `wake_at`, or an interrupt.
async fn wait_or_interrupt(ctx: &RunContext<'_>, wake_at: Option<jiff::Timestamp>) {
    tokio::select! {
        () = ctx.follower.changed_or(wake_at) => {}
        () = ctx.interrupt.wait() => {}
    }
}

/// Pauses the rollout with `reason` (an automatic stop), unless someone else
/// already paused it (their pause and its reason stand).
async fn pause_run(ctx: &RunContext<'_>, node: Option<&str>, reason: &str) -> Result<(), OpsError> {
    let snapshot = ctx.follower.snapshot().await?;
    if snapshot.state()?.is_paused() {
        return Ok(());
    }
    let request = PauseRequest {
        by: format!("rollcall ({})", ctx.executor.actor()),
        reason: Some(match node {
            Some(node) => format!("node {node}: {reason}"),
            None => reason.to_owned(),
        }),
        node: node.map(str::to_owned),
    };
    write_with_retries(
        ctx.follower,
        |snap| pause(snap, &request, jiff::Timestamp::now()),
        ctx.executor,
    )
    .await
}

/// Records the end: an automatic pause (who, why, which node), an interrupt
/// (paused, "interrupted by …"), or back to idle.
async fn finish(ctx: &RunContext<'_>, end: &AutoEnd) -> Result<(), OpsError> {
    let snapshot = ctx.follower.snapshot().await?;
    let state = snapshot.state()?;
    match end {
        // Someone else paused meanwhile: their pause (and its reason) stands.
        AutoEnd::Paused { .. } | AutoEnd::Interrupted { .. } if state.is_paused() => Ok(()),
        AutoEnd::Paused { node, reason } => pause_run(ctx, Some(node), reason).await,
        AutoEnd::Interrupted { by } => pause_run(ctx, None, &format!("interrupted by {by}")).await,
        AutoEnd::Completed { .. } | AutoEnd::Stopped { .. } => {
            let idle = RolloutState {
                mode: Mode::Idle,
                batch_nodes: Vec::new(),
                rollback_to: None,
                heartbeat: None,
                ..state.clone()
            }
            .touched(ctx.executor.actor(), jiff::Timestamp::now());
            let action = if matches!(end, AutoEnd::Completed { .. }) {
                "auto-done"
            } else {
                "auto-stopped"
            };
            match write_state(ctx, &snapshot.target(), &state, &idle, action, None).await {
                // The end is written and nothing is decided after it: a watch
                // slow to show it does not make the run fail.
                Err(OpsError::Unechoed { .. }) => Ok(()),
                other => other,
            }
        }
    }
}

/// Writes the state keys that changed (no resourceVersion precondition: only
/// the changed keys are sent, so others' keys survive). The patch is
/// idempotent, so a transient failure (unreachable, 429, 5xx, answer lost) is
/// retried with backoff for up to [`STATE_RETRY_FOR`].
pub async fn write_state(
    ctx: &RunContext<'_>,
    target: &Target,
    before: &RolloutState,
    after: &RolloutState,
    action: &str,
    note: Option<String>,
) -> Result<(), OpsError> {
    if before == after {
        return Ok(());
    }
    let request = WriteRequest {
        write: Write::PatchState {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            before: before.clone(),
            after: after.clone(),
            resource_version: None,
        },
        record: Record {
            action: action.to_owned(),
            daemonset: target.key(),
            note,
            ..Record::default()
        },
    };
    let mut retry = TransientRetry::new();
    loop {
        match ctx.executor.run(&request).await {
            Ok(Outcome::DaemonSetPatched {
                resource_version: Some(written),
            }) => {
                // The next decision must see this write (read-your-writes).
                return ctx.follower.reflects(&written, ECHO_PATIENCE).await;
            }
            Ok(_) => return Ok(()),
            Err(err) if retry.wait(&err, action, Some(ctx.progress)).await => {}
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
    F: Fn(&Snapshot<'_>) -> Result<WriteRequest, OpsError>,
{
    let mut last = None;
    let mut retry = TransientRetry::new();
    let say = |progress: Progress| follower.notice(&progress.message);
    for _ in 0..3 {
        let snapshot = follower.snapshot().await?;
        let request = decide(&snapshot)?;
        let mut result = executor.run(&request).await;
        while let Err(err) = &result {
            if !retry.wait(err, &request.record.action, Some(&say)).await {
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
                        jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1),
                    ))
                    .await;
            }
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| OpsError::Invalid("conflict".to_owned())))
}

/// The rollback order for OnDelete: nodes running the revision being left,
/// most recently updated first.
pub fn rollback_nodes(snapshot: &Snapshot<'_>) -> Vec<String> {
    let index = snapshot.index();
    let Some(current) = index.current() else {
        return Vec::new();
    };
    let rows = snapshot.rows(&index, jiff::Timestamp::now());
    rollback_order(&rows, &current.hash)
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
