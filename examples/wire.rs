//! Wire benchmark: for JSON, gzip JSON, protobuf and gzip protobuf, the
//! bytes of the node and pod lists on the wire and the time to list every
//! node and pod into rollcall's slim types (pages of 500, nodes and pods in
//! parallel, as the console loads them), over loopback and over slower
//! links (the embedded cluster's `bandwidth` fault). The embedded cluster
//! runs in this process on its own runtime, whose threads are named, so the
//! CPU of each side is read apart from `/proc/self/task`.
//!
//! Run: `cargo run --release --example wire -- --nodes 5000 --link off --link 100Mbit`

#![allow(clippy::cast_precision_loss, reason = "benchmark figures")]

use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use kube::api::ListParams;
use rollcall::cluster::compression::Compression;
use rollcall::cluster::request;
use rollcall::cluster::wire::Wire;
use rollcall::model::{Node, Pod};
use rollcall::sim::embedded::{self, EmbeddedOptions};
use rollcall::sim::fault::{self, Fault, FaultKind, Faults};

#[path = "scale/proc_stats.rs"]
mod proc_stats;

#[derive(Parser, Debug)]
#[command(about = "Wire benchmark: JSON, gzip, protobuf, side by side")]
struct Args {
    /// Generated cluster size.
    #[arg(long, default_value_t = 5_000)]
    nodes: usize,
    /// Links to measure over (`off`: loopback, unpaced); repeatable.
    #[arg(long = "link", value_name = "RATE", default_values_t = ["off".to_owned(), "100Mbit".to_owned()])]
    links: Vec<String>,
    /// Modes to time (json, json+gzip, protobuf, protobuf+gzip, auto);
    /// repeatable; all five when none is given. `auto` reaches the server
    /// at this machine's own non-loopback address, so that `--wire auto
    /// --compression auto` choose as for a remote server (the log lines of
    /// the choice go to stderr). Every mode's bytes are still counted
    /// (which warms the embedded cluster's protobuf cache).
    #[arg(long = "mode", value_name = "MODE")]
    modes: Vec<String>,
    /// Skip timing each list's decode alone (it holds every body).
    #[arg(long)]
    no_decode_alone: bool,
}

impl Args {
    fn timed(&self, name: &str) -> bool {
        self.modes.is_empty() || self.modes.iter().any(|mode| mode == name)
    }
}

/// One way of asking: the wire and whether to ask for gzip.
const MODES: [(&str, Wire, bool); 4] = [
    ("json", Wire::Json, false),
    ("json+gzip", Wire::Json, true),
    ("protobuf", Wire::Protobuf, false),
    ("protobuf+gzip", Wire::Protobuf, true),
];

/// The name of the server runtime's threads (at most 15 bytes: the kernel
/// keeps no more of a thread's name).
const SERVER_THREADS: &str = "wire-server";

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // What `auto` chose, and why, on stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            "rollcall::cluster::compression=info,rollcall::cluster::compression_probe=info,rollcall::cluster::wire=info",
        ))
        .init();
    let server = tokio::runtime::Builder::new_multi_thread()
        .thread_name(SERVER_THREADS)
        .enable_all()
        .build()?;
    let client = tokio::runtime::Builder::new_multi_thread()
        .thread_name("wire-client")
        .enable_all()
        .build()?;
    let faults = Faults::none();
    // Started inside the server runtime, so its tasks (accepting, listing,
    // encoding, compressing) stay on that runtime's threads.
    let cluster = server
        .block_on(embedded::start(EmbeddedOptions {
            nodes: Some(args.nodes),
            // Reachable at a non-loopback address too (the `auto` mode).
            listen: Some(std::net::SocketAddr::from(([0, 0, 0, 0], 0))),
            faults: faults.clone(),
            ..EmbeddedOptions::default()
        }))
        .context("starting the embedded cluster")?;
    client.block_on(run(&args, &cluster, &faults))
}

async fn run(
    args: &Args,
    cluster: &embedded::EmbeddedCluster,
    faults: &Faults,
) -> anyhow::Result<()> {
    println!("wire benchmark: {} nodes", args.nodes);
    println!("bytes on the wire (whole lists, one request each):");
    let mut json_bytes = 0;
    let mut bodies = Vec::new();
    for (name, wire, gzip) in MODES {
        let mut total = 0;
        for path in ["/api/v1/nodes", "/api/v1/pods"] {
            let body = wire_body(cluster, path, wire, gzip).await?;
            total += body.len();
            if !gzip && !args.no_decode_alone {
                bodies.push((name, path, body));
            }
        }
        if name == "json" {
            json_bytes = total;
        }
        println!(
            "  {name:<14} {:>8.1} MB  ({:.2}× JSON)",
            mb(total),
            total as f64 / json_bytes.max(1) as f64
        );
    }
    println!("decode only, into the slim types, one core (the client's share):");
    for (name, path, body) in &bodies {
        let started = Instant::now();
        let count = if path.ends_with("nodes") {
            request::decode_page::<Node>(body)?.items.len()
        } else {
            request::decode_page::<Pod>(body)?.items.len()
        };
        println!(
            "  {name:<14} {path:<14} {:>7.3} s  ({count} objects, {:.0} MB/s of body)",
            started.elapsed().as_secs_f64(),
            mb(body.len()) / started.elapsed().as_secs_f64()
        );
    }
    for link in &args.links {
        faults.clear();
        if link != "off" {
            let rate = fault::parse_rate(link).map_err(anyhow::Error::msg)?;
            faults.install(vec![Fault {
                kind: FaultKind::Bandwidth(rate),
                start: std::time::Duration::ZERO,
                length: std::time::Duration::from_secs(24 * 3600),
            }]);
        }
        println!("time to every node and pod, slim (link {link}):");
        for (name, wire, gzip) in MODES.into_iter().filter(|(name, ..)| args.timed(name)) {
            let compression = if gzip {
                Compression::On
            } else {
                Compression::Off
            };
            let loaded = load(cluster.server.kube_config(), wire, compression).await?;
            print_load(name, &loaded);
        }
        if args.timed("auto") {
            match remote_config(cluster) {
                Ok(config) => {
                    let loaded = load(config, Wire::Auto, Compression::Auto).await?;
                    print_load("auto", &loaded);
                }
                Err(error) => println!("  auto           skipped: {error}"),
            }
        }
    }
    println!(
        "RSS {:.0} MB, peak {:.0} MB (server and client together)",
        proc_stats::rss_mb(),
        proc_stats::peak_mb()
    );
    Ok(())
}

