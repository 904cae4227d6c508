//! Scale measurements of the embedded cluster (ignored by default; run with
//! `cargo test --release --test sim_cluster_scale -- --ignored --nocapture`,
//! optionally `ROLLCALL_SCALE_NODES=5000,65000`): for each size, the time to
//! generate and load the cluster, to list every node through the API with
//! kube-rs (pages of 500), and for a kube-rs pod watcher to finish its initial
//! list, plus the process's peak RSS (VmHWM) afterwards.

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, api::ListParams};
// kube-rs on its own terms: the upstream types, its own watcher.
use k8s_openapi::api::core::v1::{Node, Pod};
use rollcall::sim::embedded::{self, EmbeddedOptions};

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

async fn measure(nodes: usize) {
    let started = Instant::now();
    let options = EmbeddedOptions {
        nodes: Some(nodes),
        ..EmbeddedOptions::default()
    };
    let cluster = embedded::start(options).await.expect("starts");
    let generated = started.elapsed();
    let loaded = cluster.simulation.loaded;
    let client = Client::try_from(cluster.server.kube_config()).expect("client");
    let node_api: Api<Node> = Api::all(client.clone());
    let started = Instant::now();
    let mut listed = 0;
    let mut params = ListParams::default().limit(500);
    loop {
        let page = node_api.list(&params).await.expect("list");
        listed += page.items.len();
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    let list_time = started.elapsed();
    assert_eq!(listed, nodes);
    let pod_api: Api<Pod> = Api::all(client);
    let started = Instant::now();
    let mut stream = watcher::watcher(pod_api, watcher::Config::default()).boxed();
    let mut pods = 0;
    while let Some(event) = stream.next().await {
        match event.expect("watch event") {
            Event::InitApply(_) => pods += 1,
            Event::InitDone => break,
            _ => {}
        }
    }
    let watch_time = started.elapsed();
    // Let the controller and kubelets settle, to see they stay cheap.
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!(
        "nodes={nodes} pods={} generate+load+start={generated:.2?} list_nodes={list_time:.2?} watch_pods_init({pods})={watch_time:.2?} peak_rss={:.0}MiB",
        loaded.pods,
        peak_rss_mib()
    );
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "scale measurement; run explicitly"]
async fn generate_list_and_watch_large_clusters() {
    let sizes = std::env::var("ROLLCALL_SCALE_NODES").unwrap_or_else(|_| "5000,65000".to_owned());
    for size in sizes.split(',').filter_map(|s| s.trim().parse().ok()) {
        measure(size).await;
    }
}
