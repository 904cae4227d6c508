//! `rollcall fleet plan -f fleet.yaml [-o json]`: reads and checks a fleet
//! plan before anything moves — the file (unknown fields refused with their
//! position), every context of the fleet in exactly one wave or excluded, then
//! every cluster read through `fleet status`'s loader: its DaemonSet's
//! template against the fleet's reference (the majority's digest), each
//! wave's canary selector against the nodes the DaemonSet runs on, a
//! `rollcall.dev/fleet-veto`. Prints per wave, per cluster, the nodes in the
//! order `rollcall auto` would move them, the total and a wall-time estimate.
//! Exit 0 the plan holds, 1 a cluster could not be read or is vetoed, 2 the
//! plan is refused. `fleet auto` and `fleet rollback` check the same way
//! ([`check`]).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde::Serialize;

use super::fleet::{ClusterChoice, ClusterJob, Loaded, prepare};
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::out;
use crate::cli::status::Output;
use crate::cluster::connect::{NamedContext, kubeconfig_contexts};
use crate::fleet::drift::majority;
use crate::fleet::report::Failure;
use crate::fleet::run::RunPlan;
use crate::fleet::run::settings::wave_settings;
use crate::fleet::template::TemplateIdentity;
use crate::fleet::waves::VETO_ANNOTATION;
use crate::fleet::waves::assign::{Assignment, assign};
use crate::fleet::waves::budget::Ledger;
use crate::fleet::waves::estimate::{cluster_time, wave_time};
use crate::fleet::waves::file::{PlanFile, Wave};
use crate::model::DsRef;
use crate::ops::run::settings::RunSettings;

/// Arguments of `rollcall fleet plan`.
#[derive(Debug, Args)]
pub struct FleetPlanArgs {
    /// The plan file (YAML: daemonset, clusters, exclude, budget, waves).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// A plan file read, its contexts assigned, ready to read each cluster.
pub(super) struct Prepared {
    /// The file, as parsed.
    pub plan: PlanFile,
    /// Its digest (recorded in the reasons of the pauses a run leaves).
    pub digest: String,
    /// The DaemonSet.
    pub daemonset: DsRef,
    /// Which contexts each wave takes.
    pub assignment: Assignment,
    /// What each cluster's read shares.
    pub job: Arc<ClusterJob>,
    /// The contexts of every wave, wave by wave.
    pub contexts: Vec<NamedContext>,
}

/// Reads the plan file and assigns the kubeconfig's contexts to its waves.
pub(super) fn prepare_plan(cluster: &ClusterArgs, file: &PathBuf) -> anyhow::Result<Prepared> {
    let source = file.display().to_string();
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("cannot read the plan {source}: {e}"))?;
    let plan = PlanFile::parse(&text, &source)?;
    let daemonset = plan.daemonset().map_err(anyhow::Error::msg)?;
    let available: Vec<String> = kubeconfig_contexts(&cluster.connect_options())?
        .into_iter()
        .map(|c| c.name)
        .collect();
    let assignment = assign(&plan, &available).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    let choice = ClusterChoice {
        contexts: assignment.contexts().cloned().collect(),
        ..ClusterChoice::default()
    };
    let (contexts, job) = prepare(cluster, &daemonset, &choice)?;
    Ok(Prepared {
        digest: plan.digest(),
        plan,
        daemonset,
        assignment,
        job,
        contexts,
    })
}

/// What the plan needs to know of one cluster, read from its DaemonSet,
/// nodes and pods (a snapshot stays in its task; these facts travel).
#[derive(Debug)]
pub(super) struct Facts {
    /// Its template's identity.
    pub identity: TemplateIdentity,
    /// A veto, in words.
    pub veto: Option<String>,
    /// Why the wave's canary selector does not do there.
    pub canary_error: Option<String>,
    /// The nodes in the order a run would move them (canaries flagged).
    pub order: Vec<(String, bool)>,
    /// Nodes a run would leave behind, with why.
    pub left: Vec<(String, String)>,
}

