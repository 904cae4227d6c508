//! Side-by-side scale benchmark: starts the embedded cluster with N generated
//! nodes and measures, in one run,
//!
//! - the embedded cluster's start-up time and memory (this process);
//! - (a) the raw transfer of the lists the console needs (nodes, DaemonSets,
//!   the target's pods and ControllerRevisions; nodes and pods in parallel):
//!   an in-process HTTPS client reading the bytes, no decode;
//! - (b) the console's load path to a complete grid model, headless: the
//!   cluster layer's watch task into its cache, then the console's row cache
//!   and order (`App::refresh`), in a child process so that (c) its RSS and
//!   peak RSS are its own;
//! - (d) per-change cost under churn (`rollcall sim --churn`'s generator, on
//!   the nodes and the target's pods, the objects the console watches): the
//!   changes written and the watch events the console applied per second,
//!   its CPU per event, its refresh and frame times, and how long a key
//!   (`j`/`k`, through the console's dispatch) takes to show in a frame;
//! - (e) the rollout keys at full scale, through the console's own dispatch
//!   (`App::update`), from the keypress to the writes handed to the effects
//!   task (the first API request): `n` and its yes, `c` and its yes, the plan
//!   view `P`, and `A`; then one auto-advance step reacting to one changed
//!   pod (`App::ops_on_change`, as on every cache change), and the roster
//!   (`--roster`): a comparison from scratch, and what one changed pod costs;
//! - (f) the console's ceiling without the network: 100,000 pod watch lines
//!   (the server's own JSON, readiness flipped) decoded, applied, refreshed
//!   and drawn in-process, as fast as the console can (`scale/absorb.rs`);
//! - (g) the raw transfer and the load again over a slow link (`--link
//!   1Gbit`: the embedded cluster's `bandwidth` fault), where the wire is the limit.
//!
//! Run: `cargo run --release --example scale -- --nodes 65000`
//! (`--churn 5000 --churn-secs 10` to change the load). To see where the
//! console's memory goes, profile the child alone against `rollcall sim
//! --nodes N --kubeconfig-out K`: `heaptrack target/release/examples/scale
//! --console-child K --load-only`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use futures::AsyncReadExt;
use rollcall::cluster::cache::Cache;
use rollcall::cluster::status::StreamKind;
use rollcall::cluster::watch::{self, Target};
use rollcall::sim::churn::{self, ChurnOptions};
use rollcall::sim::embedded::{self, EmbeddedOptions};
use rollcall::sim::fault::{self, Fault, FaultKind, Faults};
use rollcall::tui::app::App;
use rollcall::tui::view_model::ConsoleInfo;

#[path = "scale/absorb.rs"]
mod absorb;
#[path = "scale/decode.rs"]
mod decode;
#[path = "scale/keys.rs"]
mod keys;

#[derive(Parser, Debug)]
#[command(about = "Scale benchmark: embedded cluster, raw transfer, console load, churn")]
struct Args {
    /// Generated cluster size.
    #[arg(long, default_value_t = 65_000)]
    nodes: usize,
    /// Churn rate (changes per second) for the per-change measurement.
    #[arg(long, default_value_t = 2_000.0)]
    churn: f64,
    /// Churn any pod, not only the target DaemonSet's (the ones the console watches).
    #[arg(long)]
    churn_all_pods: bool,
    /// How long to churn, in seconds.
    #[arg(long, default_value_t = 10)]
    churn_secs: u64,
    /// The DaemonSet the console focuses on.
    #[arg(long, default_value = "kube-system/node-agent")]
    target: String,
    /// Also measure the raw transfer and the load over a link of this rate
    /// (the embedded cluster's `bandwidth` fault, e.g. 1Gbit), where the wire
    /// and not the CPU is the limit; repeatable; `off` for none.
    #[arg(long = "link", value_name = "RATE", default_values_t = ["1Gbit".to_owned()])]
    links: Vec<String>,
    /// The console's `--wire` (auto: JSON to this loopback server).
    #[arg(long, value_enum, default_value_t)]
    wire: rollcall::cluster::wire::Wire,
    /// Internal: run as the console child against this kubeconfig.
    #[arg(long, hide = true)]
    console_child: Option<std::path::PathBuf>,
    /// With `--console-child`: stop once the grid model is complete (to
    /// profile the load's heap, e.g. under heaptrack, against `rollcall sim`).
    #[arg(long, hide = true)]
    load_only: bool,
}

/// The console's allocator (`src/main.rs`), so the figures are the console's.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match &args.console_child {
        Some(kubeconfig) => runtime.block_on(console_child(
            kubeconfig,
            &args.target,
            args.wire,
            args.load_only,
        )),
        None => parent(&args, &runtime),
    }
}

// ---------------------------------------------------------------- memory, cpu

#[path = "scale/proc_stats.rs"]
mod proc_stats;
use proc_stats::{cpu_secs, peak_mb, rss_mb};

