//! `rollcall explain`: for every DaemonSet of a snapshot (or one), whether each
//! node should run its pod and why not, as a table for people or JSON for scripts.
//!
//! Builds a plain report from the engine's verdicts ([`explain`]), then renders
//! it; reads files only through the snapshot loader and writes only to
//! stdout/stderr.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;

use crate::cli::out;
use crate::engine::eligibility::{NodeVerdict, node_should_run_daemon_pod};
use crate::engine::recorded_status::{self, StatusDifference};
use crate::engine::vocabulary::Eligibility;
use crate::model::{DaemonSet, DsRef, Pod, Snapshot, Target};

mod fit_column;

/// Arguments of `rollcall explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// Snapshot file(s) as `kubectl get ... -o json|yaml` prints them, or a dump's directory or
    /// archive (tar, tar.gz, tar.xz, zip); repeatable; `-` reads stdin.
    /// A DaemonSet whose own status differs from what the snapshot's nodes and pods give is
    /// named on stderr (`-o json` keeps the explain contract exact and leaves it out).
    /// Required: explain reads files, not a live cluster (`status` explains a live one).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Only this DaemonSet: `NAMESPACE/NAME`, or `NAME`, `ds/NAME`, `daemonset/NAME`,
    /// `daemonsets.apps/NAME` (in the -n namespace, else unique across namespaces).
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: Option<DsRef>,
    /// The same as the DAEMONSET argument (kept for older scripts).
    #[arg(
        long = "daemonset",
        value_name = "DAEMONSET",
        hide = true,
        conflicts_with = "daemonset"
    )]
    pub daemonset_flag: Option<DsRef>,
    /// The global `-n` (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub namespace: Option<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ExplainFormat::Table)]
    pub output: ExplainFormat,
}

/// How `explain` prints its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExplainFormat {
    /// Aligned columns for people.
    Table,
    /// `{"daemonsets":[...]}` for scripts.
    Json,
}

/// The whole answer: one entry per DaemonSet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExplainReport {
    /// DaemonSets sorted by namespace and name.
    pub daemonsets: Vec<DaemonSetExplanation>,
}

/// One DaemonSet and every node of the snapshot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DaemonSetExplanation {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Every node, sorted by name.
    pub nodes: Vec<NodeExplanation>,
    /// The dump holds pods, so fit could be judged (the FIT column says `?`
    /// otherwise).
    #[serde(skip)]
    pub usage_known: bool,
    /// How the DaemonSet's own status differs from what the snapshot's nodes
    /// and pods give, and why; absent when they agree (or it has no status).
    /// Said on stderr only: the JSON shape of `explain` is a contract others
    /// parse exactly (`audit -o json` carries it as `recordedStatus`).
    #[serde(skip)]
    pub recorded_status: Option<StatusDifference>,
}

/// One node's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeExplanation {
    /// Node name.
    pub name: String,
    /// `shouldRun`, `shouldContinueRunning` and `reasons`.
    #[serde(flatten)]
    pub verdict: NodeVerdict,
    /// A live daemon pod of this DaemonSet runs on the node (for the table's
    /// eligibility word: "keep" describes a pod that exists).
    #[serde(skip)]
    pub has_pod: bool,
    /// Will the update revision's pod fit (the same object as `status -o
    /// json`'s, computed from the dump's pods); `null` when the node runs it
    /// already, is not eligible, or the dump holds no pods.
    pub fit: Option<crate::engine::fit::Fit>,
}

/// Why `explain` cannot answer.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// `--daemonset` names no DaemonSet of the snapshot.
    #[error("daemonset {wanted} is not in the snapshot; {}", present_list(.present))]
    UnknownDaemonSet {
        /// What was asked for.
        wanted: String,
        /// `namespace/name` of every DaemonSet present.
        present: Vec<String>,
    },
    /// A bare `--daemonset NAME` exists in several namespaces.
    #[error("daemonset name {wanted} is ambiguous; use NAMESPACE/NAME: {}", .matches.join(", "))]
    Ambiguous {
        /// What was asked for.
        wanted: String,
        /// The candidates.
        matches: Vec<String>,
    },
}

fn present_list(present: &[String]) -> String {
    if present.is_empty() {
        "the snapshot has no DaemonSets".to_owned()
    } else {
        format!("DaemonSets present: {}", present.join(", "))
    }
}

