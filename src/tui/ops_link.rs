//! Wires the console to the rollout writes: starts the one effects task (the
//! [`Executor`], single flight) and the RBAC pre-check, and merges their
//! results into one channel of [`OpsEvent`]s for the event loop.

use tokio::sync::mpsc;

use super::ops_keys::OpsEvent;
use crate::ops::rbac;
use crate::ops::write::{Executor, WriteRequest, spawn_effects};

/// The event loop's ends of the effects task.
#[derive(Debug)]
pub struct OpsLink {
    /// Numbered writes to run, in order.
    pub writes: mpsc::UnboundedSender<(u64, WriteRequest)>,
    /// Results and the RBAC answers.
    pub events: mpsc::UnboundedReceiver<OpsEvent>,
}

/// Starts the effects task and the RBAC check for `namespace`.
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
    if let Some(namespace) = namespace {
        tokio::spawn(async move {
            let permissions = rbac::check(&client, &namespace).await;
            let _ = events_tx.send(OpsEvent::Permissions(permissions));
        });
    }
    OpsLink { writes, events }
}
