//! `rollcall fleet status DAEMONSET (--contexts a,b | --all-contexts |
//! --context-regex RE)`: one DaemonSet across many clusters, read-only.
//! Every cluster connects and reads on its own, in parallel, through the
//! same code as `rollcall --context C status` (connect, list, build the
//! status report), each bounded by `--request-timeout`, exec credential
//! plugins at most [`EXEC_AT_ONCE`] at a time; a cluster that fails is a row
//! saying why, never a wait for the others. The pure parts are in [`crate::fleet`].

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
use crate::fleet::template::TemplateIdentity;
use crate::model::DsRef;
use crate::ops::snapshot::Snapshot;
use crate::ops::status::StatusReport;

/// How many exec credential plugins (or gcp auth-provider commands) may run at once.
pub const EXEC_AT_ONCE: usize = 8;

/// Arguments of `rollcall fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// What to ask the fleet.
    #[command(subcommand)]
    pub command: FleetCommand,
}

/// The fleet's subcommands.
#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// One DaemonSet in every chosen cluster: per cluster its connection, its
    /// `status`, its template's digest and images, its drift from the
    /// majority's template (or --reference's); then the fleet's totals
    /// (exit 0 all clear, 1 a cluster not live, drifted or with problems, 2 error).
    Status(FleetStatusArgs),
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
        FleetCommand::Status(status) => block_on(run_status(status)),
    }
}

async fn run_status(args: &FleetStatusArgs) -> anyhow::Result<ExitCode> {
    if args.cluster.context.is_some() {
        anyhow::bail!("--context picks one cluster: name the fleet's with --contexts");
    }
    // A namespace conflict (`a/x -n b`) is the same in every cluster: said once.
    args.daemonset
        .resolve(args.cluster.namespace.as_deref(), "default")?;
    let query = match &args.query {
        Some(text) => Some((
            text.clone(),
            text.parse::<Query>().map_err(anyhow::Error::msg)?,
        )),
        None => None,
    };
    let base = args.cluster.connect_options();
    let contexts = chosen_contexts(&base, &args.choice)?;
    if let Some(reference) = &args.reference
        && !contexts.iter().any(|c| &c.name == reference)
    {
        anyhow::bail!("--reference {reference}: not one of the chosen contexts");
    }
    let timeout = base.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT);
    let gate = Arc::new(Semaphore::new(EXEC_AT_ONCE));
    let tasks: Vec<_> = contexts
        .into_iter()
        .map(|context| {
            let job = ClusterJob {
                base: base.clone(),
                daemonset: args.daemonset.clone(),
                timeout,
                gate: Arc::clone(&gate),
            };
            let name = context.name.clone();
            (name, tokio::spawn(job.read(context)))
        })
        .collect();
    let mut reads = Vec::with_capacity(tasks.len());
    for (context, task) in tasks {
        reads.push(task.await.unwrap_or_else(|err| ClusterRead {
            context,
            outcome: Err(Failure {
                connection: ConnectionState::Unreachable,
                message: format!("the read failed: {err}"),
            }),
        }));
    }
    let report = FleetReport::build(
        args.daemonset.to_string(),
        reads,
        Asked {
            reference: args.reference.as_deref(),
            all_nodes: args.all,
            query: query.as_ref().map(|(text, q)| (text.as_str(), q)),
        },
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

/// What one cluster's read needs.
struct ClusterJob {
    base: ConnectOptions,
    daemonset: DsRef,
    timeout: Duration,
    gate: Arc<Semaphore>,
}

impl ClusterJob {
    /// Connects to `context` and reads the DaemonSet there as `rollcall
    /// status` does; each step bounded by the request timeout.
    async fn read(self, context: NamedContext) -> ClusterRead {
        let outcome = self.outcome(&context).await;
        ClusterRead {
            context: context.name,
            outcome,
        }
    }

    async fn outcome(&self, context: &NamedContext) -> Result<Read, Failure> {
        let options = ConnectOptions {
            context: Some(context.name.clone()),
            ..self.base.clone()
        };
        let permit = if context.runs_command {
            Some(
                self.gate
                    .acquire()
                    .await
                    .map_err(|_| silent(self.timeout))?,
            )
        } else {
            None
        };
        // connect bounds its own steps; the margin only catches what it does not (a TCP connect).
        let connection =
            tokio::time::timeout(self.timeout + Duration::from_secs(1), connect(&options))
                .await
                .map_err(|_| silent(self.timeout))?
                .map_err(|err| Failure {
                    connection: of_connect_error(&err),
                    message: crate::cli::error_text(&anyhow::Error::new(err)),
                })?;
        drop(permit);
        let target = self
            .daemonset
            .resolve(self.base.namespace.as_deref(), &connection.namespace)
            .map_err(|err| Failure {
                connection: ConnectionState::NotFound,
                message: err.to_string(),
            })?;
        let snapshot = tokio::time::timeout(
            self.timeout,
            Snapshot::load_with_usage(&connection.client, &target, |_| {}),
        )
        .await
        .map_err(|_| silent(self.timeout))?
        .map_err(|err| ops_failure(&err))?;
        let status = StatusReport::build(&snapshot, jiff::Timestamp::now())
            .map_err(|err| ops_failure(&err))?;
        let template = snapshot.ds.spec.as_ref().map_or_else(
            || TemplateIdentity::of_value(&serde_json::Value::Null),
            |spec| TemplateIdentity::of(&spec.template),
        );
        let revisions = snapshot
            .revisions
            .iter()
            .filter_map(|revision| {
                let template = revision.data.as_ref()?.0.pointer("/spec/template")?;
                Some((revision.revision, TemplateIdentity::of_value(template)))
            })
            .collect();
        Ok(Read {
            status,
            template,
            revisions,
        })
    }
}

fn silent(timeout: Duration) -> Failure {
    Failure {
        connection: ConnectionState::Unreachable,
        message: format!(
            "no answer within {}s (--request-timeout)",
            timeout.as_secs_f64()
        ),
    }
}

fn ops_failure(err: &crate::ops::error::OpsError) -> Failure {
    Failure {
        connection: of_ops_error(err),
        message: err.to_string(),
    }
}
