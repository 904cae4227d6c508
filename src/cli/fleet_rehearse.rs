//! `rollcall fleet rehearse -f fleet.yaml --snapshots DIR [--scenario
//! NAME|FILE] [-o json] [--journal FILE]`: the whole plan carried out
//! in-process on a simulated clock. Each context's dump (`DIR/CONTEXT.json`
//! or any form `-f` takes; see [`crate::fleet::rehearse::snapshots`]) is
//! loaded into its own embedded cluster — controller, scheduler, simulated
//! kubelets under the scenario's timings and failure rules — reached by an
//! in-process client, no socket. The plan is checked as `fleet plan` checks
//! it, then carried out by the very run `fleet auto` makes
//! ([`crate::fleet::run::FleetRun`]) on tokio's paused clock, where hours
//! of soak and bake pass as soon as nothing else is left to do. Prints the
//! timeline: per wave, per cluster, when each node moved, where the plan
//! stopped and why, the nodes never reached, and the expected wall time.
//! Exit 0 every node moved, 1 the plan stopped or left nodes, 2 refused.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use super::fleet::Loaded;
use super::fleet_plan::{Facts, PlanReport, check, facts};
use crate::cli::out;
use crate::cli::status::Output;
use crate::fleet::rehearse::connector::InProcess;
use crate::fleet::rehearse::progress::Progress;
use crate::fleet::rehearse::ready::ReadyTimes;
use crate::fleet::rehearse::report::{self, Rehearsal};
use crate::fleet::rehearse::snapshots::{Member, Snapshots};
use crate::fleet::rehearse::table;
use crate::fleet::rehearse::timeline::{Recorder, fold};
use crate::fleet::report::Failure;
use crate::fleet::run::settings::wave_settings;
use crate::fleet::run::{FleetRun, FleetSettings, Kind, RunPlan};
use crate::fleet::waves::assign::assign;
use crate::fleet::waves::budget::Ledger;
use crate::fleet::waves::file::PlanFile;
use crate::fleet::waves::glob::is_glob;
use crate::model::Target;
use crate::ops::journal::Journal;
use crate::ops::snapshot::Snapshot;

/// The seed of every member's kubelets (jitter, crash timing): a
/// rehearsal repeats exactly.
const SEED: u64 = 1;

/// How long a member's first view of its DaemonSet may take (simulated).
const PATIENCE: Duration = Duration::from_secs(30);

/// Arguments of `rollcall fleet rehearse`.
#[derive(Debug, Args)]
pub struct FleetRehearseArgs {
    /// The plan file (YAML: daemonset, clusters, exclude, budget, waves).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// A directory with one dump per context, named after it: CONTEXT.json,
    /// CONTEXT.yaml, CONTEXT.tar.gz, a directory CONTEXT/ … (any form -f
    /// takes; `/` in a context written %2F).
    #[arg(long, value_name = "DIR")]
    pub snapshots: PathBuf,
    /// The scenario whose kubelet timings and failure rules (images that
    /// crash-loop, fail to pull, never get Ready) every member follows: a
    /// built-in name or a file (default: none, no failures).
    #[arg(long, value_name = "NAME|FILE")]
    pub scenario: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// The global `--journal FILE` (default for a rehearsal: none).
    #[arg(skip)]
    pub journal: Option<PathBuf>,
    /// The global `-n` (the namespace of a DaemonSet named without one).
    #[arg(skip)]
    pub namespace: Option<String>,
}

/// The machine's cores (1 when unknown).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Runs `rollcall fleet rehearse` on its own runtime: one thread, tokio's
/// clock paused (it jumps to the next timer whenever every task waits; not
/// while the members' offloaded work runs on the blocking pool).
pub fn run(args: &FleetRehearseArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        // The members' offloaded work (`sim::offload`): a thread a core;
        // more only take turns on the same cores.
        .max_blocking_threads(cores())
        .build()
        .context("cannot start the async runtime")?;
    let rehearsal = runtime.block_on(rehearse(args))?;

    match args.output {
        Output::Json => out::stdout_json(&format!("{}\n", out::json(&rehearsal, false)?))?,
        Output::Table => out::stdout(&table::render(&rehearsal))?,
    }
    Ok(ExitCode::from(rehearsal.exit_code()))
}