/// Runs `rollcall explain`: loads the snapshot, prints warnings on stderr and
/// the report on stdout. Exit 0 on success; errors go to `cli::run` (exit 2).
pub fn run(args: &ExplainArgs) -> anyhow::Result<ExitCode> {
    if args.files.is_empty() {
        anyhow::bail!(
            "explain reads a snapshot: give it with -f, e.g. `kubectl get nodes,pods,ds,controllerrevisions -A -o json | rollcall explain -f -`; for a live cluster, `rollcall status DAEMONSET` explains every node"
        );
    }
    let loaded = crate::input::load_paths(&args.files).context("cannot load the snapshot")?;
    for warning in &loaded.warnings {
        out::warning(warning);
    }
    for line in loaded.summary.lines(&loaded.snapshot) {
        out::eline(&line);
    }
    // Nothing to explain is an error (exit 2): it hides a failed `kubectl get > file`.
    crate::input::require_daemonsets(&args.files, &loaded)?;
    let only = args
        .daemonset
        .as_ref()
        .or(args.daemonset_flag.as_ref())
        .map(|wanted| match (&wanted.namespace, &args.namespace) {
            (None, Some(namespace)) => format!("{namespace}/{}", wanted.name),
            _ => wanted.to_string(),
        });
    let mut report = explain(&loaded.snapshot, only.as_deref())?;
    for line in compare_recorded_status(&mut report, &loaded.snapshot, jiff::Timestamp::now()) {
        out::warning(&line);
    }
    let written = match args.output {
        ExplainFormat::Json => {
            let mut json = out::json(&report, true)?;
            json.push('\n');
            out::stdout_json(&json)
        }
        ExplainFormat::Table => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            out::stdout_colored(&render_table(&report, color))
        }
    };
    written.context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The verdict of every node of `snapshot` under every DaemonSet, or only
/// under `only` (`NAMESPACE/NAME`, or a `NAME` unique across namespaces).
pub fn explain(snapshot: &Snapshot, only: Option<&str>) -> Result<ExplainReport, ExplainError> {
    let mut daemonsets: BTreeMap<Target, &DaemonSet> = snapshot
        .daemonsets
        .iter()
        .map(|ds| (Target::of(ds), ds))
        .collect();
    if let Some(wanted) = only {
        let key = select(&daemonsets, wanted)?;
        daemonsets.retain(|k, _| *k == key);
    }
    let mut nodes: Vec<_> = snapshot.nodes.iter().collect();
    nodes.sort_by(|a, b| a.name().cmp(b.name()));
    let usage = fit_column::dump_usage(snapshot);
    let now = jiff::Timestamp::now();
    let daemonsets = daemonsets
        .into_iter()
        .map(|(Target { namespace, name }, ds)| {
            // One pass over the pods per DaemonSet, not one per node.
            let with_pod: HashSet<&str> = snapshot
                .pods
                .iter()
                .filter(|pod| {
                    !pod.is_terminating() && crate::engine::ownership::is_controlled_by(pod, ds)
                })
                .filter_map(Pod::node_name)
                .collect();
            let mut fits = fit_column::fits(snapshot, ds, usage.as_ref(), now);
            DaemonSetExplanation {
                namespace,
                name,
                nodes: nodes
                    .iter()
                    .map(|node| NodeExplanation {
                        name: node.name().to_owned(),
                        verdict: node_should_run_daemon_pod(node, ds),
                        has_pod: with_pod.contains(node.name()),
                        fit: fits.remove(node.name()),
                    })
                    .collect(),
                usage_known: usage.is_some(),
                recorded_status: None,
            }
        })
        .collect();
    Ok(ExplainReport { daemonsets })
}

/// Fills in, for each DaemonSet of `report`, how its recorded status differs
/// from what `snapshot`'s nodes and pods give as of `now` (the one decision,
/// [`recorded_status::check`]); returns a warning line for each that differs.
pub fn compare_recorded_status(
    report: &mut ExplainReport,
    snapshot: &Snapshot,
    now: jiff::Timestamp,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for entry in &mut report.daemonsets {
        let target = crate::model::Target {
            namespace: entry.namespace.clone(),
            name: entry.name.clone(),
        };
        let Some(ds) = snapshot.daemonset(&target) else {
            continue;
        };
        entry.recorded_status = recorded_status::check(
            ds,
            &snapshot.nodes,
            &snapshot.pods,
            &snapshot.revisions,
            now,
        )
        .and_then(|check| check.difference());
        if let Some(difference) = &entry.recorded_status {
            warnings.push(recorded_status::warning_line(ds, difference));
        }
    }
    warnings
}

