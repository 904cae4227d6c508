//! `rollcall rollback NS/NAME [--to-revision R] [--wait] [--timeout D]`: show
//! the template diff, confirm, patch the template from the revision (as
//! `kubectl rollout undo`); for OnDelete, move the nodes back one by one, most
//! recently updated first, each Ready before the next. Exit 0 done, 1 a node
//! failed to come back (rollout paused), 2 error.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cli::act_args::{
    ActArgs, Session, StepOutput, block_on, confirm, finish, install_interrupt, open,
    parse_duration, precheck, print_dry_run, progress_printer, step,
};
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::out;
use crate::model::DsRef;
use crate::ops::drive::{RunContext, run as execute};
use crate::ops::follow::Follower;
use crate::ops::interrupt::EXIT_INTERRUPTED;
use crate::ops::owner_guard::{Decision, SpecAction, decide};
use crate::ops::rbac::Operation;
use crate::ops::rollback::{RollbackPlan, plan};
use crate::ops::run::Started;
use crate::ops::run::rollback::{RollbackOptions, rollback_nodes, start_rollback, unfit_nodes};
use crate::ops::snapshot::Target;

/// Arguments of `rollcall rollback`.
#[derive(Debug, Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "each bool is one of the command's independent flags"
)]
pub struct RollbackArgs {
    /// The DaemonSet: `NAME` (in the -n namespace), `NAMESPACE/NAME`, `ds/NAME`,
    /// `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// The revision to go back to (default: the previous one).
    #[arg(long, value_name = "R")]
    pub to_revision: Option<i64>,
    /// On RollingUpdate, wait for the controller to finish; OnDelete always
    /// follows each node until Ready before moving the next.
    #[arg(long)]
    pub wait: bool,
    /// How long each node may take to become Ready again (OnDelete), or the
    /// whole rollout may take with --wait (RollingUpdate).
    #[arg(long, value_name = "D", default_value = "5m", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Also move back cordoned nodes (by default they are listed and left,
    /// and the rollback ends incomplete with exit 1).
    #[arg(long)]
    pub include_cordoned: bool,
    /// Move a node back although the revision's pod will not fit there (by
    /// default the rollback pauses before such a node, naming it and why).
    #[arg(long)]
    pub despite_fit: bool,
    /// Patch the template even though a GitOps tool (Argo CD, Flux, Fleet)
    /// owns the spec and will likely put it back.
    #[arg(long)]
    pub despite_owner: bool,
    /// --yes (and the global --read-only, --journal).
    #[command(flatten)]
    pub act: ActArgs,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall rollback`.
pub fn run(args: &RollbackArgs) -> anyhow::Result<ExitCode> {
    block_on(async {
        let session = open(&args.cluster, &args.daemonset, &args.act).await?;
        precheck(&session, Operation::Rollback, "roll back").await?;
        let follower = crate::cli::act_args::follow(&session);
        let snapshot = follower.snapshot().await?;
        let rollback = plan(&snapshot, args.to_revision)?;
        let Some(patch) = rollback.request.clone() else {
            return Ok(finish(
                &args.act,
                0,
                &format!(
                    "{} skipped rollback (current template already matches revision {})",
                    session.target, rollback.to.number
                ),
            ));
        };
        match decide(&snapshot.ds, SpecAction::Rollback, args.despite_owner) {
            Decision::Proceed => {}
            Decision::Warn(text) => out::warning(&format!("{}: {text}", session.target)),
            Decision::Refuse(text) => anyhow::bail!("{}: {text}", session.target),
        }
        let to = rollback.to.number;
        // A revision that will not fit is refused as an advance is (exit 1),
        // before anything is patched.
        if !args.despite_fit
            && snapshot.update_strategy().is_on_delete()
            && let Some(refusal) = unfit_nodes(&snapshot, &rollback_nodes(&snapshot), to)
        {
            let text = format!("refused: rollback to revision {to}: {refusal} (--despite-fit)");
            return Ok(finish(&args.act, 1, &text));
        }
        let options = RollbackOptions {
            timeout: args.timeout,
            include_cordoned: args.include_cordoned,
            despite_fit: args.despite_fit,
            fleet_run: None,
        };
        let actor = session.executor.actor().to_owned();
        let start = start_rollback(
            &snapshot,
            patch,
            to,
            options,
            &actor,
            jiff::Timestamp::now(),
        )?;
        drop(snapshot);
        show_plan(&args.act, &session.target, &rollback, &start.order);
        confirm(
            &format!(
                "roll back {} to revision {to} ({} node(s) to move back)",
                session.target,
                start.order.len()
            ),
            args.act.yes,
        )?;
        session.executor.run(&start.patch).await?;
        // Nothing was patched in a dry run, so the node moves cannot be run; say which would follow.
        let then = (!start.order.is_empty()).then(|| {
            format!(
                "then, one node at a time (each Ready before the next), would delete the pods on: {}",
                start.order.join(", ")
            )
        });
        if let Some(code) = print_dry_run(&session, &args.act, then.as_deref()) {
            return Ok(code);
        }
        let patched = format!("{} rolled back to revision {to}", session.target);
        let Some(run) = start.run else {
            session.executor.run(&start.then).await?;
            return rolling_update_end(args, &session, &follower, &patched, to).await;
        };
        step(
            &args.act,
            "rollback",
            &patched,
            serde_json::json!({ "toRevision": to }),
        );
        let started = Started {
            write: start.then,
            notes: Vec::new(),
        };
        let interrupt = install_interrupt(&session);
        let progress = progress_printer(&args.act);
        let ctx = RunContext {
            executor: &session.executor,
            follower: &follower,
            interrupt: &interrupt,
            progress: progress.as_ref(),
            budget: None,
        };
        let end = execute(&ctx, run, started).await?;
        Ok(crate::cli::auto::report(
            &end,
            &args.act,
            "rollback",
            Some(to),
        ))
    })
}

/// Shows the rollback before it is confirmed: the template diff on stderr, or
/// with `-o json` a `plan` line (target revision, the nodes in order, the diff).
fn show_plan(act: &ActArgs, target: &Target, rollback: &RollbackPlan, order: &[String]) {
    if act.output != StepOutput::Json {
        out::stderr(&rollback.diff);
        return;
    }
    step(
        act,
        "plan",
        &format!("roll back {target} to revision {}", rollback.to.number),
        serde_json::json!({
            "fromRevision": rollback.from,
            "toRevision": rollback.to.number,
            "nodes": order,
            "diff": rollback.diff,
        }),
    );
}

/// A RollingUpdate rollback after its patch: the controller moves the nodes;
/// with --wait, follow it to the end or the timeout (exit 1, with the blocker).
/// Ctrl-C (or SIGTERM) during the wait ends it with exit 130 and says what
/// stands: the rollback is written, the controller goes on without us.
async fn rolling_update_end(
    args: &RollbackArgs,
    session: &Session,
    follower: &Follower,
    patched: &str,
    to: i64,
) -> anyhow::Result<ExitCode> {
    if !args.wait {
        return Ok(finish(&args.act, 0, patched));
    }
    step(
        &args.act,
        "rollback",
        patched,
        serde_json::json!({ "toRevision": to }),
    );
    let interrupt = install_interrupt(session);
    let waited = tokio::select! {
        waited = wait_rolled_out(follower, args.timeout) => waited?,
        () = interrupt.wait() => {
            let text = format!(
                "interrupted while waiting: {} is rolled back to revision {to} (written and \
                 journalled); the controller goes on replacing pods — `rollcall status {}` \
                 follows it",
                session.target, session.target
            );
            return Ok(finish(&args.act, EXIT_INTERRUPTED, &text));
        }
    };
    if let Err(why) = waited {
        let text = format!(
            "not finished after {}: {why}",
            humantime::format_duration(args.timeout),
        );
        return Ok(finish(&args.act, 1, &text));
    }
    let text = format!("rollout finished: every node runs revision {to}");
    Ok(finish(&args.act, 0, &text))
}

/// Waits until the controller reports every desired node updated and
/// available, or `timeout` passes: then `Err` says why the rollout is not
/// moving (the engine's blocker).
async fn wait_rolled_out(
    follower: &Follower,
    timeout: Duration,
) -> anyhow::Result<Result<(), String>> {
    let deadline = jiff::Timestamp::now()
        + jiff::SignedDuration::try_from(timeout).unwrap_or(jiff::SignedDuration::MAX);
    loop {
        // The follower's row cache, brought up to date with each change (and
        // with pods that turned available as minReadySeconds passed).
        let outcome = follower
            .decide(|snapshot| {
                let index = snapshot.index();
                let now = jiff::Timestamp::now();
                let rows = snapshot.rows(&index, now);
                if index.current_matches_template() {
                    let totals = crate::ops::snapshot::Snapshot::totals(rows.iter());
                    if totals.updated == totals.desired && totals.available == totals.desired {
                        return Ok(Some(Ok(())));
                    }
                }
                Ok((now >= deadline).then(|| Err(snapshot.blocker(&rows, now).message)))
            })
            .await?;
        if let Some(outcome) = outcome {
            return Ok(outcome);
        }
        follower.changed_or(Some(deadline)).await;
    }
}
