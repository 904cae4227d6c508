//! The scheduler inside the whole simulation, on paused tokio time: a
//! DaemonSet's next revision asks for more CPU than a full node has left,
//! and either waits there (nothing less important to preempt) or preempts.

use std::time::Duration;

use serde_json::{Value, json};

use crate::model::{Event, Pod};
use crate::sim::embedded::{EmbeddedOptions, Simulation};
use crate::sim::resources::ResourceKind;
use crate::sim::store::{Preconditions, Store, Subresource, WriteOptions};

async fn wait_until(store: &Store, what: &str, mut done: impl FnMut(&Store) -> bool) {
    for _ in 0..1200 {
        if done(store) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

fn pods(store: &Store, namespace: &str) -> Vec<Pod> {
    store
        .list_as::<Pod>(ResourceKind::Pod, Some(namespace))
        .map(|(pods, _)| pods)
        .unwrap_or_default()
}

fn agent_on(store: &Store, node: &str) -> Option<Pod> {
    pods(store, "kube-system")
        .into_iter()
        .find(|p| p.name().starts_with("node-agent-") && p.node_name() == Some(node))
}

fn events_of(store: &Store, pod: &str) -> Vec<Event> {
    store
        .list_as::<Event>(ResourceKind::Event, None)
        .map(|(events, _)| events)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(pod))
        .collect()
}

fn delete_agent_on(store: &Store, node: &str) -> String {
    let pod = agent_on(store, node).expect("an agent on the node");
    store
        .delete(
            ResourceKind::Pod,
            "kube-system",
            pod.name(),
            &Preconditions::default(),
        )
        .expect("deleted");
    pod.uid().to_owned()
}

/// The agent pod created for `node` after `old_uid` went: unbound until the
/// scheduler places it, so found by its pin.
fn replacement_for(store: &Store, node: &str, old_uid: &str) -> Option<Value> {
    store
        .list(ResourceKind::Pod, Some("kube-system"))
        .0
        .into_iter()
        .find(|p| {
            p["metadata"]["uid"] != old_uid
                && p["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("node-agent-"))
                && crate::sim::controller::pod::pinned_node(p) == Some(node)
        })
}

#[tokio::test(start_paused = true)]
async fn a_raised_revision_stays_pending_on_a_full_node_and_runs_on_a_roomy_one() {
    let sim = Simulation::start(&small()).expect("starts");
    let store = sim.store.clone();
    wait_until(&store, "agents ready", |s| agents_ready(s) == 5).await;
    // general-01 (3910m allocatable) gets a workload holding 3 CPUs, as
    // important as the agents (system-node-critical): nothing to preempt.
    create_filler(&store, "system-node-critical").await;
    raise_agent_requests(&store);

    let old = delete_agent_on(&store, "general-01");
    let mut pending = None;
    wait_until(&store, "the replacement marked unschedulable", |s| {
        pending = replacement_for(s, "general-01", &old)
            .filter(|p| p["status"]["conditions"][0]["reason"] == "Unschedulable");
        pending.is_some()
    })
    .await;
    let pending = pending.expect("pending replacement");
    let expected = "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't match Pod's \
                    node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption \
                    victims found for incoming pod, 4 Preemption is not helpful for scheduling.";
    let condition = &pending["status"]["conditions"][0];
    assert_eq!(condition["type"], "PodScheduled");
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["message"], expected);
    assert_eq!(pending["status"]["phase"], "Pending");
    let name = pending["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let failed: Vec<Event> = events_of(&store, &name)
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedScheduling"))
        .collect();
    assert_eq!(failed.len(), 1, "one event, counted on repeats");
    assert_eq!(failed[0].type_.as_deref(), Some("Warning"));
    assert_eq!(failed[0].message.as_deref(), Some(expected));

    let roomy_old = delete_agent_on(&store, "general-02");
    wait_until(&store, "the replacement running on the roomy node", |s| {
        agent_on(s, "general-02").is_some_and(|p| p.uid() != roomy_old && p.is_ready())
    })
    .await;

    // Upstream requeues the pod when a pod on its node goes: it binds then.
    store
        .delete(
            ResourceKind::Pod,
            "default",
            "filler",
            &Preconditions::default(),
        )
        .expect("filler deleted");
    wait_until(
        &store,
        "the pending replacement bound once room was made",
        |s| agent_on(s, "general-01").is_some_and(|p| p.name() == name && p.is_ready()),
    )
    .await;
    sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_raised_revision_preempts_a_lower_priority_workload_then_binds() {
    let sim = Simulation::start(&small()).expect("starts");
    let store = sim.store.clone();
    wait_until(&store, "agents ready", |s| agents_ready(s) == 5).await;
    create_filler(&store, "").await;
    raise_agent_requests(&store);
    let old = delete_agent_on(&store, "general-01");
    let mut nominated = None;
    wait_until(&store, "the replacement nominated", |s| {
        nominated = replacement_for(s, "general-01", &old)
            .filter(|p| p["status"]["nominatedNodeName"] == "general-01");
        nominated.is_some()
    })
    .await;
    let nominated = nominated.expect("nominated replacement");
    let filler = store.get(ResourceKind::Pod, "default", "filler");
    if let Some(filler) = &filler {
        // Still terminating: marked as upstream's preemption marks it.
        let disruption = filler["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "DisruptionTarget")
            .expect("DisruptionTarget");
        assert_eq!(disruption["reason"], "PreemptionByScheduler");
        assert!(filler["metadata"]["deletionTimestamp"].is_string());
    }
    let preempted: Vec<Event> = events_of(&store, "filler")
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("Preempted"))
        .collect();
    assert_eq!(
        preempted[0].message.as_deref(),
        Some(
            format!(
                "Preempted by pod {} on node general-01",
                nominated["metadata"]["uid"].as_str().unwrap_or_default()
            )
            .as_str()
        )
    );
    let name = nominated["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    wait_until(
        &store,
        "the preemptor running where the workload was",
        |s| agent_on(s, "general-01").is_some_and(|p| p.name() == name && p.is_ready()),
    )
    .await;
    let bound = store
        .get(ResourceKind::Pod, "kube-system", &name)
        .expect("preemptor");
    assert!(
        bound["status"].get("nominatedNodeName").is_none(),
        "the binding clears the nomination"
    );
    assert!(store.get(ResourceKind::Pod, "default", "filler").is_none());
    sim.shutdown().await;
}

fn small() -> EmbeddedOptions {
    EmbeddedOptions {
        scenario: Some("small".to_owned()),
        ..EmbeddedOptions::default()
    }
}

fn agents_ready(store: &Store) -> usize {
    pods(store, "kube-system")
        .iter()
        .filter(|p| p.name().starts_with("node-agent-") && p.is_ready())
        .count()
}

/// A workload on general-01 (3910m allocatable) holding 3 CPUs, of the
/// priority class `class` (none when empty).
async fn create_filler(store: &Store, class: &str) {
    let mut filler = json!({"metadata": {"name": "filler", "namespace": "default"},
           "spec": {"nodeSelector": {"kubernetes.io/hostname": "general-01"},
                    "containers": [{"name": "c", "image": "filler:1",
                                    "resources": {"requests": {"cpu": "3"}}}]}});
    if !class.is_empty() {
        filler["spec"]["priorityClassName"] = json!(class);
    }
    store
        .create(ResourceKind::Pod, filler)
        .expect("filler created");
    wait_until(store, "filler running", |s| {
        pods(s, "default").iter().any(Pod::is_ready)
    })
    .await;
}

/// node-agent's next revision requests a whole CPU.
fn raise_agent_requests(store: &Store) {
    store
        .modify_with(
            ResourceKind::DaemonSet,
            "kube-system",
            "node-agent",
            Subresource::Main,
            WriteOptions::default(),
            |ds| {
                let mut next = ds.clone();
                next["spec"]["template"]["spec"]["containers"][0]["resources"] =
                    json!({"requests": {"cpu": "1"}});
                Ok(next)
            },
        )
        .expect("requests raised");
}

/// The `capacity` scenario's traps, played out: after the old agent pod goes,
/// the raised revision waits on a full general node (web and cache outrank
/// it) and on the node whose port 9100 is held, runs on a roomy node, and
/// preempts the low-priority batch pod on a batch node.
#[tokio::test(start_paused = true)]
async fn capacity_scenario_traps_play_out_after_deletes() {
    let options = EmbeddedOptions {
        scenario: Some("capacity".to_owned()),
        ..EmbeddedOptions::default()
    };
    let sim = Simulation::start(&options).expect("starts");
    let store = sim.store.clone();
    wait_until(&store, "agents and batch ready", |s| {
        agents_ready(s) >= 11
            && pods(s, "default")
                .iter()
                .any(|p| p.name() == "batch-batch-01-1" && p.is_ready())
    })
    .await;
    let nodes = ["general-01", "general-03", "general-04", "batch-01"];
    let old: Vec<String> = nodes.iter().map(|n| delete_agent_on(&store, n)).collect();
    let unschedulable = |s: &Store, node: &str, old: &str| {
        replacement_for(s, node, old)
            .filter(|p| p["status"]["conditions"][0]["reason"] == "Unschedulable")
            .map(|p| p["status"]["conditions"][0]["message"].clone())
    };
    wait_until(&store, "the traps sprung", |s| {
        unschedulable(s, "general-01", &old[0]).is_some()
            && unschedulable(s, "general-03", &old[1]).is_some()
            && agent_on(s, "general-04").is_some_and(|p| p.uid() != old[2] && p.is_ready())
            && agent_on(s, "batch-01").is_some_and(|p| p.uid() != old[3] && p.is_ready())
    })
    .await;
    assert_eq!(
        unschedulable(&store, "general-01", &old[0]).unwrap_or_default(),
        "0/12 nodes are available: 1 Insufficient cpu, 11 node(s) didn't match Pod's node \
         affinity/selector. preemption: 0/12 nodes are available: 1 No preemption victims \
         found for incoming pod, 11 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        unschedulable(&store, "general-03", &old[1]).unwrap_or_default(),
        "0/12 nodes are available: 1 node(s) didn't have free ports for the requested pod \
         ports, 11 node(s) didn't match Pod's node affinity/selector. preemption: 0/12 nodes \
         are available: 1 No preemption victims found for incoming pod, 11 Preemption is not \
         helpful for scheduling."
    );
    assert!(
        events_of(&store, "batch-batch-01-1")
            .iter()
            .any(|e| e.reason.as_deref() == Some("Preempted")),
        "the batch pod was preempted for the agent"
    );
    sim.shutdown().await;
}

/// A pod created with `spec.nodeName` skips the scheduler: the kubelet
/// rejects it when the node lacks room (upstream `predicateAdmitHandler`).
#[tokio::test(start_paused = true)]
async fn the_kubelet_rejects_a_pod_bound_past_its_nodes_room() {
    let sim = Simulation::start(&small()).expect("starts");
    let store = sim.store.clone();
    wait_until(&store, "agents ready", |s| agents_ready(s) == 5).await;
    store
        .create(
            ResourceKind::Pod,
            json!({"metadata": {"name": "greedy", "namespace": "default"},
                   "spec": {"nodeName": "general-01",
                            "containers": [{"name": "c", "image": "greedy:1",
                                            "resources": {"requests": {"cpu": "5"}}}]}}),
        )
        .expect("created");
    let mut rejected = None;
    wait_until(&store, "the pod rejected", |s| {
        rejected = s
            .get(ResourceKind::Pod, "default", "greedy")
            .filter(|p| p["status"]["phase"] == "Failed");
        rejected.is_some()
    })
    .await;
    let rejected = rejected.expect("rejected pod");
    assert_eq!(rejected["status"]["reason"], "OutOfcpu");
    let message = rejected["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "Pod was rejected: Node didn't have enough resource: cpu, requested: 5000, used: "
        ),
        "{message}"
    );
    assert!(message.ends_with(", capacity: 3910"), "{message}");
    let events = events_of(&store, "greedy");
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("OutOfcpu")
                && e.type_.as_deref() == Some("Warning")),
        "{events:?}"
    );
    sim.shutdown().await;
}
