//! A member made ready for its part of a fleet run: allowed (the RBAC
//! check), not vetoed, a pause this plan's own run left resumed (anyone
//! else's stands), and the run's identity recorded on its DaemonSet.

use super::member::{Member, blocked, connect};
use super::outcome::Outcome;
use super::report::Happening;
use super::shared::Shared;
use crate::fleet::waves::VETO_ANNOTATION;
use crate::ops::drive::{Progress, write_with_retries};
use crate::ops::follow::Follower;
use crate::ops::pause::resume;
use crate::ops::rbac::Operation;

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
        let identity = shared.identity(wave).identity();
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
