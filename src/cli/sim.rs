//! `rollcall sim`: serve the embedded cluster headless until SIGINT or
//! SIGTERM, printing where its kubeconfig is and how to use it. Safe by
//! default: loopback only unless `--allow-remote`, the kubeconfig created
//! 0600 (never through a symlink) and removed on exit unless the user named it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use crate::cli::act_args::parse_duration;
use crate::cli::out;
use crate::model::Target;
use crate::sim::churn;
use crate::sim::embedded::{self, EmbeddedOptions};
use crate::sim::fault::{self, Faults};
use crate::sim::server::ServeOptions;
use crate::sim::store::ObjectKey;

/// Arguments of `rollcall sim`.
#[derive(Clone, Debug, Args)]
pub struct SimArgs {
    /// A built-in scenario (`default`, `small`, `gitops`, `capacity`) or a scenario YAML file.
    #[arg(long, value_name = "NAME|FILE")]
    pub scenario: Option<String>,
    /// Generate a cluster of N nodes (pools, zones, DaemonSets) for scale work.
    #[arg(long, value_name = "N")]
    pub nodes: Option<usize>,
    /// Add objects from files: your own manifests (`helm template … | rollcall sim -f -`), a
    /// real cluster's export (`kubectl get nodes,pods,ds,controllerrevisions -A -o json`) or a
    /// dump's directory or archive (tar, tar.gz, tar.xz, zip), `-` for stdin; repeatable.
    /// Nodes come from the files when they hold any, else from --scenario's pools (default:
    /// the default scenario) or --nodes; the files' DaemonSets replace the scenario's. The
    /// start says which. A dump's DaemonSet keeps the dump's status in the annotation
    /// `rollcall.dev/dump-status`, so `status` and the console say where the rehearsal's counts
    /// differ from it.
    #[arg(
        short = 'f',
        long = "filename",
        alias = "file",
        value_name = "SNAPSHOT"
    )]
    pub snapshot: Vec<PathBuf>,
    /// Address to listen on (loopback only, unless --allow-remote).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Allow a non-loopback --listen address: anyone who can reach it and
    /// holds a credential controls the simulated cluster (a warning is printed).
    #[arg(long)]
    pub allow_remote: bool,
    /// Where to write the kubeconfig, kept on exit (default: a file in the
    /// temp directory, printed, removed on exit). Created 0600; a symlink there is refused.
    /// Contexts: rollcall-sim (token), -cert, -exec, -viewer (namespace read-only),
    /// -tokenfile (token in FILE.token beside it), -tls-name (tls-server-name).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// API Priority and Fairness stand-in: beyond N requests in flight, answer
    /// 429 Too Many Requests as kube-apiserver does (`Retry-After: 1`, a
    /// plain-text body; watches count while starting).
    #[arg(long, value_name = "N")]
    pub max_inflight: Option<usize>,
    /// How long request headers, and then a request body, may take to arrive
    /// before the connection is cut.
    #[arg(long, value_name = "D", default_value = "30s", value_parser = parse_duration)]
    pub read_timeout: Duration,
    /// How long the tokens of the exec plugin context (`rollcall-sim-exec`) are valid.
    #[arg(long, value_name = "D", default_value = "2m", value_parser = parse_duration)]
    pub exec_token_ttl: Duration,
    /// RNG seed for the simulation.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Time multiplier for kubelet delays (2 = twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Inject API faults for rehearsal, in windows counted from the start:
    /// `NAME[:ARG]=[START+]LENGTH`, comma-separated or repeated. NAME is
    /// drop-watches, stall-watches (silent for good), freeze (TCP freeze), lose-replies
    /// (changes happen, then a 504 answers them),
    /// gone (a compaction: watches end with 410, list continuations get 410),
    /// 5xx[:CODE] (default 503), throttle[:SECONDS] (429 with Retry-After and
    /// a Status), throttle-apf[:SECONDS] (429 with only Retry-After and a
    /// plain-text body, as kube-apiserver's Priority and Fairness answers),
    /// refuse-protobuf (406 to lists and watches asking for protobuf first),
    /// latency[:DURATION] or bandwidth:RATE (a slow link: all the server
    /// sends, at most RATE, e.g. 100Mbit), restart (with --clusters: the
    /// member's API server stops at START and is back after LENGTH with new
    /// state: versions clients held answer 410, one node's daemon pods
    /// replaced meanwhile). Example:
    /// `--fault stall-watches=10s+20s,throttle:60=1m+30s`.
    #[arg(long, value_name = "SPEC")]
    pub fault: Vec<String>,
    /// How often watches get a BOOKMARK (clients use them as proof of life;
    /// /version says it, so rollcall assumes it before it has learnt it).
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub bookmark_interval: u64,
    /// Churn: this many small changes per second to nodes and pods (restarts,
    /// readiness flaps, node conditions, label and taint edits), seeded by --seed.
    #[arg(long, value_name = "EVENTS_PER_S")]
    pub churn: Option<f64>,
    /// Churn only this DaemonSet's pods (and nodes), `NAMESPACE/NAME`: the
    /// pods a console focused on it watches.
    #[arg(long, value_name = "NS/NAME", requires = "churn")]
    pub churn_daemonset: Option<String>,
    /// Serve a fleet: N embedded clusters, each its own API server on its own
    /// port with its own state, and one kubeconfig with the contexts
    /// rollcall-sim-1 … rollcall-sim-N (the first current). Without --scenario
    /// the members differ: the first as the scenario, then one on the newest
    /// revision, one whose template drifted, one whose newest revision
    /// crash-loops, one paused, the rest on the newest revision.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=500))]
    pub clusters: Option<u16>,
    /// With --clusters: --fault acts on member K only (default: every member).
    #[arg(long, value_name = "K", requires = "clusters")]
    pub fault_cluster: Option<usize>,
    /// With --clusters: each member's context authenticates through the exec
    /// credential plugin, as rollcall-sim-exec does, with tokens valid for
    /// --exec-token-ttl (answered 401 once expired), instead of a bearer token.
    #[arg(long, requires = "clusters")]
    pub exec_auth: bool,
}

