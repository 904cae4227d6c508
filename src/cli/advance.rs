//! `rollcall advance NS/NAME (--node NODE... | --next K) [--wait] [--timeout D]`:
//! delete the old-revision pod on the named nodes (or the next K of the plan)
//! with a UID precondition; with `--wait`, follow the replacements until Ready
//! and available. Exit 0 done, 1 a replacement failed (which node, why), 2 error.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cli::act_args::{
    ActArgs, Session, StepOutput, block_on, confirm, finish, open, parse_duration, precheck,
    print_dry_run, step,
};
use crate::cli::cluster_args::ClusterArgs;
use crate::model::DsRef;
use crate::ops::advance::{AdvanceTarget, choose};
use crate::ops::drive::{advance, follow_flights};
use crate::ops::rbac::Operation;
use crate::ops::run::fit::{StepFit, UNKNOWN_FIT, step_fit};
use crate::ops::run::settings::ensure_advance_by_hand;
use crate::ops::snapshot::{Rows, Snapshot};

/// Arguments of `rollcall advance`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["nodes", "next"])))]
pub struct AdvanceArgs {
    /// The DaemonSet: `NAME` (in the -n namespace), `NAMESPACE/NAME`, `ds/NAME`,
    /// `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// Advance this node (repeatable).
    #[arg(long = "node", value_name = "NODE")]
    pub nodes: Vec<String>,
    /// Advance the next K nodes of the plan.
    #[arg(long, value_name = "K")]
    pub next: Option<usize>,
    /// With --next: advance although pods already on the new revision are failing.
    #[arg(long)]
    pub despite_failing: bool,
    /// Delete although the new revision's pod will not fit on the node (by
    /// default such a node is refused, exit 1, nothing deleted).
    #[arg(long)]
    pub despite_fit: bool,
    /// Wait until the replacement pods are Ready and available.
    #[arg(long)]
    pub wait: bool,
    /// How long a replacement may take to become Ready (with --wait).
    #[arg(long, value_name = "D", default_value = "5m", value_parser = parse_duration)]
    pub timeout: Duration,
    /// --yes (and the global --read-only, --journal).
    #[command(flatten)]
    pub act: ActArgs,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// `--next` refuses while pods already on the new revision are failing,
/// unless `--despite-failing`.
fn check_failing(args: &AdvanceArgs, rows: &Rows<'_>) -> Option<ExitCode> {
    if args.next.is_none() || args.despite_failing {
        return None;
    }
    let failing = crate::ops::preflight::failing_updated(rows);
    (!failing.is_empty()).then(|| {
        let why = crate::ops::preflight::failing_text(&failing, 10);
        finish(&args.act, 1, &format!("refused: {why} (--despite-failing)"))
    })
}

/// Fit before anything is deleted: a node that will not fit is refused
/// (exit 1) unless `--despite-fit`; preemptions are named before the
/// confirmation; an unknown fit is said.
fn check_fit(args: &AdvanceArgs, session: &Session, judged: StepFit) -> Result<StepFit, ExitCode> {
    if judged.unknown {
        crate::cli::out::eline(&format!("note: {UNKNOWN_FIT}"));
    }
    if let Some(refusal) = judged.refusal() {
        if !args.despite_fit {
            let text = format!("refused: {refusal} (--despite-fit)");
            return Err(finish(&args.act, 1, &text));
        }
        crate::cli::out::warning(&format!("despite fit: {refusal}"));
    }
    let verb = if session.executor.dry_run().is_some() {
        "would "
    } else {
        ""
    };
    for (node, preempts) in judged.preempt_notes() {
        step(
            &args.act,
            "preempt",
            &format!("node {node}: {verb}{preempts}"),
            serde_json::json!({ "node": node, "preempts": preempts }),
        );
    }
    Ok(judged)
}

/// Runs `rollcall advance`.
pub fn run(args: &AdvanceArgs) -> anyhow::Result<ExitCode> {
    block_on(async {
        let session = open(&args.cluster, &args.daemonset, &args.act).await?;
        precheck(&session, Operation::Advance, "advance").await?;
        let target = match args.next {
            Some(k) => AdvanceTarget::Next(k),
            None => AdvanceTarget::Nodes(args.nodes.clone()),
        };
        let client = &session.connection.client;
        let follower = args.wait.then(|| crate::cli::act_args::follow(&session));
        // Fit is decided before the deletes: the usage of every node is read.
        let snapshot = match &follower {
            Some(f) => f.snapshot().await?,
            None => {
                Snapshot::load_with_usage(client, &session.target, crate::cli::out::eline).await?
            }
        };
        let state = snapshot.state()?;
        ensure_advance_by_hand(&snapshot, &state)?;
        if let Some(note) = crate::ops::owner_guard::advance_note(&snapshot.ds) {
            crate::cli::out::eline(&format!("note: {}: {note}", session.target));
        }
        let index = snapshot.index();
        let rows = snapshot.rows(&index, jiff::Timestamp::now());
        if let Some(refused) = check_failing(args, &rows) {
            return Ok(refused);
        }
        let no_exclusion = std::collections::BTreeSet::new();
        let victims = choose(
            &snapshot.plan_for(&rows, &state, &target, &no_exclusion, false)?,
            &target,
            &no_exclusion,
        )?;
        // `--next K` that finds fewer than K nodes it may move says which it
        // could not, and ends incomplete (exit 1), as a run does.
        let short = match args.next {
            Some(k) if victims.len() < k => {
                let whole = snapshot.plan_with(&rows, &state, false)?;
                let left = crate::ops::run::decide::left_behind(&whole, None);
                let list: Vec<String> = left.iter().map(|(n, why)| format!("{n}: {why}")).collect();
                (!left.is_empty()).then(|| {
                    format!(
                        "incomplete: {} of {k} node(s) advanced; {} node(s) could not be ({})",
                        victims.len(),
                        left.len(),
                        list.join(", ")
                    )
                })
            }
            _ => None,
        };
        let nodes: Vec<&str> = victims.iter().map(|v| v.node.as_str()).collect();
        let judged = match check_fit(args, &session, step_fit(&snapshot, &rows, &nodes)) {
            Ok(judged) => judged,
            Err(refused) => return Ok(refused),
        };
        let list: Vec<String> = victims
            .iter()
            .map(|v| format!("{} (pod {})", v.node, v.pod))
            .collect();
        confirm(
            &format!("advance {}: delete {}", session.target, list.join(", ")),
            args.act.yes,
        )?;
        let flights = advance(
            &session.executor,
            &snapshot,
            &AdvanceTarget::Nodes(victims.iter().map(|v| v.node.clone()).collect()),
            &judged.preempt_notes(),
        )
        .await?;
        if let Some(code) = print_dry_run(&session, &args.act, None) {
            return Ok(code);
        }
        for flight in &flights {
            let (node, pod) = (&flight.victim.node, &flight.victim.pod);
            step(
                &args.act,
                "delete",
                &format!("deleted pod {pod} on node {node}"),
                serde_json::json!({ "node": node, "pod": pod }),
            );
        }
        let Some(follower) = follower else {
            if let Some(short) = &short {
                return Ok(finish(&args.act, 1, short));
            }
            // Without --wait the deletes are the result; JSON still ends with its `end` line.
            if args.act.output == StepOutput::Json {
                finish(&args.act, 0, &format!("{} pod(s) deleted", flights.len()));
            }
            return Ok(ExitCode::SUCCESS);
        };
        Ok(
            match follow_flights(&follower, flights, args.timeout).await? {
                Ok(()) if short.is_some() => {
                    finish(&args.act, 1, short.as_deref().unwrap_or_default())
                }
                Ok(()) => finish(&args.act, 0, "all replacements Ready and available"),
                Err((node, reason)) => finish(&args.act, 1, &format!("node {node}: {reason}")),
            },
        )
    })
}
