//! `rollcall status NS/NAME [-o json|table] [--watch]`: the rollout state as
//! every console sees it (from the DaemonSet's annotations), per node revision,
//! readiness and eligibility, and the plan with skipped nodes.

use clap::{Args, ValueEnum};

use crate::cli::act_args::{ActArgs, block_on, open};
use crate::cli::cluster_args::ClusterArgs;
use crate::ops::follow::Follower;
use crate::ops::owner_guard::revert_record;
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
            let report = StatusReport::build(&snapshot, jiff::Timestamp::now())?;
            journal_revert(&session, &report);
            print!("{}", render(&report, args.output)?);
            return Ok(std::process::ExitCode::SUCCESS);
        }
        let follower = Follower::start(session.connection.client.clone(), &session.target);
        let mut last = String::new();
        loop {
            let snapshot = follower.snapshot().await?;
            let report = StatusReport::build(&snapshot, jiff::Timestamp::now())?;
            journal_revert(&session, &report);
            let text = render(&report, args.output)?;
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

/// Records a revert the report shows in the journal (once per revert).
fn journal_revert(session: &crate::cli::act_args::Session, report: &StatusReport) {
    let Some(revert) = &report.revert else {
        return;
    };
    let record = revert_record(&session.target.key(), revert);
    if let Err(err) = session.executor.note_once(&record) {
        eprintln!("warning: cannot journal the revert: {err}");
    }
}

fn render(report: &StatusReport, output: Output) -> anyhow::Result<String> {
    Ok(match output {
        Output::Table => report.render_table(),
        Output::Json => format!("{}\n", serde_json::to_string(report)?),
    })
}
