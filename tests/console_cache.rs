//! The console's cache fed with watcher events from `stream::iter`, no server:
//! relists swap in atomically, pods index by node, moves and deletes dirty the
//! right nodes, events stay bounded, stream errors mark the data stale.

use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::watcher::Event;
use rollcall::cluster::cache::{Cache, WatchUpdate};
use rollcall::cluster::status::{StreamKind, StreamState};
use rollcall::cluster::store::EVENTS_PER_OBJECT;
use rollcall::cluster::watch::Shared;
use rollcall::model::{self, InvolvedObject, Meta, Node, Pod, PodSpec, Time};

fn at(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_800_000_000 + seconds).expect("time in range")
}

/// A node as the watch decodes it from the API's JSON (managed fields and
/// annotations included on the wire).
fn node(name: &str, pool: &str) -> Node {
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": name,
            "labels": {"node-pool": pool},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "managedFields": [{"manager": "kubelet", "operation": "Update"}]
        }
    }))
    .expect("a node decodes")
}

fn pod(name: &str, node: &str) -> Pod {
    Pod {
        metadata: Meta {
            name: Some(name.into()),
            namespace: Some("kube-system".into()),
            ..Meta::default()
        },
        spec: PodSpec {
            node_name: Some(node.into()),
            containers: model::Few::new(),
            ..PodSpec::default()
        },
        ..Pod::default()
    }
}

fn pod_event(name: &str, pod: &str, seconds: i64) -> model::Event {
    model::Event {
        metadata: Meta {
            name: Some(name.into()),
            namespace: Some("kube-system".into()),
            ..Meta::default()
        },
        involved_object: InvolvedObject {
            kind: Some("Pod".into()),
            namespace: Some("kube-system".into()),
            name: Some(pod.into()),
            uid: None,
        },
        reason: Some(format!("Reason{seconds}")),
        last_timestamp: Some(Time(at(seconds))),
        ..model::Event::default()
    }
}

/// Feeds updates through the writer's step, as the watch task does.
async fn feed(shared: &Shared, updates: Vec<WatchUpdate>) {
    futures::stream::iter(updates)
        .for_each(|update| {
            shared.apply(update, at(0));
            futures::future::ready(())
        })
        .await;
}

