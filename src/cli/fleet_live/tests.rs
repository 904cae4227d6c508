//! The fleet side against an embedded cluster: the matrix watches a
//! cluster without its node-usage stream (six streams, no fit), and the
//! console opened from the matrix gets fit and usage as the console
//! started on its own has them.

use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;

use super::start_headless;
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::fleet::ClusterChoice;
use crate::cluster::cache::Cache;
use crate::cluster::status::StreamKind;
use crate::cluster::watch::{self, Shared, WatchHandle};
use crate::engine::fit::Fit;
use crate::fleet::live::row::Link;
use crate::model::{DsRef, Target};
use crate::ops::snapshot::Snapshot;
use crate::ops::status::StatusReport;
use crate::tui::fleet::{FleetEvent, FleetRequest};

const BOUND: Duration = Duration::from_secs(20);

/// Every node's fit as `status` reports it from `cache`.
fn fits(cache: &Cache, target: &Target) -> Vec<(String, Option<Fit>)> {
    let snapshot = Snapshot::from_cache(cache, target).expect("the daemonset is cached");
    let report = StatusReport::build(&snapshot, jiff::Timestamp::now()).expect("a report");
    report.nodes.into_iter().map(|n| (n.name, n.fit)).collect()
}

/// Waits until `ready` holds of `shared`'s cache.
async fn until(shared: &Shared, ready: impl Fn(&Cache) -> bool) {
    tokio::time::timeout(BOUND, async {
        while !ready(&shared.lock()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("in time");
}

/// Takes events until the row is live; the watch the screen would keep
/// (with its row builder's hold: dropping it ends the row builder).
async fn live_row(
    events: &mut UnboundedReceiver<FleetEvent>,
) -> ((WatchHandle, tokio::sync::watch::Sender<bool>), bool) {
    let mut watch = None;
    let mut simulated = false;
    tokio::time::timeout(BOUND, async {
        loop {
            match events.recv().await.expect("the fleet side runs") {
                FleetEvent::Attached {
                    watch: handle,
                    hold,
                    ..
                } => watch = Some((handle, hold)),
                FleetEvent::Connected {
                    simulated: said, ..
                } => simulated = said,
                FleetEvent::Observed { observation, .. }
                    if observation.link == Link::Live && observation.view.is_some() =>
                {
                    return;
                }
                FleetEvent::Link { link, .. } => panic!("{link:?}"),
                _ => {}
            }
        }
    })
    .await
    .expect("the row goes live");
    (watch.expect("attached before live"), simulated)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_matrix_defers_node_usage_until_the_console_opens_then_fits_as_the_console() {
    let cluster = crate::sim::embedded::start(crate::sim::embedded::EmbeddedOptions {
        scenario: Some("capacity".to_owned()),
        ..crate::sim::embedded::EmbeddedOptions::default()
    })
    .await
    .expect("the embedded cluster starts");
    let target =
        crate::sim::embedded::member::focus(&cluster.simulation.scenario).expect("a daemonset");
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("config");
    cluster.server.write_kubeconfig(&path).expect("kubeconfig");
    let args = ClusterArgs {
        kubeconfig: Some(path),
        ..ClusterArgs::default()
    };
    let choice = ClusterChoice {
        contexts: vec!["rollcall-sim".to_owned()],
        ..ClusterChoice::default()
    };
    let daemonset = DsRef {
        namespace: Some(target.namespace.clone()),
        name: target.name.clone(),
    };
    let (_, mut events, requests) = start_headless(&args, &choice, daemonset).expect("starts");
    let ((matrix_watch, _hold), simulated) = live_row(&mut events).await;
    assert!(simulated, "the embedded server says what it is");
    {
        let cache = matrix_watch.shared.lock();
        assert!(!cache.streams().contains_key(&StreamKind::NodeUsage));
        assert_eq!(cache.streams().len(), 6, "{:?}", cache.streams().keys());
        assert!(!cache.usage_known());
    }

    requests
        .send(FleetRequest::Open(0))
        .expect("the fleet side runs");
    until(&matrix_watch.shared, Cache::usage_known).await;

    // The console started on its own, with its usage from the start.
    let connection = crate::cluster::connect::connection_from_config(
        cluster.server.kube_config(),
        "embedded".to_owned(),
        None,
        crate::cluster::wire::Wire::default(),
        crate::cluster::compression::Compression::default(),
    )
    .expect("a connection");
    let own = watch::spawn(connection.watch_client, None, Some(target.clone()));
    until(&own.shared, |cache| {
        cache.usage_known() && Snapshot::from_cache(cache, &target).is_some()
    })
    .await;
    until(&own.shared, |cache| {
        cache
            .streams()
            .values()
            .all(crate::cluster::status::StreamStatus::settled)
    })
    .await;
    let from_matrix = fits(&matrix_watch.shared.lock(), &target);
    let on_its_own = fits(&own.shared.lock(), &target);
    assert_eq!(from_matrix, on_its_own);
    assert!(
        from_matrix
            .iter()
            .any(|(_, fit)| fit.as_ref().is_some_and(|f| !f.fits)),
        "the capacity scenario has nodes the pod does not fit: {from_matrix:?}"
    );
    drop(own);
    drop(matrix_watch);
    cluster.shutdown().await;
}
