//! `rollcall sim`: serve the embedded cluster headless until SIGINT or
//! SIGTERM, printing where its kubeconfig is and how to use it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use std::time::Duration;

use crate::sim::embedded::{self, EmbeddedOptions};
use crate::sim::fault::{self, Faults};

/// Arguments of `rollcall sim`.
#[derive(Clone, Debug, Args)]
pub struct SimArgs {
    /// A built-in scenario (`default`, `small`) or a scenario YAML file.
    #[arg(long, value_name = "NAME|FILE")]
    pub scenario: Option<String>,
    /// Generate a cluster of N nodes (pools, zones, DaemonSets) for scale work.
    #[arg(long, value_name = "N")]
    pub nodes: Option<usize>,
    /// Load a real cluster's export (`kubectl get nodes,pods,ds,controllerrevisions -A -o json`); repeatable.
    #[arg(
        short = 'f',
        long = "filename",
        alias = "file",
        value_name = "SNAPSHOT"
    )]
    pub snapshot: Vec<PathBuf>,
    /// Address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig (default: a file in the temp directory, printed).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// RNG seed for the simulation.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Time multiplier for kubelet delays (2 = twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Inject API faults for rehearsal, in windows counted from the start:
    /// `NAME[:ARG]=[START+]LENGTH`, comma-separated or repeated. NAME is
    /// drop-watches, stall-watches (silent for good), freeze (TCP freeze),
    /// gone (watches end with 410), 5xx[:CODE] (default 503), throttle[:SECONDS]
    /// (429 with Retry-After) or latency[:DURATION]. Example:
    /// `--fault stall-watches=10s+20s,throttle:60=1m+30s`.
    #[arg(long, value_name = "SPEC")]
    pub fault: Vec<String>,
    /// How often watches get a BOOKMARK (clients use them as proof of life).
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub bookmark_interval: u64,
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
    let options = EmbeddedOptions {
        scenario: args.scenario.clone(),
        nodes: args.nodes,
        snapshot: args.snapshot.clone(),
        listen: Some(args.listen),
        seed: args.seed,
        speed: args.speed,
        faults: Faults::none(),
        first_resource_version: resource_version_floor(),
        bookmark_interval: Some(Duration::from_secs(args.bookmark_interval.max(1))),
    };
    let mut faults = Vec::new();
    for spec in &args.fault {
        faults.extend(fault::parse(spec)?);
    }
    let installed = options.faults.clone();
    let cluster = embedded::start(options)
        .await
        .context("cannot start the embedded cluster")?;
    let loaded = cluster.simulation.loaded;
    if !args.snapshot.is_empty() && loaded.nodes + loaded.daemon_sets + loaded.pods == 0 {
        // An empty export (a failed `kubectl get > file`) would serve an empty cluster.
        cluster.shutdown().await;
        let files: Vec<String> = args
            .snapshot
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        anyhow::bail!(
            "no DaemonSets found in {} (no Nodes or Pods either; see the log for skipped objects)",
            files.join(", ")
        );
    }
    if !faults.is_empty() {
        tracing::info!(?faults, "fault injection on");
        installed.install(faults);
    }
    let path = args.kubeconfig_out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("rollcall-sim-{}.kubeconfig", cluster.addr().port()))
    });
    cluster
        .server
        .write_kubeconfig(&path)
        .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
    // The scenario name comes from a file: printed through the sanitiser.
    crate::cli::out::stdout(&format!(
        "embedded cluster {} ({} nodes, {} daemonsets, {} pods) at https://{}\n\
         kubeconfig: {}\n\
         try: kubectl --kubeconfig {} get ds -A\n\
         stop with Ctrl-C\n",
        cluster.simulation.scenario.name,
        loaded.nodes,
        loaded.daemon_sets,
        loaded.pods,
        cluster.addr(),
        path.display(),
        path.display(),
    ))?;
    wait_for_signal().await?;
    cluster.shutdown().await;
    Ok(ExitCode::SUCCESS)
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

#[cfg(unix)]
async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.context("cannot listen for SIGINT")?,
        _ = terminate.recv() => {}
    }
    Ok(())
}

#[cfg(not(unix))]
async fn wait_for_signal() -> anyhow::Result<()> {
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")
}