fn select(daemonsets: &BTreeMap<Target, &DaemonSet>, wanted: &str) -> Result<Target, ExplainError> {
    let parsed: Option<DsRef> = wanted.parse().ok();
    let matches: Vec<&Target> = match &parsed {
        Some(DsRef {
            namespace: Some(namespace),
            name,
        }) => daemonsets
            .keys()
            .filter(|t| t.namespace == *namespace && t.name == *name)
            .collect(),
        Some(DsRef {
            namespace: None,
            name,
        }) => daemonsets.keys().filter(|t| t.name == *name).collect(),
        None => Vec::new(),
    };
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(ExplainError::UnknownDaemonSet {
            wanted: wanted.to_owned(),
            present: daemonsets.keys().map(Target::key).collect(),
        }),
        many => Err(ExplainError::Ambiguous {
            wanted: wanted.to_owned(),
            matches: many.iter().map(|t| t.key()).collect(),
        }),
    }
}

const BOLD: &str = "\x1b[1m";
const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

/// The report as aligned text: per DaemonSet a heading, NODE / ELIG / FIT / REASON
/// rows (the console's and `status`'s words: yes, keep, no) and a count line.
/// `color` adds ANSI colors.
pub fn render_table(report: &ExplainReport, color: bool) -> String {
    let mut out = String::new();
    if report.daemonsets.is_empty() {
        out.push_str("no DaemonSets in the snapshot\n");
    }
    for (index, ds) in report.daemonsets.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let heading = format!("DaemonSet {}/{}", clean(&ds.namespace), clean(&ds.name));
        let _ = writeln!(out, "{}", paint(&heading, BOLD, color));
        render_rows(&mut out, &ds.nodes, ds.usage_known, color);
        let _ = writeln!(out, "{}", count_line(&ds.nodes));
    }
    out
}

fn render_rows(out: &mut String, nodes: &[NodeExplanation], usage_known: bool, color: bool) {
    let names: Vec<String> = nodes.iter().map(|n| clean(&n.name)).collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .chain([4])
        .max()
        .unwrap_or(4);
    let fits: Vec<String> = nodes
        .iter()
        .map(|n| clean(&fit_column::fit_word(n.fit.as_ref(), usage_known)))
        .collect();
    let fit_width = fits
        .iter()
        .map(|f| f.chars().count())
        .chain([3])
        .max()
        .unwrap_or(3);
    let _ = writeln!(
        out,
        "{:<width$}  ELIG  {:<fit_width$}  REASON",
        "NODE", "FIT"
    );
    for ((node, name), fit) in nodes.iter().zip(&names).zip(&fits) {
        let elig = eligibility(Eligibility::of(&node.verdict, node.has_pod), color);
        let reason = node
            .verdict
            .reasons
            .iter()
            .map(|r| clean(&r.message))
            .collect::<Vec<_>>()
            .join("; ");
        let padding = width - name.chars().count();
        let line = format!("{name}{:padding$}  {elig}  {fit:<fit_width$}  {reason}", "");
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// The eligibility word padded to 4 outside the colour codes, so columns stay aligned.
fn eligibility(word: Eligibility, color: bool) -> String {
    let style = match word {
        Eligibility::Yes => GREEN,
        Eligibility::Keep | Eligibility::Unknown => BOLD,
        Eligibility::No => RED,
    };
    let text = word.word();
    let padding = 4usize.saturating_sub(text.len());
    format!("{}{:padding$}", paint(text, style, color), "")
}

fn paint(text: &str, style: &str, color: bool) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_owned()
    }
}

/// The counts under the table, in the table's own words: a node counted
/// as keeping its pod is one ELIG marks `keep` (a pod is there to keep).
fn count_line(nodes: &[NodeExplanation]) -> String {
    let run = nodes.iter().filter(|n| n.verdict.should_run).count();
    let keep_only = nodes
        .iter()
        .filter(|n| Eligibility::of(&n.verdict, n.has_pod) == Eligibility::Keep)
        .count();
    let excluded = nodes.len() - run;
    let mut line = format!(
        "{} node{}: {run} should run, {excluded} excluded",
        nodes.len(),
        if nodes.len() == 1 { "" } else { "s" }
    );
    if keep_only > 0 {
        let _ = write!(line, " ({keep_only} keep their running pod)");
    }
    line
}

/// API text made safe to print (the one sanitizer the console uses too), so a
/// hostile name or message cannot drive the terminal.
fn clean(text: &str) -> String {
    crate::sanitize::sanitize(text).into_owned()
}

#[cfg(test)]
mod tests;
