//! The console commands: `rollcall [NS/DAEMONSET]` on a cluster from the
//! kubeconfig (refused, exit 2, when there is none: only `rollcall demo`
//! starts the embedded cluster), and `rollcall demo` on the embedded cluster,
//! whose title line says SIMULATED. Wires the cluster layer, the embedded cluster and
//! the TUI together; logs go to a file, never to the terminal.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;

use super::cluster_args::{ClusterArgs, GlobalArgs};
use crate::cluster::connect::{Connection, connection_from_config};
use crate::cluster::server_kind::ServerKind;
use crate::cluster::watch::{self, Target};
use crate::model::DsRef;
use crate::sim::embedded::{self, EmbeddedOptions};
use crate::tui::view_model::ConsoleInfo;

/// Flags of the console (the command line without a subcommand).
#[derive(Clone, Debug, Default, Args)]
pub struct ConsoleArgs {
    /// The DaemonSet to open: NAMESPACE/NAME, or NAME, ds/NAME, daemonset/NAME,
    /// daemonsets.apps/NAME in the -n namespace; without it, the console lists
    /// DaemonSets to pick from.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: Option<DsRef>,
    /// The global cluster flags (filled in from [`GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
    /// The global `--log-file` (filled in from [`GlobalArgs`]).
    #[arg(skip)]
    pub log_file: Option<PathBuf>,
    /// The global `--read-only` and `--journal` (filled in from [`GlobalArgs`]).
    #[arg(skip)]
    pub ops: ConsoleOpsArgs,
    /// Node roster (JSON: node name to UID, as `rollcall audit --write-roster`
    /// writes it): missing, unexpected and mismatched nodes are marked in the grid.
    #[arg(long, value_name = "FILE")]
    pub roster: Option<PathBuf>,
}

/// The console's rollout-operation settings (from the global flags).
#[derive(Clone, Debug, Default)]
pub struct ConsoleOpsArgs {
    /// Show everything, change nothing: every rollout key is disabled.
    pub read_only: bool,
    /// Journal file for rollout actions (default: $XDG_STATE_HOME/rollcall/journal.jsonl).
    pub journal: Option<PathBuf>,
}

impl ConsoleOpsArgs {
    /// `--read-only` and `--journal` from the global flags.
    pub fn from_global(global: &GlobalArgs) -> Self {
        Self {
            read_only: global.read_only,
            journal: global.journal.clone(),
        }
    }
}

impl ConsoleArgs {
    /// Takes the global flags.
    pub fn apply(&mut self, global: &GlobalArgs) {
        self.cluster = global.cluster.clone();
        self.log_file.clone_from(&global.log_file);
        self.ops = ConsoleOpsArgs::from_global(global);
    }
}

