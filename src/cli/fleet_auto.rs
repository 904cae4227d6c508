//! `rollcall fleet auto -f fleet.yaml --yes`: the plan, checked as `fleet
//! plan` checks it, confirmed, then carried out by [`crate::fleet::run`]
//! (wave by wave; in each cluster the run `rollcall auto` makes). This
//! command only reads its flags, prints the run's steps and its end, and
//! turns Ctrl-C or SIGTERM into the run's stop. `--dry-run`: every line says
//! `would`. Exit 0 done, 1 stopped/skipped/incomplete, 2 refused, 130
//! interrupted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::fleet_plan::{Prepared, check, prepare_plan, read_all};
use crate::cli::act_args::{ActArgs, StepOutput, confirm, finish, json_line, step_line};
use crate::cli::cluster_args::ClusterArgs;
use crate::fleet::run::connector::Kubeconfig;
use crate::fleet::run::{Event, FleetRun, FleetSettings, Happening, Kind, Report, Stopper};
use crate::ops::drive::Progress;
use crate::ops::interrupt::{EXIT_INTERRUPTED, wait_for_signal};
use crate::ops::journal::{Journal, JournalEntry, LocalUser, actor_of};
use crate::ops::journal_action::JournalAction;

/// What a wave does with a cluster it cannot reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Unreachable {
    /// The wave waits for it (and says so).
    #[default]
    Hold,
    /// The wave goes on without it; it is listed as skipped (exit 1).
    Skip,
}

/// Arguments of `rollcall fleet auto`.
#[derive(Debug, Args)]
pub struct FleetAutoArgs {
    /// The plan, and how to carry it out.
    #[command(flatten)]
    pub run: FleetRunArgs,
}

/// What `fleet auto` and `fleet rollback` share.
#[derive(Debug, Args)]
pub struct FleetRunArgs {
    /// The plan file (YAML: daemonset, clusters, exclude, budget, waves).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// An unreachable cluster holds its wave, or is skipped.
    #[arg(long, value_enum, default_value_t = Unreachable::Hold)]
    pub unreachable: Unreachable,
    /// Show what the run would do (each cluster's first batch or rollback), change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// --yes, -o json, --quiet (and the global --read-only, --journal).
    #[command(flatten)]
    pub act: ActArgs,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// One JSON line of a fleet run: the step, with its context.
#[derive(Serialize)]
struct FleetStep<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    context: &'a str,
    #[serde(flatten)]
    step: &'a Progress,
}

/// Prints a fleet run's events: `TIME CONTEXT node N: text` on stderr, or
/// JSON lines with `context` on stdout; a member's notices as plain lines
/// on stderr.
struct Printer {
    quiet: bool,
    output: StepOutput,
}

impl Report for Printer {
    fn event(&self, event: Event) {
        if event.happening == Happening::Notice {
            crate::cli::out::eline(&event.step.message);
            return;
        }
        if self.quiet {
            return;
        }
        match self.output {
            StepOutput::Json => json_line(&FleetStep {
                context: &event.context,
                step: &event.step,
            }),
            StepOutput::Table => {
                let context = Some(event.context.as_str()).filter(|c| !c.is_empty());
                crate::cli::out::eline(&step_line(context, &event.step));
            }
        }
    }
}

/// The acting flags, with `--dry-run` as the global `--read-only` (a dry
/// run: nothing is sent, nothing to confirm).
pub(super) fn dry_run_act(act: &ActArgs, dry_run: bool) -> ActArgs {
    let mut act = act.clone();
    if dry_run {
        act.read_only = true;
        act.yes = true;
    }
    act
}

/// Runs `rollcall fleet auto`.
pub async fn run(args: &FleetAutoArgs) -> anyhow::Result<ExitCode> {
    let args = &args.run;
    let act = dry_run_act(&args.act, args.dry_run);
    let prepared = prepare_plan(&args.cluster, &args.file)?;
    // Refused before anything is written: the same checks as `fleet plan`.
    check(&prepared.run_plan(), &read_all(&prepared).await)?;
    let clusters = prepared.assignment.contexts().count();
    confirm(
        &format!(
            "roll {} out across {clusters} cluster(s) in {} wave(s) (plan {})",
            prepared.daemonset,
            prepared.assignment.waves.len(),
            prepared.digest
        ),
        act.yes,
    )?;
    carry_out(&prepared, args, &act, Kind::Advance, "rollcall fleet auto").await
}

/// Builds the run of a checked, confirmed plan, carries it out (Ctrl-C or
/// SIGTERM stops it), prints its end; the exit code.
pub(super) async fn carry_out(
    prepared: &Prepared,
    args: &FleetRunArgs,
    act: &ActArgs,
    kind: Kind,
    by: &str,
) -> anyhow::Result<ExitCode> {
    // Read once: every member takes its own entries from it.
    let options = crate::cluster::connect::read_once(&args.cluster.connect_options())?;
    let journal = Journal::from_flag(act.journal.as_deref())?;
    let settings = FleetSettings {
        namespace: args.cluster.namespace.clone(),
        journal: journal.clone(),
        dry_run: act.read_only,
        skip_unreachable: args.unreachable == Unreachable::Skip,
        patience: options
            .request_timeout
            .unwrap_or(crate::cluster::connect::DEFAULT_REQUEST_TIMEOUT),
        by: by.to_owned(),
    };
    let printer = Printer {
        quiet: act.quiet,
        output: act.output,
    };
    let run = FleetRun::new(
        prepared.run_plan(),
        kind,
        settings,
        Arc::new(Kubeconfig { options }),
        Arc::new(printer),
    );
    if !act.read_only {
        listen_for_signals(run.stopper(), journal, prepared.daemonset.to_string());
    }
    let outcome = run.carry_out().await;
    Ok(finish(act, outcome.exit_code(), &outcome.summary()))
}

/// How long a second Ctrl-C waits for the writes already sent to be journalled.
const EXIT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// The first Ctrl-C or SIGTERM stops every member after its current step
/// (each pauses with the fleet's reason); a second exits as soon as the
/// writes already sent are journalled (sending none after it), within
/// [`EXIT_PATIENCE`].
fn listen_for_signals(stopper: Stopper, journal: Journal, daemonset: String) {
    tokio::spawn(async move {
        wait_for_signal().await;
        crate::cli::out::eline(
            "interrupt: every cluster stops after its current step (again to exit now)",
        );
        stopper.stop("interrupted (Ctrl-C or SIGTERM)");
        wait_for_signal().await;
        crate::cli::out::eline(
            "interrupted again: exiting once the writes already sent are journalled \
             (clusters may be left without a pause)",
        );
        let journalled = stopper.close_writes(EXIT_PATIENCE).await;
        if !journalled {
            crate::cli::out::eline(&format!(
                "a write sent is still unanswered after {}s: exiting without its journal line \
                 (`kubectl get pods` shows what became of it)",
                EXIT_PATIENCE.as_secs()
            ));
        }
        let unanswered = if journalled {
            ""
        } else {
            " (a write sent was still unanswered)"
        };
        let _ = journal.append(&JournalEntry {
            time: jiff::Timestamp::now().to_string(),
            user: actor_of(None, &LocalUser::of_env()),
            daemonset,
            action: JournalAction::Interrupt,
            result: "exit".to_owned(),
            message: Some(format!(
                "interrupted twice: exited without pausing{unanswered}"
            )),
            ..JournalEntry::default()
        });
        std::process::exit(i32::from(EXIT_INTERRUPTED));
    });
}
