//! `rollcall exec-guard` (hidden): runs a kubeconfig's exec credential plugin
//! with a timeout and kills it (and what it started) when the timeout passes
//! or rollcall is gone. rollcall rewrites exec users to go through it; see
//! `cluster::exec`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cli::act_args::parse_duration;
use crate::cluster::exec::{guard, leave_terminal_group};

/// Arguments of `rollcall exec-guard`.
#[derive(Clone, Debug, Args)]
pub struct ExecGuardArgs {
    /// How long the plugin may run.
    #[arg(long, value_name = "D", value_parser = parse_duration)]
    pub timeout: Duration,
    /// The plugin and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// Runs `rollcall exec-guard`.
pub fn run(args: &ExecGuardArgs) -> ExitCode {
    let Some((program, rest)) = args.command.split_first() else {
        return ExitCode::from(2);
    };
    leave_terminal_group();
    ExitCode::from(guard(program, rest, args.timeout))
}
