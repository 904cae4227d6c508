//! Simulated kubelets (plus the small part of the node lifecycle controller
//! a daemon pod's life needs): pods bound to a node go Pending →
//! ContainerCreating → Running → Ready after scenario delays on tokio time,
//! image rules inject pull failures, crash loops and never-ready containers,
//! deleted pods finish after their grace period, and nodes go NotReady,
//! come back, join and leave on the scenario timeline.
//!
//! Writes only pod status, node objects and Events; it never creates or
//! deletes daemon pods (the controller does) nor binds them (the scheduler,
//! `sim::scheduler`, does).

mod admission;
pub mod clock;
pub mod container_log;
mod evict;
pub mod eviction;
pub mod fleet;
mod intake;
mod lifecycle;
pub mod node_status;
pub mod pod_status;
pub mod pressure;
pub mod rules;
mod timeline;

#[cfg(test)]
mod pressure_tests;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::sim::resources::ResourceKind;
use crate::sim::store::{EventType, Store, StoreEvent, StoredObject};
use crate::sim::wake::sleep_until;
use clock::SimClock;
pub use fleet::{Fleet, KubeletOptions};

/// The running kubelet fleet.
#[derive(Debug)]
pub struct KubeletHandle {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl KubeletHandle {
    /// Stops the kubelets.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Starts the kubelet fleet on the current tokio runtime.
pub fn spawn(store: Store, clock: SimClock, options: KubeletOptions) -> KubeletHandle {
    let (stop, stopped) = watch::channel(false);
    let fleet = Fleet::new(store, clock, options);
    let task = tokio::spawn(run(fleet, stopped));
    KubeletHandle { stop, task }
}

async fn run(mut fleet: Fleet, mut stopped: watch::Receiver<bool>) {
    let mut changes = fleet.store.subscribe();
    let offload = fleet.options.offload;
    fleet = offload.run(fleet, list_all).await.0;
    let start = Instant::now();
    let speed = fleet.options.speed.max(0.001);
    let mut timeline = fleet.options.scenario.timeline.clone();
    timeline.sort_by_key(|entry| entry.at);
    let mut timeline = timeline.into_iter().peekable();
    loop {
        if fleet.anything_due() {
            fleet = offload.run(fleet, take_due_steps).await.0;
        }
        let next_entry = timeline.peek().map(|entry| start + entry.at.div_f64(speed));
        let wake = match (fleet.next_deadline(), next_entry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        tokio::select! {
            () = sleep_until(wake) => {
                while let Some(entry) = timeline.next_if(|e| start + e.at.div_f64(speed) <= Instant::now()) {
                    fleet.apply_timeline(&entry);
                }
            }
            batch = changes.next_batch() => match batch {
                Ok(events) => {
                    if events.iter().any(|e| takes_in(e.kind)) {
                        fleet = offload
                            .run(fleet, move |fleet| events.iter().for_each(|e| apply(fleet, e)))
                            .await
                            .0;
                    }
                }
                Err(err) => {
                    tracing::info!(%err, "kubelets re-listing");
                    changes = fleet.store.subscribe();
                    fleet = offload.run(fleet, list_all).await.0;
                }
            },
            _ = stopped.changed() => return,
        }
    }
}

/// Takes every pod step and eviction due by now.
fn take_due_steps(fleet: &mut Fleet) {
    for key in fleet.due() {
        fleet.fire(&key);
    }
    for (node, pressure) in fleet.due_evictions() {
        fleet.evict_next(&node, pressure);
    }
}

/// Whether [`apply`] acts on changes of `kind` (pods and nodes; the rest,
/// Events above all, pass by).
fn takes_in(kind: ResourceKind) -> bool {
    matches!(kind, ResourceKind::Pod | ResourceKind::Node)
}

/// Learns every node, then every pod (nodes first, so pods find their node).
fn list_all(fleet: &mut Fleet) {
    // Decode one object at a time rather than every object of a kind at once.
    let (nodes, _) = fleet.store.list_objects(ResourceKind::Node, None);
    for node in &nodes {
        fleet.on_node(&node_view(node));
    }
    let (pods, _) = fleet.store.list_objects(ResourceKind::Pod, None);
    for pod in &pods {
        fleet.on_pod(&pod.value());
    }
}

/// The parts of a node the kubelets read (metadata, spec, and of its status
/// the conditions and addresses), as a JSON value. The rest, a real node's
/// ~40 cached images above all, is skipped by the decoder: parsing whole
/// nodes was most of the kubelets' start at 65,000 nodes.
fn node_view(node: &StoredObject) -> Value {
    #[derive(Deserialize)]
    struct NodeView {
        #[serde(default)]
        metadata: Value,
        #[serde(default)]
        spec: Value,
        #[serde(default)]
        status: StatusView,
    }
    #[derive(Default, Deserialize)]
    struct StatusView {
        #[serde(default)]
        conditions: Value,
        #[serde(default)]
        addresses: Value,
    }
    let Ok(view) = node.decode::<NodeView>() else {
        return node.value();
    };
    let status = Map::from_iter([
        ("conditions".to_owned(), view.status.conditions),
        ("addresses".to_owned(), view.status.addresses),
    ]);
    Value::Object(Map::from_iter([
        ("metadata".to_owned(), view.metadata),
        ("spec".to_owned(), view.spec),
        ("status".to_owned(), Value::Object(status)),
    ]))
}

fn apply(fleet: &mut Fleet, event: &Arc<StoreEvent>) {
    // Parse only what the kubelets read (not the Events they and the
    // controller write, nor DaemonSets and revisions).
    let value = || event.object.value();
    match (event.kind, event.event_type) {
        (ResourceKind::Pod, EventType::Deleted) => fleet.on_pod_deleted(&value()),
        (ResourceKind::Pod, _) if fleet.pod_has_news(&event.object) => fleet.on_pod(&value()),
        (ResourceKind::Node, EventType::Deleted) => fleet.on_node_deleted(&value()),
        (ResourceKind::Node, _) => fleet.on_node(&node_view(&event.object)),
        _ => {}
    }
}
