//! Command-line interface: argument parsing and the headless commands.
//!
//! The global flags ([`cluster_args::GlobalArgs`]) are parsed once at the top,
//! before or after the subcommand, and handed to the command that runs.

pub mod act_args;
pub mod advance;
mod argv;
pub mod audit;
pub mod auto;
pub mod cluster_args;
pub mod console;
pub mod exec_guard;
pub mod explain;
pub mod fleet;
pub mod fleet_auto;
pub mod fleet_live;
pub mod fleet_plan;
mod fleet_plan_table;
pub mod fleet_preflight;
pub mod fleet_rehearse;
pub mod fleet_rollback;
pub mod generate;
pub mod history;
pub mod out;
pub mod pause;
pub mod reference;
pub mod rollback;
pub mod sim;
pub mod sim_credential;
mod sim_fleet;
pub mod status;
pub mod version;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

/// rollcall — a terminal rollout console for Kubernetes DaemonSets.
#[derive(Debug, Parser)]
#[command(name = "rollcall", version = version::LINE, about, long_about = None)]
#[command(after_help = "\
A DAEMONSET is NAME (in the -n namespace), NAMESPACE/NAME, ds/NAME, daemonset/NAME or \
daemonsets.apps/NAME. Global options go before or after the subcommand.
Installed as kubectl-rollcall (a symlink or a copy on PATH), this is the kubectl plugin \
`kubectl rollcall`.")]
pub struct Cli {
    /// What to do; without a subcommand, the console opens.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The console's arguments (used when no subcommand is given).
    #[command(flatten)]
    pub console: console::ConsoleArgs,
    /// Global flags, accepted before or after the subcommand.
    #[command(flatten)]
    pub global: cluster_args::GlobalArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "parsed once per process; the fleet's arguments hold two commands' flags"
)]
pub enum Command {
    /// Audit a DaemonSet's coverage against an independently kept roster of nodes
    /// (exit 0 all clear, 1 problems found, 2 error).
    Audit(audit::AuditArgs),
    /// Explain, node by node, whether each DaemonSet of a snapshot should run there and why not.
    Explain(explain::ExplainArgs),
    /// Show a DaemonSet's rollout: state, a summary (eligibility, revisions, readiness,
    /// problems), the nodes (when few, or --all) and the plan.
    Status(status::StatusArgs),
    /// List a DaemonSet's revisions (images, node counts) or show one with its diff.
    History(history::HistoryArgs),
    /// Move nodes to the current revision by deleting their old pod (UID precondition).
    Advance(advance::AdvanceArgs),
    /// Auto-advance in gated batches until done or a failure pauses the rollout.
    Auto(auto::AutoArgs),
    /// Pause the rollout for every console (freezes a RollingUpdate DaemonSet).
    Pause(pause::PauseArgs),
    /// Resume a paused rollout (restores the exact previous update strategy); also
    /// clears the record of a rollback (and so a reported "rollback reverted").
    Resume(pause::ResumeArgs),
    /// Roll the template back to the previous or a chosen revision.
    Rollback(rollback::RollbackArgs),
    /// One DaemonSet across many clusters (kubeconfig contexts), read-only, no hub.
    Fleet(fleet::FleetArgs),
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
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completion(generate::CompletionArgs),
    /// Print the man page (roff), e.g. `rollcall man | man -l -`.
    Man,
    /// Print the version, the git commit and the build date.
    Version(version::VersionArgs),
    /// Print a generated document (`cli-reference`: docs/cli.md).
    #[command(hide = true)]
    Docs(reference::DocsArgs),
}

/// The name to show in help and usage: `kubectl rollcall` when the binary runs
/// as the kubectl plugin (`kubectl-rollcall` on PATH), else `rollcall`.
pub fn display_name(argv0: Option<&std::ffi::OsStr>) -> &'static str {
    let stem = argv0
        .map(std::path::Path::new)
        .and_then(std::path::Path::file_stem)
        .and_then(std::ffi::OsStr::to_str);
    match stem {
        Some(stem) if stem.starts_with("kubectl-rollcall") => "kubectl rollcall",
        _ => "rollcall",
    }
}

/// The clap command, named as it is invoked (see [`display_name`]).
pub fn command(name: &'static str) -> clap::Command {
    Cli::command().bin_name(name).display_name(name)
}

/// Parses the process's arguments (exits with usage on error, as clap does,
/// but through the sanitiser: clap echoes the arguments it rejects, and an
/// argument can carry escape sequences).
pub fn parse() -> Cli {
    let mut args = std::env::args_os();
    let program = args.next();
    let name = display_name(program.as_deref());
    let args = argv::hoist_output(args.collect(), &command(name));
    let parsed = command(name)
        .try_get_matches_from(program.into_iter().chain(args))
        .and_then(|matches| from_matches(&matches))
        .map_err(|err| err.format(&mut command(name)));
    parsed.unwrap_or_else(|err| exit_with(&err))
}

