//! Wires the console to the rollout writes: starts the one effects task (the
//! [`Executor`], single flight) and the RBAC pre-check (re-run whenever the
//! console focuses a DaemonSet in another namespace), and merges their results
//! into one channel of [`OpsEvent`]s for the event loop.

use tokio::sync::mpsc;

use super::ops::OpsEvent;
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
}

impl OpsLink {
    /// Asks for the RBAC answers in `namespace` (they arrive as an event).
    pub fn check_namespace(&self, namespace: &str) {
        // The checker only stops when the link is dropped.
        let _ = self.namespaces.send(namespace.to_owned());
    }
}

/// Starts the effects task and the RBAC checker (first for `namespace`).
pub fn start(client: kube::Client, executor: Executor, namespace: Option<String>) -> OpsLink {
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
    };
    if let Some(namespace) = namespace {
        link.check_namespace(&namespace);
    }
    link
}
