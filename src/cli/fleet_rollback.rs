//! `rollcall fleet rollback -f fleet.yaml --yes [--to-revision R]`: the
//! plan's waves in reverse, and in each cluster the rollback `rollcall
//! rollback` makes — the template patched back from the revision (as
//! `kubectl rollout undo`), then on OnDelete the nodes that run the revision
//! being left moved back one at a time, most recently updated first, each
//! Ready before the next — with the fleet's budget, stop and pauses as
//! `fleet auto` has them ([`super::fleet_auto::carry_out`]). Exit codes as
//! `fleet auto`.

use std::process::ExitCode;

use clap::Args;

use super::fleet_auto::{Direction, FleetRunArgs, carry_out, dry_run_act};
use super::fleet_member::{Job, Outcome, Shared, blocked, drive_member, ready};
use super::fleet_plan::{check, prepare_plan, read_all};
use crate::cli::act_args::confirm;
use crate::fleet::waves::budget::Ledger;
use crate::ops::drive::Progress;
use crate::ops::owner_guard::{Decision, SpecAction, decide};
use crate::ops::rbac::Operation;
use crate::ops::rollback::plan;
use crate::ops::run::Started;
use crate::ops::run::rollback::{RollbackOptions, rollback_nodes, start_rollback, unfit_nodes};

/// Arguments of `rollcall fleet rollback`.
#[derive(Debug, Args)]
pub struct FleetRollbackArgs {
    /// The plan, and how to carry it out.
    #[command(flatten)]
    pub run: FleetRunArgs,
    /// The revision to go back to in every cluster (default: each cluster's previous one).
    #[arg(long, value_name = "R")]
    pub to_revision: Option<i64>,
}

/// What each cluster's rollback is given.
#[derive(Clone, Copy, Debug)]
pub struct RollbackJob {
    /// The revision (default: the previous one).
    pub to_revision: Option<i64>,
    /// The wave's timeout per node.
    pub options: RollbackOptions,
}

/// Runs `rollcall fleet rollback`.
pub async fn run(args: &FleetRollbackArgs) -> anyhow::Result<ExitCode> {
    let to_revision = args.to_revision;
    let args = &args.run;
    let act = dry_run_act(&args.act, args.dry_run);
    let prepared = prepare_plan(&args.cluster, &args.file)?;
    check(&prepared, &read_all(&prepared).await)?;
    let to = to_revision.map_or_else(
        || "the previous revision".to_owned(),
        |r| format!("revision {r}"),
    );
    confirm(
        &format!(
            "roll {} back to {to} across {} cluster(s), waves in reverse (plan {})",
            prepared.daemonset,
            prepared.assignment.contexts().count(),
            prepared.digest
        ),
        act.yes,
    )?;
    let job_of = move |wave: &crate::fleet::waves::file::Wave, _: &Ledger| {
        Job::Rollback(RollbackJob {
            to_revision,
            options: RollbackOptions {
                timeout: wave.timeout.0,
                include_cordoned: false,
                despite_fit: false,
            },
        })
    };
    Ok(carry_out(
        &prepared,
        &args.cluster,
        &act,
        args.unreachable,
        Direction::Back,
        &job_of,
    )
    .await)
}

/// One member's rollback: the template patch, then the node moves.
pub(super) async fn rollback_member(
    shared: &Shared,
    context: &str,
    wave: &str,
    job: RollbackJob,
) -> Result<(Outcome, bool), Outcome> {
    let (session, follower) = ready(shared, context, wave, Operation::Rollback).await?;
    let actor = session.executor.actor().to_owned();
    let start = {
        let snapshot = follower.snapshot().await.map_err(|e| blocked(&e))?;
        let rollback = plan(&snapshot, job.to_revision).map_err(|e| blocked(&e))?;
        let to = rollback.to.number;
        let Some(patch) = rollback.request else {
            let text = format!("the template already matches revision {to}");
            return Ok((Outcome::Skipped(text), false));
        };
        if let Decision::Refuse(text) = decide(&snapshot.ds, SpecAction::Rollback, false) {
            return Err(Outcome::Blocked(text));
        }
        if snapshot.update_strategy().is_on_delete()
            && let Some(refusal) = unfit_nodes(&snapshot, &rollback_nodes(&snapshot), to)
        {
            return Err(Outcome::Blocked(format!("revision {to}: {refusal}")));
        }
        start_rollback(
            &snapshot,
            patch,
            to,
            job.options,
            &actor,
            jiff::Timestamp::now(),
        )
        .map_err(|e| blocked(&e))?
    };
    let would = if shared.act.read_only { "would " } else { "" };
    (shared.say)(
        context,
        Progress::new(
            "rollback",
            None,
            format!(
                "{would}roll back to revision {} ({} node(s) to move back)",
                start.to,
                start.order.len()
            ),
        ),
    );
    if shared.act.read_only {
        return Ok((Outcome::DryRun, false));
    }
    session
        .executor
        .run(&start.patch)
        .await
        .map_err(|e| blocked(&e))?;
    let Some(run) = start.run else {
        // RollingUpdate: the controller moves the nodes back itself.
        session
            .executor
            .run(&start.then)
            .await
            .map_err(|e| blocked(&e))?;
        let text = "the DaemonSet's controller moves the nodes back (RollingUpdate)";
        (shared.say)(context, Progress::new("rollback", None, text));
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
    Ok(drive_member(shared, context, &session, &follower, run, started).await)
}
