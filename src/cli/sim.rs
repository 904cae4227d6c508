//! `rollcall sim`: serve the embedded cluster headless until SIGINT or
//! SIGTERM, printing where its kubeconfig is and how to use it.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::sim::churn;
use crate::sim::embedded::{self, EmbeddedOptions};

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
    #[arg(short = 'f', long = "file", value_name = "SNAPSHOT")]
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
    /// Churn: this many small changes per second to nodes and pods (restarts,
    /// readiness flaps, node conditions, label and taint edits), seeded by --seed.
    #[arg(long, value_name = "EVENTS_PER_S")]
    pub churn: Option<f64>,
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
    };
    let cluster = embedded::start(options)
        .await
        .context("cannot start the embedded cluster")?;
    let path = args.kubeconfig_out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("rollcall-sim-{}.kubeconfig", cluster.addr().port()))
    });
    cluster
        .server
        .write_kubeconfig(&path)
        .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
    let loaded = cluster.simulation.loaded;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "embedded cluster {} ({} nodes, {} daemonsets, {} pods) at https://{}",
        cluster.simulation.scenario.name,
        loaded.nodes,
        loaded.daemon_sets,
        loaded.pods,
        cluster.addr()
    )?;
    writeln!(out, "kubeconfig: {}", path.display())?;
    writeln!(
        out,
        "try: kubectl --kubeconfig {} get ds -A",
        path.display()
    )?;
    let churn = args.churn.filter(|rate| *rate > 0.0).map(|rate| {
        churn::spawn(
            cluster.simulation.store.clone(),
            churn::ChurnOptions {
                events_per_second: rate,
                seed: args.seed.unwrap_or(0x5eed),
            },
        )
    });
    if let Some(rate) = args.churn.filter(|rate| *rate > 0.0) {
        writeln!(out, "churn: {rate} changes/s to nodes and pods")?;
    }
    writeln!(out, "stop with Ctrl-C")?;
    out.flush()?;
    drop(out);
    wait_for_signal().await?;
    if let Some(churn) = churn {
        churn.shutdown().await;
    }
    cluster.shutdown().await;
    Ok(ExitCode::SUCCESS)
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