async fn rehearse(args: &FleetRehearseArgs) -> anyhow::Result<Rehearsal> {
    let took = std::time::Instant::now();
    // A whole second: object timestamps are whole seconds, so offsets from
    // the start read as they were written.
    let now = jiff::Timestamp::now();
    crate::clock::simulate(now.round(jiff::Unit::Second).unwrap_or(now));
    let start = crate::clock::now();
    let (plan, snapshots) = read_plan(args)?;
    let target = plan
        .daemonset
        .resolve(args.namespace.as_deref(), "default")?;
    let members = start_members(&plan, &snapshots, args.scenario.as_deref())?;
    let mut connector = InProcess::default();
    for member in &members {
        connector.add(&member.context, member.client());
    }
    let checked = check_plan(&plan, &connector, &target).await?;
    let recorder = Arc::new(Recorder::default());
    let settings = FleetSettings {
        namespace: args.namespace.clone(),
        journal: args.journal.clone().map_or_else(Journal::off, Journal::new),
        dry_run: false,
        skip_unreachable: false,
        patience: PATIENCE,
        by: "rollcall fleet rehearse".to_owned(),
    };
    // Live progress on stderr: a large rehearsal takes minutes.
    let progress = Progress::new(
        Arc::clone(&recorder) as Arc<dyn crate::fleet::run::Report>,
        start,
        Box::new(out::eline),
    );
    let run = FleetRun::new(
        plan.clone(),
        Kind::Advance,
        settings,
        Arc::new(connector),
        Arc::new(progress),
    );
    let outcome = run.carry_out().await;
    let end = crate::clock::now();
    let timeline = fold(&recorder.take(), &plan.assignment.waves);
    let ready: BTreeMap<String, ReadyTimes> = members
        .iter()
        .map(|m| {
            (
                m.context.clone(),
                ReadyTimes::read(&m.simulation.store, &target),
            )
        })
        .collect();
    let ready_at = |context: &str, delete: &crate::fleet::rehearse::timeline::NodeDelete| {
        ready.get(context)?.after(&delete.node, delete.at)
    };
    let planned: BTreeMap<String, Vec<String>> = checked
        .waves
        .iter()
        .flat_map(|w| &w.clusters)
        .map(|c| (c.context.clone(), c.nodes.clone()))
        .collect();
    let ledger = Ledger::new(plan.plan.budget);
    let batches: Vec<usize> = plan.plan.waves.iter().map(|w| w.batch).collect();
    let rehearsal = Rehearsal::build(
        &timeline,
        &outcome,
        &report::Facts {
            daemonset: target.to_string(),
            digest: plan.digest.clone(),
            scenario: args.scenario.clone().unwrap_or_else(|| "none".to_owned()),
            planned: &planned,
            ready: &ready_at,
            ledger: &ledger,
            batches: &batches,
            start,
            end,
            estimate: Some(Duration::from_secs(checked.estimate.seconds)),
            took: took.elapsed(),
        },
    );
    for member in members {
        member.simulation.shutdown().await;
    }
    Ok(rehearsal)
}

/// The plan file, its contexts taken from the snapshots' names; a context
/// the plan names that has no dump is refused by name.
fn read_plan(args: &FleetRehearseArgs) -> anyhow::Result<(RunPlan, Snapshots)> {
    let source = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| anyhow::anyhow!("cannot read the plan {source}: {e}"))?;
    let plan = PlanFile::parse(&text, &source)?;
    let daemonset = plan.daemonset().map_err(anyhow::Error::msg)?;
    let snapshots = Snapshots::find(&args.snapshots)?;
    let named: Vec<String> = plan
        .clusters
        .iter()
        .chain(plan.waves.iter().flat_map(|w| &w.clusters))
        .filter(|pattern| !is_glob(pattern))
        .cloned()
        .collect();
    snapshots.require(&named)?;
    // An excluded context needs no dump.
    let mut available = snapshots.contexts();
    available.extend(
        plan.exclude
            .iter()
            .filter(|p| !is_glob(p) && !available.contains(p))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let assignment = assign(&plan, &available).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    Ok((
        RunPlan {
            digest: plan.digest(),
            plan,
            daemonset,
            assignment,
        },
        snapshots,
    ))
}

/// An embedded cluster per context of the plan's waves, each from its dump,
/// in the plan's order. Loading is most of a large rehearsal's start and
/// each member's is its own, so they load on every core; each loader
/// enters the runtime, where the member's tasks are spawned (they first
/// run once this returns).
fn start_members(
    plan: &RunPlan,
    snapshots: &Snapshots,
    scenario: Option<&str>,
) -> anyhow::Result<Vec<Member>> {
    let mut jobs = Vec::new();
    for context in plan.assignment.contexts() {
        let Some(path) = snapshots.path(context) else {
            anyhow::bail!("no snapshot for context {context} in {}", snapshots.dir);
        };
        jobs.push((context, path));
    }
    let runtime = tokio::runtime::Handle::current();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    // Each loader takes the next member until none is left or one failed,
    // and hands back what it loaded with its place in the plan.
    let load = || {
        let _runtime = runtime.enter();
        let mut loaded = Vec::new();
        while !failed.load(Ordering::Relaxed) {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some((context, path)) = jobs.get(index) else {
                break;
            };
            let member = Member::start(context, path, scenario, SEED).map_err(anyhow::Error::from);
            failed.fetch_or(member.is_err(), Ordering::Relaxed);
            loaded.push((index, member));
        }
        loaded
    };
    let mut loaded: Vec<(usize, anyhow::Result<Member>)> = std::thread::scope(|scope| {
        let loaders: Vec<_> = (0..cores().min(jobs.len()).max(1))
            .map(|_| scope.spawn(load))
            .collect();
        loaders
            .into_iter()
            .flat_map(|loader| {
                loader
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    loaded.sort_by_key(|(index, _)| *index);
    // Every member, or the first failure in the plan's order (a member not
    // loaded is one after a failure: loading stopped there).
    loaded.into_iter().map(|(_, member)| member).collect()
}

/// Reads every member as `fleet plan` reads a cluster, and checks the plan
/// against them the same way (template identity, canary selectors,
/// vetoes); the plan per wave with each cluster's nodes in order.
async fn check_plan(
    plan: &RunPlan,
    connector: &InProcess,
    target: &Target,
) -> anyhow::Result<PlanReport> {
    let ledger = Ledger::new(plan.plan.budget);
    let mut reads: Vec<(String, Result<Facts, Failure>)> = Vec::new();
    for ((_, contexts), wave) in plan.assignment.waves.iter().zip(&plan.plan.waves) {
        let settings = wave_settings(wave, &ledger);
        for context in contexts {
            let Some(connection) = connector.get(context).cloned() else {
                continue;
            };
            let snapshot = Snapshot::load_with_usage(&connection.client, target, |_| {})
                .await
                .map_err(|err| super::fleet::ops_failure(&err));
            let read = snapshot.and_then(|snapshot| {
                let loaded = Loaded {
                    connection,
                    target: target.clone(),
                    snapshot,
                    _turn: None,
                };
                facts(&loaded, wave, &settings, crate::clock::now())
            });
            reads.push((context.clone(), read));
        }
    }
    check(plan, &reads)
}
