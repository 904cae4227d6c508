//! `rollcall fleet auto -f fleet.yaml --yes`: the plan, checked as `fleet
//! plan` checks it, carried out wave by wave. Inside each cluster the run is
//! `rollcall auto`'s own ([`super::fleet_member`]); a wave's clusters run
//! `parallel` at a time, and the wave passes when every one of them passed;
//! then its bake; then the next wave. A failure past the budget (or Ctrl-C,
//! SIGTERM) stops new work everywhere at once and leaves every touched
//! cluster paused with a reason that begins `fleet run DIGEST`, which a second
//! `fleet auto` of the same plan resumes (nodes already moved are no longer
//! in any cluster's plan, so none is deleted twice). `--dry-run`: every line
//! says `would`. Exit 0 done, 1 stopped/skipped/incomplete, 2 refused, 130
//! interrupted.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use clap::{Args, ValueEnum};
use serde::Serialize;
use tokio::sync::Semaphore;

use super::fleet_member::{Job, Outcome, Say, Shared, pause_member, run_member};
use super::fleet_plan::{Prepared, check, prepare_plan, read_all, wave_settings};
use crate::cli::act_args::{ActArgs, StepOutput, confirm, finish, json_line, step_line};
use crate::cli::cluster_args::ClusterArgs;
use crate::fleet::waves::budget::Ledger;
use crate::fleet::waves::file::Wave;
use crate::ops::drive::Progress;
use crate::ops::interrupt::{EXIT_INTERRUPTED, Interrupt, wait_for_signal};

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

/// The printer every member shares: `TIME CONTEXT node N: text` on stderr,
/// or JSON lines with `context` on stdout.
fn printer(act: &ActArgs) -> Say {
    let (quiet, output) = (act.quiet, act.output);
    Arc::new(move |context: &str, step: Progress| {
        if quiet {
            return;
        }
        match output {
            StepOutput::Json => json_line(&FleetStep {
                context,
                step: &step,
            }),
            StepOutput::Table => {
                let context = Some(context).filter(|c| !c.is_empty());
                crate::cli::out::eline(&step_line(context, &step));
            }
        }
    })
}

/// Which way a fleet run walks the plan's waves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    /// First wave first (`fleet auto`).
    Forward,
    /// Last wave first (`fleet rollback`).
    Back,
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
    check(&prepared, &read_all(&prepared).await)?;
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
    let job_of = |wave: &Wave, ledger: &Ledger| Job::Advance(wave_settings(wave, ledger));
    Ok(carry_out(
        &prepared,
        &args.cluster,
        &act,
        args.unreachable,
        Direction::Forward,
        &job_of,
    )
    .await)
}

/// Carries a checked, confirmed plan out wave by wave (in `direction`),
/// each member doing `job_of(wave)`; pauses every touched member when the
/// run stops; prints the end and gives the exit code.
pub(super) async fn carry_out(
    prepared: &Prepared,
    cluster: &ClusterArgs,
    act: &ActArgs,
    unreachable: Unreachable,
    direction: Direction,
    job_of: &dyn Fn(&Wave, &Ledger) -> Job,
) -> ExitCode {
    let would = if act.read_only { "would " } else { "" };
    let shared = Arc::new(Shared {
        verb: match direction {
            Direction::Forward => "roll out",
            Direction::Back => "roll back",
        },
        cluster: cluster.clone(),
        daemonset: prepared.daemonset.clone(),
        act: act.clone(),
        digest: prepared.digest.clone(),
        ledger: Arc::new(Mutex::new(Ledger::new(prepared.plan.budget))),
        interrupt: Interrupt::never(),
        say: printer(act),
        skip_unreachable: unreachable == Unreachable::Skip,
    });
    let signalled = Arc::new(AtomicBool::new(false));
    if !act.read_only {
        listen_for_signals(&shared, &signalled);
    }
    let say = |text: String| (shared.say)("", Progress::new("fleet", None, text));
    let mut results: Vec<(String, Outcome, bool)> = Vec::new();
    let ledger = Ledger::new(prepared.plan.budget);
    let last = prepared.assignment.waves.len().saturating_sub(1);
    let mut order: Vec<usize> = (0..prepared.assignment.waves.len()).collect();
    if direction == Direction::Back {
        order.reverse();
    }
    for (step, index) in order.into_iter().enumerate() {
        let (name, contexts) = &prepared.assignment.waves[index];
        let wave = &prepared.plan.waves[index];
        if shared.interrupt.requested() {
            break;
        }
        say(format!("{would}start wave {name}: {}", contexts.join(", ")));
        let outcomes = run_wave(
            &shared,
            contexts,
            name,
            &job_of(wave, &ledger),
            wave.parallel,
        )
        .await;
        // A failure within the budget, a veto and an unreachable cluster
        // skipped on purpose let the wave pass; each is named at the end.
        let passed = outcomes.iter().all(|(_, o, _)| {
            o.passed() || matches!(o, Outcome::Failed { .. } | Outcome::Skipped(_))
        });
        let failed_any = outcomes.iter().any(|(_, o, _)| !o.passed());
        results.extend(outcomes);
        if shared.interrupt.requested() {
            break;
        }
        if !passed {
            say(format!(
                "wave {name} did not pass: the run stops before the next wave"
            ));
            break;
        }
        let note = if failed_any {
            " (with clusters skipped or failed within the budget)"
        } else {
            ""
        };
        say(format!("{would}pass wave {name}{note}"));
        if step < last && !wave.bake.0.is_zero() {
            say(format!(
                "{would}bake {} after wave {name}",
                humantime::format_duration(wave.bake.0)
            ));
            if !act.read_only {
                tokio::select! {
                    () = tokio::time::sleep(wave.bake.0) => {}
                    () = shared.interrupt.wait() => {}
                }
            }
        }
    }
    if let Some(reason) = shared.interrupt.halt_reason() {
        for (context, outcome, touched) in &results {
            // A member that moved nothing has nothing to stop.
            if *touched && matches!(outcome, Outcome::Passed { moved, .. } if *moved > 0) {
                pause_member(&shared, context, &reason).await;
            }
        }
    }
    summarize(
        prepared,
        &results,
        &shared,
        act,
        signalled.load(Ordering::SeqCst),
    )
}

