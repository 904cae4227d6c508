//! `rollcall auto NS/NAME [--canary SELECTOR] [--batch K] [--soak D] [--timeout D]`:
//! auto-advance to completion or to an automatic pause. Every setting is this
//! run's own (nothing is inherited from an earlier run). Exit 0 completed,
//! 1 paused (a failed gate: which node and why; someone else's pause; failing
//! updated pods before the start), 2 error, 130 interrupted (the rollout is
//! left paused, "interrupted by …").

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cli::act_args::{
    ActArgs, block_on, confirm, finish, install_interrupt, open, parse_duration, precheck,
    print_dry_run, progress_printer,
};
use crate::cli::cluster_args::ClusterArgs;
use crate::engine::selector::Selector;
use crate::model::DsRef;
use crate::ops::auto::AutoPolicy;
use crate::ops::drive::{AutoEnd, AutoSettings, RunContext, StartRefusal, auto, check_start};
use crate::ops::interrupt::{EXIT_INTERRUPTED, Interrupt};
use crate::ops::rbac::Operation;

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
        let settings = AutoSettings {
            policy: AutoPolicy {
                batch: args.batch,
                soak: args.soak,
                timeout: args.timeout,
            },
            canary_selector: args.canary.clone(),
            rollback: None,
            despite_failing: args.despite_failing,
            include_cordoned: false,
        };
        // Refuse before anything is written: a typo'd canary, failing pods.
        let snapshot = follower.snapshot().await?;
        let state = snapshot.state()?;
        match check_start(&snapshot, &state, &settings, jiff::Timestamp::now()) {
            Ok(()) => {}
            Err(StartRefusal::Invalid(err)) => return Err(err.into()),
            Err(refusal @ StartRefusal::Failing(_)) => {
                return Ok(finish(
                    &args.act,
                    1,
                    &format!("refused: {refusal} (--despite-failing)"),
                ));
            }
        }
        let dry_run = session.executor.dry_run();
        let interrupt = if dry_run.is_some() {
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
        };
        if let Some(dry_run) = dry_run {
            // A dry run shows the writes up to the first batch's deletes: what
            // follows waits for the cluster to react, which it never will.
            tokio::select! {
                end = auto(&ctx, &settings) => { end?; }
                () = dry_run.first_delete() => {}
            }
            let then = "(later batches follow as each batch passes its gate)";
            return Ok(print_dry_run(&session, &args.act, Some(then)).unwrap_or(ExitCode::SUCCESS));
        }
        let end = auto(&ctx, &settings).await?;
        Ok(report(&end, &args.act, "advanced", None))
    })
}

/// Prints how a run ended and returns the exit code: 0 completed, 1 paused or
/// left incomplete, 130 interrupted. `verb` says what happened to the nodes
/// (`advanced`, `moved back`); `revision` is the revision left behind, for a
/// rollback's "still on revision R".
pub fn report(end: &AutoEnd, act: &ActArgs, verb: &str, revision: Option<i64>) -> ExitCode {
    let (code, text) = match end {
        AutoEnd::Completed { advanced, left } if left.is_empty() => {
            (0, format!("completed: {advanced} node(s) {verb}"))
        }
        AutoEnd::Completed { advanced, left } => {
            let on = revision
                .map(|r| format!(" on revision {r}"))
                .unwrap_or_default();
            let list: Vec<String> = left.iter().map(|(n, why)| format!("{n}: {why}")).collect();
            (
                1,
                format!(
                    "incomplete: {advanced} node(s) {verb}, {} node(s) still{on} ({}); use --include-cordoned to move cordoned nodes",
                    left.len(),
                    list.join(", ")
                ),
            )
        }
        AutoEnd::Paused { node, reason } => (1, format!("paused: node {node}: {reason}")),
        AutoEnd::Stopped { by } => (1, format!("stopped by {by}")),
        AutoEnd::Interrupted { by } => (
            EXIT_INTERRUPTED,
            format!("interrupted by {by}: the rollout is paused (resume it to continue)"),
        ),
    };
    let text = crate::sanitize::sanitize(&text).into_owned();
    finish(act, code, &text)
}