fn names(cache: &Cache) -> Vec<String> {
    let mut names: Vec<String> = cache.nodes().map(|n| n.name().to_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn relist_is_swapped_in_only_when_complete() {
    let shared = Arc::new(Shared::default());
    shared.lock().stream_started(StreamKind::Nodes);
    feed(
        &shared,
        vec![
            WatchUpdate::Node(Event::Init),
            WatchUpdate::Node(Event::InitApply(node("a", "x"))),
            WatchUpdate::Node(Event::InitApply(node("b", "x"))),
        ],
    )
    .await;
    {
        let cache = shared.lock();
        assert!(names(&cache).is_empty(), "half a list must not be shown");
        assert_eq!(cache.count(StreamKind::Nodes), 2, "progress is counted");
        assert_eq!(
            cache.streams()[&StreamKind::Nodes].state(),
            StreamState::Loading
        );
    }
    feed(&shared, vec![WatchUpdate::Node(Event::InitDone)]).await;
    // The notification is payload-free and coalesced: one wake-up for all of it.
    shared.changed().await;
    {
        let mut cache = shared.lock();
        assert_eq!(names(&cache), ["a", "b"]);
        assert_eq!(
            cache.streams()[&StreamKind::Nodes].state(),
            StreamState::Live
        );
        assert!(cache.take_changes().all_nodes);
        let a = serde_json::to_value(cache.node("a").unwrap()).unwrap();
        assert!(
            a["metadata"].get("managedFields").is_none()
                && a["metadata"].get("annotations").is_none(),
            "managedFields and annotations are not kept: {a}"
        );
    }

    // A relist after a 410 keeps showing the old data until the new list is done.
    feed(
        &shared,
        vec![
            WatchUpdate::Node(Event::Init),
            WatchUpdate::Node(Event::InitApply(node("c", "y"))),
        ],
    )
    .await;
    assert_eq!(names(&shared.lock()), ["a", "b"]);
    assert_eq!(
        shared.lock().streams()[&StreamKind::Nodes].state(),
        StreamState::Resyncing
    );
    feed(&shared, vec![WatchUpdate::Node(Event::InitDone)]).await;
    assert_eq!(names(&shared.lock()), ["c"]);
}

#[tokio::test]
async fn pod_moves_and_deletes_dirty_exactly_the_nodes_involved() {
    let shared = Shared::default();
    feed(
        &shared,
        vec![
            WatchUpdate::Node(Event::Apply(node("a", "x"))),
            WatchUpdate::Node(Event::Apply(node("b", "x"))),
            WatchUpdate::Pod(Event::Apply(pod("p1", "a"))),
        ],
    )
    .await;
    let mut cache = shared.lock();
    assert_eq!(cache.pods_on("a").len(), 1);
    cache.take_changes();
    cache.apply(WatchUpdate::Pod(Event::Apply(pod("p1", "b"))), at(1));
    let changes = cache.take_changes();
    let mut dirty: Vec<_> = changes.nodes.into_iter().collect();
    dirty.sort();
    assert_eq!(dirty, ["a", "b"]);
    assert!(!changes.all_nodes);
    assert!(cache.pods_on("a").is_empty());
    assert_eq!(cache.pods_on("b")[0].name(), "p1");
    cache.apply(WatchUpdate::Pod(Event::Delete(pod("p1", "b"))), at(2));
    assert_eq!(
        cache.take_changes().nodes.into_iter().collect::<Vec<_>>(),
        ["b"]
    );
    assert!(cache.pods_on("b").is_empty());
}

#[tokio::test]
async fn events_dirty_the_pods_node_and_stay_bounded() {
    let shared = Shared::default();
    feed(
        &shared,
        vec![WatchUpdate::Pod(Event::Apply(pod("p1", "a")))],
    )
    .await;
    shared.lock().take_changes();
    let events: Vec<WatchUpdate> = (0..12)
        .map(|i| WatchUpdate::PodEvent(Event::Apply(pod_event(&format!("e{i}"), "p1", i))))
        .collect();
    feed(&shared, events).await;
    let mut cache = shared.lock();
    assert_eq!(
        cache.take_changes().nodes.into_iter().collect::<Vec<_>>(),
        ["a"]
    );
    let kept = cache.pod_events("kube-system/p1");
    assert_eq!(kept.len(), EVENTS_PER_OBJECT);
    assert_eq!(kept[0].reason.as_deref(), Some("Reason11"), "newest first");
    assert_eq!(cache.count(StreamKind::PodEvents), EVENTS_PER_OBJECT);
}

#[tokio::test]
async fn stream_errors_mark_data_stale_until_the_next_event() {
    let shared = Shared::default();
    feed(
        &shared,
        vec![
            WatchUpdate::Node(Event::Init),
            WatchUpdate::Node(Event::InitDone),
            WatchUpdate::Error(StreamKind::Nodes, "connection refused".into()),
        ],
    )
    .await;
    let state = shared.lock().streams()[&StreamKind::Nodes].state();
    assert_eq!(
        state,
        StreamState::Reconnecting {
            error: "connection refused".into(),
            since: at(0)
        }
    );
    feed(
        &shared,
        vec![WatchUpdate::Node(Event::Apply(node("a", "x")))],
    )
    .await;
    assert_eq!(
        shared.lock().streams()[&StreamKind::Nodes].state(),
        StreamState::Live
    );
}

#[tokio::test]
async fn daemonset_status_updates_do_not_recompute_every_row() {
    let shared = Shared::default();
    let mut ds = model::DaemonSet::default();
    ds.metadata.name = Some("agent".into());
    ds.metadata.namespace = Some("kube-system".into());
    feed(
        &shared,
        vec![WatchUpdate::DaemonSet(Event::Apply(ds.clone()))],
    )
    .await;
    let mut cache = shared.lock();
    assert!(
        cache.take_changes().all_nodes,
        "a new DaemonSet recomputes every row"
    );
    let mut status = ds.clone();
    status.status = Some(k8s_openapi::api::apps::v1::DaemonSetStatus {
        number_ready: 3,
        ..Default::default()
    });
    cache.apply(WatchUpdate::DaemonSet(Event::Apply(status)), at(1));
    let changes = cache.take_changes();
    assert!(changes.daemonsets && !changes.all_nodes, "{changes:?}");
    let mut spec = ds;
    spec.spec = Some(k8s_openapi::api::apps::v1::DaemonSetSpec {
        min_ready_seconds: Some(10),
        ..Default::default()
    });
    cache.apply(WatchUpdate::DaemonSet(Event::Apply(spec)), at(2));
    assert!(cache.take_changes().all_nodes, "a spec change does");
}

#[test]
fn stalls_throttling_and_bookmarks_drive_the_shown_state() {
    let mut cache = Cache::new();
    cache.apply(WatchUpdate::Node(Event::Init), at(0));
    cache.apply(WatchUpdate::Node(Event::InitDone), at(0));
    cache.apply(
        WatchUpdate::Stalled(StreamKind::Nodes, std::time::Duration::from_secs(7)),
        at(10),
    );
    match cache.streams()[&StreamKind::Nodes].state() {
        StreamState::Reconnecting { error, since } => {
            assert!(error.contains("stalled"), "{error}");
            assert_eq!(since, at(3), "stale since the last delivery");
        }
        other => panic!("a stall is not live: {other:?}"),
    }
    // The restart re-lists: still stale until the list completes.
    cache.apply(WatchUpdate::Node(Event::Init), at(11));
    assert!(matches!(
        cache.streams()[&StreamKind::Nodes].state(),
        StreamState::Reconnecting { .. }
    ));
    cache.apply(WatchUpdate::Node(Event::InitDone), at(11));
    assert_eq!(
        cache.streams()[&StreamKind::Nodes].state(),
        StreamState::Live
    );
    cache.apply(
        WatchUpdate::Throttled(StreamKind::Nodes, std::time::Duration::from_secs(95)),
        at(20),
    );
    assert_eq!(
        cache.streams()[&StreamKind::Nodes].state(),
        StreamState::Throttled {
            retry_at: at(115),
            since: at(20)
        }
    );
    // A bookmark is proof of life: it clears the badge.
    cache.apply(WatchUpdate::Alive(StreamKind::Nodes), at(21));
    assert_eq!(
        cache.streams()[&StreamKind::Nodes].state(),
        StreamState::Live
    );
}

#[test]
fn a_daemonset_back_with_another_uid_and_no_delete_means_relist_everything() {
    let mut cache = Cache::new();
    let mut ds = model::DaemonSet::default();
    ds.metadata.name = Some("agent".into());
    ds.metadata.namespace = Some("kube-system".into());
    ds.metadata.uid = Some("uid-1".into());
    cache.apply(WatchUpdate::DaemonSet(Event::Init), at(0));
    cache.apply(WatchUpdate::DaemonSet(Event::InitApply(ds.clone())), at(0));
    cache.apply(WatchUpdate::DaemonSet(Event::InitDone), at(0));
    cache.apply(WatchUpdate::DaemonSet(Event::Apply(ds.clone())), at(1));
    assert_eq!(cache.take_relist(), None, "same UID: nothing to see");
    let mut replaced = ds;
    replaced.metadata.uid = Some("uid-2".into());
    cache.apply(WatchUpdate::DaemonSet(Event::Apply(replaced)), at(2));
    let reason = cache.take_relist().expect("relist everything");
    assert!(reason.contains("new UID"), "{reason}");
    assert!(
        cache
            .notice()
            .is_some_and(|(text, when)| text == reason && when == at(2))
    );
    assert!(
        !matches!(
            cache.streams()[&StreamKind::DaemonSets].state(),
            StreamState::Live
        ),
        "stale until relisted"
    );
}
