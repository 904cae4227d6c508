//! One member's part of a fleet rollback: the rollback `rollcall rollback`
//! makes — the template patched back from the revision (as `kubectl rollout
//! undo`), then on OnDelete the nodes that run the revision being left moved
//! back one at a time, most recently updated first, each Ready before the
//! next — with the fleet's budget, stop and pauses.

use super::advance::drive;
use super::member::blocked;
use super::outcome::Outcome;
use super::ready::ready;
use super::report::Happening;
use super::settings::RollbackChoice;
use super::shared::Shared;
use crate::ops::drive::Progress;
use crate::ops::owner_guard::{Decision, SpecAction, decide};
use crate::ops::rbac::Operation;
use crate::ops::rollback::plan;
use crate::ops::run::Started;
use crate::ops::run::rollback::{RollbackOptions, rollback_nodes, start_rollback, unfit_nodes};

/// One member's rollback: the template patch, then the node moves; the
/// outcome and whether the member was touched.
pub(super) async fn rollback_member(
    shared: &Shared,
    context: &str,
    wave: &str,
    choice: RollbackChoice,
    timeout: std::time::Duration,
) -> Result<(Outcome, bool), Outcome> {
    let member = ready(shared, context, wave, Operation::Rollback).await?;
    let actor = member.executor.actor().to_owned();
    let options = RollbackOptions {
        timeout,
        include_cordoned: choice.include_cordoned,
        despite_fit: choice.despite_fit,
        fleet_run: Some(shared.identity(wave)),
    };
    let start = {
        let snapshot = member.follower.snapshot().await.map_err(|e| blocked(&e))?;
        let rollback = plan(&snapshot, choice.to_revision).map_err(|e| blocked(&e))?;
        let to = rollback.to.number;
        let Some(patch) = rollback.request else {
            let text = format!("the template already matches revision {to}");
            return Ok((Outcome::Skipped(text), false));
        };
        if let Decision::Refuse(text) = decide(&snapshot.ds, SpecAction::Rollback, false) {
            return Err(Outcome::Blocked(text));
        }
        if snapshot.update_strategy().is_on_delete()
            && !options.despite_fit
            && let Some(refusal) = unfit_nodes(&snapshot, &rollback_nodes(&snapshot), to)
        {
            return Err(Outcome::Blocked(format!(
                "revision {to}: {refusal} (--despite-fit)"
            )));
        }
        start_rollback(&snapshot, patch, to, options, &actor, crate::clock::now())
            .map_err(|e| blocked(&e))?
    };
    let text = format!(
        "{}roll back to revision {} ({} node(s) to move back)",
        shared.would(),
        start.to,
        start.order.len()
    );
    shared.say(
        context,
        Happening::Step,
        Progress::new("rollback", None, text),
    );
    if shared.dry_run() {
        return Ok((Outcome::DryRun, false));
    }
    member
        .executor
        .run(&start.patch)
        .await
        .map_err(|e| blocked(&e))?;
    let Some(run) = start.run else {
        // RollingUpdate: the controller moves the nodes back itself.
        member
            .executor
            .run(&start.then)
            .await
            .map_err(|e| blocked(&e))?;
        let text = "the DaemonSet's controller moves the nodes back (RollingUpdate)";
        shared.say(
            context,
            Happening::Step,
            Progress::new("rollback", None, text),
        );
        let passed = Outcome::Passed {
            moved: 0,
            left: Vec::new(),
        };
        return Ok((passed, true));
    };
    let started = Started {
        write: start.then,
        notes: Vec::new(),
    };
    Ok(drive(shared, context, &member, run, started).await)
}