/// `rollcall demo`: the embedded cluster in-process, with the console on it.
#[derive(Clone, Debug, Args)]
pub struct DemoArgs {
    /// The DaemonSet to open, as NAMESPACE/NAME, NAME or ds/NAME (default: the scenario's first DaemonSet).
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: Option<DsRef>,
    /// A built-in scenario (`default`, `small`, `gitops`, `capacity`) or a scenario YAML file.
    #[arg(long, value_name = "NAME|FILE")]
    pub scenario: Option<String>,
    /// Generate a cluster of N nodes instead of the scenario's pools (scale demo).
    #[arg(long, value_name = "N")]
    pub nodes: Option<usize>,
    /// Rehearse your own DaemonSet: add the objects of these files (manifests, `-` for
    /// stdin, or a dump) and open the console on their first DaemonSet. Nodes come from
    /// the files when they hold any, else from --scenario's pools or --nodes; repeatable.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filename: Vec<PathBuf>,
    /// Where to write a kubeconfig for kubectl, kept after exit (default: a file
    /// in the temp directory, shown in the title and removed when the demo exits).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// RNG seed for the simulation.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Time multiplier for kubelet delays (2 = twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// An embedded fleet of N clusters (as `rollcall sim --clusters N`; without
    /// --scenario the members vary) and the fleet matrix on its DaemonSet.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=500), conflicts_with = "filename")]
    pub fleet: Option<u16>,
    /// The global `--read-only` and `--journal` (filled in from [`GlobalArgs`]).
    #[arg(skip)]
    pub ops: ConsoleOpsArgs,
    /// The global cluster flags: only `-n` is used (for a bare DaemonSet NAME).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall demo`.
pub fn run_demo(
    args: &DemoArgs,
    log_file: Option<&Path>,
) -> anyhow::Result<std::process::ExitCode> {
    let log = init_logging(log_file)?;
    tracing::info!(log = %log.display(), "demo starting");
    if let Some(count) = args.fleet {
        return runtime()?.block_on(super::fleet_live::demo(args, usize::from(count)));
    }
    let options = EmbeddedOptions {
        scenario: args.scenario.clone(),
        nodes: args.nodes,
        snapshot: args.filename.clone(),
        seed: args.seed,
        speed: args.speed,
        // Frequent bookmarks: the console tells a silent watch from a quiet one by them.
        bookmark_interval: Some(std::time::Duration::from_secs(5)),
        ..EmbeddedOptions::default()
    };
    runtime()?.block_on(open_embedded(
        options,
        args.kubeconfig_out.clone(),
        Pick {
            daemonset: args.daemonset.as_ref(),
            cluster: &args.cluster,
        },
        &args.ops,
    ))
}

/// The DaemonSet the user named and the flags that resolve a bare name.
#[derive(Clone, Copy)]
struct Pick<'a> {
    daemonset: Option<&'a DsRef>,
    cluster: &'a ClusterArgs,
}

/// Removes a file this process wrote for others (the demo's kubeconfig, whose
/// token dies with the embedded cluster) when dropped: on return, error or panic.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            crate::sim::kubeconfig::remove(&path);
        }
    }
}

/// Starts the embedded cluster, writes a kubeconfig for kubectl, and opens the
/// console on it through the same kube-rs path as a real cluster.
async fn open_embedded(
    options: EmbeddedOptions,
    kubeconfig_out: Option<PathBuf>,
    pick: Pick<'_>,
    ops: &ConsoleOpsArgs,
) -> anyhow::Result<std::process::ExitCode> {
    let bookmark_interval = options.bookmark_interval;
    let cluster = embedded::start(options)
        .await
        .context("starting the embedded cluster")?;
    for line in &cluster.simulation.load_report {
        tracing::info!(%line, "embedded cluster loaded");
    }
    let keep = kubeconfig_out.is_some();
    let path = kubeconfig_out.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "rollcall-demo-{}.kubeconfig",
            cluster.addr().port()
        ))
    });
    let _remove = RemoveOnDrop((!keep).then(|| path.clone()));
    cluster
        .server
        .write_kubeconfig(&path)
        .with_context(|| format!("writing the kubeconfig to {}", path.display()))?;
    let config = cluster.server.kube_config();
    let mut connection = connection_from_config(
        config,
        "embedded".to_owned(),
        None,
        pick.cluster.wire,
        pick.cluster.compression,
    )
    .context("connecting to the embedded cluster")?;
    // The embedded cluster's admin token is who acts (its server answers no
    // SelfSubjectReview).
    connection.user = Some(crate::sim::auth::SIM_USER.to_owned());
    // Known in-process, not probed: the console says SIMULATED.
    connection.server_kind = ServerKind::Embedded {
        bookmark_interval: bookmark_interval
            .unwrap_or_else(|| crate::sim::server::ServeOptions::default().bookmark_interval),
    };
    // Without a DaemonSet named, open on the files' first one, else the
    // scenario's (the tour's `kube-system/node-agent`); none: the list.
    let first = cluster
        .simulation
        .first_daemon_set
        .as_ref()
        .map(|target| DsRef {
            namespace: Some(target.namespace.clone()),
            name: target.name.clone(),
        });
    let target = parse_target(
        pick.daemonset.or(first.as_ref()),
        pick.cluster,
        &connection.namespace,
    )?;
    let info = ConsoleInfo {
        context: "embedded".to_owned(),
        server: connection.server.clone(),
        note: Some(format!(
            "embedded cluster · scenario {} · kubectl --kubeconfig {}",
            cluster.simulation.scenario.name,
            path.display()
        )),
    };
    let result = open_console_with(connection, None, target, info, ops, None).await;
    cluster.shutdown().await;
    result
}

