//! `rollcall status DAEMONSET [-o json|table] [--all] [--watch]`: the rollout
//! state as every console sees it (from the DaemonSet's annotations), a summary
//! (counts by eligibility, revision and readiness, the problems), then per node
//! revision, readiness and eligibility when few (or `--all`), and the plan.

use clap::{Args, ValueEnum};

use crate::cli::act_args::{ActArgs, block_on, open};
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::out;
use crate::model::DsRef;
use crate::ops::owner_guard::revert_record;
use crate::ops::snapshot::Snapshot;
use crate::ops::status::StatusReport;
use crate::ops::status_changes::changes;

/// Output formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// A table for people.
    #[default]
    Table,
    /// JSON in camelCase (one document; `status --watch`: one per change).
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
    /// Keep watching: after the report, print one timestamped line per change
    /// (state, counts, the nodes that moved); with -o json, one document per change.
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// List every node and the whole plan (by default only with at most 30 nodes;
    /// a summary always comes first).
    #[arg(short = 'A', long)]
    pub all: bool,
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
            let snapshot = Snapshot::load_with_usage(
                &session.connection.client,
                &session.target,
                crate::cli::out::eline,
            )
            .await?;
            let report = StatusReport::build(&snapshot, jiff::Timestamp::now())?;
            journal_revert(&session, &report);
            print(&render(&report, args)?, args.output)?;
            return Ok(std::process::ExitCode::SUCCESS);
        }
        let follower = crate::cli::act_args::follow(&session);
        let mut last: Option<StatusReport> = None;
        let watching = async {
            loop {
                // Rows computed at each change, in node-name order as the report
                // lists them (the report is as large as the cluster either way).
                let snapshot = follower.snapshot().await?;
                let report = StatusReport::build(&snapshot, jiff::Timestamp::now())?;
                journal_revert(&session, &report);
                match (&last, args.output) {
                    (None, _) => print(&render(&report, args)?, args.output)?,
                    (Some(before), Output::Json) => {
                        if serde_json::to_value(before)? != serde_json::to_value(&report)? {
                            print(&render(&report, args)?, args.output)?;
                        }
                    }
                    (Some(before), Output::Table) => {
                        let changes = changes(before, &report);
                        if !changes.is_empty() {
                            let now = jiff::Timestamp::now().round(jiff::Unit::Second)?;
                            out::line(&format!("{now}  {}", changes.join(" · ")));
                        }
                    }
                }
                std::io::Write::flush(&mut std::io::stdout())?;
                last = Some(report);
                follower.changed_or(None).await;
            }
        };
        // SIGINT or SIGTERM ends the watch as an interrupted command (130),
        // whichever of the two the terminal or a supervisor sends.
        tokio::select! {
            result = watching => result,
            () = crate::ops::interrupt::wait_for_signal() => Ok(std::process::ExitCode::from(130)),
        }
    })
}

/// Records a revert the report shows in the journal (once per revert).
fn journal_revert(session: &crate::cli::act_args::Session, report: &StatusReport) {
    let Some(revert) = &report.revert else {
        return;
    };
    let record = revert_record(&session.target, revert);
    if let Err(err) = session.executor.note_once(&record) {
        out::warning(&format!("cannot journal the revert: {err}"));
    }
}

fn render(report: &StatusReport, args: &StatusArgs) -> anyhow::Result<String> {
    Ok(match args.output {
        Output::Table => report.render_table(args.all),
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
