//! The embedded cluster under node pressure and sandbox failures, on paused
//! tokio time: an annotated node reports the condition and gets the taint,
//! the kubelet evicts in upstream's order, the DaemonSet controller replaces
//! an evicted daemon pod after a `FailedDaemonPod` event, and a sandbox rule
//! keeps a pod in ContainerCreating.

use std::time::Duration;

use serde_json::{Value, json};

use crate::model::{Event, Node, Pod};
use crate::sim::embedded::{EmbeddedOptions, Simulation};
use crate::sim::resources::ResourceKind;
use crate::sim::store::{Store, Subresource, WriteOptions};

const NODE: &str = "general-01";

fn start(scenario: &str) -> Simulation {
    let options = EmbeddedOptions {
        scenario: Some(scenario.to_owned()),
        ..EmbeddedOptions::default()
    };
    Simulation::start(&options).expect("starts")
}

/// Sleeps paused time in 100 ms steps until `done` (at most `limit`).
async fn settle(store: &Store, limit: Duration, what: &str, done: impl Fn(&Store) -> bool) {
    let started = tokio::time::Instant::now();
    while !done(store) {
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn pods_on(store: &Store, node: &str) -> Vec<Pod> {
    store
        .list_as::<Pod>(ResourceKind::Pod, None)
        .map(|(pods, _)| pods)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.node_name() == Some(node))
        .collect()
}

fn events(store: &Store, reason: &str) -> Vec<Event> {
    store
        .list_as::<Event>(ResourceKind::Event, None)
        .map(|(events, _)| events)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(reason))
        .collect()
}

fn annotate(store: &Store, node: &str, key: &str, value: Option<&str>) {
    store
        .modify_with(
            ResourceKind::Node,
            "",
            node,
            Subresource::Main,
            WriteOptions::default(),
            |n| {
                let mut next = n.clone();
                next["metadata"]["annotations"][key] = value.map_or(Value::Null, |v| json!(v));
                if value.is_none()
                    && let Some(a) = next["metadata"]["annotations"].as_object_mut()
                {
                    a.remove(key);
                }
                Ok(next)
            },
        )
        .expect("annotated");
}

fn node_taints(store: &Store, node: &str) -> Vec<String> {
    store
        .get_as::<Node>(ResourceKind::Node, "", node)
        .ok()
        .flatten()
        .map(|n| {
            n.spec
                .taints
                .iter()
                .map(|t| format!("{}:{}", t.key.as_str(), t.effect.as_str()))
                .collect()
        })
        .unwrap_or_default()
}

/// A bare pod bound to `node`: no requests, so upstream ranks it first.
fn create_pod(store: &Store, name: &str, image: &str) {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": NODE, "containers": [{"name": "main", "image": image}]},
    });
    store.create(ResourceKind::Pod, pod).expect("pod created");
}

fn is_evicted(pod: &Pod) -> bool {
    pod.status.phase.as_deref() == Some("Failed") && pod.status.reason.as_deref() == Some("Evicted")
}

