//! One member cluster of a fleet run: connect (an unreachable cluster is
//! waited for, or skipped), honour a veto, resume a pause this plan's own
//! run left, record the run's identity, then the very run `rollcall auto`
//! makes — `ops::run` decided, `ops::drive` executed, its deletes journalled
//! with the context — with the fleet's shared budget reserved before each
//! batch and the fleet's stop as its interrupt. A failure spends the budget
//! and, past it, halts every member at once.

use std::sync::Arc;
use std::time::Duration;

use super::outcome::Outcome;
use super::report::Happening;
use super::shared::{MemberBudget, Shared};
use crate::cluster::connect::Connection;
use crate::fleet::waves::VETO_ANNOTATION;
use crate::model::Target;
use crate::ops::drive::{Progress, RunContext, run as execute, write_with_retries};
use crate::ops::follow::Follower;
use crate::ops::interrupt::Interrupt;
use crate::ops::pause::{PauseRequest, pause, resume};
use crate::ops::rbac::Operation;
use crate::ops::run::settings::{RunSettings, StartRefusal};
use crate::ops::run::{Run, RunEnd, Started};
use crate::ops::write::Executor;

/// How long a held wave waits before trying an unreachable cluster again.
const HOLD_RETRY: Duration = Duration::from_secs(5);

/// A member connected: its DaemonSet, its one writer, its live view.
pub(super) struct Member {
    /// The connection.
    pub connection: Connection,
    /// The DaemonSet there.
    pub target: Target,
    /// The one writer (a dry run's records instead of sending).
    pub executor: Executor,
    /// The DaemonSet, followed live.
    pub follower: Follower,
}

/// Connects to `context` and follows its DaemonSet until a first view
/// arrives within the patience: waits while it is unreachable (the wave
/// holds), or gives up at once when told to skip; `Err` is the outcome.
/// (Connecting alone proves nothing: a kubeconfig is read without asking
/// the server.)
async fn connect(shared: &Shared, context: &str) -> Result<Member, Outcome> {
    let mut said = false;
    loop {
        let why = match reach(shared, context, &shared.interrupt).await {
            Ok(reached) => return Ok(reached),
            Err(why) => why,
        };
        if shared.interrupt.requested() {
            return Err(Outcome::Stopped("stopped while unreachable".to_owned()));
        }
        if shared.settings.skip_unreachable {
            return Err(Outcome::Skipped(format!("unreachable: {why}")));
        }
        if !said {
            let text = format!(
                "unreachable, the wave holds (retrying every {}s; --unreachable skip goes on \
                 without it): {why}",
                HOLD_RETRY.as_secs(),
            );
            shared.say(context, Happening::Held, Progress::new("hold", None, text));
            said = true;
        }
        tokio::select! {
            () = tokio::time::sleep(HOLD_RETRY) => {}
            () = shared.interrupt.wait() => {}
        }
    }
}

/// One try of [`connect`]: the member with a first view, or why not.
async fn reach(shared: &Shared, context: &str, stop: &Interrupt) -> Result<Member, String> {
    let connection = shared.connector.connect(context).await?;
    let target = shared
        .daemonset
        .resolve(shared.settings.namespace.as_deref(), &connection.namespace)
        .map_err(|err| err.to_string())?;
    let actor = crate::ops::journal::actor(&connection).await;
    // Writes go without kube's retry layer: a delete is never resent; a lost
    // reply is resolved by reading the pod back.
    let executor = Executor::new(
        connection.watch_client.clone(),
        shared.settings.journal.clone(),
        false,
        connection.context.clone(),
        actor,
    );
    let executor = if shared.dry_run() {
        executor.into_dry_run()
    } else {
        executor
    };
    let report = Arc::clone(&shared.report);
    let owned = context.to_owned();
    let follower = Follower::start(connection.watch_client.clone(), &target).with_notices(
        Arc::new(move |text: &str| {
            let notice = Progress::new("notice", None, text);
            report.event(super::report::Event::member(
                &owned,
                Happening::Notice,
                notice,
            ));
        }),
    );
    let patience = shared.settings.patience;
    tokio::select! {
        first = tokio::time::timeout(patience, follower.snapshot()) => match first {
            Ok(Ok(_)) => Ok(Member { connection, target, executor, follower }),
            Ok(Err(err)) => Err(err.to_string()),
            Err(_) => Err(format!(
                "no view of the DaemonSet within {}s (--request-timeout)",
                patience.as_secs_f64()
            )),
        },
        () = stop.wait() => Err("interrupted".to_owned()),
    }
}

/// Sanitised words of an error that keeps a member from starting.
pub(super) fn blocked(err: &dyn std::fmt::Display) -> Outcome {
    Outcome::Blocked(crate::sanitize::sanitize(&err.to_string()).into_owned())
}

