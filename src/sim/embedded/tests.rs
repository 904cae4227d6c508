//! The simulation without HTTP, on paused tokio time: the controller and the
//! kubelets drive the small scenario, and the tests assert on store state.

use std::time::Duration;

use k8s_openapi::api::apps::v1::DaemonSetStatus;
use serde_json::json;

use super::*;
use crate::model::{DaemonSet, Event, Pod};
use crate::sim::resources::ResourceKind;
use crate::sim::store::{Subresource, WriteOptions};

fn options() -> EmbeddedOptions {
    EmbeddedOptions {
        scenario: Some("small".to_owned()),
        speed: 1.0,
        ..EmbeddedOptions::default()
    }
}

/// Advances paused time in small steps until `done` holds (at most `limit`).
async fn wait_until(
    sim: &Simulation,
    limit: Duration,
    what: &str,
    mut done: impl FnMut(&Store) -> bool,
) {
    let step = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    while !done(&sim.store) {
        assert!(waited < limit, "timed out waiting for {what}");
        tokio::time::sleep(step).await;
        waited += step;
    }
}

fn status(store: &Store, name: &str) -> DaemonSetStatus {
    store
        .get_as::<DaemonSet>(ResourceKind::DaemonSet, "kube-system", name)
        .ok()
        .flatten()
        .and_then(|ds| ds.status)
        .unwrap_or_default()
}

fn pods(store: &Store, prefix: &str) -> Vec<Pod> {
    store
        .list_as::<Pod>(ResourceKind::Pod, Some("kube-system"))
        .map(|(pods, _)| pods)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.name().starts_with(prefix))
        .collect()
}

fn rolled_out(store: &Store, name: &str, generation: i64) -> bool {
    let s = status(store, name);
    s.observed_generation == Some(generation)
        && s.desired_number_scheduled > 0
        && s.updated_number_scheduled == Some(s.desired_number_scheduled)
        && s.number_available == Some(s.desired_number_scheduled)
}