/// Runs `rollcall sim`.
pub fn run(args: &SimArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: &SimArgs) -> anyhow::Result<ExitCode> {
    check_listen(args.listen, args.allow_remote)?;
    if let Some(0) = args.max_inflight {
        anyhow::bail!("--max-inflight must be at least 1");
    }
    let faults = parse_faults(args)?;
    if let Some(count) = args.clusters {
        return super::sim_fleet::serve(args, usize::from(count), faults).await;
    }
    if faults.iter().any(fault::Fault::is_restart) {
        anyhow::bail!(
            "--fault restart is for a fleet member (--clusters); restart a lone sim by stopping it and starting it again on the same --listen"
        );
    }
    let options = embedded_options(args);
    let installed = options.faults.clone();
    let cluster = embedded::start_with(options, serve_options(args))
        .await
        .context("cannot start the embedded cluster")?;
    if !faults.is_empty() {
        tracing::info!(?faults, "fault injection on");
        installed.install(faults);
    }
    let path = args.kubeconfig_out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("rollcall-sim-{}.kubeconfig", cluster.addr().port()))
    });
    if let Err(error) = cluster.server.write_kubeconfig(&path) {
        cluster.shutdown().await;
        return Err(error)
            .with_context(|| format!("cannot write the kubeconfig to {}", path.display()));
    }
    for line in &cluster.simulation.load_report {
        out::eline(line);
    }
    let result = announce_and_wait(args, &cluster, &path).await;
    cluster.shutdown().await;
    if args.kubeconfig_out.is_none() {
        crate::sim::kubeconfig::remove(&path);
    }
    result
}

/// The embedded cluster's options from the flags (no faults yet: they are
/// installed once the server is up, so their windows count from the start).
pub(super) fn embedded_options(args: &SimArgs) -> EmbeddedOptions {
    EmbeddedOptions {
        scenario: args.scenario.clone(),
        nodes: args.nodes,
        snapshot: args.snapshot.clone(),
        listen: Some(args.listen),
        seed: args.seed,
        speed: args.speed,
        faults: Faults::none(),
        first_resource_version: resource_version_floor(),
        bookmark_interval: Some(Duration::from_secs(args.bookmark_interval.max(1))),
        variant: None,
        sync_window: std::time::Duration::ZERO,
        event_ttl: None,
        kubelet_relist: None,
        offload: crate::sim::offload::Offload::Inline,
    }
}

/// The API server's settings from the flags.
pub(super) fn serve_options(args: &SimArgs) -> ServeOptions {
    ServeOptions {
        max_inflight: args.max_inflight,
        read_timeout: args.read_timeout,
        exec_token_ttl: args.exec_token_ttl,
        ..ServeOptions::default()
    }
}

