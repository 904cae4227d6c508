//! Command-line interface: argument parsing and the headless commands.

pub mod act_args;
pub mod advance;
pub mod audit;
pub mod auto;
pub mod cluster_args;
pub mod console;
pub mod exec_guard;
pub mod explain;
pub mod history;
pub mod pause;
pub mod rollback;
pub mod sim;
pub mod sim_credential;
pub mod status;

use clap::{Parser, Subcommand};

/// rollcall — a terminal rollout console for Kubernetes DaemonSets.
#[derive(Debug, Parser)]
#[command(name = "rollcall", version, about, long_about = None)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do; without a subcommand, the console opens.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The console's arguments (used when no subcommand is given).
    #[command(flatten)]
    pub console: console::ConsoleArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Audit a DaemonSet's coverage against an independently kept roster of nodes
    /// (exit 0 all clear, 1 problems found, 2 error).
    Audit(audit::AuditArgs),
    /// Explain, node by node, whether each DaemonSet of a snapshot should run there and why not.
    Explain(explain::ExplainArgs),
    /// Show a DaemonSet's rollout: state, nodes (revision, readiness, eligibility) and the plan.
    Status(status::StatusArgs),
    /// List a DaemonSet's revisions (images, node counts) or show one with its diff.
    History(history::HistoryArgs),
    /// Move nodes to the current revision by deleting their old pod (UID precondition).
    Advance(advance::AdvanceArgs),
    /// Auto-advance in gated batches until done or a failure pauses the rollout.
    Auto(auto::AutoArgs),
    /// Pause the rollout for every console (freezes a RollingUpdate DaemonSet).
    Pause(pause::PauseArgs),
    /// Resume a paused rollout (restores the exact previous update strategy).
    Resume(pause::PauseArgs),
    /// Roll the template back to the previous or a chosen revision.
    Rollback(rollback::RollbackArgs),
    /// Serve the embedded cluster (API server, DaemonSet controller, kubelets) until Ctrl-C.
    Sim(sim::SimArgs),
    /// The embedded cluster's exec credential plugin (used by its kubeconfig).
    #[command(hide = true)]
    SimCredential(sim_credential::SimCredentialArgs),
    /// Runs an exec credential plugin with a timeout (used for kubeconfig exec users).
    #[command(hide = true)]
    ExecGuard(exec_guard::ExecGuardArgs),
    /// Start the embedded cluster in-process and open the console on it.
    Demo(console::DemoArgs),
}

/// Runs the parsed command line and returns the process exit code.
///
/// Commands return their own exit code (0 success, 1 "ran but found problems",
/// as documented per command); an error prints `error: ...` with its causes on
/// stderr and exits 2.
pub fn run(cli: Cli) -> std::process::ExitCode {
    let result: anyhow::Result<std::process::ExitCode> = match cli.command {
        None => console::run_console(&cli.console),
        Some(Command::Explain(args)) => explain::run(&args),
        Some(Command::Status(args)) => status::run(&args),
        Some(Command::History(args)) => history::run(&args),
        Some(Command::Advance(args)) => advance::run(&args),
        Some(Command::Auto(args)) => auto::run(&args),
        Some(Command::Pause(args)) => pause::run(&args, false),
        Some(Command::Resume(args)) => pause::run(&args, true),
        Some(Command::Rollback(args)) => rollback::run(&args),
        Some(Command::Sim(args)) => sim::run(&args),
        Some(Command::SimCredential(args)) => sim_credential::run(&args),
        Some(Command::ExecGuard(args)) => Ok(exec_guard::run(&args)),
        Some(Command::Demo(args)) => console::run_demo(&args, cli.console.log_file.as_deref()),
        Some(Command::Audit(args)) => audit::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