/// Prints a clap error (usage, `--help`, `--version`) sanitised and exits with its code.
fn exit_with(err: &clap::Error) -> ! {
    let text = err.render().to_string();
    if err.use_stderr() {
        out::stderr(&text);
    } else {
        let _ = out::stdout(&text);
    }
    std::process::exit(err.exit_code())
}

/// The parsed command line; the console's own arguments (a DAEMONSET, `--roster`)
/// with a subcommand are a usage error, not silently ignored.
pub fn from_matches(matches: &clap::ArgMatches) -> Result<Cli, clap::Error> {
    let cli = Cli::from_arg_matches(matches)?;
    if let Some((name, _)) = matches.subcommand() {
        let console = &cli.console;
        if let Some(daemonset) = &console.daemonset {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                format!("'{daemonset}' before the subcommand '{name}': put the DaemonSet after it"),
            ));
        }
        if console.roster.is_some() {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                format!("--roster before the subcommand '{name}': put it after the subcommand"),
            ));
        }
    }
    Ok(cli)
}

/// Hands the global flags to the command that uses them.
fn apply_globals(cli: &mut Cli) {
    let global = &cli.global;
    cli.console.apply(global);
    let cluster = global.cluster.clone();
    match &mut cli.command {
        None
        | Some(
            Command::Sim(_)
            | Command::Completion(_)
            | Command::Man
            | Command::Version(_)
            | Command::Docs(_)
            | Command::SimCredential(_)
            | Command::ExecGuard(_),
        ) => {}
        Some(Command::Explain(args)) => args.namespace.clone_from(&cluster.namespace),
        Some(Command::Audit(args)) => args.cluster = cluster,
        Some(Command::Status(args)) => args.cluster = cluster,
        Some(Command::Fleet(args)) => args.apply(cluster, global),
        Some(Command::History(args)) => args.cluster = cluster,
        Some(Command::Advance(args)) => {
            args.cluster = cluster;
            args.act.apply(global);
        }
        Some(Command::Auto(args)) => {
            args.cluster = cluster;
            args.act.apply(global);
        }
        Some(Command::Pause(args)) => {
            args.cluster = cluster;
            args.act.apply(global);
        }
        Some(Command::Resume(args)) => {
            args.cluster = cluster;
            args.act.apply(global);
        }
        Some(Command::Rollback(args)) => {
            args.cluster = cluster;
            args.act.apply(global);
        }
        Some(Command::Demo(args)) => {
            args.cluster = cluster;
            args.ops = console::ConsoleOpsArgs::from_global(global);
        }
    }
}

/// Runs the parsed command line and returns the process exit code.
///
/// Commands return their own exit code (0 success, 1 "ran but found problems",
/// as documented per command); an error prints `error: ...` with each of its
/// causes once on stderr (sanitised and bounded: errors often echo API or file
/// text) and exits 2.
pub fn run(mut cli: Cli) -> std::process::ExitCode {
    apply_globals(&mut cli);
    let result: anyhow::Result<std::process::ExitCode> = match cli.command {
        None => console::run_console(&cli.console),
        Some(Command::Explain(args)) => explain::run(&args),
        Some(Command::Status(args)) => status::run(&args),
        Some(Command::Fleet(args)) => fleet::run(&args),
        Some(Command::History(args)) => history::run(&args),
        Some(Command::Advance(args)) => advance::run(&args),
        Some(Command::Auto(args)) => auto::run(&args),
        Some(Command::Pause(args)) => pause::run_pause(&args),
        Some(Command::Resume(args)) => pause::run_resume(&args),
        Some(Command::Rollback(args)) => rollback::run(&args),
        Some(Command::Sim(args)) => sim::run(&args),
        Some(Command::SimCredential(args)) => sim_credential::run(&args),
        Some(Command::ExecGuard(args)) => Ok(exec_guard::run(&args)),
        Some(Command::Demo(args)) => console::run_demo(&args, cli.global.log_file.as_deref()),
        Some(Command::Audit(args)) => audit::run(&args),
        Some(Command::Completion(args)) => generate::completion(&args),
        Some(Command::Man) => generate::man(),
        Some(Command::Version(args)) => version::run(&args),
        Some(Command::Docs(args)) => reference::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            out::error(&err);
            if let Some(hint) = cluster_args::unreachable_hint(&err) {
                out::eline(&hint);
            }
            std::process::ExitCode::from(2)
        }
    }
}

/// The error and its causes joined by `: `, each cause once: an error whose
/// message already includes its source's text (a `thiserror` `{source}` in the
/// message) does not print that text a second time.
pub fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let message = cause.to_string();
        if text.contains(&message) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}

#[cfg(test)]
mod tests;
