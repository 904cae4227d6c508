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
    ActArgs, StepOutput, block_on, confirm, install_interrupt, open, parse_duration, precheck,
    progress_printer,
};
use crate::cli::cluster_args::ClusterArgs;
use crate::engine::selector::Selector;
use crate::ops::auto::AutoPolicy;
use crate::ops::drive::{AutoEnd, AutoSettings, RunContext, StartRefusal, auto, check_start};
use crate::ops::follow::Follower;
use crate::ops::interrupt::EXIT_INTERRUPTED;
use crate::ops::rbac::Operation;

/// Arguments of `rollcall auto`.
#[derive(Debug, Args)]
pub struct AutoArgs {
    /// The DaemonSet, `NAMESPACE/NAME` or `NAME`.
    #[arg(value_name = "NS/NAME")]
    pub daemonset: String,
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
    /// --yes, --read-only, --journal.
    #[command(flatten)]
    pub act: ActArgs,
    /// Cluster flags.
    #[command(flatten)]
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
        let follower = Follower::start(session.connection.client.clone(), &session.target);
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
                eprintln!("refused: {refusal} (--despite-failing)");
                return Ok(ExitCode::from(1));
            }
        }
        let interrupt = install_interrupt(&session);
        let progress = progress_printer(&args.act);
        let ctx = RunContext {
            executor: &session.executor,
            follower: &follower,
            interrupt: &interrupt,
            progress: progress.as_ref(),
        };
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
            i32::from(EXIT_INTERRUPTED),
            format!("interrupted by {by}: the rollout is paused (resume it to continue)"),
        ),
    };
    let text = crate::sanitize::sanitize(&text).into_owned();
    if act.output == StepOutput::Json {
        let line = serde_json::json!({
            "event": "end",
            "time": jiff::Timestamp::now(),
            "exitCode": code,
            "message": text,
        });
        println!("{line}");
    } else if code == 0 {
        println!("{text}");
    } else {
        eprintln!("{text}");
    }
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}
