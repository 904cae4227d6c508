//! `rollcall audit`: compares a DaemonSet's owned pods with an independently kept
//! roster (live or from `-f` snapshots), or writes a first roster from a node
//! label selector.
//!
//! Wires inputs to [`crate::audit::compare`] and prints the report; decides
//! nothing itself. Exit codes: 0 all clear, 1 problems found, 2 error.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::cluster_args::ClusterArgs;
use super::out;
use crate::audit::live::{self, MAX_ATTEMPTS};
use crate::audit::table::render_table;
use crate::audit::{AuditReport, Roster, annotate_with_events, compare};
use crate::cluster::connect::Connection;
use crate::engine::recorded_status::{self, StatusDifference};
use crate::engine::selector::Selector;
use crate::input::LoadedSnapshot;
use crate::model::Snapshot;
use crate::model::{DaemonSet, DsRef, Event, Node, Pod};

const AFTER_HELP: &str = "\
Roster file: a JSON object mapping node name to node UID, e.g.
  {\"node-a\": \"5f0c...\", \"node-b\": \"9e2d...\"}
Anything else (not an object, empty, non-string or empty names/UIDs, a name
listed twice) is rejected with exit code 2.

Owned pods: controller ownerReference to this DaemonSet (kind DaemonSet,
same name and UID, whatever its group version, as upstream resolves it);
labels alone never count. A pod is ready when its phase is Running, its
Ready condition True and it is not terminating.

-o json prints one object:
  ok, problems           true when every list is empty; total entries
  daemonset              {namespace, name, uid}
  roster                 {node name: node UID}
  pods                   [{name, uid, node, phase, ready, terminating,
                           revision_hash, not_ready_reason?}]
  issues                 each a sorted list:
    node_identity_mismatch   roster nodes absent or with another UID
    node_not_ready           roster nodes whose Ready condition is not True
    missing_ready            roster nodes without a ready owned pod
    unexpected_owned_nodes   nodes outside the roster with owned pods
    multiple_pods            nodes with more than one owned pod
    unassigned               UIDs of owned pods bound to no node
    unready_pods             UIDs of owned pods that are not ready
  explanations           {node: {cause, message, reasons?, event?}} for
                         each missing_ready node; cause is node_absent,
                         not_eligible (reasons: the engine's
                         [{code, message, ...}]), no_pod or pod_not_ready;
                         event: the newest Warning event of the DaemonSet
                         (no_pod) or of the pod (pod_not_ready)
  details                {node_identity_mismatch: {node: {roster_uid,
                         cluster_uid}}, node_not_ready: {node: words}}
  recordedStatus         with -f, when the DaemonSet's own status differs
                         from what the dump's nodes and pods give:
                         {recorded, actual: {desired, current, updated,
                         ready, available}, reasons: [{code, count, nodes,
                         message}], message} (also a warning on stderr)

Exit status: 0 every list empty, 1 some list not empty, 2 error.";

/// Arguments of `rollcall audit`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct AuditArgs {
    /// The DaemonSet to audit: `NAMESPACE/NAME`, or `NAME`, `ds/NAME`,
    /// `daemonset/NAME`, `daemonsets.apps/NAME` in the -n namespace.
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
    /// The roster: a JSON object mapping node name to node UID.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "write_roster",
        conflicts_with = "write_roster"
    )]
    pub roster: Option<PathBuf>,
    /// Read a snapshot instead of a cluster: `kubectl get ... -o json|yaml` output, or a dump's
    /// directory or archive (tar, tar.gz, tar.xz, zip); repeatable; `-` is stdin.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = AuditFormat::Table)]
    pub output: AuditFormat,
    /// Write a first roster from the nodes matching --nodes-selector, then exit.
    #[arg(long, value_name = "FILE", requires = "nodes_selector")]
    pub write_roster: Option<PathBuf>,
    /// Node label selector for --write-roster (e.g. `pool in (cpu,gpu)`); never the DaemonSet's own.
    #[arg(long, value_name = "SELECTOR", requires = "write_roster")]
    pub nodes_selector: Option<String>,
    /// Let --write-roster replace an existing file.
    #[arg(long, requires = "write_roster")]
    pub force: bool,
    /// The global cluster flags (ignored with -f, except -n for a bare NAME);
    /// filled in from [`crate::cli::cluster_args::GlobalArgs`].
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// How the report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AuditFormat {
    /// A verdict and the problems in words, for people.
    Table,
    /// One JSON object, for scripts.
    Json,
}