/// Gets a member ready for its run: connected, allowed, not vetoed, a pause
/// this plan's own run left resumed (anyone else's pause stands: `Err`), and
/// the run's identity recorded on its DaemonSet.
pub(super) async fn ready(
    shared: &Shared,
    context: &str,
    wave: &str,
    operation: Operation,
) -> Result<Member, Outcome> {
    if shared.interrupt.requested() {
        return Err(Outcome::Stopped(
            "the fleet stopped before this cluster started".to_owned(),
        ));
    }
    let member = connect(shared, context).await?;
    let note = crate::ops::precheck::precheck(
        &member.executor,
        &member.connection.client,
        &member.target,
        operation,
        shared.verb,
    )
    .await
    .map_err(|e| blocked(&e))?;
    if let Some(note) = note {
        let step = Progress::new(
            "notice",
            None,
            format!("note: the real run would fail: {note}"),
        );
        shared.say(context, Happening::Notice, step);
    }
    let actor = member.executor.actor().to_owned();
    let state = {
        let snapshot = member.follower.snapshot().await.map_err(|e| blocked(&e))?;
        first_look(&snapshot)?
    };
    // A rollback supersedes a pause of the rollout it undoes (as `rollcall rollback`).
    if let Some(paused) = state
        .pause
        .as_ref()
        .filter(|_| operation != Operation::Rollback)
    {
        let reason = paused.reason.as_deref();
        if !reason.is_some_and(|r| r.starts_with(&shared.mark())) {
            let reason = reason.map(|r| format!(": {r}")).unwrap_or_default();
            return Err(Outcome::Blocked(format!(
                "paused by {}{reason}; resume it (rollcall resume) or exclude it",
                paused.by
            )));
        }
        if !shared.dry_run() {
            let now = crate::clock::now();
            write_with_retries(
                &member.follower,
                |s| resume(s, &actor, now).map(Some),
                &member.executor,
            )
            .await
            .map_err(|e| blocked(&e))?;
            shown(&member.follower, |state| state.pause.is_none()).await?;
            let text = "resumed: this plan's own run paused it";
            shared.say(
                context,
                Happening::Resumed,
                Progress::new("resume", None, text),
            );
        }
    }
    if !shared.dry_run() {
        let identity = format!("plan {} wave {wave}", shared.digest);
        let now = crate::clock::now();
        write_with_retries(
            &member.follower,
            |s| identity_write(s, &identity, &actor, now),
            &member.executor,
        )
        .await
        .map_err(|e| blocked(&e))?;
        shown(&member.follower, |state| {
            state.fleet_run.as_deref() == Some(&identity)
        })
        .await?;
    }
    Ok(member)
}

/// Waits until the live view shows a state write just made (the run's start
/// is decided on it: a resume not yet seen would refuse the start).
async fn shown(
    follower: &Follower,
    written: impl Fn(&crate::ops::state::RolloutState) -> bool,
) -> Result<(), Outcome> {
    let deadline = crate::clock::now()
        + jiff::SignedDuration::try_from(crate::ops::drive::ECHO_PATIENCE).unwrap_or_default();
    loop {
        let state = follower
            .snapshot()
            .await
            .and_then(|s| s.state())
            .map_err(|e| blocked(&e))?;
        if written(&state) {
            return Ok(());
        }
        if crate::clock::now() >= deadline {
            return Err(Outcome::Blocked(
                "the watch did not show rollcall's own write in time".to_owned(),
            ));
        }
        follower.changed_or(Some(deadline)).await;
    }
}

/// One member's auto-advance: ready, started as `rollcall auto` starts, driven.
pub(super) async fn advance(
    shared: &Shared,
    context: &str,
    wave: &str,
    settings: RunSettings,
) -> Result<(Outcome, bool), Outcome> {
    let member = ready(shared, context, wave, Operation::Auto).await?;
    let actor = member.executor.actor().to_owned();
    let started = {
        let snapshot = member.follower.snapshot().await.map_err(|e| blocked(&e))?;
        Run::start(&snapshot, settings, &actor, crate::clock::now())
    };
    let (run, started) = match started {
        Ok(started) => started,
        Err(StartRefusal::Invalid(err)) => return Err(blocked(&err)),
        Err(StartRefusal::Failing(nodes)) => {
            let first = nodes.first().map_or_else(String::new, |n| n.node.clone());
            let refusal = StartRefusal::Failing(nodes);
            return Ok((failed(shared, context, first, refusal.to_string()), false));
        }
    };
    Ok(drive(shared, context, &member, run, started).await)
}