/// Runs the console on the cluster the flags point at.
pub fn run_console(args: &ConsoleArgs) -> anyhow::Result<std::process::ExitCode> {
    // A bad roster is a startup error (exit 2), before the terminal is taken over.
    let roster = args
        .roster
        .as_deref()
        .map(crate::audit::Roster::load)
        .transpose()?;
    let log = init_logging(args.log_file.as_deref())?;
    let runtime = runtime()?;
    runtime.block_on(async {
        let options = args.cluster.connect_options();
        // No cluster configured is an error naming `rollcall demo`: the
        // embedded cluster never opens on its own.
        let connection =
            super::cluster_args::connect_saying(&options, "connecting to the cluster").await?;
        let target = parse_target(
            args.daemonset.as_ref(),
            &args.cluster,
            &connection.namespace,
        )?;
        let info = ConsoleInfo {
            context: connection.context.clone(),
            server: connection.server.clone(),
            note: None,
        };
        tracing::info!(log = %log.display(), server = %connection.server, "console starting");
        // Without -n, every namespace; but a user who may not list them all
        // (a namespace-scoped one) gets the context's own namespace, as
        // kubectl would, not an empty screen.
        let mut namespace = args.cluster.namespace.clone();
        if namespace.is_none()
            && target.is_none()
            && connection.context_namespace.is_some()
            && !crate::ops::rbac::may_list_daemonsets_everywhere(&connection.client).await
        {
            namespace.clone_from(&connection.context_namespace);
        }
        open_console_with(connection, namespace, target, info, &args.ops, roster).await
    })
}

/// Starts the watches and the TUI; returns when the user quits.
pub async fn open_console(
    connection: Connection,
    namespace: Option<String>,
    target: Option<Target>,
    info: ConsoleInfo,
) -> anyhow::Result<std::process::ExitCode> {
    open_console_with(
        connection,
        namespace,
        target,
        info,
        &ConsoleOpsArgs::default(),
        None,
    )
    .await
}

/// As [`open_console`], with the rollout-operation flags (the effects task,
/// single writer and journaled, and the RBAC pre-check are started here) and
/// the roster to audit against, if any.
pub async fn open_console_with(
    connection: Connection,
    namespace: Option<String>,
    target: Option<Target>,
    info: ConsoleInfo,
    ops: &ConsoleOpsArgs,
    roster: Option<crate::audit::Roster>,
) -> anyhow::Result<std::process::ExitCode> {
    // Watch DaemonSets in the target's namespace, the -n namespace, or everywhere.
    let scope = target.as_ref().map(|t| t.namespace.clone()).or(namespace);
    let simulated = connection.server_kind.simulated();
    let handle = watch::spawn(
        connection.watch_client.clone(),
        scope.clone(),
        target.clone(),
    );
    let wired = wire_console(
        &connection,
        scope,
        target.as_ref(),
        ops,
        std::sync::Arc::clone(&handle.shared),
    )
    .await?;
    let reverts = wired.reverts;
    let (link, console) = wired.ops;
    let logs = wired.logs;
    let result = crate::tui::run::run_with_ops(
        handle,
        info,
        simulated,
        target,
        Some((link, console)),
        roster,
        Some(logs),
    )
    .await
    .context("console failed");
    if let Some(reverts) = reverts {
        reverts.abort();
    }
    Ok(match result? {
        crate::tui::run::ConsoleEnd::Quit => std::process::ExitCode::SUCCESS,
        crate::tui::run::ConsoleEnd::Signalled => std::process::ExitCode::from(130),
    })
}

/// What a console on one cluster needs besides its watch: the effects task
/// (single writer, journaled, the RBAC pre-check), the log fetcher, and the
/// task that journals reverts by a GitOps controller.
pub struct WiredConsole {
    /// The effects side's link and the console's operation state.
    pub ops: (crate::tui::ops_link::OpsLink, crate::tui::ops::OpsConsole),
    /// The log fetcher.
    pub logs: crate::tui::logs_link::LogsLink,
    /// The revert watcher, when there is a target (abort it when done).
    pub reverts: Option<tokio::task::JoinHandle<()>>,
}

