//! `rollcall status NS/NAME [-o json|table] [--watch]`: the rollout state as
//! every console sees it (from the DaemonSet's annotations), per node revision,
//! readiness and eligibility, and the plan with skipped nodes.

use clap::{Args, ValueEnum};

use crate::cli::act_args::{ActArgs, block_on, open};
use crate::cli::cluster_args::ClusterArgs;
use crate::model::DsRef;
use crate::ops::follow::Follower;
use crate::ops::snapshot::Snapshot;
use crate::ops::status::StatusReport;

/// Output formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// A table for people.
    #[default]
    Table,
    /// JSON (one document; one per line with --watch).
    Json,
}

/// Arguments of `rollcall status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The DaemonSet: `NAME` (in the -n namespace), `NAMESPACE/NAME`, `ds/NAME`,
    /// `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Keep printing as the rollout changes (until interrupted).
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall status`.
pub fn run(args: &StatusArgs) -> anyhow::Result<std::process::ExitCode> {
    block_on(async {
        let session = open(
            &args.cluster,
            &args.daemonset,
            &ActArgs {
                read_only: true,
                ..ActArgs::default()
            },
        )
        .await?;
        if !args.watch {
            let snapshot = Snapshot::load(&session.connection.client, &session.target).await?;
            print!(
                "{}",
                render(
                    &StatusReport::build(&snapshot, jiff::Timestamp::now())?,
                    args.output
                )?
            );
            return Ok(std::process::ExitCode::SUCCESS);
        }
        let follower = Follower::start(session.connection.client.clone(), &session.target);
        let mut last = String::new();
        loop {
            let snapshot = follower.snapshot().await?;
            let text = render(
                &StatusReport::build(&snapshot, jiff::Timestamp::now())?,
                args.output,
            )?;
            if text != last {
                print!("{text}");
                if args.output == Output::Table {
                    println!("---");
                }
                last = text;
            }
            follower.changed_or(None).await;
        }
    })
}

fn render(report: &StatusReport, output: Output) -> anyhow::Result<String> {
    Ok(match output {
        Output::Table => report.render_table(),
        Output::Json => format!("{}\n", serde_json::to_string(report)?),
    })
}
