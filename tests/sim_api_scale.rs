//! Scale measurements of the embedded API (ignored by default; run with
//! `cargo test --test sim_api_scale -- --ignored --nocapture`). Prints the
//! time and RSS to insert 5,000 and 65,000 realistic (~7 KB) nodes, to list
//! them in-process, over HTTPS in one response and in pages of 500, and the
//! cost of one change fanned out to 100 watchers (store subscribers and
//! HTTPS watch streams). Numbers are printed, never asserted.

#![allow(
    clippy::unwrap_used,
    reason = "measurement harness: a failure must fail the run"
)]

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Patch, PatchParams, WatchEvent, WatchParams};
use kube::{Api, Client};
use rollcall::model;
use rollcall::sim::resources::ResourceKind;
use rollcall::sim::server::{ServeOptions, serve};
use rollcall::sim::store::Store;
use serde_json::{Value, json};

/// A node shaped like a real one: labels, annotations, capacity, five
/// conditions with messages, addresses, node info and an image list.
fn realistic_node(i: usize) -> Value {
    let name = format!("gke-prod-pool-{}-{i:06}", i % 7);
    let images: Vec<Value> = (0..28)
        .map(|k| {
            json!({"names": [
                format!("registry.example.com/platform/service-{k}@sha256:{:064x}", i * 31 + k),
                format!("registry.example.com/platform/service-{k}:v1.{k}.{}", i % 13)],
                "sizeBytes": 10_000_000 + k * 1_234_567})
        })
        .collect();
    let condition = |type_: &str, status: &str, reason: &str, message: &str| {
        json!({"type": type_, "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": "2026-11-29T10:00:00Z", "lastTransitionTime": "2026-11-01T10:00:00Z"})
    };
    json!({"metadata": {"name": name, "labels": {
            "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "n2-standard-8",
            "beta.kubernetes.io/os": "linux", "cloud.google.com/gke-nodepool": format!("pool-{}", i % 7),
            "cloud.google.com/gke-os-distribution": "cos", "cloud.google.com/machine-family": "n2",
            "failure-domain.beta.kubernetes.io/region": "europe-west1",
            "failure-domain.beta.kubernetes.io/zone": format!("europe-west1-{}", ["b", "c", "d"][i % 3]),
            "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": "n2-standard-8",
            "topology.kubernetes.io/region": "europe-west1",
            "topology.kubernetes.io/zone": format!("europe-west1-{}", ["b", "c", "d"][i % 3])},
          "annotations": {
            "container.googleapis.com/instance_id": format!("{}", 7_000_000_000_000_000u64 + i as u64),
            "csi.volume.kubernetes.io/nodeid": format!("{{\"pd.csi.storage.gke.io\":\"projects/prod/zones/europe-west1-b/instances/{name}\"}}"),
            "node.alpha.kubernetes.io/ttl": "0",
            "node.gke.io/last-applied-node-labels": "cloud.google.com/gke-boot-disk=pd-balanced,cloud.google.com/gke-container-runtime=containerd",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {"podCIDR": format!("10.{}.{}.0/24", i / 256 % 256, i % 256),
            "providerID": format!("gce://prod/europe-west1-b/{name}")},
        "status": {
            "addresses": [{"type": "InternalIP", "address": format!("10.128.{}.{}", i / 256 % 256, i % 256)},
                {"type": "ExternalIP", "address": format!("34.1.{}.{}", i / 256 % 256, i % 256)},
                {"type": "Hostname", "address": name}],
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "47060071478", "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "29321052Ki", "pods": "110"},
            "capacity": {"cpu": "8", "ephemeral-storage": "98831908Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "32880988Ki", "pods": "110"},
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status. AppArmor enabled")],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": format!("{:032x}", i * 7919),
                "containerRuntimeVersion": "containerd://1.7.24", "kernelVersion": "6.1.112+",
                "kubeProxyVersion": "v1.32.4-gke.1", "kubeletVersion": "v1.32.4-gke.1",
                "machineID": format!("{:032x}", i * 104_729), "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google", "systemUUID": format!("{:032x}", i * 15_485_863)}}})
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

#[derive(serde::Deserialize)]
struct PageMeta {
    #[serde(rename = "continue", default)]
    continue_: String,
}

/// Only the `continue` token of a list page (the items are skipped).
#[derive(serde::Deserialize)]
struct Page {
    metadata: PageMeta,
}

async fn list_all_pages(client: &Client, limit: usize) -> (usize, usize) {
    let (mut pages, mut bytes, mut token) = (0, 0, String::new());
    loop {
        let mut uri = format!("/api/v1/nodes?limit={limit}");
        if !token.is_empty() {
            uri = format!("{uri}&continue={token}");
        }
        let text = client
            .request_text(http::Request::get(uri).body(Vec::new()).unwrap())
            .await
            .unwrap();
        pages += 1;
        bytes += text.len();
        let page: Page = serde_json::from_str(&text).unwrap();
        if page.metadata.continue_.is_empty() {
            return (pages, bytes);
        }
        token = page.metadata.continue_;
    }
}

async fn measure(count: usize) {
    let sample = serde_json::to_vec(&realistic_node(1)).unwrap().len();
    // Generating the JSON values is the test's cost, not the store's: time it alone.
    let start = Instant::now();
    for i in 0..count {
        drop(realistic_node(i));
    }
    let generate = start.elapsed();
    let before = rss_mib();
    let store = Store::new();
    let start = Instant::now();
    for i in 0..count {
        store.create(ResourceKind::Node, realistic_node(i)).unwrap();
    }
    let insert = start.elapsed().saturating_sub(generate);
    let after = rss_mib();
    println!(
        "[{count} nodes] node JSON ~{sample} B; insert {insert:?} (generation {generate:?} excluded); RSS {before:.0} -> {after:.0} MiB (+{:.0} MiB)",
        after - before
    );

    let start = Instant::now();
    let (objects, _) = store.list_objects(ResourceKind::Node, None);
    println!(
        "[{count} nodes] in-process list_objects (shared Arcs): {:?} for {}",
        start.elapsed(),
        objects.len()
    );
    drop(objects);
    let start = Instant::now();
    let (typed, _) = store
        .list_as::<model::Node>(ResourceKind::Node, None)
        .unwrap();
    println!(
        "[{count} nodes] in-process list_as::<model::Node>: {:?} for {}",
        start.elapsed(),
        typed.len()
    );
    drop(typed);

    let server = serve(store.clone(), ServeOptions::default()).await.unwrap();
    let client = Client::try_from(server.kube_config()).unwrap();
    let start = Instant::now();
    let text = client
        .request_text(
            http::Request::get("/api/v1/nodes")
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    println!(
        "[{count} nodes] HTTPS full list: {:?}, {} MiB",
        start.elapsed(),
        text.len() / (1024 * 1024)
    );
    drop(text);
    let start = Instant::now();
    let (pages, bytes) = list_all_pages(&client, 500).await;
    println!(
        "[{count} nodes] HTTPS paginated limit=500: {:?}, {pages} pages, {} MiB",
        start.elapsed(),
        bytes / (1024 * 1024)
    );
    println!(
        "[{count} nodes] RSS after serving lists: {:.0} MiB",
        rss_mib()
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; run with --ignored --nocapture"]
async fn measure_insert_and_list_5000_nodes() {
    measure(5_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; run with --ignored --nocapture"]
async fn measure_insert_and_list_65000_nodes() {
    measure(65_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; run with --ignored --nocapture"]
async fn measure_one_event_fanned_out_to_100_watchers() {
    let store = Store::new();
    for i in 0..100 {
        store.create(ResourceKind::Node, realistic_node(i)).unwrap();
    }
    let name = realistic_node(7)["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_owned();

    // Store level: 100 subscribers share one Arc'd event.
    let mut subscribers: Vec<_> = (0..100).map(|_| store.subscribe()).collect();
    let before = rss_mib();
    let start = Instant::now();
    store
        .patch_merge(
            ResourceKind::Node,
            "",
            &name,
            &json!({"metadata":{"labels":{"round":"1"}}}),
        )
        .unwrap();
    for subscriber in &mut subscribers {
        subscriber.recv().await.unwrap();
    }
    println!(
        "[fan-out] store: write + 100 subscribers received in {:?} (RSS {before:.0} -> {:.0} MiB)",
        start.elapsed(),
        rss_mib()
    );

    // HTTPS level: 100 watch streams on one client, each its own request.
    let server = serve(store.clone(), ServeOptions::default()).await.unwrap();
    let client = Client::try_from(server.kube_config()).unwrap();
    let api: Api<k8s_openapi::api::core::v1::Node> = Api::all(client);
    let rv = store.resource_version().to_string();
    let mut streams = Vec::new();
    for _ in 0..100 {
        streams.push(
            api.watch(&WatchParams::default().timeout(60), &rv)
                .await
                .unwrap()
                .boxed(),
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_mib();
    let start = Instant::now();
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata":{"labels":{"round":"2"}}})),
    )
    .await
    .unwrap();
    let waits = streams.iter_mut().map(|s| async move {
        while let Some(event) = s.next().await {
            if matches!(event, Ok(WatchEvent::Modified(_))) {
                return;
            }
        }
    });
    futures::future::join_all(waits).await;
    println!(
        "[fan-out] HTTPS: patch + 100 watch streams received (and client-decoded) in {:?} (RSS {before:.0} -> {:.0} MiB)",
        start.elapsed(),
        rss_mib()
    );
    server.shutdown().await;
}