/// Every cluster of the plan, read at once (in wave order), each judged
/// with its wave's settings.
pub(super) async fn read_all(prepared: &Prepared) -> Vec<(String, Result<Facts, Failure>)> {
    let ledger = Ledger::new(prepared.plan.budget);
    let tasks: Vec<_> = prepared
        .contexts
        .iter()
        .map(|context| {
            let wave = prepared
                .wave_of(&context.name)
                .cloned()
                .unwrap_or_else(|| prepared.plan.waves[0].clone());
            let settings = wave_settings(&wave, &ledger);
            let (job, context) = (Arc::clone(&prepared.job), context.clone());
            let name = context.name.clone();
            let task = tokio::spawn(async move {
                let loaded = job.load(&context).await?;
                facts(&loaded, &wave, &settings, crate::clock::now())
            });
            (name, task)
        })
        .collect();
    let mut reads = Vec::with_capacity(tasks.len());
    for (context, task) in tasks {
        let outcome = task.await.unwrap_or_else(|err| {
            Err(Failure {
                connection: crate::fleet::connection::ConnectionState::Unreachable,
                message: format!("the read failed: {err}"),
            })
        });
        reads.push((context, outcome));
    }
    reads
}

impl Prepared {
    /// What a fleet run carries out.
    pub fn run_plan(&self) -> RunPlan {
        RunPlan {
            plan: self.plan.clone(),
            digest: self.digest.clone(),
            daemonset: self.daemonset.clone(),
            assignment: self.assignment.clone(),
        }
    }

    /// The wave that takes `context`.
    pub fn wave_of(&self, context: &str) -> Option<&Wave> {
        let index = self
            .assignment
            .waves
            .iter()
            .position(|(_, contexts)| contexts.iter().any(|c| c == context))?;
        self.plan.waves.get(index)
    }
}

/// A cluster's facts from its snapshot.
pub(super) fn facts(
    loaded: &Loaded,
    wave: &Wave,
    settings: &RunSettings,
    now: jiff::Timestamp,
) -> Result<Facts, Failure> {
    let snapshot = &loaded.snapshot;
    let canary_error = wave.canary.as_ref().and_then(|canary| {
        let index = snapshot.index();
        let rows = snapshot.rows(&index, now);
        crate::ops::preflight::check_canary_selector(canary, rows.iter(), snapshot.nodes())
            .err()
            .map(|e| e.to_string())
    });
    let (order, left) = crate::ops::run::decide::planned_order(snapshot, settings, now)
        .map_err(|e| super::fleet::ops_failure(&e))?;
    Ok(Facts {
        identity: identity(loaded),
        veto: veto(loaded),
        canary_error,
        order,
        left,
    })
}

/// One cluster as the plan would roll it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ClusterPlan {
    /// The context.
    pub context: String,
    /// The nodes, in the order they would move.
    pub nodes: Vec<String>,
    /// Those of them that are canaries (they go first).
    pub canaries: Vec<String>,
    /// Nodes the run would leave behind, with why (cordoned, NotReady).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<LeftNode>,
    /// Why the cluster is skipped (a veto) or could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// A node a run would leave behind.
#[derive(Debug, Serialize)]
pub(super) struct LeftNode {
    /// The node.
    pub node: String,
    /// Why it is left.
    pub reason: String,
}

/// One wave as planned.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WavePlan {
    /// Its name.
    pub name: String,
    /// Its clusters, in order.
    pub clusters: Vec<ClusterPlan>,
}

/// The whole plan as `fleet plan` prints it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PlanReport {
    /// The DaemonSet.
    pub daemonset: String,
    /// The plan's digest.
    pub digest: String,
    /// The template digest every cluster runs.
    pub reference: Option<String>,
    /// The waves.
    pub waves: Vec<WavePlan>,
    /// The contexts left out.
    pub excluded: Vec<String>,
    /// Nodes to move, fleet-wide.
    pub total: usize,
    /// The wall time, at least.
    pub estimate: Estimate,
}

/// The wall-time estimate (a lower bound: soaks and bakes only).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Estimate {
    /// In seconds.
    pub seconds: u64,
    /// In words, saying it is a lower bound.
    pub text: String,
}

