//! `rollcall auto NS/NAME [--canary SELECTOR] [--batch K] [--soak D] [--timeout D]`:
//! auto-advance to completion or to an automatic pause. Every setting is this
//! run's own (nothing is inherited from an earlier run). The run itself is
//! `ops::run`'s; this command confirms, executes it through `ops::drive` and
//! prints its end. Exit 0 completed, 1 paused (a failed gate: which node and
//! why; someone else's pause; failing updated pods before the start) or
//! incomplete (nodes left on the old revision, named), 2 error, 130
//! interrupted (the rollout is left paused, "interrupted by …").

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cli::act_args::{
    ActArgs, StepOutput, block_on, confirm, finish, install_interrupt, open, parse_duration,
    precheck, print_dry_run, progress_printer,
};
use crate::cli::cluster_args::ClusterArgs;
use crate::engine::selector::Selector;
use crate::model::DsRef;
use crate::ops::auto::AutoPolicy;
use crate::ops::drive::{RunContext, run as execute};
use crate::ops::interrupt::Interrupt;
use crate::ops::rbac::Operation;
use crate::ops::run::settings::{RunSettings, StartRefusal};
use crate::ops::run::{Run, RunEnd};

/// Arguments of `rollcall auto`.
#[derive(Debug, Args)]
pub struct AutoArgs {
    /// The DaemonSet: `NAME` (in the -n namespace), `NAMESPACE/NAME`, `ds/NAME`,
    /// `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// Canary nodes by label selector (kubectl syntax); they go first, as their
    /// own batch. Must match at least one node the DaemonSet runs on.
    #[arg(long, value_name = "SELECTOR")]
    pub canary: Option<String>,
    /// Start although pods already on the new revision are failing.
    #[arg(long)]
    pub despite_failing: bool,
    /// Move a node although the new revision's pod will not fit there
    /// (by default the run pauses before such a batch, naming the node and why).
    #[arg(long)]
    pub despite_fit: bool,
    /// Also move cordoned nodes (by default they are left, named, and the run
    /// ends incomplete with exit 1).
    #[arg(long)]
    pub include_cordoned: bool,
    /// Nodes per batch.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub batch: usize,
    /// How long a batch must stay Ready without restarts before the next starts.
    #[arg(long, value_name = "D", default_value = "30s", value_parser = parse_duration)]
    pub soak: Duration,
    /// How long a replacement may take to become Ready.
    #[arg(long, value_name = "D", default_value = "5m", value_parser = parse_duration)]
    pub timeout: Duration,
    /// --yes (and the global --read-only, --journal).
    #[command(flatten)]
    pub act: ActArgs,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall auto`.
pub fn run(args: &AutoArgs) -> anyhow::Result<ExitCode> {
    if args.batch == 0 {
        anyhow::bail!("--batch must be at least 1");
    }
    if let Some(text) = &args.canary {
        Selector::parse(text)
            .map_err(|e| anyhow::anyhow!("bad --canary selector {text:?}: {e}"))?;
    }
    block_on(async {
        let session = open(&args.cluster, &args.daemonset, &args.act).await?;
        precheck(&session, Operation::Auto, "auto-advance").await?;
        confirm(
            &format!(
                "auto-advance {} in batches of {} (soak {}, timeout {})",
                session.target,
                args.batch,
                humantime::format_duration(args.soak),
                humantime::format_duration(args.timeout)
            ),
            args.act.yes,
        )?;
        let follower = crate::cli::act_args::follow(&session);
        let settings = RunSettings {
            policy: AutoPolicy {
                batch: args.batch,
                soak: args.soak,
                timeout: args.timeout,
            },
            canary_selector: args.canary.clone(),
            rollback: None,
            despite_failing: args.despite_failing,
            despite_fit: args.despite_fit,
            include_cordoned: args.include_cordoned,
            fleet_run: None,
        };
        // Refuse before anything is written: a typo'd canary, failing pods.
        let snapshot = follower.snapshot().await?;
        let revision = snapshot.index().current().map(|c| c.number);
        let actor = session.executor.actor().to_owned();
        let (run, started) = match Run::start(&snapshot, settings, &actor, jiff::Timestamp::now()) {
            Ok(started) => started,
            Err(StartRefusal::Invalid(err)) => return Err(err.into()),
            Err(refusal @ StartRefusal::Failing(_)) => {
                return Ok(finish(
                    &args.act,
                    1,
                    &format!("refused: {refusal} (--despite-failing)"),
                ));
            }
        };
        drop(snapshot);
        let dry_run = session.executor.dry_run().is_some();
        let interrupt = if dry_run {
            Interrupt::never()
        } else {
            install_interrupt(&session)
        };
        let progress = progress_printer(&args.act);
        let ctx = RunContext {
            executor: &session.executor,
            follower: &follower,
            interrupt: &interrupt,
            progress: progress.as_ref(),
            budget: None,
        };
        let end = execute(&ctx, run, started).await?;
        if dry_run {
            // A first batch refused (its node will not fit) is what the run would do.
            if let RunEnd::Paused { node, reason, .. } = &end {
                if args.act.output == StepOutput::Table {
                    print_dry_run(&session, &args.act, None);
                }
                return Ok(finish(
                    &args.act,
                    1,
                    &format!("would pause: node {node}: {reason}"),
                ));
            }
            let then = "(later batches follow as each batch passes its gate)";
            return Ok(print_dry_run(&session, &args.act, Some(then)).unwrap_or(ExitCode::SUCCESS));
        }
        Ok(report(&end, &args.act, "auto-advance", revision))
    })
}

/// Prints how a run ended and returns its exit code (see [`RunEnd::exit_code`]).
pub fn report(end: &RunEnd, act: &ActArgs, label: &str, revision: Option<i64>) -> ExitCode {
    finish(act, end.exit_code(), &end.text(label, revision))
}
