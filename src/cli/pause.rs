//! `rollcall pause DAEMONSET [--reason TEXT]` and `rollcall resume DAEMONSET`:
//! stop and restart a rollout for every console (on RollingUpdate, by switching
//! the strategy to OnDelete and back, exactly as it was). With `--read-only`,
//! print the write instead of sending it.

use std::process::ExitCode;

use clap::Args;

use crate::cli::act_args::{ActArgs, block_on, confirm, finish, open, precheck, print_dry_run};
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::out;
use crate::model::DsRef;
use crate::ops::drive::write_with_retries;
use crate::ops::owner_guard::{Decision, decide, pause_spec_action, reverted};
use crate::ops::pause::{PauseRequest, pause, resume};
use crate::ops::rbac::Operation;

/// Arguments of `rollcall pause`.
#[derive(Debug, Args)]
pub struct PauseArgs {
    /// The DaemonSet: `NAME` (in the -n namespace), `NAMESPACE/NAME`, `ds/NAME`,
    /// `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// Why, for every console and `status` to show (stored on the DaemonSet).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Change the strategy even though a GitOps tool (Argo CD, Flux, Fleet)
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

/// Arguments of `rollcall resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The DaemonSet: `NAME` (in the -n namespace), `NAMESPACE/NAME`, `ds/NAME`,
    /// `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// Restore the strategy even though a GitOps tool (Argo CD, Flux, Fleet)
    /// owns the spec.
    #[arg(long)]
    pub despite_owner: bool,
    /// --yes (and the global --read-only, --journal).
    #[command(flatten)]
    pub act: ActArgs,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall pause`.
pub fn run_pause(args: &PauseArgs) -> anyhow::Result<ExitCode> {
    run(
        &args.daemonset,
        &args.act,
        &args.cluster,
        Change::Pause(args.reason.clone()),
        args.despite_owner,
    )
}

/// Runs `rollcall resume`.
pub fn run_resume(args: &ResumeArgs) -> anyhow::Result<ExitCode> {
    run(
        &args.daemonset,
        &args.act,
        &args.cluster,
        Change::Resume,
        args.despite_owner,
    )
}

/// Which of the two a run does.
enum Change {
    /// Pause, with the reason if given.
    Pause(Option<String>),
    /// Resume.
    Resume,
}

fn run(
    daemonset: &DsRef,
    act: &ActArgs,
    cluster: &ClusterArgs,
    change: Change,
    despite_owner: bool,
) -> anyhow::Result<ExitCode> {
    let resuming = matches!(change, Change::Resume);
    let action = match change {
        Change::Pause(_) => "pause",
        Change::Resume => "resume",
    };
    block_on(async {
        let session = open(cluster, daemonset, act).await?;
        precheck(&session, Operation::Pause, action).await?;
        let follower = crate::cli::act_args::follow(&session);
        let snapshot = follower.snapshot().await?;
        let state = snapshot.state()?;
        // A reverted rollback does not stand in the way of a pause (the pause
        // is a new action); a reverted pause does.
        if let Some(revert) = reverted(&snapshot.ds, &state)
            .filter(|r| !resuming && r.what == crate::ops::owner_guard::Reverted::Pause)
        {
            anyhow::bail!(
                "{}: {}; `rollcall resume` clears the stored pause",
                session.target,
                revert.describe()
            );
        }
        if let Some(spec_action) = pause_spec_action(&snapshot.ds, &state, resuming) {
            match decide(&snapshot.ds, spec_action, despite_owner) {
                Decision::Proceed => {}
                Decision::Warn(text) => out::warning(&format!("{}: {text}", session.target)),
                Decision::Refuse(text) => anyhow::bail!("{}: {text}", session.target),
            }
        }
        confirm(&format!("{action} {}", session.target), act.yes)?;
        let by = session.executor.actor().to_owned();
        match change {
            Change::Resume => {
                write_with_retries(
                    &follower,
                    |snap| resume(snap, &by, jiff::Timestamp::now()).map(Some),
                    &session.executor,
                )
                .await?;
            }
            Change::Pause(reason) => {
                let request = PauseRequest {
                    by,
                    reason,
                    node: None,
                    automatic: false,
                };
                write_with_retries(
                    &follower,
                    |snap| pause(snap, &request, jiff::Timestamp::now()).map(Some),
                    &session.executor,
                )
                .await?;
            }
        }
        if let Some(code) = print_dry_run(&session, act, None) {
            return Ok(code);
        }
        Ok(finish(act, 0, &format!("{} {action}d", session.target)))
    })
}
