//! Fleet benchmark: starts an embedded fleet (`rollcall sim --clusters N
//! --nodes M`'s members, in this process), then runs `rollcall fleet status`
//! against every member in a child process (so its time and memory are its
//! own) and prints
//!
//! - the fleet's start-up time and memory (this process);
//! - the complete fleet report: wall time, the child's CPU seconds, peak RSS;
//! - a fleet-wide `--where not-ready` over every node of every member: the
//!   same, so the query's cost is the difference;
//! - the live matrix (`rollcall fleet DS` without its screen: every member's
//!   console watch and row builder), in a child: the time to its first live
//!   row and to every row live, its CPU, its RSS then and after
//!   `--idle-secs` of watching, the CPU it spent idle, and per cluster its
//!   watch streams and established TCP connections (from `/proc`).
//!
//! `--only-matrix` skips the two `fleet status` runs (the idle fleet of
//! 200 × 100 nodes: `--clusters 200 --nodes 100 --only-matrix --idle-secs 30`).
//!
//! Numbers are printed, never asserted. Run:
//! `cargo run --release --example fleet_scale -- --clusters 50 --nodes 1000`.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Parser;
use rollcall::sim::embedded::{EmbeddedOptions, fleet};
use rollcall::sim::server::ServeOptions;

#[path = "scale/child.rs"]
mod child;
#[path = "scale/matrix.rs"]
mod matrix;
#[path = "scale/proc_stats.rs"]
mod proc_stats;
#[path = "scale/sockets.rs"]
mod sockets;
use child::{child, line};
use proc_stats::rss_mb;

#[derive(Debug, Parser)]
struct Args {
    /// Members of the fleet.
    #[arg(long, default_value_t = 50)]
    clusters: usize,
    /// Nodes per member.
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// The DaemonSet asked about.
    #[arg(long, default_value = "kube-system/node-agent")]
    target: String,
    /// Seconds the live matrix watches after every row is live (idle CPU and RSS).
    #[arg(long, default_value_t = 10)]
    idle_secs: u64,
    /// Measure only the live matrix.
    #[arg(long)]
    only_matrix: bool,
    /// Internal: run `fleet status` with these arguments and report its own cost.
    #[arg(long, num_args = 1.., allow_hyphen_values = true)]
    child: Option<Vec<String>>,
    /// Internal: run the live matrix on this kubeconfig and report its own cost.
    #[arg(long, value_name = "KUBECONFIG")]
    matrix_child: Option<std::path::PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(command) = &args.child {
        return child(command);
    }
    if let Some(kubeconfig) = &args.matrix_child {
        return matrix::child(kubeconfig, &args.target, args.idle_secs);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let started = Instant::now();
    let options = EmbeddedOptions {
        nodes: Some(args.nodes),
        ..EmbeddedOptions::default()
    };
    let members = runtime.block_on(fleet::start(
        &options,
        &ServeOptions::default(),
        args.clusters,
        true,
    ))?;
    let dir = tempfile::tempdir()?;
    let kubeconfig = dir.path().join("kubeconfig");
    members.write_kubeconfig(&kubeconfig)?;
    line(&format!(
        "fleet: {} clusters x {} nodes started in {:.1}s, this process {:.0} MB",
        args.clusters,
        args.nodes,
        started.elapsed().as_secs_f64(),
        rss_mb()
    ));
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let status = [
        "--kubeconfig",
        &kubeconfig,
        "fleet",
        "status",
        &args.target,
        "--all-contexts",
        "-o",
        "json",
    ];
    if !args.only_matrix {
        measure("fleet status (every cluster)", &status)?;
        let log = std::env::temp_dir().join(format!("fleet-scale-{}.log", std::process::id()));
        let log_path = log.to_string_lossy().into_owned();
        let mut query = status.to_vec();
        query.extend(["--where", "not-ready", "--log-file", &log_path]);
        measure("fleet status --where not-ready", &query)?;
        // The answer's own cost, apart from the reads: the command logs it.
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        if let Some(built) = logged
            .lines()
            .rev()
            .find(|l| l.contains("fleet report built in"))
        {
            let at = built.find("fleet report built in").unwrap_or(0);
            line(&format!("  the query itself: {}", &built[at..]));
        }
    }
    let idle = args.idle_secs.to_string();
    measure(
        "fleet matrix (live)",
        &[
            "--matrix-child",
            &kubeconfig,
            "--target",
            &args.target,
            "--idle-secs",
            &idle,
        ],
    )?;
    runtime.block_on(members.shutdown());
    Ok(())
}

/// Runs this example as the child on `arguments` and prints what it
/// reports (its last line on stderr; its stdout, the report, is dropped).
fn measure(what: &str, arguments: &[&str]) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut command = Command::new(std::env::current_exe()?);
    if arguments.first() != Some(&"--matrix-child") {
        command.arg("--child");
    }
    let output = command
        .args(arguments)
        .stdout(std::process::Stdio::null())
        .output()
        .context("run the child")?;
    let wall = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let Some(cost) = stderr.lines().last().filter(|l| l.starts_with("cost: ")) else {
        bail!("{what}: the child did not report: {stderr}");
    };
    line(&format!(
        "{what}: {wall:.2}s wall, {}",
        &cost["cost: ".len()..]
    ));
    Ok(())
}