/// Executes a member's started run through `ops::drive` with the fleet's
/// budget and stop; the outcome, the member touched.
pub(super) async fn drive(
    shared: &Shared,
    context: &str,
    member: &Member,
    run: Run,
    started: Started,
) -> (Outcome, bool) {
    let budget = MemberBudget::new(Arc::clone(&shared.ledger));
    let report = Arc::clone(&shared.report);
    let owned = context.to_owned();
    let dry_run = shared.dry_run();
    let progress = move |mut step: Progress| {
        // A dry run's every line says `would`: the run's notes too.
        if dry_run && !step.message.contains("would") {
            step.message = format!("would start with: {}", step.message);
        }
        report.event(super::report::Event::member(&owned, Happening::Step, step));
    };
    let ctx = RunContext {
        executor: &member.executor,
        follower: &member.follower,
        interrupt: &shared.interrupt,
        progress: &progress,
        budget: Some(&budget),
    };
    let end = match execute(&ctx, run, started).await {
        Ok(end) => end,
        Err(err) => {
            let cause = format!("{context}: {err}");
            shared.halt(&cause);
            return (
                Outcome::Stopped(crate::sanitize::sanitize(&cause).into_owned()),
                true,
            );
        }
    };
    (outcome_of(shared, context, end), true)
}

/// The write that records the fleet run's identity on a member
/// (`rollcall.dev/fleet-run`; who and when beside it), through the one
/// state writer; `None` when it is already there.
fn identity_write(
    snapshot: &crate::ops::snapshot::Snapshot<'_>,
    identity: &str,
    actor: &str,
    now: jiff::Timestamp,
) -> Result<Option<crate::ops::write::WriteRequest>, crate::ops::error::OpsError> {
    let before = snapshot.state()?;
    if before.fleet_run.as_deref() == Some(identity) {
        return Ok(None);
    }
    let after = crate::ops::state::RolloutState {
        fleet_run: Some(identity.to_owned()),
        ..before.clone()
    }
    .touched(actor, now);
    Ok(Some(crate::ops::write::WriteRequest::state(
        snapshot,
        before,
        after,
        crate::ops::journal_action::JournalAction::FleetRun,
        None,
    )))
}

/// A member's DaemonSet before its run: skipped for a veto, else its state.
fn first_look(
    snapshot: &crate::ops::snapshot::Snapshot<'_>,
) -> Result<crate::ops::state::RolloutState, Outcome> {
    let annotations = snapshot.ds.metadata.annotations.as_ref();
    if let Some(veto) = annotations.and_then(|a| a.get(VETO_ANNOTATION)) {
        return Err(Outcome::Skipped(format!(
            "vetoed ({VETO_ANNOTATION}): {}",
            crate::sanitize::sanitize(veto)
        )));
    }
    snapshot
        .state()
        .map_err(|e| Outcome::Blocked(crate::sanitize::sanitize(&e.to_string()).into_owned()))
}

/// A member's outcome from its run's end; a failed gate spends the budget.
fn outcome_of(shared: &Shared, context: &str, end: RunEnd) -> Outcome {
    match end {
        RunEnd::Completed { advanced, left } => Outcome::Passed {
            moved: advanced,
            left,
        },
        RunEnd::Paused { node, reason } => failed(shared, context, node, reason),
        RunEnd::Stopped { by } => Outcome::Blocked(format!("stopped by {by}")),
        RunEnd::Halted { reason } => Outcome::Stopped(reason),
        RunEnd::Interrupted { by, how } => Outcome::Stopped(format!("interrupted by {by} ({how})")),
        RunEnd::Cancelled { by, .. } => Outcome::Stopped(format!("cancelled by {by}")),
        RunEnd::Failed { error } => {
            shared.halt(&format!("{context}: {error}"));
            Outcome::Stopped(error)
        }
        RunEnd::DryRun => Outcome::DryRun,
    }
}

/// Records a failed node in the budget; past it, halts the fleet naming it.
fn failed(shared: &Shared, context: &str, node: String, reason: String) -> Outcome {
    let stop = shared
        .ledger
        .lock()
        .ok()
        .and_then(|mut ledger| ledger.failed(context, &node, &reason));
    if stop.is_some() {
        shared.halt(&format!("{context}: node {node}: {reason}"));
    }
    Outcome::Failed { node, reason }
}

/// Pauses a member this run touched and left idle (it passed before the
/// fleet stopped), with the fleet's reason, so every touched cluster is
/// paused; an error is said, not raised.
pub(super) async fn pause_member(shared: &Shared, context: &str, reason: &str) {
    let result = async {
        // After the stop: one try, which the stop itself must not cut short.
        let member = reach(shared, context, &Interrupt::never()).await?;
        let request = PauseRequest {
            by: format!("{} ({})", shared.settings.by, member.executor.actor()),
            reason: Some(reason.to_owned()),
            node: None,
            automatic: true,
        };
        let now = crate::clock::now();
        write_with_retries(
            &member.follower,
            |s| {
                if s.state()?.pause.is_some() {
                    return Ok(None);
                }
                pause(s, &request, now).map(Some)
            },
            &member.executor,
        )
        .await
        .map_err(|e| e.to_string())
    }
    .await;
    let text = match result {
        Ok(()) => format!("paused: {reason}"),
        Err(err) => format!("could not pause it: {err}"),
    };
    shared.say(
        context,
        Happening::Paused,
        Progress::new("pause", None, text),
    );
}