fn print_load(name: &str, loaded: &Loaded) {
    println!(
        "  {name:<14} {:>7.2} s   CPU server {:>5.2} s, client {:>5.2} s   {} nodes, {} pods",
        loaded.secs, loaded.server_cpu, loaded.client_cpu, loaded.nodes, loaded.pods
    );
}

/// The server's config at this machine's own non-loopback address (the
/// route's source address; no packet is sent), its certificate checked
/// for the name it was issued for.
fn remote_config(cluster: &embedded::EmbeddedCluster) -> anyhow::Result<kube::Config> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
    socket
        .connect("192.0.2.1:9")
        .context("no non-loopback route")?;
    let ip = socket.local_addr()?.ip();
    anyhow::ensure!(!ip.is_loopback(), "no non-loopback address");
    let mut config = cluster.server.kube_config();
    let port = config.cluster_url.port_u16().unwrap_or(443);
    config.cluster_url = format!("https://{ip}:{port}").parse()?;
    config.tls_server_name = Some("localhost".into());
    // As a kubeconfig without `disable-compression` says.
    config.disable_compression = false;
    Ok(config)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

/// The body as sent: asked as `wire` asks, gzip as asked, read
/// undecompressed.
async fn wire_body(
    cluster: &embedded::EmbeddedCluster,
    path: &str,
    wire: Wire,
    gzip: bool,
) -> anyhow::Result<Vec<u8>> {
    let mut config = cluster.server.kube_config();
    config.disable_compression = true;
    let client = kube::Client::try_from(config)?;
    let accept = match wire {
        Wire::Protobuf => "application/vnd.kubernetes.protobuf, application/json",
        Wire::Json | Wire::Auto => "application/json",
    };
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .header(
            http::header::ACCEPT_ENCODING,
            if gzip { "gzip" } else { "identity" },
        )
        .body(kube::client::Body::empty())?;
    let response = client.send(request).await?;
    let body =
        axum::body::to_bytes(axum::body::Body::new(response.into_body()), usize::MAX).await?;
    Ok(body.to_vec())
}

/// One load: wall seconds, CPU seconds of each side, what was listed.
struct Loaded {
    secs: f64,
    server_cpu: f64,
    client_cpu: f64,
    nodes: usize,
    pods: usize,
}

/// CPU seconds (user + system) of this process's threads named `name`.
fn threads_cpu_secs(name: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut ticks = 0.0;
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // `pid (comm) state …`: the name sits between the first "(" and the
        // last ")"; utime and stime are the 12th and 13th fields after it.
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        if head.split_once('(').map(|(_, comm)| comm) != Some(name) {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        for at in [11, 12] {
            ticks += fields
                .get(at)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0);
        }
    }
    ticks / 100.0
}

/// Lists every node and pod as the console does.
async fn load(
    config: kube::Config,
    wire: Wire,
    compression: Compression,
) -> anyhow::Result<Loaded> {
    let connection = rollcall::cluster::connect::connection_from_config(
        config,
        "bench".into(),
        None,
        wire,
        compression,
    )?;
    let client = connection.watch_client;
    let params = ListParams::default().limit(500);
    let (cpu, server_cpu, started) = (
        proc_stats::cpu_secs(),
        threads_cpu_secs(SERVER_THREADS),
        Instant::now(),
    );
    let nodes_url = request::collection_url::<Node>(None);
    let pods_url = request::collection_url::<Pod>(None);
    let (nodes, pods) = tokio::join!(
        request::list_all::<Node>(&client, &nodes_url, &params, None),
        request::list_all::<Pod>(&client, &pods_url, &params, None),
    );
    let (nodes, pods) = (nodes?, pods?);
    let secs = started.elapsed().as_secs_f64();
    let server_cpu = threads_cpu_secs(SERVER_THREADS) - server_cpu;
    Ok(Loaded {
        secs,
        server_cpu,
        client_cpu: proc_stats::cpu_secs() - cpu - server_cpu,
        nodes: nodes.len(),
        pods: pods.len(),
    })
}
