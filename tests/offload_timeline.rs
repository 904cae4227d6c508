//! A rehearsal's members run their controller, scheduler and kubelets on
//! the blocking pool (`sim::offload`), so a fleet's work of one simulated
//! instant uses every core. Where the work runs must not move anything:
//! two embedded clusters loaded alike, as rehearsal members are (a sync
//! window, the kubelets' one-second relist), one doing its work inline and
//! one on the blocking pool, replace their daemon pods twice and every pod
//! is created, scheduled and Ready at the same simulated instants in both.
//! Own process: it switches the clock to simulated time, as a rehearsal does.

use std::time::Duration;

use rollcall::sim::embedded::{EmbeddedOptions, Simulation};
use rollcall::sim::offload::Offload;

mod common;
use common::pod_timeline::{replace_daemon_pods, timeline};

fn member(offload: Offload) -> Simulation {
    Simulation::start(&EmbeddedOptions {
        scenario: Some("small".to_owned()),
        seed: Some(1),
        sync_window: Duration::from_millis(500),
        kubelet_relist: Some(Duration::from_secs(1)),
        offload,
        ..EmbeddedOptions::default()
    })
    .expect("the small scenario starts")
}

#[tokio::test(start_paused = true)]
async fn offloaded_work_moves_no_pod_transition() {
    rollcall::clock::simulate("2026-01-01T00:00:00Z".parse().expect("timestamp"));
    let inline = member(Offload::Inline);
    let offloaded = member(Offload::Blocking);
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(timeline(&inline.store), timeline(&offloaded.store));
    for round in 0..2 {
        let replaced = replace_daemon_pods(&inline.store);
        assert_eq!(replace_daemon_pods(&offloaded.store), replaced);
        assert!(replaced > 0, "the small scenario runs node-agent pods");
        tokio::time::sleep(Duration::from_secs(900)).await;
        let after = timeline(&inline.store);
        // The small scenario's edge pool never gets Ready; the rest does.
        assert!(
            after.iter().any(|(_, _, _, ready)| !ready.is_empty()),
            "round {round}: replacements are Ready: {after:?}"
        );
        assert_eq!(after, timeline(&offloaded.store), "round {round}");
    }
    inline.shutdown().await;
    offloaded.shutdown().await;
}
