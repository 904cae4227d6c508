//! `rollcall fleet status DAEMONSET (--contexts a,b | --all-contexts |
//! --context-regex RE)`: one DaemonSet across many clusters, read-only.
//! Every cluster connects and reads on its own, in parallel, through the
//! same code as `rollcall --context C status` (connect, list, build the
//! status report), each bounded by `--request-timeout`, exec credential
//! plugins at most [`EXEC_AT_ONCE`] at a time; a cluster that fails is a row
//! saying why, never a wait for the others. The pure parts are in [`crate::fleet`];
//! `fleet preflight` reads each cluster through the same loader ([`super::fleet_preflight`]);
//! `rollcall fleet [DAEMONSET]` without a subcommand is the live matrix
//! ([`super::fleet_live`]), connecting through the same [`Reach`].

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use tokio::sync::Semaphore;

use crate::cli::act_args::block_on;
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::out;
use crate::cli::status::Output;
use crate::cluster::connect::{
    ConnectOptions, DEFAULT_REQUEST_TIMEOUT, NamedContext, connect, kubeconfig_contexts,
};
use crate::fleet::connection::{ConnectionState, of_connect_error, of_ops_error};
use crate::fleet::contexts::{Selection, choose};
use crate::fleet::query::Query;
use crate::fleet::report::{Asked, ClusterRead, Failure, FleetReport, Read};
use crate::model::DsRef;
use crate::ops::snapshot::Snapshot;

/// How many exec credential plugins (or gcp auth-provider commands) may run at once.
pub const EXEC_AT_ONCE: usize = 8;

/// Arguments of `rollcall fleet`: a subcommand, or none for the live matrix.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    arg_required_else_help = true
)]
pub struct FleetArgs {
    /// What to ask the fleet (none: the live matrix).
    #[command(subcommand)]
    pub command: Option<FleetCommand>,
    /// The live matrix's arguments.
    #[command(flatten)]
    pub live: super::fleet_live::FleetLiveArgs,
}

impl FleetArgs {
    /// Takes the global flags into the subcommand's arguments (or the matrix's).
    pub fn apply(&mut self, cluster: ClusterArgs, global: &super::cluster_args::GlobalArgs) {
        match &mut self.command {
            None => self.live.apply(cluster, global),
            Some(FleetCommand::Status(status)) => status.cluster = cluster,
            Some(FleetCommand::Preflight(preflight)) => preflight.cluster = cluster,
            Some(FleetCommand::Plan(plan)) => plan.cluster = cluster,
            Some(FleetCommand::Auto(auto)) => {
                auto.run.cluster = cluster;
                auto.run.act.apply(global);
            }
            Some(FleetCommand::Rollback(rollback)) => {
                rollback.run.cluster = cluster;
                rollback.run.act.apply(global);
            }
            Some(FleetCommand::Rehearse(rehearse)) => {
                rehearse.namespace = cluster.namespace;
                rehearse.journal.clone_from(&global.journal);
            }
        }
    }
}

/// The fleet's subcommands.
#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// One DaemonSet in every chosen cluster: per cluster its connection, its
    /// `status`, its template's digest and images, its drift from the
    /// majority's template (or --reference's); then the fleet's totals
    /// (exit 0 all clear, 1 a cluster not live, drifted or with problems, 2 error).
    Status(FleetStatusArgs),
    /// Before a rollout, per cluster in parallel: may I delete pods and patch
    /// the DaemonSet, server version, strategy, GitOps owner, cordoned and
    /// NotReady nodes, nodes the new revision would not fit, pods already
    /// failing on it; one line per finding (exit 1 when anything blocks).
    Preflight(super::fleet_preflight::FleetPreflightArgs),
    /// Reads and checks a fleet plan file (waves of clusters, budget) against
    /// every cluster: per wave, per cluster the nodes in order, the total and
    /// a wall-time estimate (exit 2 when the plan is refused, naming why).
    Plan(super::fleet_plan::FleetPlanArgs),
    /// Carries a fleet plan out: wave by wave, inside each cluster the run
    /// `rollcall auto` makes; a failure past the budget stops every cluster
    /// and leaves each touched one paused (exit 0 done, 1 stopped, skipped or
    /// incomplete, 2 refused, 130 interrupted).
    Auto(super::fleet_auto::FleetAutoArgs),
    /// Rolls a fleet plan back: its waves in reverse, in each cluster the
    /// rollback `rollcall rollback` makes (the template patched back, then
    /// on OnDelete only the nodes on the revision being left moved back).
    Rollback(super::fleet_rollback::FleetRollbackArgs),
    /// Carries a fleet plan out in-process on a simulated clock, against one
    /// dump per context (--snapshots DIR) under a scenario's failure rules:
    /// per wave, per cluster when each node moved, where the plan stops and
    /// why, the nodes never reached, the expected wall time (exit 0 every
    /// node moved, 1 stopped or incomplete, 2 refused).
    Rehearse(super::fleet_rehearse::FleetRehearseArgs),
}

