//! Events expire as kube-apiserver's `--event-ttl` makes them (default 1 h):
//! each write of an Event (its creation, or the correlator bumping its
//! count) gives it a lease of the TTL, and the Event is deleted when the
//! lease of its last write runs out, with a DELETED watch event, as etcd's
//! lease expiry does. Runs on tokio time, so on a rehearsal's paused clock
//! an Event goes an hour of simulated time after it was last written; a
//! rehearsal of many members no longer keeps every Event of every member.
//!
//! Owns only the expiry; never touches any other kind.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::sim::resources::ResourceKind;
use crate::sim::store::{EventType, Preconditions, Store, StoreEvent, StoredObject, Subscription};
use crate::sim::wake::sleep_until;

/// kube-apiserver's default `--event-ttl`.
pub const UPSTREAM_EVENT_TTL: Duration = Duration::from_secs(3600);

/// The running expiry task.
#[derive(Debug)]
pub struct EventTtlHandle {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl EventTtlHandle {
    /// Stops the task and waits for it.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// One Event write's lease: when it runs out, and the version it covers
/// (the stored version itself, which the store holds anyway while it is
/// current: copies of its namespace and name were a megabyte a rehearsed
/// member).
#[derive(Debug)]
struct Lease {
    expires: Instant,
    version: Arc<StoredObject>,
}

/// Starts expiring the Events of `store` written from now on, `ttl` after
/// their last write.
pub fn spawn(store: &Store, ttl: Duration) -> EventTtlHandle {
    let (stop, stopped) = watch::channel(false);
    // Subscribe before returning, so no Event written after start is missed.
    let changes = store.subscribe();
    let task = tokio::spawn(run(store.clone(), changes, ttl, stopped));
    EventTtlHandle { stop, task }
}

async fn run(
    store: Store,
    mut changes: Subscription,
    ttl: Duration,
    mut stopped: watch::Receiver<bool>,
) {
    // Leases in the order they were taken: all run equally long, so the
    // front is always the next to run out.
    let mut leases: VecDeque<Lease> = VecDeque::new();
    loop {
        let next = leases.front().map(|lease| lease.expires);
        tokio::select! {
            _ = stopped.changed() => return,
            () = sleep_until(next) => expire(&store, &mut leases, Instant::now()),
            batch = changes.next_batch() => {
                if let Ok(batch) = batch {
                    take_leases(&batch, ttl, &mut leases);
                } else {
                    // Fell behind the history: every Event now gets a lease.
                    changes = store.subscribe();
                    lease_all(&store, ttl, &mut leases);
                }
            }
        }
    }
}

/// A lease for every Event the batch created or changed.
fn take_leases(batch: &[Arc<StoreEvent>], ttl: Duration, leases: &mut VecDeque<Lease>) {
    let expires = Instant::now() + ttl;
    for event in batch {
        if event.kind == ResourceKind::Event && event.event_type != EventType::Deleted {
            leases.push_back(Lease {
                expires,
                version: Arc::clone(&event.object),
            });
        }
    }
}

fn lease_all(store: &Store, ttl: Duration, leases: &mut VecDeque<Lease>) {
    let expires = Instant::now() + ttl;
    let (events, _) = store.list_objects(ResourceKind::Event, None);
    for event in events {
        leases.push_back(Lease {
            expires,
            version: event,
        });
    }
}

/// Deletes the Events whose lease ran out by `now`. The delete names the
/// version the lease covers, so an Event written again since (a newer lease
/// behind it) stays.
fn expire(store: &Store, leases: &mut VecDeque<Lease>, now: Instant) {
    while leases.front().is_some_and(|lease| lease.expires <= now) {
        let Some(lease) = leases.pop_front() else {
            return;
        };
        let preconditions = Preconditions {
            uid: None,
            resource_version: Some(lease.version.resource_version.to_string()),
        };
        // Gone already, or written again since: nothing to expire.
        let _ = store.delete(
            ResourceKind::Event,
            &lease.version.key.namespace,
            &lease.version.key.name,
            &preconditions,
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(name: &str, count: u64) -> serde_json::Value {
        json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Pulled", "message": "pulled", "count": count, "type": "Normal"
        })
    }

    fn names(store: &Store) -> Vec<String> {
        let (events, _) = store.list_objects(ResourceKind::Event, None);
        events.iter().map(|e| e.key.name.clone()).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn an_event_goes_a_ttl_after_its_last_write_with_a_deleted_watch_event() {
        let store = Store::new();
        let ttl = Duration::from_secs(3600);
        let expiry = spawn(&store, ttl);
        let mut watch = store.subscribe();
        store.create(ResourceKind::Event, event("a", 1)).unwrap();
        store.create(ResourceKind::Event, event("b", 1)).unwrap();
        tokio::time::sleep(Duration::from_secs(1800)).await;
        // b repeats: the correlator bumps its count, a new lease.
        let mut b = store.get(ResourceKind::Event, "default", "b").unwrap();
        b["count"] = json!(2);
        store.update(ResourceKind::Event, b).unwrap();
        tokio::time::sleep(Duration::from_secs(1799)).await;
        assert_eq!(names(&store), ["a", "b"], "nothing expires early");
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(names(&store), ["b"], "a's hour is up, b was renewed");
        tokio::time::sleep(Duration::from_secs(1800)).await;
        assert!(names(&store).is_empty(), "b's hour from its repeat is up");
        let mut deleted = Vec::new();
        while let Ok(batch) = watch.try_batch() {
            if batch.is_empty() {
                break;
            }
            deleted.extend(
                batch
                    .iter()
                    .filter(|e| e.event_type == EventType::Deleted)
                    .map(|e| e.object.key.name.clone()),
            );
        }
        assert_eq!(deleted, ["a", "b"]);
        expiry.shutdown().await;
    }
}
