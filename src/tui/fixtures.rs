//! Test-only cluster states for the console: a mid-rollout DaemonSet with an
//! updated node, an old one, a crash-looping pod, a tainted not-eligible node,
//! a cordoned node and a NotReady node; fed through the cache the way the watch
//! task would (initial lists, then events). Times are fixed.

use kube::runtime::watcher;

use crate::cluster::cache::{Cache, WatchUpdate};
use crate::cluster::status::StreamKind;
use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
use crate::model::{DaemonSet, Event, InvolvedObject, Meta, Node, Pod, Time};

/// The instant every fixture is looked at: one hour after the fixture epoch.
pub fn now() -> jiff::Timestamp {
    at(3600)
}

/// Applies a complete initial list of one kind (Init, InitApply.., InitDone).
pub fn list<K>(cache: &mut Cache, wrap: fn(watcher::Event<K>) -> WatchUpdate, objects: Vec<K>) {
    cache.apply(wrap(watcher::Event::Init), now());
    for object in objects {
        cache.apply(wrap(watcher::Event::InitApply(object)), now());
    }
    cache.apply(wrap(watcher::Event::InitDone), now());
}

/// The DaemonSet at revision 2 (image v2), OnDelete, with its status counts.
pub fn agent_v2() -> DaemonSet {
    let mut ds = daemonset("registry.example/agent:v2").on_delete().build();
    if let Some(status) = ds.status.as_mut() {
        status.desired_number_scheduled = 6;
        status.current_number_scheduled = 6;
        status.updated_number_scheduled = Some(3);
        status.number_ready = 5;
        status.number_available = Some(5);
        status.number_misscheduled = 0;
    }
    ds.metadata.creation_timestamp = Some(Time(at(0)));
    ds
}

/// The nodes: six general nodes over two zones and a tainted GPU node.
pub fn nodes() -> Vec<Node> {
    let general = |name: &str, zone: &str| {
        node(name)
            .label("node-pool", "general")
            .label("topology.kubernetes.io/zone", zone)
    };
    vec![
        general("node-01", "zone-a").build(),
        general("node-02", "zone-b").build(),
        general("node-03", "zone-a").build(),
        general("node-04", "zone-b").cordoned().build(),
        general("node-05", "zone-a").not_ready().build(),
        general("node-06", "zone-b").build(),
        node("gpu-01")
            .label("node-pool", "gpu")
            .label("topology.kubernetes.io/zone", "zone-a")
            .taint("dedicated", "gpu", "NoSchedule")
            .build(),
    ]
}

/// The daemon pods: r2 on node-01/02 (ready) and node-03 (crash looping),
/// r1 on node-04/05/06 (node-05's pod is not ready: its node is NotReady).
pub fn pods() -> Vec<Pod> {
    vec![
        pod("agent-n1new", "node-01", "h2")
            .created(3000)
            .ready_since(3010)
            .build(),
        pod("agent-n2new", "node-02", "h2")
            .created(3100)
            .ready_since(3110)
            .build(),
        pod("agent-n3new", "node-03", "h2")
            .created(3200)
            .phase("Running")
            .waiting("CrashLoopBackOff", 4)
            .build(),
        pod("agent-n4old", "node-04", "h1")
            .created(60)
            .ready_since(70)
            .build(),
        pod("agent-n5old", "node-05", "h1")
            .created(60)
            .running_not_ready(70)
            .build(),
        pod("agent-n6old", "node-06", "h1")
            .created(60)
            .ready_since(70)
            .build(),
    ]
}

/// An event about an object.
pub fn event(
    name: &str,
    kind: &str,
    object: &str,
    reason: &str,
    message: &str,
    seconds: i64,
) -> Event {
    Event {
        metadata: Meta {
            name: Some(name.into()),
            namespace: Some(
                if kind == "Node" {
                    "default"
                } else {
                    "kube-system"
                }
                .into(),
            ),
            ..Meta::default()
        },
        involved_object: InvolvedObject {
            kind: Some(kind.to_owned()),
            namespace: (kind != "Node").then(|| "kube-system".to_owned()),
            name: Some(object.to_owned()),
            uid: None,
        },
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        type_: Some(
            if reason == "BackOff" || reason == "NodeNotReady" {
                "Warning"
            } else {
                "Normal"
            }
            .to_owned(),
        ),
        count: Some(1),
        last_timestamp: Some(Time(at(seconds))),
        ..Event::default()
    }
}

/// An empty cache with the streams the grid waits for started (nodes,
/// DaemonSets, pods, revisions), as the watch task starts them.
pub fn grid_streams_started() -> Cache {
    let mut cache = Cache::new();
    for kind in [
        StreamKind::Nodes,
        StreamKind::DaemonSets,
        StreamKind::Pods,
        StreamKind::Revisions,
    ] {
        cache.stream_started(kind);
    }
    cache
}

/// The cache mid-rollout, every stream listed.
pub fn mid_rollout() -> Cache {
    let mut cache = started();
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let v2 = agent_v2();
    list(&mut cache, WatchUpdate::Node, nodes());
    list(&mut cache, WatchUpdate::DaemonSet, vec![v2.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)],
    );
    list(&mut cache, WatchUpdate::Pod, pods());
    list(
        &mut cache,
        WatchUpdate::PodEvent,
        vec![event(
            "agent-n3new.1",
            "Pod",
            "agent-n3new",
            "BackOff",
            "Back-off restarting failed container main",
            3500,
        )],
    );
    list(
        &mut cache,
        WatchUpdate::NodeEvent,
        vec![event(
            "node-05.1",
            "Node",
            "node-05",
            "NodeNotReady",
            "Node node-05 status is now: NodeNotReady",
            3300,
        )],
    );
    cache
}

/// An empty cache with every stream of a focused console started.
pub fn started() -> Cache {
    let mut cache = Cache::new();
    for kind in [
        StreamKind::Nodes,
        StreamKind::NodeEvents,
        StreamKind::DaemonSets,
        StreamKind::Pods,
        StreamKind::Revisions,
        StreamKind::PodEvents,
    ] {
        cache.stream_started(kind);
    }
    cache
}

/// `now() + seconds`.
pub fn at_offset(seconds: i64) -> jiff::Timestamp {
    at(3600 + seconds)
}
