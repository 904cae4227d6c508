//! `rollcall fleet preflight DAEMONSET (--contexts … | --all-contexts |
//! --context-regex RE)`: per cluster, in parallel, what would stop or
//! trouble a rollout — the user's rights (access reviews), server version,
//! strategy, GitOps owner, cordoned and NotReady nodes, nodes the new
//! revision would not fit, pods already failing on it. One line per
//! finding; exit 1 when anything blocks or a cluster could not be read.
//! Each cluster is read as `fleet status` reads it ([`super::fleet`]).

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde::Serialize;

use super::fleet::{ClusterChoice, ClusterJob, each, prepare, silent};
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::out;
use crate::cli::status::Output;
use crate::cluster::connect::NamedContext;
use crate::fleet::connection::ConnectionState;
use crate::fleet::preflight::{Facts, Finding, Severity, findings};
use crate::fleet::report::Failure;
use crate::model::DsRef;
use crate::ops::preflight::FailingNode;
use crate::ops::rbac::{self, Operation};
use crate::ops::status::StatusReport;

/// Arguments of `rollcall fleet preflight`.
#[derive(Debug, Args)]
pub struct FleetPreflightArgs {
    /// The DaemonSet, in any of the usual forms.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// The clusters.
    #[command(flatten)]
    pub choice: ClusterChoice,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// The preflight of the fleet.
#[derive(Debug, Serialize)]
struct Preflight {
    daemonset: String,
    clusters: Vec<ClusterFindings>,
}

/// One cluster's findings (none when it could not be read).
#[derive(Debug, Serialize)]
struct ClusterFindings {
    context: String,
    connection: ConnectionState,
    message: String,
    findings: Vec<Finding>,
}

/// Runs `rollcall fleet preflight`.
pub(super) async fn run(args: &FleetPreflightArgs) -> anyhow::Result<ExitCode> {
    let (contexts, job) = prepare(&args.cluster, &args.daemonset, &args.choice)?;
    let clusters: Vec<ClusterFindings> = each(contexts, &job, cluster_facts)
        .await
        .into_iter()
        .map(|(context, outcome)| match outcome {
            Ok(facts) => ClusterFindings {
                context,
                connection: ConnectionState::Live,
                message: String::new(),
                findings: findings(&facts),
            },
            Err(failure) => ClusterFindings {
                context,
                connection: failure.connection,
                message: failure.message,
                findings: Vec::new(),
            },
        })
        .collect();
    let blocked = clusters.iter().any(|c| {
        c.connection != ConnectionState::Live
            || c.findings.iter().any(|f| f.severity == Severity::Blocks)
    });
    let preflight = Preflight {
        daemonset: args.daemonset.to_string(),
        clusters,
    };
    match args.output {
        Output::Json => out::stdout_json(&format!("{}\n", out::json(&preflight, false)?))?,
        Output::Table => out::stdout(&table(&preflight))?,
    }
    Ok(if blocked {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `CONTEXT  blocks|note  message`, one line per finding.
fn table(preflight: &Preflight) -> String {
    let width = preflight
        .clusters
        .iter()
        .map(|c| c.context.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for cluster in &preflight.clusters {
        if cluster.connection != ConnectionState::Live {
            let _ = writeln!(
                text,
                "{:width$}  blocks  {}: {}",
                cluster.context,
                cluster.connection.word(),
                cluster.message
            );
        }
        for finding in &cluster.findings {
            let severity = match finding.severity {
                Severity::Blocks => "blocks",
                Severity::Note => "note  ",
            };
            let _ = writeln!(
                text,
                "{:width$}  {severity}  {}",
                cluster.context, finding.message
            );
        }
    }
    text
}

/// What one cluster says: its lists (as `status`), its access reviews and its version.
async fn cluster_facts(job: Arc<ClusterJob>, context: NamedContext) -> Result<Facts, Failure> {
    // The snapshot is not `Send`: its facts are taken before the next await.
    let (client, namespace, listed) = {
        let loaded = job.load(&context).await?;
        let listed = listed_facts(&loaded.snapshot)?;
        (loaded.connection.client, loaded.target.namespace, listed)
    };
    let (permissions, version) = tokio::time::timeout(job.timeout(), async {
        tokio::join!(
            rbac::check(&client, &namespace),
            crate::cluster::server_kind::version(&client)
        )
    })
    .await
    .map_err(|_| silent("the access reviews and /version", job.timeout()))?;
    Ok(Facts {
        server_version: version
            .ok()
            .and_then(|v| v.get("gitVersion")?.as_str().map(str::to_owned)),
        may_delete_pods: permissions.allows(Operation::Advance),
        may_patch: permissions.allows(Operation::Pause),
        strategy: listed.strategy,
        owner: listed.owner,
        cordoned: listed.cordoned,
        not_ready: listed.not_ready,
        would_not_fit: listed.would_not_fit,
        failing: listed.failing,
    })
}

/// The facts the lists give.
struct Listed {
    strategy: String,
    owner: Option<String>,
    cordoned: Vec<String>,
    not_ready: Vec<String>,
    would_not_fit: Vec<String>,
    failing: Vec<FailingNode>,
}

/// What the lists say, through the status report (the same fit and health
/// classification as `rollcall status`).
fn listed_facts(snapshot: &crate::ops::snapshot::Snapshot<'_>) -> Result<Listed, Failure> {
    let report = StatusReport::build(snapshot, crate::clock::now())
        .map_err(|err| super::fleet::ops_failure(&err))?;
    let named = |pick: &dyn Fn(&crate::model::Node) -> bool| -> Vec<String> {
        snapshot
            .nodes()
            .filter(|n| pick(n))
            .map(|n| n.name().to_owned())
            .collect()
    };
    Ok(Listed {
        cordoned: named(&|n| n.spec.unschedulable),
        not_ready: named(&|n| !n.is_ready()),
        would_not_fit: report
            .nodes
            .iter()
            .filter(|n| n.fit.as_ref().is_some_and(|fit| !fit.fits))
            .map(|n| n.name.clone())
            .collect(),
        failing: report
            .nodes
            .iter()
            .filter(|n| n.updated)
            .filter_map(|n| {
                Some(FailingNode {
                    node: n.name.clone(),
                    reason: n.failure.clone()?,
                })
            })
            .collect(),
        owner: report
            .owner
            .as_ref()
            .map(crate::engine::owner::SpecOwner::describe),
        strategy: report.strategy,
    })
}