/// Wires a console's operations to `connection`, reading the watch cache
/// `shared` (its streams already running); `--read-only` honoured.
pub async fn wire_console(
    connection: &Connection,
    scope: Option<String>,
    target: Option<&Target>,
    ops: &ConsoleOpsArgs,
    shared: std::sync::Arc<watch::Shared>,
) -> anyhow::Result<WiredConsole> {
    let journal = crate::ops::journal::Journal::from_flag(ops.journal.as_deref())?;
    let actor = crate::ops::journal::actor(connection).await;
    let executor = crate::ops::write::Executor::new(
        // Writes go without kube's retry layer: a delete is never resent;
        // a lost reply is resolved by reading the pod back.
        connection.watch_client.clone(),
        journal,
        ops.read_only,
        connection.context.clone(),
        actor.clone(),
    );
    // Reverts by a GitOps controller are journaled as the console notices them.
    let reverts = target
        .map(|t| crate::ops::revert_watch::spawn(connection.client.clone(), t, executor.clone()));
    let link = crate::tui::ops_link::start(connection.client.clone(), executor, scope, shared);
    Ok(WiredConsole {
        ops: (link, crate::tui::ops::OpsConsole::new(ops.read_only, actor)),
        logs: crate::tui::logs_link::start(connection.client.clone()),
        reverts,
    })
}

/// The DaemonSet to open: its own namespace, else `-n`, else the context's.
pub fn parse_target(
    daemonset: Option<&DsRef>,
    cluster: &ClusterArgs,
    namespace: &str,
) -> anyhow::Result<Option<Target>> {
    let Some(daemonset) = daemonset else {
        return Ok(None);
    };
    Ok(Some(
        daemonset.resolve(cluster.namespace.as_deref(), namespace)?,
    ))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The default log file: `$XDG_STATE_HOME/rollcall/rollcall.log`, else
/// `~/.local/state/rollcall/rollcall.log`, else the temp dir.
pub fn default_log_file() -> PathBuf {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local").join("state"))
        })
        .unwrap_or_else(std::env::temp_dir);
    state.join("rollcall").join("rollcall.log")
}

/// Sends tracing output to a file (never the terminal the TUI draws on).
pub fn init_logging(path: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    let path = path.map_or_else(default_log_file, std::path::Path::to_path_buf);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating log directory {}", dir.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening log file {}", path.display()))?;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_like_kubectl_names() {
        let flag = ClusterArgs {
            namespace: Some("ops".to_owned()),
            ..ClusterArgs::default()
        };
        let none = ClusterArgs::default();
        let cases = [
            ("kube-system/agent", &none, ("kube-system", "agent")),
            ("agent", &none, ("default", "agent")),
            ("ds/agent", &flag, ("ops", "agent")),
            ("daemonsets.apps/agent", &none, ("default", "agent")),
        ];
        for (text, cluster, expected) in cases {
            let wanted: DsRef = text.parse().unwrap();
            let parsed = parse_target(Some(&wanted), cluster, "default")
                .unwrap()
                .unwrap();
            assert_eq!(
                (parsed.namespace.as_str(), parsed.name.as_str()),
                expected,
                "{text}"
            );
        }
        assert!(parse_target(None, &none, "default").unwrap().is_none());
        let elsewhere: DsRef = "kube-system/agent".parse().unwrap();
        assert!(parse_target(Some(&elsewhere), &flag, "default").is_err());
    }

    #[test]
    fn the_demo_kubeconfig_is_removed_unless_kept() {
        let dir = tempfile::tempdir().unwrap();
        let removed = dir.path().join("removed.kubeconfig");
        let kept = dir.path().join("kept.kubeconfig");
        std::fs::write(&removed, "x").unwrap();
        std::fs::write(&kept, "x").unwrap();
        drop(RemoveOnDrop(Some(removed.clone())));
        drop(RemoveOnDrop(None));
        assert!(!removed.exists());
        assert!(kept.exists());
    }
}