/// Runs the command; see the module doc for exit codes.
pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    if let (Some(path), Some(selector)) = (&args.write_roster, &args.nodes_selector) {
        return write_roster(args, path, selector);
    }
    let (Some(ds_arg), Some(roster_path)) = (
        args.daemonset.as_ref().or(args.daemonset_flag.as_ref()),
        &args.roster,
    ) else {
        bail!("a DAEMONSET and --roster are required (or --write-roster with --nodes-selector)");
    };
    // The roster first: a bad roster is the user's to fix before any cluster call.
    let roster = Roster::load(roster_path)?;
    let input = if args.files.is_empty() {
        read_live(args, ds_arg)?
    } else {
        read_snapshot(args, ds_arg)?
    };
    let mut report = compare(&roster, &input.daemonset, &input.nodes, &input.pods)
        .with_context(|| format!("cannot audit daemonset {ds_arg}"))?;
    annotate_with_events(&mut report, &input.events);
    report.recorded_status = input.recorded_status;
    print_report(&report, args.output)?;
    Ok(ExitCode::from(report.exit_code()))
}

fn print_report(report: &AuditReport, format: AuditFormat) -> anyhow::Result<()> {
    // A reader that stopped early (`| head`) is not an audit error (out ignores it).
    let written = match format {
        AuditFormat::Json => {
            let mut text = out::json(&report.json(), true)?;
            text.push('\n');
            out::stdout_json(&text)
        }
        AuditFormat::Table => {
            let color = wants_color(
                std::io::stdout().is_terminal(),
                std::env::var_os("NO_COLOR").as_deref(),
            );
            out::stdout_colored(&render_table(report, color))
        }
    };
    written.context("cannot write the report")
}

/// Color only on a terminal, and never when `NO_COLOR` is set to anything non-empty (no-color.org).
fn wants_color(is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    is_terminal && no_color.is_none_or(std::ffi::OsStr::is_empty)
}