/// Runs a wave's clusters, `parallel` at a time, in this task (a run's
/// executor is not `Send`; the clusters wait on the network, not the CPU),
/// each outcome said as it comes.
async fn run_wave(
    shared: &Arc<Shared>,
    contexts: &[String],
    wave: &str,
    job: &Job,
    parallel: usize,
) -> Vec<(String, Outcome, bool)> {
    let slots = Semaphore::new(parallel.max(1));
    let members = contexts.iter().map(|context| {
        let slots = &slots;
        async move {
            let Ok(_slot) = slots.acquire().await else {
                return (
                    context.clone(),
                    Outcome::Stopped("no slot".to_owned()),
                    false,
                );
            };
            let (outcome, touched) = run_member(
                Arc::clone(shared),
                context.clone(),
                wave.to_owned(),
                job.clone(),
            )
            .await;
            (shared.say)(context, Progress::new("cluster", None, outcome.text()));
            (context.clone(), outcome, touched)
        }
    });
    futures::future::join_all(members).await
}

/// The first Ctrl-C or SIGTERM stops every member after its current step
/// (each pauses with the fleet's reason); a second exits at once.
fn listen_for_signals(shared: &Arc<Shared>, signalled: &Arc<AtomicBool>) {
    let (shared, signalled) = (Arc::clone(shared), Arc::clone(signalled));
    tokio::spawn(async move {
        wait_for_signal().await;
        signalled.store(true, Ordering::SeqCst);
        crate::cli::out::eline(
            "interrupt: every cluster stops after its current step (again to exit now)",
        );
        shared.interrupt.halt(format!(
            "{}: interrupted (Ctrl-C or SIGTERM)",
            shared.mark()
        ));
        wait_for_signal().await;
        crate::cli::out::eline(
            "interrupted again: exiting now (clusters may be left without a pause)",
        );
        std::process::exit(i32::from(EXIT_INTERRUPTED));
    });
}

/// Prints each cluster's outcome and the run's end; the exit code.
fn summarize(
    prepared: &super::fleet_plan::Prepared,
    results: &[(String, Outcome, bool)],
    shared: &Shared,
    act: &ActArgs,
    signalled: bool,
) -> ExitCode {
    let reached: Vec<&str> = results.iter().map(|(c, _, _)| c.as_str()).collect();
    let not_reached: Vec<&str> = prepared
        .assignment
        .contexts()
        .map(String::as_str)
        .filter(|c| !reached.contains(c))
        .collect();
    let moved: usize = results
        .iter()
        .map(|(_, o, _)| match o {
            Outcome::Passed { moved, .. } => *moved,
            _ => 0,
        })
        .sum();
    let all_done = not_reached.is_empty()
        && results.iter().all(|(_, o, _)| {
            matches!(o, Outcome::Passed { left, .. } if left.is_empty()) || *o == Outcome::DryRun
        });
    let stop = shared
        .ledger
        .lock()
        .ok()
        .and_then(|l| l.stopped().map(str::to_owned));
    let mut text = if act.read_only {
        format!(
            "dry run: nothing was changed; would roll {} cluster(s) in {} wave(s)",
            results.len(),
            prepared.assignment.waves.len()
        )
    } else if signalled {
        "interrupted: every touched cluster is paused (run the plan again to resume)".to_owned()
    } else if let Some(stop) = &stop {
        format!("stopped: {stop}; every touched cluster is paused")
    } else if all_done {
        format!(
            "done: {moved} node(s) moved in {} cluster(s)",
            results.len()
        )
    } else {
        format!("incomplete: {moved} node(s) moved in the clusters that passed")
    };
    // Each cluster's outcome was said as it came; the end names the ones
    // that did not pass (skipped, vetoed, failed, blocked) and those never reached.
    let unpassed: Vec<String> = results
        .iter()
        .filter(|(_, o, _)| {
            !matches!(o, Outcome::Passed { left, .. } if left.is_empty()) && *o != Outcome::DryRun
        })
        .map(|(c, o, _)| match o {
            Outcome::Skipped(why) => format!("{c} (skipped: {why})"),
            other => format!("{c} ({})", other.word()),
        })
        .collect();
    if !unpassed.is_empty() && !act.read_only {
        let _ = write!(text, "; not passed: {}", unpassed.join(", "));
    }
    if !not_reached.is_empty() && !act.read_only {
        let _ = write!(text, "; not reached: {}", not_reached.join(", "));
    }
    let code = if signalled {
        EXIT_INTERRUPTED
    } else {
        u8::from(!(act.read_only || all_done))
    };
    finish(act, code, &text)
}
