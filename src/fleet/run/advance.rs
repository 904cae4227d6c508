//! A member's run, carried out: the very run `rollcall auto` makes —
//! `ops::run` decided, `ops::drive` executed — with the fleet's shared
//! budget reserved before each batch and the fleet's stop as its
//! interrupt. A failed node spends the budget and is counted by its node
//! class; past the budget, or its class failing in a second cluster, the
//! fleet halts.

use std::sync::Arc;

use super::member::{Member, blocked};
use super::outcome::Outcome;
use super::ready::ready;
use super::report::Happening;
use super::shared::{MemberBudget, Shared};
use crate::fleet::waves::node_class::NodeClass;
use crate::ops::drive::{Progress, RunContext, run as execute};
use crate::ops::follow::Follower;
use crate::ops::rbac::Operation;
use crate::ops::run::settings::{RunSettings, StartRefusal};
use crate::ops::run::{Run, RunEnd, Started};

/// One member's auto-advance: ready, started as `rollcall auto` starts, driven.
pub(super) async fn advance(
    shared: &Shared,
    context: &str,
    wave: &str,
    settings: RunSettings,
) -> Result<(Outcome, bool), Outcome> {
    let member = ready(shared, context, wave, Operation::Auto).await?;
    let actor = member.executor.actor().to_owned();
    let settings = RunSettings {
        fleet_run: Some(shared.identity(wave)),
        ..settings
    };
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
            let outcome = failed(
                shared,
                context,
                &member.follower,
                first,
                refusal.to_string(),
            );
            return Ok((outcome, false));
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
    (outcome_of(shared, context, &member.follower, end), true)
}

/// A member's outcome from its run's end; a failed gate spends the budget.
fn outcome_of(shared: &Shared, context: &str, follower: &Follower, end: RunEnd) -> Outcome {
    match end {
        RunEnd::Completed { advanced, left } => Outcome::Passed {
            moved: advanced,
            left,
        },
        RunEnd::Paused {
            node,
            reason,
            by_cluster: true,
        } => unreached(shared, &node, &reason),
        RunEnd::Paused { node, reason, .. } => failed(shared, context, follower, node, reason),
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

/// A member paused because its cluster could not carry out a delete
/// (unreachable, throttling, 5xx, an answer lost): nothing is known against
/// the node, so neither the budget nor its class counts it, and the fleet
/// goes on; the wave does not pass without the member (or, with
/// `--unreachable skip`, goes on and names it skipped).
fn unreached(shared: &Shared, node: &str, reason: &str) -> Outcome {
    let why = crate::sanitize::sanitize(&format!(
        "paused at node {node}: {reason} (the cluster's fault, not the node's: not counted in the budget)"
    ))
    .into_owned();
    if shared.settings.skip_unreachable {
        Outcome::Skipped(why)
    } else {
        Outcome::Stopped(why)
    }
}

/// Records a failed node, with its class as the member's live view shows
/// it ([`Shared::failed`]: past the budget, or its class failing in a
/// second cluster, halts the fleet).
fn failed(
    shared: &Shared,
    context: &str,
    follower: &Follower,
    node: String,
    reason: String,
) -> Outcome {
    let class = follower
        .try_snapshot()
        .ok()
        .flatten()
        .and_then(|snapshot| {
            snapshot
                .nodes()
                .find(|n| n.name() == node)
                .map(NodeClass::of)
        })
        .unwrap_or_default();
    shared.failed(context, &node, &reason, &class);
    Outcome::Failed { node, reason }
}