/// Every `--fault` spec, parsed.
fn parse_faults(args: &SimArgs) -> anyhow::Result<Vec<fault::Fault>> {
    let mut faults = Vec::new();
    for spec in &args.fault {
        faults.extend(fault::parse(spec)?);
    }
    Ok(faults)
}

/// Refuses a non-loopback address without `--allow-remote`, and warns with it.
fn check_listen(listen: SocketAddr, allow_remote: bool) -> anyhow::Result<()> {
    if listen.ip().is_loopback() {
        return Ok(());
    }
    if !allow_remote {
        anyhow::bail!(
            "--listen {listen} is not a loopback address: the embedded cluster would be reachable from other machines; add --allow-remote if that is what you want"
        );
    }
    out::eline(&format!(
        "warning: listening on {listen}, reachable from other machines: anyone with the kubeconfig's credentials controls this simulated cluster"
    ));
    Ok(())
}

async fn announce_and_wait(
    args: &SimArgs,
    cluster: &embedded::EmbeddedCluster,
    path: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let loaded = cluster.simulation.loaded;
    let stop = stop_signal()?;
    // The scenario name comes from a file: printed through the sanitiser.
    out::stdout(&format!(
        "embedded cluster {} ({} nodes, {} daemonsets, {} pods) at {}\n\
         daemonsets: {}\n\
         kubeconfig: {} (contexts rollcall-sim, rollcall-sim-cert, rollcall-sim-exec, rollcall-sim-viewer, rollcall-sim-tokenfile, rollcall-sim-tls-name{})\n\
         try: kubectl --kubeconfig {} get ds -A\n\
         stop with Ctrl-C\n",
        cluster.simulation.scenario.name,
        loaded.nodes,
        loaded.daemon_sets,
        loaded.pods,
        cluster.server.url(),
        daemon_set_names(&cluster.simulation.store),
        path.display(),
        if args.kubeconfig_out.is_some() {
            ""
        } else {
            "; removed on exit"
        },
        path.display(),
    ))?;
    let churn = start_churn(args, &cluster.simulation.store)?;
    stop.await;
    if let Some(churn) = churn {
        churn.shutdown().await;
    }
    // Stopped by a signal, cleanly (kubeconfig removed): the code of an
    // interrupted command, as every other rollcall command.
    Ok(ExitCode::from(130))
}

/// `--churn` on `store`, if asked for.
pub(super) fn start_churn(
    args: &SimArgs,
    store: &crate::sim::store::Store,
) -> anyhow::Result<Option<churn::ChurnHandle>> {
    let churn_daemonset = match args.churn_daemonset.as_deref() {
        None => None,
        Some(text) => {
            let target = Target::from_key(text).context("--churn-daemonset is NAMESPACE/NAME")?;
            Some(ObjectKey::new(&target.namespace, &target.name))
        }
    };
    Ok(args.churn.filter(|rate| *rate > 0.0).map(|rate| {
        out::line(&format!("churn: {rate} changes/s to nodes and pods"));
        churn::spawn(
            store.clone(),
            churn::ChurnOptions {
                events_per_second: rate,
                seed: args.seed.unwrap_or(0x5eed),
                daemon_set: churn_daemonset,
            },
        )
    }))
}

/// The DaemonSets served, `namespace/name`, the first few (the banner's line
/// saying what there is to open).
pub(super) fn daemon_set_names(store: &crate::sim::store::Store) -> String {
    const SHOWN: usize = 6;
    let (daemon_sets, _) = store.list(crate::sim::resources::ResourceKind::DaemonSet, None);
    let mut names: Vec<String> = daemon_sets
        .iter()
        .map(|ds| {
            let meta = &ds["metadata"];
            format!(
                "{}/{}",
                meta["namespace"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    if names.is_empty() {
        return "none".to_owned();
    }
    let more = names.len().saturating_sub(SHOWN);
    names.truncate(SHOWN);
    let line = names.join(", ");
    if more > 0 {
        format!("{line} (+{more} more)")
    } else {
        line
    }
}

/// A first resourceVersion above any earlier run's (microseconds since the
/// epoch), so a client of a previous `rollcall sim` on the same address sees
/// versions go forward, gets 410 for its old ones and relists, as it would
/// after a real API server restart.
fn resource_version_floor() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX / 2))
}

/// Listens for SIGINT/SIGTERM from now on (before the banner says "stop with
/// Ctrl-C", so a signal sent right after it stops the server cleanly instead
/// of killing it); the future completes on the first one.
#[cfg(unix)]
pub(super) fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
pub(super) fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
