//! Expiring Events (`--event-ttl`, on for rehearsal members) adds work to a
//! simulation: a task that wakes an hour after each Event write and deletes
//! it, with a DELETED watch event every watcher takes in. It must not move
//! anything else: two embedded clusters loaded alike, one expiring Events
//! and one not, replace their daemon pods twice (the second time after the
//! first round's Events expired) and every pod is created, scheduled and
//! Ready at the same simulated instants in both. Own process: it switches
//! the clock to simulated time, as a rehearsal does.

use std::time::Duration;

use rollcall::sim::embedded::{EmbeddedOptions, Simulation};
use rollcall::sim::event_ttl::UPSTREAM_EVENT_TTL;
use rollcall::sim::resources::ResourceKind;
use rollcall::sim::store::Store;

mod common;
use common::pod_timeline::{replace_daemon_pods, timeline};

fn member(event_ttl: Option<Duration>) -> Simulation {
    Simulation::start(&EmbeddedOptions {
        scenario: Some("small".to_owned()),
        seed: Some(1),
        sync_window: Duration::from_millis(500),
        event_ttl,
        ..EmbeddedOptions::default()
    })
    .expect("the small scenario starts")
}

fn events(store: &Store) -> usize {
    store.list_objects(ResourceKind::Event, None).0.len()
}

#[tokio::test(start_paused = true)]
async fn expiring_events_moves_no_pod_transition() {
    rollcall::clock::simulate("2026-01-01T00:00:00Z".parse().expect("timestamp"));
    let kept = member(None);
    let expiring = member(Some(UPSTREAM_EVENT_TTL));
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(timeline(&kept.store), timeline(&expiring.store));
    let replaced = replace_daemon_pods(&kept.store);
    assert_eq!(replace_daemon_pods(&expiring.store), replaced);
    assert!(replaced > 0, "the small scenario runs node-agent pods");
    // Past the first round's hour: its Events expire in one member only.
    tokio::time::sleep(Duration::from_secs(5400)).await;
    let first_round_events = events(&kept.store);
    assert!(
        events(&expiring.store) < first_round_events,
        "expired: {} of {first_round_events} left",
        events(&expiring.store)
    );
    replace_daemon_pods(&kept.store);
    replace_daemon_pods(&expiring.store);
    tokio::time::sleep(Duration::from_secs(1800)).await;
    let after = timeline(&kept.store);
    assert!(after.iter().any(|(_, _, _, ready)| !ready.is_empty()));
    assert_eq!(after, timeline(&expiring.store));
    kept.shutdown().await;
    expiring.shutdown().await;
}