/// Checks every cluster read against the plan: the template's digest
/// against the reference, each canary selector, vetoes. `Err` refuses the
/// plan (exit 2) naming the context; else the plan per wave.
pub(super) fn check(
    run_plan: &RunPlan,
    reads: &[(String, Result<Facts, Failure>)],
) -> anyhow::Result<PlanReport> {
    let identities: Vec<(&str, &TemplateIdentity)> = reads
        .iter()
        .filter_map(|(context, read)| Some((context.as_str(), &read.as_ref().ok()?.identity)))
        .collect();
    let reference = majority(identities.iter().map(|(_, id)| *id)).cloned();
    if let Some(reference) = &reference
        && let Some((context, id)) = identities
            .iter()
            .find(|(_, id)| id.digest != reference.digest)
    {
        anyhow::bail!(
            "{context}: its DaemonSet's template (digest {}) differs from the fleet's reference \
             (digest {}, the majority's); `rollcall fleet status {}` shows the drift",
            id.digest,
            reference.digest,
            run_plan.daemonset
        );
    }
    let ledger = Ledger::new(run_plan.plan.budget);
    let mut waves = Vec::new();
    let mut times = Vec::new();
    for ((name, contexts), wave) in run_plan.assignment.waves.iter().zip(&run_plan.plan.waves) {
        let settings = wave_settings(wave, &ledger);
        let mut clusters = Vec::new();
        let mut cluster_times = Vec::new();
        for context in contexts {
            let read = reads.iter().find(|(c, _)| c == context).map(|(_, r)| r);
            let plan = cluster_plan(context, read, wave)?;
            let canaries = plan.canaries.len();
            cluster_times.push(cluster_time(
                plan.nodes.len(),
                canaries,
                settings.policy.batch,
                wave.soak.0,
            ));
            clusters.push(plan);
        }
        times.push(wave_time(cluster_times, wave.parallel, wave.bake.0));
        waves.push(WavePlan {
            name: name.clone(),
            clusters,
        });
    }
    let total = waves
        .iter()
        .flat_map(|w| &w.clusters)
        .map(|c| c.nodes.len())
        .sum();
    let seconds: std::time::Duration = times.into_iter().sum();
    Ok(PlanReport {
        daemonset: run_plan.daemonset.to_string(),
        digest: run_plan.digest.clone(),
        reference: reference.map(|r| r.digest),
        waves,
        excluded: run_plan.assignment.excluded.clone(),
        total,
        estimate: Estimate {
            seconds: seconds.as_secs(),
            text: format!(
                "at least {} (soaks and bakes only: the pods' start times add to it)",
                humantime::format_duration(seconds)
            ),
        },
    })
}

/// The template identity a cluster's DaemonSet has.
fn identity(loaded: &Loaded) -> TemplateIdentity {
    loaded.snapshot.ds.spec.as_ref().map_or_else(
        || TemplateIdentity::of_value(&serde_json::Value::Null),
        |spec| TemplateIdentity::of(&spec.template),
    )
}

/// The veto on a member's DaemonSet, if any.
pub(super) fn veto(loaded: &Loaded) -> Option<String> {
    let annotations = loaded.snapshot.ds.metadata.annotations.as_ref()?;
    let reason = annotations.get(VETO_ANNOTATION)?;
    Some(format!(
        "vetoed ({VETO_ANNOTATION}): {}",
        crate::sanitize::sanitize(reason)
    ))
}

fn cluster_plan(
    context: &str,
    read: Option<&Result<Facts, Failure>>,
    wave: &Wave,
) -> anyhow::Result<ClusterPlan> {
    let mut plan = ClusterPlan {
        context: context.to_owned(),
        nodes: Vec::new(),
        canaries: Vec::new(),
        left: Vec::new(),
        skipped: None,
    };
    let facts = match read {
        Some(Ok(facts)) => facts,
        Some(Err(failure)) => {
            plan.skipped = Some(format!(
                "{}: {}",
                failure.connection.word(),
                failure.message
            ));
            return Ok(plan);
        }
        None => {
            plan.skipped = Some("not read".to_owned());
            return Ok(plan);
        }
    };
    if let Some(error) = &facts.canary_error {
        anyhow::bail!("{context} (wave {:?}): {error}", wave.name);
    }
    plan.skipped.clone_from(&facts.veto);
    for (node, canary) in &facts.order {
        if *canary {
            plan.canaries.push(node.clone());
        }
        plan.nodes.push(node.clone());
    }
    plan.left = facts
        .left
        .iter()
        .map(|(node, reason)| LeftNode {
            node: node.clone(),
            reason: reason.clone(),
        })
        .collect();
    Ok(plan)
}

/// Runs `rollcall fleet plan`.
pub async fn run(args: &FleetPlanArgs) -> anyhow::Result<ExitCode> {
    let prepared = prepare_plan(&args.cluster, &args.file)?;
    let reads = read_all(&prepared).await;
    let report = check(&prepared.run_plan(), &reads)?;
    match args.output {
        Output::Json => out::stdout_json(&format!("{}\n", out::json(&report, false)?))?,
        Output::Table => out::stdout(&super::fleet_plan_table::render(&report, &prepared.plan))?,
    }
    let skipped = report
        .waves
        .iter()
        .flat_map(|w| &w.clusters)
        .any(|c| c.skipped.is_some());
    Ok(if skipped {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