fn set_image(store: &Store, name: &str, image: &str) {
    store
        .modify_with(
            ResourceKind::DaemonSet,
            "kube-system",
            name,
            Subresource::Main,
            WriteOptions::default(),
            |ds| {
                let mut next = ds.clone();
                next["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
                Ok(next)
            },
        )
        .expect("image updated");
}

#[tokio::test(start_paused = true)]
async fn controller_writes_status_for_the_settled_cluster() {
    let sim = Simulation::start(&options()).expect("starts");
    wait_until(&sim, Duration::from_secs(5), "log-shipper status", |s| {
        rolled_out(s, "log-shipper", 2)
    })
    .await;
    let agent = status(&sim.store, "node-agent");
    assert_eq!(agent.desired_number_scheduled, 5);
    assert_eq!(
        agent.updated_number_scheduled,
        Some(0),
        "OnDelete: revision 2 waits"
    );
    sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn rolling_update_replaces_every_pod_within_max_unavailable() {
    let sim = Simulation::start(&options()).expect("starts");
    wait_until(&sim, Duration::from_secs(5), "settled", |s| {
        rolled_out(s, "log-shipper", 2)
    })
    .await;
    set_image(
        &sim.store,
        "log-shipper",
        "cr.fluentbit.io/fluent/fluent-bit:3.3.0",
    );
    let mut worst_unavailable = 0;
    wait_until(&sim, Duration::from_secs(60), "rollout", |s| {
        let ready = pods(s, "log-shipper-")
            .iter()
            .filter(|p| p.is_ready())
            .count();
        worst_unavailable = worst_unavailable.max(5usize.saturating_sub(ready));
        rolled_out(s, "log-shipper", 3)
    })
    .await;
    assert!(
        worst_unavailable <= 1,
        "maxUnavailable 1, saw {worst_unavailable} unavailable"
    );
    let images: Vec<_> = pods(&sim.store, "log-shipper-")
        .iter()
        .filter_map(|p| p.spec.containers[0].image.clone())
        .collect();
    assert_eq!(images.len(), 5);
    assert!(images.iter().all(|i| i.ends_with(":3.3.0")), "{images:?}");
    sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn on_delete_replaces_a_deleted_pod_at_the_new_revision() {
    let sim = Simulation::start(&options()).expect("starts");
    wait_until(&sim, Duration::from_secs(5), "settled", |s| {
        status(s, "node-agent").number_ready == 5
    })
    .await;
    let victim = pods(&sim.store, "node-agent-")
        .into_iter()
        .find(|p| p.node_name() == Some("general-01"))
        .expect("a pod on general-01");
    sim.store
        .delete(
            ResourceKind::Pod,
            "kube-system",
            victim.name(),
            &crate::sim::store::Preconditions::default(),
        )
        .expect("deleted");
    wait_until(&sim, Duration::from_secs(30), "replacement ready", |s| {
        pods(s, "node-agent-")
            .iter()
            .any(|p| p.node_name() == Some("general-01") && p.uid() != victim.uid() && p.is_ready())
    })
    .await;
    let replacement = pods(&sim.store, "node-agent-")
        .into_iter()
        .find(|p| p.node_name() == Some("general-01"))
        .expect("replacement");
    assert_eq!(
        replacement.spec.containers[0].image.as_deref(),
        Some("registry.example.com/platform/node-agent:1.5.0")
    );
    assert_eq!(
        status(&sim.store, "node-agent").updated_number_scheduled,
        Some(1)
    );
    let reasons = event_reasons(&sim.store, replacement.name());
    for reason in ["Scheduled", "Pulling", "Pulled", "Created", "Started"] {
        assert!(
            reasons.iter().any(|r| r == reason),
            "missing {reason} in {reasons:?}"
        );
    }
    sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn new_image_crash_loops_on_the_edge_pool() {
    let sim = Simulation::start(&options()).expect("starts");
    wait_until(&sim, Duration::from_secs(5), "settled", |s| {
        status(s, "node-agent").number_ready == 5
    })
    .await;
    let victim = pods(&sim.store, "node-agent-")
        .into_iter()
        .find(|p| p.node_name() == Some("edge-01"))
        .expect("a pod on edge-01");
    sim.store
        .delete(
            ResourceKind::Pod,
            "kube-system",
            victim.name(),
            &crate::sim::store::Preconditions::default(),
        )
        .expect("deleted");
    wait_until(&sim, Duration::from_secs(60), "two restarts", |s| {
        pods(s, "node-agent-")
            .iter()
            .any(|p| p.node_name() == Some("edge-01") && p.restarts() >= 2)
    })
    .await;
    let pod = pods(&sim.store, "node-agent-")
        .into_iter()
        .find(|p| p.node_name() == Some("edge-01"))
        .expect("pod");
    assert!(!pod.is_ready());
    assert_eq!(pod.container_problem(), Some("CrashLoopBackOff"));
    assert!(
        event_reasons(&sim.store, pod.name())
            .iter()
            .any(|r| r == "BackOff")
    );
    sim.shutdown().await;
}

fn event_reasons(store: &Store, pod: &str) -> Vec<String> {
    store
        .list_as::<Event>(ResourceKind::Event, Some("kube-system"))
        .map(|(events, _)| events)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(pod))
        .filter_map(|e| e.reason)
        .collect()
}

/// The `capacity` scenario: priorities resolved at admission (workload pods
/// created, agent pods restored), QoS classes set, capacity facts on the
/// nodes, the workload pods brought up by the kubelets, and the pending
/// revision's requests and host port in the DaemonSet's template.
#[tokio::test(start_paused = true)]
async fn capacity_scenario_has_priorities_qos_and_capacity_facts() {
    let sim = Simulation::start(&EmbeddedOptions {
        scenario: Some("capacity".to_owned()),
        speed: 1.0,
        ..EmbeddedOptions::default()
    })
    .expect("starts");
    let pod = |store: &Store, name: &str| {
        store
            .get(ResourceKind::Pod, "default", name)
            .unwrap_or_else(|| panic!("pod {name}"))
    };
    wait_until(&sim, Duration::from_secs(60), "workload pods ready", |s| {
        ["web-general-01-1", "batch-batch-03-1", "trainer-gpu-02-1"]
            .iter()
            .all(|name| {
                s.get_as::<Pod>(ResourceKind::Pod, "default", name)
                    .ok()
                    .flatten()
                    .is_some_and(|p| p.is_ready())
            })
    })
    .await;
    let store = &sim.store;
    let batch = pod(store, "batch-batch-01-1");
    assert_eq!(batch["spec"]["priority"], 100);
    assert_eq!(batch["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(batch["status"]["qosClass"], "Burstable");
    let web = pod(store, "web-general-02-1");
    assert_eq!(web["spec"]["priority"], 100_000);
    // Admission makes web Guaranteed (requests = limits); the kubelet's status
    // writes keep the class (upstream's kubelet never changes it).
    assert_eq!(web["status"]["qosClass"], "Guaranteed");
    assert_eq!(
        pod(store, "legacy-exporter-general-03-1")["spec"]["containers"][0]["ports"][0]["hostPort"],
        9100
    );
    let agents = pods(store, "node-agent-");
    assert_eq!(agents.len(), 12, "one agent pod on every node");
    for agent in &agents {
        let value = store
            .get(ResourceKind::Pod, "kube-system", agent.name())
            .expect("agent pod");
        assert_eq!(value["spec"]["priority"], 10_000, "{}", agent.name());
        assert_eq!(value["status"]["qosClass"], "Burstable");
    }
    let node = |name: &str| store.get(ResourceKind::Node, "", name).expect("node");
    let general = node("general-01");
    assert_eq!(general["status"]["allocatable"]["cpu"], "3910m");
    assert_eq!(general["status"]["allocatable"]["pods"], "58");
    assert_eq!(general["status"]["nodeInfo"]["kubeletVersion"], "v1.31.2");
    assert_eq!(
        node("batch-01")["status"]["nodeInfo"]["kubeletVersion"],
        "v1.32.4"
    );
    assert_eq!(
        node("gpu-01")["status"]["allocatable"]["nvidia.com/gpu"],
        "4"
    );
    assert_eq!(
        node("system-02")["metadata"]["annotations"]["sim.rollcall.dev/memory-pressure"],
        "true"
    );
    let ds = store
        .get(ResourceKind::DaemonSet, "kube-system", "node-agent")
        .expect("node-agent");
    let container = &ds["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["resources"]["requests"]["cpu"], "300m");
    assert_eq!(container["ports"][0]["hostPort"], 9100);
    let classes = store.list(ResourceKind::PriorityClass, None).0;
    assert_eq!(
        classes.len(),
        5,
        "two system classes and the scenario's three"
    );
    sim.shutdown().await;
}
