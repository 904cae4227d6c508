//! Command-line interface: argument parsing and the headless commands.

pub mod cluster_args;
pub mod explain;
pub mod sim;

use clap::{Parser, Subcommand};

/// rollcall — a terminal rollout console for Kubernetes DaemonSets.
#[derive(Debug, Parser)]
#[command(name = "rollcall", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explain, node by node, whether each DaemonSet of a snapshot should run there and why not.
    Explain(explain::ExplainArgs),
    /// Serve the embedded cluster (API server, DaemonSet controller, kubelets) until Ctrl-C.
    Sim(sim::SimArgs),
}

/// Runs the parsed command line and returns the process exit code.
///
/// Commands return their own exit code (0 success, 1 "ran but found problems",
/// as documented per command); an error prints `error: ...` with its causes on
/// stderr and exits 2.
pub fn run(cli: Cli) -> std::process::ExitCode {
    let result: anyhow::Result<std::process::ExitCode> = match cli.command {
        Command::Explain(args) => explain::run(&args),
        Command::Sim(args) => sim::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