#[tokio::test(start_paused = true)]
async fn memory_pressure_taints_evicts_best_effort_first_and_the_daemon_pod_is_replaced() {
    let sim = start("small");
    let store = &sim.store;
    create_pod(store, "batch", "busybox:1.36");
    settle(store, Duration::from_secs(20), "pods ready", |s| {
        let pods = pods_on(s, NODE);
        pods.len() == 3 && pods.iter().all(Pod::is_ready)
    })
    .await;
    // 200Mi short: the best-effort pod (128Mi) is not enough, one daemon pod
    // (160Mi, 96Mi above its 64Mi request) follows.
    annotate(
        store,
        NODE,
        "sim.rollcall.dev/memory-pressure",
        Some("200Mi"),
    );
    settle(store, Duration::from_secs(3), "taint", |s| {
        node_taints(s, NODE).contains(&"node.kubernetes.io/memory-pressure:NoSchedule".to_owned())
    })
    .await;
    settle(store, Duration::from_secs(10), "two evictions", |s| {
        events(s, "Evicted").len() == 2
    })
    .await;
    let evicted: Vec<String> = events(store, "Evicted")
        .iter()
        .filter_map(|e| e.involved_object.name.clone())
        .collect();
    assert_eq!(evicted[0], "batch", "best effort first: {evicted:?}");
    let message = events(store, "Evicted")[0]
        .message
        .clone()
        .unwrap_or_default();
    assert!(
        message.starts_with(
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: "
        ) && message.contains(
            "Container main was using 128Mi, request is 0, has larger consumption of memory."
        ),
        "{message}"
    );
    let daemon_victim = evicted[1].clone();
    assert!(daemon_victim.starts_with("log-shipper-") || daemon_victim.starts_with("node-agent-"));
    settle(store, Duration::from_secs(10), "daemon pod replaced", |s| {
        let pods = pods_on(s, NODE);
        !pods.iter().any(|p| p.name() == daemon_victim)
            && pods.iter().filter(|p| !is_evicted(p)).count() == 2
    })
    .await;
    let failed = events(store, "FailedDaemonPod");
    assert_eq!(failed.len(), 1, "one FailedDaemonPod event");
    assert_eq!(
        failed[0].message.as_deref(),
        Some(format!("Found failed daemon pod kube-system/{daemon_victim} on node {NODE}, will try to kill it").as_str())
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        events(store, "Evicted").len(),
        2,
        "the round is over once 200Mi is reclaimed"
    );
    assert!(
        pods_on(store, NODE)
            .iter()
            .any(|p| p.name() == "batch" && is_evicted(p)),
        "evicted pods stay Failed"
    );
    annotate(store, NODE, "sim.rollcall.dev/memory-pressure", None);
    settle(store, Duration::from_secs(3), "taint removed", |s| {
        !node_taints(s, NODE)
            .iter()
            .any(|t| t.contains("memory-pressure"))
    })
    .await;
    sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_sandbox_rule_keeps_the_pod_creating_with_repeated_events() {
    let small = include_str!("../../../assets/scenarios/small.yaml");
    let rule = "images:\n  - image: example.com/web:1\n    failure: FailedCreatePodSandBox\n    nodes: [general-01]\n";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sandbox.yaml");
    std::fs::write(&path, small.replacen("images:\n", rule, 1)).expect("scenario written");
    let sim = start(&path.display().to_string());
    let store = &sim.store;
    create_pod(store, "web", "example.com/web:1");
    settle(
        store,
        Duration::from_secs(60),
        "three sandbox failures",
        |s| events(s, "FailedCreatePodSandBox").len() >= 3,
    )
    .await;
    let message = events(store, "FailedCreatePodSandBox")[0]
        .message
        .clone()
        .unwrap_or_default();
    assert!(
        message.starts_with("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \""),
        "{message}"
    );
    let web = store
        .get(ResourceKind::Pod, "default", "web")
        .expect("web pod");
    assert_eq!(web["status"]["phase"], "Pending");
    assert_eq!(
        web["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "ContainerCreating"
    );
    sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn disk_pressure_taints_and_evicts_one_pod_for_ephemeral_storage() {
    let sim = start("small");
    let store = &sim.store;
    settle(store, Duration::from_secs(20), "pods ready", |s| {
        let pods = pods_on(s, "general-03");
        !pods.is_empty() && pods.iter().all(Pod::is_ready)
    })
    .await;
    annotate(
        store,
        "general-03",
        "sim.rollcall.dev/disk-pressure",
        Some("true"),
    );
    settle(store, Duration::from_secs(5), "one eviction", |s| {
        events(s, "Evicted").len() == 1
    })
    .await;
    assert!(
        node_taints(store, "general-03")
            .contains(&"node.kubernetes.io/disk-pressure:NoSchedule".to_owned())
    );
    let message = events(store, "Evicted")[0]
        .message
        .clone()
        .unwrap_or_default();
    assert!(
        message.starts_with("The node was low on resource: ephemeral-storage. Container ")
            && message.contains(
                " was using 1Gi, request is 0, has larger consumption of ephemeral-storage."
            ),
        "{message}"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(events(store, "Evicted").len(), 1, "`true` is one eviction");
    sim.shutdown().await;
}
