//! `rollcall status NS/NAME [-o json|table] [--watch]`: the rollout state as
//! every console sees it (from the DaemonSet's annotations), per node revision,
//! readiness and eligibility, and the plan with skipped nodes.

use clap::{Args, ValueEnum};

use crate::cli::act_args::{ActArgs, block_on, open};
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::out;
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
    /// The DaemonSet, `NAMESPACE/NAME` or `NAME`.
    #[arg(value_name = "NS/NAME")]
    pub daemonset: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Keep printing as the rollout changes (until interrupted).
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// Cluster flags.
    #[command(flatten)]
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
            print(
                &render(
                    &StatusReport::build(&snapshot, jiff::Timestamp::now())?,
                    args.output,
                )?,
                args.output,
            )?;
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
                print(&text, args.output)?;
                if args.output == Output::Table {
                    out::line("---");
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
        Output::Json => format!("{}\n", out::json(report, false)?),
    })
}

/// Prints rendered output: tables sanitised, JSON exact (already escaped).
fn print(text: &str, output: Output) -> std::io::Result<()> {
    match output {
        Output::Table => out::stdout(text),
        Output::Json => out::stdout_json(text),
    }
}