fn write_roster(args: &AuditArgs, path: &Path, selector_text: &str) -> anyhow::Result<ExitCode> {
    let selector = Selector::parse(selector_text)
        .with_context(|| format!("invalid --nodes-selector {selector_text:?}"))?;
    let nodes = if args.files.is_empty() {
        let runtime = runtime()?;
        runtime.block_on(async {
            let connection = connect_cluster(&args.cluster).await?;
            live::list_nodes(&connection.client)
                .await
                .with_context(|| format!("cluster {}", connection.server))
        })?
    } else {
        load_snapshot(&args.files)?.snapshot.nodes
    };
    let roster = Roster::from_matching_nodes(&nodes, &selector).map_err(|problem| {
        crate::audit::RosterError {
            path: path.display().to_string(),
            problem,
        }
    })?;
    roster.write(path, args.force)?;
    out::eline(&format!(
        "wrote {} nodes to {}",
        roster.len(),
        path.display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// What the audit compares, from either source.
struct AuditInput {
    daemonset: DaemonSet,
    nodes: Vec<Node>,
    pods: Vec<Pod>,
    events: Vec<Event>,
    /// From a dump: how the DaemonSet's status differs from its nodes and pods.
    recorded_status: Option<StatusDifference>,
}

fn read_live(args: &AuditArgs, ds_arg: &DsRef) -> anyhow::Result<AuditInput> {
    runtime()?.block_on(async {
        let connection = connect_cluster(&args.cluster).await?;
        let target = ds_arg.resolve(args.cluster.namespace.as_deref(), &connection.namespace)?;
        let read = live::read_consistent(&connection.client, &target, MAX_ATTEMPTS)
            .await
            .with_context(|| format!("cluster {}", connection.server))?;
        Ok(AuditInput {
            daemonset: read.daemonset,
            nodes: read.nodes,
            pods: read.pods,
            events: read.events,
            recorded_status: None,
        })
    })
}

fn read_snapshot(args: &AuditArgs, ds_arg: &DsRef) -> anyhow::Result<AuditInput> {
    let loaded = load_snapshot(&args.files)?;
    // Say what the files held: an empty file is usually a failed `kubectl get > file`.
    crate::input::require_daemonsets(&args.files, &loaded)?;
    let snapshot = loaded.snapshot;
    let daemonset = find_daemonset(&snapshot, ds_arg, args.cluster.namespace.as_deref())?.clone();
    let recorded_status = recorded_status::check(
        &daemonset,
        &snapshot.nodes,
        &snapshot.pods,
        &snapshot.revisions,
        jiff::Timestamp::now(),
    )
    .and_then(|check| check.difference());
    if let Some(difference) = &recorded_status {
        out::warning(&recorded_status::warning_line(&daemonset, difference));
    }
    Ok(AuditInput {
        daemonset,
        nodes: snapshot.nodes,
        pods: snapshot.pods,
        events: snapshot.events,
        recorded_status,
    })
}

fn load_snapshot(files: &[PathBuf]) -> anyhow::Result<LoadedSnapshot> {
    let loaded = crate::input::load_paths(files).context("cannot load the snapshot")?;
    for warning in &loaded.warnings {
        // The loader keeps the last of two same-named objects; for the audit two
        // versions of a node or pod mean two states were mixed, so that is an error.
        if is_duplicate_warning(&warning.message) {
            bail!("{warning} (the audit refuses input that mixes two states)");
        }
        out::warning(warning);
    }
    for line in loaded.summary.lines(&loaded.snapshot) {
        out::eline(&line);
    }
    Ok(loaded)
}

/// The snapshot loader's "X appears more than once" warning for a kind the audit compares.
fn is_duplicate_warning(message: &str) -> bool {
    message.contains("appears more than once")
        && ["Node ", "Pod ", "DaemonSet "]
            .iter()
            .any(|kind| message.starts_with(kind))
}

/// Finds `NS/NAME`, or a bare `NAME` in `namespace` (or, without one, unique by name).
fn find_daemonset<'a>(
    snapshot: &'a Snapshot,
    wanted: &DsRef,
    namespace: Option<&str>,
) -> anyhow::Result<&'a DaemonSet> {
    let ns = wanted.namespace.as_deref().or(namespace);
    if let (Some(named), Some(flag)) = (&wanted.namespace, namespace) {
        wanted.resolve(Some(flag), named)?;
    }
    let name = wanted.name.as_str();
    let matches: Vec<&DaemonSet> = snapshot
        .daemonsets
        .iter()
        .filter(|d| d.metadata.name.as_deref() == Some(name))
        .filter(|d| ns.is_none() || d.metadata.namespace.as_deref() == ns)
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => bail!(
            "daemonset {wanted} is not in the snapshot (present: {})",
            present_daemonsets(snapshot)
        ),
        _ => bail!("daemonset name {wanted} is ambiguous in the snapshot; use NAMESPACE/NAME"),
    }
}

fn present_daemonsets(snapshot: &Snapshot) -> String {
    let names: Vec<String> = snapshot
        .daemonsets
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d.metadata.namespace.as_deref().unwrap_or_default(),
                d.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

async fn connect_cluster(args: &ClusterArgs) -> anyhow::Result<Connection> {
    crate::cli::cluster_args::connect_saying(
        &args.connect_options(),
        "cannot connect to the cluster (or use -f SNAPSHOT)",
    )
    .await
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_needs_a_terminal_and_no_no_color() {
        let set = Some(std::ffi::OsStr::new("1"));
        let empty = Some(std::ffi::OsStr::new(""));
        assert!(wants_color(true, None));
        assert!(wants_color(true, empty));
        assert!(!wants_color(true, set));
        assert!(!wants_color(false, None));
    }

    #[test]
    fn duplicate_warnings_of_compared_kinds_are_recognised() {
        assert!(is_duplicate_warning(
            "Node n1 appears more than once; the last one wins"
        ));
        assert!(is_duplicate_warning(
            "Pod kube-system/p appears more than once; the last one wins"
        ));
        assert!(!is_duplicate_warning(
            "Event kube-system/e appears more than once; the last one wins"
        ));
        assert!(!is_duplicate_warning(
            "skipped Service default/x: rollcall reads only ..."
        ));
    }
}