// ---------------------------------------------------------------- the parent

fn parent(args: &Args, runtime: &tokio::runtime::Runtime) -> anyhow::Result<()> {
    println!("scale benchmark: {} nodes", args.nodes);
    let link_rates = link_rates(args)?;
    let started = Instant::now();
    let faults = Faults::none();
    let cluster = runtime.block_on(embedded::start(EmbeddedOptions {
        nodes: Some(args.nodes),
        faults: faults.clone(),
        ..EmbeddedOptions::default()
    }))?;
    let sim_start = started.elapsed();
    let loaded = cluster.simulation.loaded;
    println!(
        "  embedded cluster serving {} nodes, {} pods in {sim_start:.2?}",
        loaded.nodes, loaded.pods
    );
    // The controller and kubelets read everything once after start; measure
    // the transfer only when they are done, so it has the machine to itself.
    settle();
    let sim_settled = started.elapsed();
    let (sim_rss, sim_peak) = (rss_mb(), peak_mb());
    println!(
        "  embedded cluster idle after {sim_settled:.2?} (RSS {sim_rss:.0} MB, peak {sim_peak:.0} MB)"
    );
    let kubeconfig = std::env::temp_dir().join(format!(
        "rollcall-scale-{}.kubeconfig",
        cluster.addr().port()
    ));
    cluster.server.write_kubeconfig(&kubeconfig)?;

    let (raw, decoding) = runtime.block_on(transfer(cluster.server.kube_config(), &args.target))?;

    let parent_cpu_before_load = cpu_secs();
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--console-child")
        .arg(&kubeconfig)
        .args(["--target", &args.target, "--wire", wire_name(args.wire)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start the console child")?;
    let mut lines = BufReader::new(child.stdout.take().context("child stdout")?).lines();
    // The embedded cluster's share of the machine while the console loaded
    // (the child says so before it measures the grid order).
    Report::parse(&next_line(&mut lines)?, "listed")?;
    let server_cpu_during_load = cpu_secs() - parent_cpu_before_load;
    let load = Report::parse(&next_line(&mut lines)?, "loaded")?;
    let keys = Report::parse(&next_line(&mut lines)?, "keys")?;
    print_load(&load, server_cpu_during_load);

    let (written, churn_secs) = churn_for_a_while(args, runtime, &cluster);
    runtime.block_on(async {
        // Let the console drain what is still in flight.
        tokio::time::sleep(Duration::from_secs(1)).await;
    });
    let mut stdin = child.stdin.take().context("child stdin")?;
    writeln!(stdin, "stop")?;
    let churned = Report::parse(&next_line(&mut lines)?, "churned")?;
    let absorbed = Report::parse(&next_line(&mut lines)?, "absorb")?;
    child.wait()?;
    let over_links = link_rates
        .iter()
        .map(|(rate, bytes_per_second)| {
            over_link(
                args,
                runtime,
                &cluster,
                &faults,
                &kubeconfig,
                rate,
                *bytes_per_second,
            )
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    runtime.block_on(cluster.shutdown());
    // The kubeconfig and the token file written beside it.
    rollcall::sim::kubeconfig::remove(&kubeconfig);

    print_table(
        args,
        &Figures {
            sim_start,
            sim_settled,
            sim_rss,
            sim_peak,
            raw,
            decoding,
            load,
            server_cpu_during_load,
            keys,
            churned,
            absorbed,
            written,
            churn_secs,
            over_links,
        },
    );
    Ok(())
}

/// (d) Churns the nodes and the target's pods (or any pod) for
/// `--churn-secs`; returns the changes written and how long it really ran.
fn churn_for_a_while(
    args: &Args,
    runtime: &tokio::runtime::Runtime,
    cluster: &embedded::EmbeddedCluster,
) -> (u64, Duration) {
    let churn_for = Duration::from_secs(args.churn_secs);
    // The pods the console watches (its target's), unless told otherwise.
    let daemon_set = (!args.churn_all_pods)
        .then(|| Target::from_key(&args.target))
        .flatten()
        .map(|target| rollcall::sim::store::ObjectKey::new(&target.namespace, &target.name));
    let churn_started = Instant::now();
    let written = runtime.block_on(async {
        let generator = churn::spawn(
            cluster.simulation.store.clone(),
            ChurnOptions {
                events_per_second: args.churn,
                seed: 42,
                daemon_set: daemon_set.clone(),
            },
        );
        tokio::time::sleep(churn_for).await;
        generator.shutdown().await
    });
    // The generator stops at its next tick: the rate is over the time it really ran.
    (written, churn_started.elapsed())
}

/// `--link` rates: as given, and in bytes per second.
fn link_rates(args: &Args) -> anyhow::Result<Vec<(String, u64)>> {
    args.links
        .iter()
        .filter(|rate| rate.as_str() != "off")
        .map(|rate| {
            Ok((
                rate.clone(),
                fault::parse_rate(rate).map_err(anyhow::Error::msg)?,
            ))
        })
        .collect()
}

/// The raw transfer and the console's load (a second child, load only)
/// while the embedded cluster sends through a link of `rate`.
fn over_link(
    args: &Args,
    runtime: &tokio::runtime::Runtime,
    cluster: &embedded::EmbeddedCluster,
    faults: &Faults,
    kubeconfig: &std::path::Path,
    rate: &str,
    bytes_per_second: u64,
) -> anyhow::Result<OverLink> {
    faults.install(vec![Fault {
        kind: FaultKind::Bandwidth(bytes_per_second),
        start: Duration::ZERO,
        length: Duration::from_secs(24 * 3600),
    }]);
    let measured = (|| {
        let raw = runtime.block_on(async {
            let client = kube::Client::try_from(cluster.server.kube_config())?;
            let paths = ListPaths::of(&client, &args.target).await?;
            raw_transfer(&client, &paths).await
        })?;
        println!("  over a {rate} link: raw transfer {:.2?}", raw.time);
        let output = Command::new(std::env::current_exe()?)
            .arg("--console-child")
            .arg(kubeconfig)
            .args(["--target", &args.target, "--load-only"])
            .args(["--wire", wire_name(args.wire)])
            .stderr(Stdio::inherit())
            .output()
            .context("cannot start the console child")?;
        anyhow::Ok((raw, output))
    })();
    // Unpaced again whatever happened, for what the run does next.
    faults.clear();
    let (raw, output) = measured?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|line| line.starts_with("loaded "))
        .with_context(|| format!("the console child said: {stdout}"))?;
    let load = Report::parse(line, "loaded")?.get("secs");
    println!("  over a {rate} link: console load {load:.2} s");
    Ok(OverLink {
        rate: rate.to_owned(),
        raw: raw.time,
        load,
    })
}

/// The load where the wire is the limit.
struct OverLink {
    rate: String,
    raw: Duration,
    load: f64,
}

/// The rows of the console's ceiling (`absorb::capacity`).
#[allow(clippy::cast_precision_loss, reason = "display only")]
fn print_ceiling_rows(absorbed: &Report) {
    println!(
        "| console ceiling: pod watch lines replayed in-process (decode ∥ apply, rows, order) | {:.0} in {:.2} s ({:.2} s CPU, {:.1} µs each) | {:.0} events/s |",
        absorbed.get("events"),
        absorbed.get("secs"),
        absorbed.get("cpu"),
        absorbed.get("cpu") * 1e6 / absorbed.get("events").max(1.0),
        absorbed.get("per_s")
    );
    println!(
        "| frames meanwhile (view model + render 200×60, one per 33 ms) | mean {:.2} ms, max {:.2} ms | {:.0} frames |",
        absorbed.get("frame_mean_ms"),
        absorbed.get("frame_max_ms"),
        absorbed.get("frames")
    );
    println!(
        "| keys meanwhile (`j`/`k` every 50 ms) to the end of the next frame | mean {:.2} ms, max {:.2} ms | {:.0} keys, {:.0} frames without the selected row |",
        absorbed.get("key_mean_ms"),
        absorbed.get("key_max_ms"),
        absorbed.get("keys"),
        absorbed.get("key_missed")
    );
}

/// Waits (at most a minute) until this process uses under a fifth of a core
/// over half a second.
fn settle() {
    let deadline = Instant::now() + Duration::from_secs(60);
    let window = Duration::from_millis(500);
    while Instant::now() < deadline {
        let before = cpu_secs();
        std::thread::sleep(window);
        if cpu_secs() - before < window.as_secs_f64() / 5.0 {
            return;
        }
    }
}

fn next_line(lines: &mut std::io::Lines<impl BufRead>) -> anyhow::Result<String> {
    loop {
        match lines.next() {
            // Detail lines: shown, not parsed.
            Some(Ok(line)) if line.starts_with('#') => println!("  {}", &line[2..]),
            Some(line) => return Ok(line?),
            None => bail!("the console child ended early"),
        }
    }
}

fn mb(bytes: u64) -> f64 {
    #[allow(clippy::cast_precision_loss, reason = "display only")]
    let bytes = bytes as f64;
    bytes / 1_000_000.0
}

/// `word key=value key=value…`, the child's report lines.
struct Report(Vec<(String, f64)>);

impl Report {
    fn parse(line: &str, word: &str) -> anyhow::Result<Report> {
        let mut parts = line.split_whitespace();
        if parts.next() != Some(word) {
            bail!("unexpected line from the console child: {line}");
        }
        Ok(Report(
            parts
                .filter_map(|kv| kv.split_once('='))
                .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
                .collect(),
        ))
    }

    fn get(&self, key: &str) -> f64 {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map_or(f64::NAN, |(_, v)| *v)
    }
}

/// The load's figures, as the child reported them.
fn print_load(load: &Report, server_cpu: f64) {
    println!(
        "  grid order, worst over every sort and grouping: full rebuild {:.2} ms, one changed row moved {:.3} ms",
        load.get("rebuild_max_ms"),
        load.get("move_max_ms")
    );
    println!(
        "  console load: {} rows in {:.2} s (RSS {:.0} MB, peak {:.0} MB; CPU: console {:.2} s, embedded cluster {server_cpu:.2} s)",
        load.get("rows"),
        load.get("secs"),
        load.get("rss"),
        load.get("peak"),
        load.get("cpu")
    );
}

struct Figures {
    sim_start: Duration,
    sim_settled: Duration,
    sim_rss: f64,
    sim_peak: f64,
    raw: Raw,
    decoding: decode::Decoding,
    load: Report,
    /// CPU seconds of the embedded cluster while the console loaded.
    server_cpu_during_load: f64,
    keys: Report,
    churned: Report,
    absorbed: Report,
    written: u64,
    churn_secs: Duration,
    over_links: Vec<OverLink>,
}

/// The table's CPU rows: whether the load waits for the machine or for
/// something else (cores busy on average, server and console together,
/// against the cores there are).
fn print_cpu(f: &Figures, raw: f64, load: f64) {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    println!(
        "| CPU of the raw transfer (server and client) | {:.2} s | {:.1} of {cores} cores busy |",
        f.raw.cpu,
        f.raw.cpu / raw
    );
    let console_cpu = f.load.get("cpu");
    println!(
        "| CPU of the load: console / embedded cluster serving | {console_cpu:.2} s / {:.2} s | {:.1} of {cores} cores busy |",
        f.server_cpu_during_load,
        (console_cpu + f.server_cpu_during_load) / load
    );
}

fn print_link_rows(over_links: &[OverLink]) {
    for link in over_links {
        let raw = link.raw.as_secs_f64();
        println!(
            "| over a {} link: raw transfer / console load | {raw:.2} s / {:.2} s | {:.2}× raw transfer |",
            link.rate,
            link.load,
            link.load / raw
        );
    }
}

#[allow(clippy::cast_precision_loss, reason = "display only")]
fn print_table(args: &Args, f: &Figures) {
    let nodes = args.nodes as f64;
    let raw = f.raw.time.as_secs_f64();
    let load = f.load.get("secs");
    let written = f.written as f64;
    println!();
    println!("| {} nodes | figure | ratio / per unit |", args.nodes);
    println!("|---|---|---|");
    println!(
        "| embedded cluster start (generate, load, serve) | {:.2} s | |",
        f.sim_start.as_secs_f64()
    );
    println!(
        "| embedded cluster idle (controller and kubelets synced) | {:.2} s | |",
        f.sim_settled.as_secs_f64()
    );
    println!(
        "| embedded cluster RSS / peak | {:.0} MB / {:.0} MB | {:.1} KB per node |",
        f.sim_rss,
        f.sim_peak,
        f.sim_rss * 1024.0 / nodes
    );
    println!(
        "| raw transfer of the lists ({:.0} MB, nodes ∥ pods) | {raw:.2} s | {:.0} MB/s |",
        mb(f.raw.bytes),
        mb(f.raw.bytes) / raw
    );
    println!(
        "| console load to a complete grid model | {load:.2} s | {:.2}× raw transfer |",
        load / raw
    );
    print_cpu(f, raw, load);
    print_link_rows(&f.over_links);
    let (skip, slim) = (f.decoding.skip.as_secs_f64(), f.decoding.slim.as_secs_f64());
    println!(
        "| one JSON pass over the node and pod lists ({:.0} MB), nothing built, one core | {skip:.2} s | {:.2}× raw transfer |",
        mb(f.decoding.bytes),
        skip / raw
    );
    println!(
        "| the console's slim decode of the same lists, one core | {slim:.2} s | {:.2}× raw transfer |",
        slim / raw
    );
    println!(
        "| grid order per reordering change, worst sort/grouping | {:.3} ms (full rebuild {:.1} ms) | |",
        f.load.get("move_max_ms"),
        f.load.get("rebuild_max_ms")
    );
    println!(
        "| console RSS / peak after load | {:.0} MB / {:.0} MB | {:.1} KB per node |",
        f.load.get("rss"),
        f.load.get("peak"),
        f.load.get("rss") * 1024.0 / nodes
    );
    print_key_rows(&f.keys);
    println!(
        "| churn written | {} changes in {:.1} s | {:.0} changes/s |",
        f.written,
        f.churn_secs.as_secs_f64(),
        written / f.churn_secs.as_secs_f64()
    );
    println!(
        "| watch events the console applied | {:.0} in {:.1} s | {:.0} events/s |",
        f.churned.get("absorbed"),
        f.churned.get("absorb_secs"),
        f.churned.get("absorbed") / f.churned.get("absorb_secs").max(1e-9)
    );
    println!(
        "| console CPU under churn | {:.2} s ({:.0}% of a core) | {:.1} µs per applied event |",
        f.churned.get("cpu"),
        100.0 * f.churned.get("cpu") / f.churned.get("absorb_secs").max(1e-9),
        f.churned.get("cpu") * 1e6 / f.churned.get("absorbed").max(1.0)
    );
    print_ceiling_rows(&f.absorbed);
    println!(
        "| console refresh (rows + order) per wake-up | mean {:.2} ms, max {:.2} ms | {:.0} wake-ups |",
        f.churned.get("refresh_mean_ms"),
        f.churned.get("refresh_max_ms"),
        f.churned.get("wakeups")
    );
    println!(
        "| console frame (view model + render 200×60) | mean {:.2} ms, max {:.2} ms | {:.0} frames |",
        f.churned.get("frame_mean_ms"),
        f.churned.get("frame_max_ms"),
        f.churned.get("frames")
    );
    println!(
        "| key (`j`/`k`) handled to the end of the next frame | mean {:.2} ms, max {:.2} ms | {:.0} keys, {:.0} frames without the selected row |",
        f.churned.get("key_mean_ms"),
        f.churned.get("key_max_ms"),
        f.churned.get("keys"),
        f.churned.get("key_missed")
    );
    println!(
        "| console RSS / peak after churn | {:.0} MB / {:.0} MB | |",
        f.churned.get("rss"),
        f.churned.get("peak")
    );
}

/// The rollout keys' rows: mean and max per key, in ms.
fn print_key_rows(keys: &Report) {
    for (key, what) in KEY_FIGURES {
        println!(
            "| {what} | mean {:.2} ms, max {:.2} ms | |",
            keys.get(&format!("{key}_mean_ms")),
            keys.get(&format!("{key}_max_ms"))
        );
    }
}

/// The figures of (e): report key and table row.
const KEY_FIGURES: [(&str, &str); 12] = [
    (
        "n",
        "key `n` + yes: advance the next node (to the delete request)",
    ),
    ("c", "key `c` + yes: mark a canary (to the state patch)"),
    ("plan", "key `P`: the rollout plan view"),
    (
        "auto",
        "key `A` + yes: start auto-advance (to the state patch)",
    ),
    (
        "auto_first",
        "auto-advance: first batch (to the delete request)",
    ),
    (
        "auto_step",
        "auto-advance step after one changed pod (ops_on_change)",
    ),
    (
        "headless_first",
        "`rollcall auto` (headless): first batch decided",
    ),
    (
        "headless_step",
        "`rollcall auto` (headless): step after one changed pod",
    ),
    (
        "copied",
        "decision from a copied snapshot, every row computed (one-shot commands)",
    ),
    (
        "roster_copy",
        "roster from scratch (start, relist): copy under the cache lock",
    ),
    (
        "roster_compare",
        "roster from scratch (start, relist): comparison, off the lock",
    ),
    (
        "roster_change",
        "roster after one changed pod (in place, under the lock)",
    ),
];

// ---------------------------------------------------------------- raw transfer

struct Raw {
    time: Duration,
    /// CPU seconds of this process meanwhile: the server's and the client's.
    cpu: f64,
    bytes: u64,
    node_bytes: u64,
    pod_bytes: u64,
}

/// The paths of the four lists the console needs: nodes, the target's pods,
/// DaemonSets and the target's ControllerRevisions (its selector's).
struct ListPaths {
    nodes: String,
    pods: String,
    daemonsets: String,
    revisions: String,
}

impl ListPaths {
    async fn of(client: &kube::Client, target: &str) -> anyhow::Result<ListPaths> {
        let (namespace, name) = target
            .split_once('/')
            .context("--target is NAMESPACE/NAME")?;
        let ds: kube::Api<rollcall::model::DaemonSet> =
            kube::Api::namespaced(client.clone(), namespace);
        let selector = ds
            .get(name)
            .await?
            .spec
            .map(|spec| kube::core::Selector::try_from(spec.selector))
            .transpose()?
            .map(|s| s.to_string())
            .unwrap_or_default();
        let selector = url_encode(&selector);
        Ok(ListPaths {
            nodes: "/api/v1/nodes".to_owned(),
            pods: format!("/api/v1/namespaces/{namespace}/pods?labelSelector={selector}"),
            daemonsets: "/apis/apps/v1/daemonsets".to_owned(),
            revisions: format!(
                "/apis/apps/v1/namespaces/{namespace}/controllerrevisions?labelSelector={selector}"
            ),
        })
    }
}

/// (a) The raw transfer of the lists, then their decode on one core.
async fn transfer(config: kube::Config, target: &str) -> anyhow::Result<(Raw, decode::Decoding)> {
    let client = kube::Client::try_from(config)?;
    let paths = ListPaths::of(&client, target).await?;
    let raw = raw_transfer(&client, &paths).await?;
    println!(
        "  raw transfer: {:.1} MB in {:.2?} (nodes {:.1} MB, pods {:.1} MB)",
        mb(raw.bytes),
        raw.time,
        mb(raw.node_bytes),
        mb(raw.pod_bytes)
    );
    let decoding = decode::floor(&client, &paths.nodes, &paths.pods).await?;
    println!("  {decoding}");
    Ok((raw, decoding))
}

async fn raw_transfer(client: &kube::Client, paths: &ListPaths) -> anyhow::Result<Raw> {
    let started = Instant::now();
    let cpu_before = cpu_secs();
    let (nodes, pods, daemonsets, revisions) = futures::try_join!(
        fetch(client, paths.nodes.clone()),
        fetch(client, paths.pods.clone()),
        fetch(client, paths.daemonsets.clone()),
        fetch(client, paths.revisions.clone()),
    )?;
    Ok(Raw {
        time: started.elapsed(),
        cpu: cpu_secs() - cpu_before,
        bytes: nodes + pods + daemonsets + revisions,
        node_bytes: nodes,
        pod_bytes: pods,
    })
}

/// Reads one response body to the end and counts its bytes (no decode).
async fn fetch(client: &kube::Client, path: String) -> anyhow::Result<u64> {
    let request = http::Request::get(path).body(Vec::new())?;
    let mut body = client.request_stream(request).await?;
    let mut buffer = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let read = body.read(&mut buffer).await?;
        if read == 0 {
            return Ok(total);
        }
        total += read as u64;
    }
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

// ---------------------------------------------------------------- the console child

/// Whether every started stream has finished its first list and the rows
/// cover every node: the grid model is complete.
fn complete(cache: &Cache, app: &App) -> bool {
    let streams = cache.streams();
    streams.contains_key(&StreamKind::Pods)
        && streams
            .values()
            .all(rollcall::cluster::status::StreamStatus::synced)
        && app.rows.len() == cache.count(StreamKind::Nodes)
        && !app.rows.is_empty()
}

fn wire_name(wire: rollcall::cluster::wire::Wire) -> &'static str {
    use rollcall::cluster::wire::Wire;
    match wire {
        Wire::Auto => "auto",
        Wire::Json => "json",
        Wire::Protobuf => "protobuf",
    }
}

async fn console_child(
    kubeconfig: &std::path::Path,
    target: &str,
    wire: rollcall::cluster::wire::Wire,
    load_only: bool,
) -> anyhow::Result<()> {
    let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    // The console's own connection: its transport (HTTP/2), wire and
    // compression choice.
    let client = rollcall::cluster::connect::connection_from_config(
        config,
        "scale".into(),
        None,
        wire,
        rollcall::cluster::compression::Compression::Auto,
    )?
    .watch_client;
    let target = Target::from_key(target).context("--target is NAMESPACE/NAME")?;
    let started = Instant::now();
    let cpu_before = cpu_secs();
    let handle = watch::spawn(client.clone(), None, Some(target.clone()));
    let mut app = App::new(ConsoleInfo::default(), Some(target.clone()), (200, 60));
    let shared = std::sync::Arc::clone(&handle.shared);
    let mut phases = LoadPhases::default();
    loop {
        shared.changed().await;
        let mut cache = shared.lock();
        phases.woke(&cache, started.elapsed());
        let refreshing = Instant::now();
        app.refresh(&mut cache, jiff::Timestamp::now());
        phases.refreshed(refreshing.elapsed());
        if complete(&cache, &app) {
            // One frame, as the console would draw it.
            let _ = app.view_model(&cache, jiff::Timestamp::now());
            break;
        }
    }
    let load = started.elapsed();
    let cpu = cpu_secs() - cpu_before;
    println!("# {}", phases.report(load));
    let (rss, peak) = (rss_mb(), peak_mb());
    if load_only {
        println!(
            "loaded secs={:.3} rss={rss:.1} cpu={cpu:.3}",
            load.as_secs_f64()
        );
        return Ok(());
    }
    println!("listed");
    let (rebuild_ms, moved_ms) = order_costs(&mut app, &shared);
    println!(
        "loaded secs={:.3} rows={} rss={rss:.1} peak={peak:.1} cpu={cpu:.3} rebuild_max_ms={rebuild_ms:.3} move_max_ms={moved_ms:.3}",
        load.as_secs_f64(),
        app.rows.len(),
    );
    let keys = keys::costs(&mut app, &shared)?;
    println!("keys {keys}");
    // The from-scratch roster copies every object once; what the allocator
    // keeps of that shows here, before the churn figures.
    println!(
        "# console RSS after the key measurements: {:.0} MB (peak {:.0} MB)",
        rss_mb(),
        peak_mb()
    );
    churn_phase(&mut app, &shared).await?;
    let absorbed = absorb::capacity(&client, &mut app, &shared, &target).await?;
    println!("absorb {absorbed}");
    drop(handle);
    Ok(())
}

/// Where the load's time goes, as seen from the console's wake-ups: when
/// the first objects were in the cache, when each stream's first list was
/// complete, and how long the refreshes (rows and order) took.
#[derive(Default)]
struct LoadPhases {
    first_object: Option<Duration>,
    synced: Vec<(StreamKind, Duration)>,
    wakeups: u32,
    refresh_total: Duration,
    last_refresh: Duration,
}

impl LoadPhases {
    fn woke(&mut self, cache: &Cache, at: Duration) {
        self.wakeups += 1;
        if self.first_object.is_none() && cache.applied() > 0 {
            self.first_object = Some(at);
        }
        for (kind, status) in cache.streams() {
            if status.synced() && !self.synced.iter().any(|(k, _)| k == kind) {
                self.synced.push((*kind, at));
            }
        }
    }

    fn refreshed(&mut self, took: Duration) {
        self.refresh_total += took;
        self.last_refresh = took;
    }

    fn report(&self, load: Duration) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let synced: Vec<String> = self
            .synced
            .iter()
            .map(|(kind, at)| format!("{} {:.0}", kind.label(), ms(*at)))
            .collect();
        format!(
            "load phases (ms since start): first object {:.0}; lists complete: {}; {} wake-ups, refreshes {:.0} in all, the last {:.0}; complete {:.0}",
            self.first_object.map_or(f64::NAN, ms),
            synced.join(", "),
            self.wakeups,
            ms(self.refresh_total),
            ms(self.last_refresh),
            ms(load)
        )
    }
}

/// For every sort and grouping: the cost of a full rebuild of the grid order
/// (what each reordering change used to cost) and of moving one changed row
/// (what it costs now); returns the worst of each, in ms.
fn order_costs(app: &mut App, shared: &watch::Shared) -> (f64, f64) {
    use rollcall::tui::index::{Filter, GridIndex, GroupKey, SortKey};
    let names: Vec<String> = app
        .rows
        .in_name_order()
        .step_by((app.rows.len() / 50).max(1))
        .map(|row| row.name().to_owned())
        .collect();
    let (mut rebuild_max, mut move_max) = (0.0_f64, 0.0_f64);
    let mut sort = SortKey::Name;
    for _ in 0..4 {
        let mut group = GroupKey::None;
        for _ in 0..4 {
            // The cache is locked per measurement, as the console locks it per
            // wake-up: holding it for all of them would stall the watch task
            // long enough for the server to drop its watches.
            let cache = &*shared.lock();
            // The best of three rebuilds and the mean over ~50 moved rows:
            // both robust to the other processes sharing the machine.
            let mut rebuild = f64::INFINITY;
            let mut index = GridIndex::default();
            for _ in 0..3 {
                let started = Instant::now();
                index = GridIndex::build(&app.rows, cache, sort, group, &Filter::None);
                rebuild = rebuild.min(started.elapsed().as_secs_f64() * 1000.0);
            }
            let started = Instant::now();
            for name in &names {
                let one = [name.as_str()];
                index.update(&app.rows, cache, (sort, group), &Filter::None, one);
            }
            #[allow(clippy::cast_precision_loss, reason = "display only")]
            let worst = started.elapsed().as_secs_f64() * 1000.0 / names.len().max(1) as f64;
            println!(
                "# order sort={} group={}: full rebuild {rebuild:.2} ms, one row moved {worst:.3} ms (mean)",
                sort.label(),
                group.label()
            );
            rebuild_max = rebuild_max.max(rebuild);
            move_max = move_max.max(worst);
            group = group.next();
        }
        sort = sort.next();
    }
    (rebuild_max, move_max)
}

#[derive(Default)]
pub(crate) struct Timings {
    count: u32,
    total: Duration,
    max: Duration,
}

impl Timings {
    pub(crate) fn add(&mut self, took: Duration) {
        self.count += 1;
        self.total += took;
        self.max = self.max.max(took);
    }

    pub(crate) fn mean_ms(&self) -> f64 {
        self.total.as_secs_f64() * 1000.0 / f64::from(self.count.max(1))
    }

    pub(crate) fn max_ms(&self) -> f64 {
        self.max.as_secs_f64() * 1000.0
    }
}

/// How often the churn phase presses a key (`j`, then `k`, …).
const KEY_EVERY: Duration = Duration::from_millis(200);

/// Absorbs changes as the console's event loop does (`tui::run`: refresh on
/// every wake-up, a frame when something changed and the last one is at
/// least `FRAME_INTERVAL` old), presses `j`/`k` every `KEY_EVERY` through
/// the console's dispatch (`App::action_for_event`, `App::update`) and times
/// each key to the end of the first frame drawn after it, until the parent
/// says `stop`; prints the figures.
async fn churn_phase(app: &mut App, shared: &std::sync::Arc<watch::Shared>) -> anyhow::Result<()> {
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        let _ = stop_tx.send(());
    });
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 60))?;
    let cpu_before = cpu_secs();
    let applied_before = shared.lock().applied();
    let churn_started = Instant::now();
    let mut refresh = Timings::default();
    let mut frame = Timings::default();
    let mut key_to_frame = Timings::default();
    let frame_interval = rollcall::tui::run::FRAME_INTERVAL;
    let mut last_frame = Instant::now()
        .checked_sub(frame_interval)
        .unwrap_or_else(Instant::now);
    let mut dirty = false;
    let mut keys = tokio::time::interval(KEY_EVERY);
    let mut key_count = 0u32;
    // When the key not yet shown was handled, and the row it selected.
    let mut key_pending: Option<(Instant, Option<String>)> = None;
    let mut missed = 0u32;
    loop {
        if dirty && last_frame.elapsed() >= frame_interval {
            let started = Instant::now();
            let view = app.view_model(&shared.lock(), jiff::Timestamp::now());
            terminal.draw(|f| f.render_widget(&view, f.area()))?;
            let done = Instant::now();
            frame.add(done - started);
            last_frame = done;
            dirty = false;
            if let Some((pressed, selected)) = key_pending.take() {
                key_to_frame.add(done - pressed);
                if !shows_selection(&terminal, selected.as_deref()) {
                    missed += 1;
                }
            }
        }
        let next_frame = last_frame + frame_interval;
        tokio::select! {
            () = shared.changed() => {
                let started = Instant::now();
                let mut cache = shared.lock();
                let locked = started.elapsed();
                let pending = pending_summary(&cache);
                dirty |= app.refresh(&mut cache, jiff::Timestamp::now());
                drop(cache);
                let took = started.elapsed();
                refresh.add(took);
                if took > Duration::from_millis(20) {
                    // Which path a slow wake-up took.
                    println!(
                        "# slow refresh {:.1} ms (lock wait {:.1} ms): {pending}",
                        took.as_secs_f64() * 1000.0,
                        locked.as_secs_f64() * 1000.0
                    );
                }
            }
            _ = keys.tick() => {
                if let Some(pressed) = press_key(app, &shared.lock(), key_count) {
                    dirty = true;
                    // A key not shown yet is measured from its own press.
                    key_pending = Some((
                        key_pending.map_or(pressed, |(at, _)| at),
                        app.ui.selected_node.clone(),
                    ));
                }
                key_count += 1;
            }
            () = tokio::time::sleep_until(next_frame.into()), if dirty => {}
            _ = &mut stop_rx => break,
        }
    }
    println!(
        "churned absorbed={} absorb_secs={:.3} cpu={:.3} wakeups={} refresh_mean_ms={:.3} refresh_max_ms={:.3} frames={} frame_mean_ms={:.3} frame_max_ms={:.3} keys={} key_mean_ms={:.3} key_max_ms={:.3} key_missed={missed} rss={:.1} peak={:.1}",
        shared.lock().applied() - applied_before,
        churn_started.elapsed().as_secs_f64(),
        cpu_secs() - cpu_before,
        refresh.count,
        refresh.mean_ms(),
        refresh.max_ms(),
        frame.count,
        frame.mean_ms(),
        frame.max_ms(),
        key_to_frame.count,
        key_to_frame.mean_ms(),
        key_to_frame.max_ms(),
        rss_mb(),
        peak_mb()
    );
    Ok(())
}

/// What the cache had pending at a wake-up, for the slow-refresh lines.
fn pending_summary(cache: &Cache) -> String {
    let pending = cache.changes();
    format!(
        "all_nodes={} nodes={} daemonsets={} revisions={} streams={}",
        pending.all_nodes,
        pending.nodes.len(),
        pending.daemonsets,
        pending.revisions,
        pending.streams
    )
}

/// Presses `j` (even `count`) or `k` through the console's dispatch;
/// returns when, if the key did anything.
pub(crate) fn press_key(app: &mut App, cache: &Cache, count: u32) -> Option<Instant> {
    let code = if count.is_multiple_of(2) { 'j' } else { 'k' };
    let event = crossterm::event::Event::Key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::Char(code),
    ));
    let pressed = Instant::now();
    let action = app.action_for_event(&event)?;
    let _ = app.update(action, cache, jiff::Timestamp::now());
    Some(pressed)
}

/// Whether the drawn frame shows `node` (the row the key selected).
pub(crate) fn shows_selection(
    terminal: &ratatui::Terminal<ratatui::backend::TestBackend>,
    node: Option<&str>,
) -> bool {
    let text: String = terminal
        .backend()
        .buffer()
        .content
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    node.is_some_and(|node| text.contains(node))
}
