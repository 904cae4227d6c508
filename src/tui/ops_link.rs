//! Wires the console to the rollout writes: starts the one effects task (the
//! [`Executor`], single flight), the RBAC pre-check (re-run whenever the
//! console focuses a DaemonSet in another namespace) and the fresh reads of a
//! node's pods a run asks for before a timeout fails the node, and merges
//! their results into one channel of [`OpsEvent`]s for the event loop.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::ops::OpsEvent;
use crate::cluster::watch::Shared;
use crate::model::Target;
use crate::ops::rbac;
use crate::ops::write::{Executor, WriteRequest, spawn_effects};

/// The event loop's ends of the effects task.
#[derive(Debug)]
pub struct OpsLink {
    /// Numbered writes to run, in order.
    pub writes: mpsc::UnboundedSender<(u64, WriteRequest)>,
    /// Results and the RBAC answers.
    pub events: mpsc::UnboundedReceiver<OpsEvent>,
    namespaces: mpsc::UnboundedSender<String>,
    reads: mpsc::UnboundedSender<(Target, String)>,
}

impl OpsLink {
    /// Asks for the RBAC answers in `namespace` (they arrive as an event).
    pub fn check_namespace(&self, namespace: &str) {
        // The checker only stops when the link is dropped.
        let _ = self.namespaces.send(namespace.to_owned());
    }

    /// Reads the pods on `node` afresh into the watch cache (the answer
    /// arrives as an event); `false` when the reader is gone.
    pub fn read_pods_on(&self, target: Target, node: String) -> bool {
        self.reads.send((target, node)).is_ok()
    }
}

/// Starts the effects task, the RBAC checker (first for `namespace`) and the
/// fresh reader, which reads into `shared` (the console's watch cache).
pub fn start(
    client: kube::Client,
    executor: Executor,
    namespace: Option<String>,
    shared: Arc<Shared>,
) -> OpsLink {
    let (events_tx, events) = mpsc::unbounded_channel();
    let (write_events_tx, mut write_events) = mpsc::unbounded_channel();
    let writes = spawn_effects(executor, write_events_tx);
    let forward = events_tx.clone();
    tokio::spawn(async move {
        while let Some(event) = write_events.recv().await {
            if forward.send(OpsEvent::Write(Box::new(event))).is_err() {
                break;
            }
        }
    });
    let (reads, mut to_read) = mpsc::unbounded_channel::<(Target, String)>();
    let (reader, read_events) = (client.clone(), events_tx.clone());
    tokio::spawn(async move {
        while let Some((target, node)) = to_read.recv().await {
            let result = crate::ops::fresh_read::read_pods_on(&reader, &shared, &target, &node)
                .await
                .map_err(|err| err.to_string());
            if read_events
                .send(OpsEvent::FreshRead { node, result })
                .is_err()
            {
                break;
            }
        }
    });
    let (namespaces, mut requested) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        while let Some(namespace) = requested.recv().await {
            let permissions = rbac::check(&client, &namespace).await;
            if events_tx.send(OpsEvent::Permissions(permissions)).is_err() {
                break;
            }
        }
    });
    let link = OpsLink {
        writes,
        events,
        namespaces,
        reads,
    };
    if let Some(namespace) = namespace {
        link.check_namespace(&namespace);
    }
    link
}
