//! Rehearsal benchmark: makes a fleet of snapshots (one generated cluster
//! of `--nodes` nodes at steady state, its node-agent OnDelete with an
//! update waiting, dumped as `kubectl get -o json` would, written once per
//! context), a plan of `--waves` waves over them, then runs `rollcall fleet
//! rehearse` in a child (so its time and memory are its own, on the
//! binary's allocator) and prints the child's wall time, CPU seconds and
//! peak RSS, and what the rehearsal found (its result, nodes moved,
//! simulated wall time).
//!
//! Numbers are printed, never asserted. Run:
//! `cargo run --release --example fleet_rehearse -- --clusters 50 --nodes 1000`.

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use rollcall::sim::embedded::{EmbeddedOptions, Simulation, dump};

#[path = "scale/child.rs"]
mod child;
#[path = "scale/proc_stats.rs"]
mod proc_stats;
use child::{child, line};
use proc_stats::rss_mb;

/// The binary's allocator (`src/main.rs`), so the figures are the
/// command's: on the system allocator malloc and free were a third of a
/// rehearsal's CPU.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Debug, Parser)]
struct Args {
    /// Snapshots (contexts) in the fleet.
    #[arg(long, default_value_t = 50)]
    clusters: usize,
    /// Nodes per snapshot.
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// Waves of the plan: the first takes one cluster, each next one more
    /// of the rest, the last all that remain.
    #[arg(long, default_value_t = 4)]
    waves: usize,
    /// Nodes per batch inside each cluster.
    #[arg(long, default_value_t = 50)]
    batch: usize,
    /// Clusters of a wave rolled at once.
    #[arg(long, default_value_t = 10)]
    parallel: usize,
    /// Failed nodes allowed fleet-wide (`budget.nodes`). It also bounds the
    /// nodes at risk at once to budget + 1, so it must cover `parallel` ×
    /// `batch` for the waves to run their clusters side by side (0 moves one
    /// node at a time across the whole fleet).
    #[arg(long, default_value_t = 500)]
    budget: usize,
    /// Keep the snapshots and the plan in this directory (to rehearse them
    /// again by hand, under a profiler say) instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    keep: Option<std::path::PathBuf>,
    /// Internal: run `rollcall` with these arguments and report its own cost.
    #[arg(long, num_args = 1.., allow_hyphen_values = true)]
    child: Option<Vec<String>>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(command) = &args.child {
        return child(command);
    }
    let temporary = tempfile::tempdir()?;
    let dir = args.keep.as_deref().unwrap_or(temporary.path());
    let snapshots = dir.join("snapshots");
    std::fs::create_dir_all(&snapshots)?;
    let started = Instant::now();
    let dump = steady_dump(args.nodes)?;
    let contexts: Vec<String> = (1..=args.clusters)
        .map(|i| format!("prod-{i:03}"))
        .collect();
    for context in &contexts {
        std::fs::write(snapshots.join(format!("{context}.json")), &dump)?;
    }
    let plan = dir.join("fleet.yaml");
    std::fs::write(&plan, plan_text(&contexts, &args))?;
    line(&format!(
        "snapshots: {} x {} nodes ({:.1} MB each) written in {:.1}s, this process {:.0} MB",
        args.clusters,
        args.nodes,
        f64::from(u32::try_from(dump.len()).unwrap_or(u32::MAX)) / 1e6,
        started.elapsed().as_secs_f64(),
        rss_mb()
    ));
    let started = Instant::now();
    let output = Command::new(std::env::current_exe()?)
        .arg("--child")
        .args(["fleet", "rehearse", "-f"])
        .arg(&plan)
        .arg("--snapshots")
        .arg(&snapshots)
        .args(["-o", "json"])
        .output()
        .context("run the child")?;
    let wall = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let Some(cost) = stderr.lines().last().filter(|l| l.starts_with("cost: ")) else {
        bail!("the child did not report: {stderr}");
    };
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("the rehearsal's JSON")?;
    let moved: usize = report["waves"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|w| w["clusters"].as_array().cloned().unwrap_or_default())
        .map(|c| c["moved"].as_array().map_or(0, Vec::len))
        .sum();
    line(&format!(
        "fleet rehearse ({} waves): {wall:.2}s wall, {}",
        args.waves,
        &cost["cost: ".len()..]
    ));
    line(&format!(
        "rehearsal: {}, {moved} node(s) moved, {} never reached, expected wall time {}",
        report["result"].as_str().unwrap_or("?"),
        report["notReached"],
        report["expectedWallTime"]["text"].as_str().unwrap_or("?")
    ));
    Ok(())
}

/// One generated cluster of `nodes` nodes, settled (every pod Running and
/// Ready on tokio's paused clock), as a `kubectl get -o json` List.
fn steady_dump(nodes: usize) -> anyhow::Result<Vec<u8>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()?;
    runtime.block_on(async {
        let simulation = Simulation::start(&EmbeddedOptions {
            nodes: Some(nodes),
            ..EmbeddedOptions::default()
        })?;
        tokio::time::sleep(Duration::from_secs(600)).await;
        let list = dump::kubectl_list(&simulation.store);
        simulation.shutdown().await;
        Ok(serde_json::to_vec(&list)?)
    })
}

/// `waves` waves: one cluster, then growing shares, the last takes the rest.
fn plan_text(contexts: &[String], args: &Args) -> String {
    let mut text = format!(
        "daemonset: kube-system/node-agent\nclusters: [\"prod-*\"]\nbudget: {{nodes: {}}}\nwaves:\n",
        args.budget
    );
    let mut next = 0;
    for wave in 0..args.waves {
        let last = wave + 1 == args.waves;
        let size = if last {
            contexts.len() - next
        } else {
            (1 << (2 * wave)).min(contexts.len().saturating_sub(next + args.waves - wave - 1))
        };
        let names: Vec<String> = contexts[next..next + size]
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect();
        next += size;
        let _ = write!(
            text,
            "  - name: wave-{}\n    clusters: [{}]\n    batch: {}\n    soak: 30s\n    bake: 10m\n    parallel: {}\n",
            wave + 1,
            names.join(", "),
            args.batch,
            args.parallel
        );
    }
    text
}
