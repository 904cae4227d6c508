//! `rollcall pause NS/NAME` and `rollcall resume NS/NAME`: stop and restart a
//! rollout for every console (on RollingUpdate, by switching the strategy to
//! OnDelete and back, exactly as it was).

use std::process::ExitCode;

use clap::Args;

use crate::cli::act_args::{ActArgs, block_on, confirm, open, precheck};
use crate::cli::cluster_args::ClusterArgs;
use crate::ops::drive::retry_on_conflict;
use crate::ops::follow::Follower;
use crate::ops::owner_guard::{Decision, decide, pause_spec_action, reverted};
use crate::ops::pause::{PauseRequest, pause, resume};
use crate::ops::rbac::Operation;

/// Arguments of `rollcall pause` and `rollcall resume`.
#[derive(Debug, Args)]
pub struct PauseArgs {
    /// The DaemonSet, `NAMESPACE/NAME` or `NAME`.
    #[arg(value_name = "NS/NAME")]
    pub daemonset: String,
    /// Change the strategy even though a GitOps tool (Argo CD, Flux, Fleet)
    /// owns the spec and will likely put it back.
    #[arg(long)]
    pub despite_owner: bool,
    /// --yes, --read-only, --journal.
    #[command(flatten)]
    pub act: ActArgs,
    /// Cluster flags.
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall pause` (`resume: false`) or `rollcall resume`.
pub fn run(args: &PauseArgs, resuming: bool) -> anyhow::Result<ExitCode> {
    let action = if resuming { "resume" } else { "pause" };
    block_on(async {
        let session = open(&args.cluster, &args.daemonset, &args.act).await?;
        precheck(&session, Operation::Pause, action).await?;
        let follower = Follower::start(session.connection.client.clone(), &session.target);
        let snapshot = follower.snapshot().await?;
        let state = snapshot.state()?;
        if let Some(revert) = reverted(&snapshot.ds, &state).filter(|_| !resuming) {
            anyhow::bail!(
                "{}: {}; `rollcall resume` clears the stored pause",
                session.target,
                revert.describe()
            );
        }
        if let Some(spec_action) = pause_spec_action(&snapshot.ds, &state, resuming) {
            match decide(&snapshot.ds, spec_action, args.despite_owner) {
                Decision::Proceed => {}
                Decision::Warn(text) => eprintln!("warning: {}: {text}", session.target),
                Decision::Refuse(text) => anyhow::bail!("{}: {text}", session.target),
            }
        }
        confirm(&format!("{action} {}", session.target), args.act.yes)?;
        let by = session.executor.actor().to_owned();
        if resuming {
            retry_on_conflict(
                &follower,
                |snap| resume(snap, &by, jiff::Timestamp::now()),
                &session.executor,
            )
            .await?;
        } else {
            let request = PauseRequest {
                by,
                reason: None,
                node: None,
            };
            retry_on_conflict(
                &follower,
                |snap| pause(snap, &request, jiff::Timestamp::now()),
                &session.executor,
            )
            .await?;
        }
        println!("{} {action}d", session.target);
        Ok(ExitCode::SUCCESS)
    })
}