/// Which clusters make the fleet (one of the three).
#[derive(Clone, Debug, Default, Args)]
#[group(required = true, multiple = false)]
pub struct ClusterChoice {
    /// These kubeconfig contexts, comma-separated, in this order.
    #[arg(long, value_name = "CONTEXT,…", value_delimiter = ',')]
    pub contexts: Vec<String>,
    /// Every context of the kubeconfig (KUBECONFIG's files merged as kubectl merges them).
    #[arg(long)]
    pub all_contexts: bool,
    /// The contexts whose whole name matches this regular expression.
    #[arg(long, value_name = "RE")]
    pub context_regex: Option<String>,
}

/// Arguments of `rollcall fleet status`.
#[derive(Debug, Args)]
pub struct FleetStatusArgs {
    /// The DaemonSet: `NAME` (in the -n namespace, else each context's),
    /// `NAMESPACE/NAME`, `ds/NAME`, `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// The clusters.
    #[command(flatten)]
    pub choice: ClusterChoice,
    /// Compare templates with this context's instead of the majority's.
    #[arg(long, value_name = "CONTEXT")]
    pub reference: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Keep every node of every cluster in each `status` (`nodes`).
    #[arg(short = 'A', long)]
    pub all: bool,
    /// A question about nodes, answered across the fleet and grouped by
    /// reason with cluster and node names: `digest!=D` (should run it, not on
    /// template D), `digest=D`, `not-ready`, `reason=TEXT` (an eligibility
    /// reason or pod problem containing TEXT). Exit 1 when a node matches or
    /// a cluster could not be read.
    #[arg(long = "where", value_name = "QUERY")]
    pub query: Option<String>,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall fleet`.
pub fn run(args: &FleetArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        None => block_on(super::fleet_live::run(&args.live)),
        Some(FleetCommand::Status(status)) => block_on(run_status(status)),
        Some(FleetCommand::Preflight(preflight)) => {
            block_on(super::fleet_preflight::run(preflight))
        }
        Some(FleetCommand::Plan(plan)) => block_on(super::fleet_plan::run(plan)),
        Some(FleetCommand::Auto(auto)) => block_on(super::fleet_auto::run(auto)),
        Some(FleetCommand::Rollback(rollback)) => block_on(super::fleet_rollback::run(rollback)),
        Some(FleetCommand::Rehearse(rehearse)) => super::fleet_rehearse::run(rehearse),
    }
}

async fn run_status(args: &FleetStatusArgs) -> anyhow::Result<ExitCode> {
    let query = match &args.query {
        Some(text) => Some((
            text.clone(),
            text.parse::<Query>().map_err(anyhow::Error::msg)?,
        )),
        None => None,
    };
    let (contexts, job) = prepare(&args.cluster, &args.daemonset, &args.choice)?;
    if let Some(reference) = &args.reference
        && !contexts.iter().any(|c| &c.name == reference)
    {
        anyhow::bail!("--reference {reference}: not one of the chosen contexts");
    }
    let reads = each(contexts, &job, status_read)
        .await
        .into_iter()
        .map(|(context, outcome)| ClusterRead { context, outcome })
        .collect::<Vec<_>>();
    let (clusters, started) = (reads.len(), std::time::Instant::now());
    let report = FleetReport::build(
        args.daemonset.to_string(),
        reads,
        Asked {
            reference: args.reference.as_deref(),
            all_nodes: args.all,
            query: query.as_ref().map(|(text, q)| (text.as_str(), q)),
        },
    );
    // The fleet-wide answer's own cost, apart from the reads (issue 35: a
    // `--where` over 50,000 nodes within 200 ms; examples/fleet_scale reads it).
    tracing::info!(
        clusters,
        query = args.query.as_deref().unwrap_or(""),
        "fleet report built in {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    match args.output {
        Output::Json => out::stdout_json(&format!("{}\n", out::json(&report, false)?))?,
        Output::Table => out::stdout(&report.render_table())?,
    }
    Ok(if report.has_problems() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Checks what holds for every cluster alike (no `--context`, no namespace
/// conflict) and chooses the contexts; the job every cluster's read shares.
pub(super) fn prepare(
    cluster: &ClusterArgs,
    daemonset: &DsRef,
    choice: &ClusterChoice,
) -> anyhow::Result<(Vec<NamedContext>, Arc<ClusterJob>)> {
    // A namespace conflict (`a/x -n b`) is the same in every cluster: said once.
    daemonset.resolve(cluster.namespace.as_deref(), "default")?;
    let (contexts, reach) = reach(cluster, choice)?;
    let job = ClusterJob {
        reach,
        daemonset: daemonset.clone(),
        turns: crate::fleet::live::turns::Turns::default(),
    };
    Ok((contexts, Arc::new(job)))
}

/// Chooses the contexts; how each is reached (`--context` refused: the
/// fleet's are named with --contexts).
pub(super) fn reach(
    cluster: &ClusterArgs,
    choice: &ClusterChoice,
) -> anyhow::Result<(Vec<NamedContext>, Reach)> {
    if cluster.context.is_some() {
        anyhow::bail!("--context picks one cluster: name the fleet's with --contexts");
    }
    // Read once: every cluster takes its own entries from it.
    let base = crate::cluster::connect::read_once(&cluster.connect_options())?;
    let contexts = chosen_contexts(&base, choice)?;
    let reach = Reach {
        timeout: base.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT),
        base,
        gate: Arc::new(Semaphore::new(EXEC_AT_ONCE)),
    };
    Ok((contexts, reach))
}

/// Runs `read` for every context at once, each its own task; the results
/// in context order (a task that died is a failure saying so).
pub(super) async fn each<T, Fut>(
    contexts: Vec<NamedContext>,
    job: &Arc<ClusterJob>,
    read: fn(Arc<ClusterJob>, NamedContext) -> Fut,
) -> Vec<(String, Result<T, Failure>)>
where
    T: Send + 'static,
    Fut: std::future::Future<Output = Result<T, Failure>> + Send + 'static,
{
    let tasks: Vec<_> = contexts
        .into_iter()
        .map(|context| {
            (
                context.name.clone(),
                tokio::spawn(read(Arc::clone(job), context)),
            )
        })
        .collect();
    let mut results = Vec::with_capacity(tasks.len());
    for (context, task) in tasks {
        let outcome = task.await.unwrap_or_else(|err| {
            Err(Failure {
                connection: ConnectionState::Unreachable,
                message: format!("the read failed: {err}"),
            })
        });
        results.push((context, outcome));
    }
    results
}

/// The contexts chosen from the kubeconfig, in order.
fn chosen_contexts(
    base: &ConnectOptions,
    choice: &ClusterChoice,
) -> anyhow::Result<Vec<NamedContext>> {
    let available = kubeconfig_contexts(base)?;
    let selection = if choice.all_contexts {
        Selection::All
    } else if let Some(pattern) = &choice.context_regex {
        Selection::Matching(
            regex::Regex::new(pattern)
                .map_err(|err| anyhow::anyhow!("--context-regex {pattern:?}: {err}"))?,
        )
    } else {
        Selection::Listed(choice.contexts.clone())
    };
    let names: Vec<String> = available.iter().map(|c| c.name.clone()).collect();
    let chosen = choose(&names, &selection)?;
    Ok(chosen
        .into_iter()
        .filter_map(|name| available.iter().find(|c| c.name == name).cloned())
        .collect())
}

/// How every cluster of the fleet is reached: the flags, the request
/// timeout, and the gate exec plugins wait at.
pub(super) struct Reach {
    base: ConnectOptions,
    timeout: Duration,
    gate: Arc<Semaphore>,
}

/// What one cluster's read needs.
pub(super) struct ClusterJob {
    reach: Reach,
    daemonset: DsRef,
    /// Turns at the lists, as the matrix's first lists take them: a few
    /// clusters' lists decoded and held at once, not every cluster's (the
    /// peak of the memory); a cluster that hangs holds the others up by a
    /// head start at most.
    turns: crate::fleet::live::turns::Turns,
}

/// A cluster connected, and its DaemonSet read as `rollcall status` reads it.
pub(super) struct Loaded {
    /// The connection.
    pub connection: crate::cluster::connect::Connection,
    /// The DaemonSet there.
    pub target: crate::model::Target,
    /// What `status` builds its report from.
    pub snapshot: Snapshot<'static>,
    /// This cluster's turn at the lists: the next cluster lists once the
    /// lists read here are dropped (`None`: read in-process, no turns).
    pub _turn: Option<crate::fleet::live::turns::Held>,
}

impl Reach {
    /// The request timeout each step is bounded by.
    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The flags every cluster is reached with (each sets its own context).
    pub(super) fn options(&self) -> &ConnectOptions {
        &self.base
    }

    /// Connects to `context`, an exec plugin waiting for the gate; bounded
    /// by the request timeout.
    pub(super) async fn connect(
        &self,
        context: &NamedContext,
    ) -> Result<crate::cluster::connect::Connection, Failure> {
        let options = ConnectOptions {
            context: Some(context.name.clone()),
            ..self.base.clone()
        };
        let permit = if context.runs_command {
            Some(
                self.gate
                    .acquire()
                    .await
                    .map_err(|_| silent("waiting for an exec plugin's turn", self.timeout))?,
            )
        } else {
            None
        };
        // connect bounds its own steps; the margin only catches what it does not (a TCP connect).
        let connection =
            tokio::time::timeout(self.timeout + Duration::from_secs(1), connect(&options))
                .await
                .map_err(|_| silent("connecting", self.timeout))?
                .map_err(|err| Failure {
                    connection: of_connect_error(&err),
                    message: crate::cli::error_text(&anyhow::Error::new(err)),
                })?;
        drop(permit);
        Ok(connection)
    }

    /// `daemonset` in a connected cluster: its own namespace, else `-n`,
    /// else the context's.
    pub(super) fn target_in(
        &self,
        daemonset: &DsRef,
        connection: &crate::cluster::connect::Connection,
    ) -> Result<crate::model::Target, Failure> {
        daemonset
            .resolve(self.base.namespace.as_deref(), &connection.namespace)
            .map_err(|err| Failure {
                connection: ConnectionState::NotFound,
                message: err.to_string(),
            })
    }
}

impl ClusterJob {
    /// The request timeout each step is bounded by.
    pub(super) fn timeout(&self) -> Duration {
        self.reach.timeout
    }

    /// Connects to `context` (an exec plugin waiting for the gate) and
    /// lists the DaemonSet's objects; each step bounded by the request timeout.
    pub(super) async fn load(&self, context: &NamedContext) -> Result<Loaded, Failure> {
        let connection = self.reach.connect(context).await?;
        let target = self.reach.target_in(&self.daemonset, &connection)?;
        let turn = crate::fleet::live::turns::Held::take(&self.turns).await;
        let snapshot = tokio::time::timeout(
            self.timeout(),
            Snapshot::load_with_usage(&connection.client, &target, |_| {}),
        )
        .await
        .map_err(|_| silent("listing the DaemonSet, nodes and pods", self.timeout()))?
        .map_err(|err| ops_failure(&err))?;
        Ok(Loaded {
            connection,
            target,
            snapshot,
            _turn: Some(turn),
        })
    }
}

/// One cluster's read for `fleet status`: its status report, its template's
/// identity and each revision's.
async fn status_read(job: Arc<ClusterJob>, context: NamedContext) -> Result<Read, Failure> {
    let loaded = job.load(&context).await?;
    Read::of(&loaded.snapshot, jiff::Timestamp::now()).map_err(|err| ops_failure(&err))
}

/// A step that did not finish within the request timeout.
pub(super) fn silent(step: &str, timeout: Duration) -> Failure {
    Failure {
        connection: ConnectionState::Unreachable,
        message: format!(
            "{step} did not finish within {}s (--request-timeout)",
            timeout.as_secs_f64()
        ),
    }
}

pub(super) fn ops_failure(err: &crate::ops::error::OpsError) -> Failure {
    Failure {
        connection: of_ops_error(err),
        message: err.to_string(),
    }
}
