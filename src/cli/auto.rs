//! `rollcall auto NS/NAME [--canary SELECTOR] [--batch K] [--soak D] [--timeout D]`:
//! auto-advance to completion or to an automatic pause. Exit 0 completed,
//! 1 paused (by a failed gate: which node and why; or by someone else), 2 error.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cli::act_args::{ActArgs, block_on, confirm, open, parse_duration, precheck};
use crate::cli::cluster_args::ClusterArgs;
use crate::engine::selector::Selector;
use crate::ops::auto::AutoPolicy;
use crate::ops::drive::{AutoEnd, AutoSettings, auto};
use crate::ops::follow::Follower;
use crate::ops::rbac::Operation;

/// Arguments of `rollcall auto`.
#[derive(Debug, Args)]
pub struct AutoArgs {
    /// The DaemonSet, `NAMESPACE/NAME` or `NAME`.
    #[arg(value_name = "NS/NAME")]
    pub daemonset: String,
    /// Canary nodes by label selector (kubectl syntax); they go first, as their own batch.
    #[arg(long, value_name = "SELECTOR")]
    pub canary: Option<String>,
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
        };
        let end = auto(&session.executor, &follower, &settings).await?;
        Ok(report(&end))
    })
}

/// Prints how a run ended and returns the exit code (0 completed, 1 paused).
pub fn report(end: &AutoEnd) -> ExitCode {
    match end {
        AutoEnd::Completed { advanced } => {
            crate::cli::out::line(&format!("completed: {advanced} node(s) advanced"));
            ExitCode::SUCCESS
        }
        AutoEnd::Paused { node, reason } => {
            crate::cli::out::eline(&format!("paused: node {node}: {reason}"));
            ExitCode::from(1)
        }
        AutoEnd::Stopped { by } => {
            crate::cli::out::eline(&format!("stopped by {by}"));
            ExitCode::from(1)
        }
    }
}
