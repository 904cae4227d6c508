//! The row cache's incremental blocker against a from-scratch recompute:
//! after random watch events (pods changing health and revision, surge pods,
//! pods stuck terminating, deletions, nodes going NotReady), the blocker the
//! console keeps equals the engine's answer over all rows.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::runtime::watcher;
use proptest::prelude::*;

use super::fixtures::{grid_streams_started, list, now};
use super::rows::RowCache;
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::cluster::status::StreamKind;
use crate::engine::blockers::rollout_blocker_with;
use crate::engine::fixtures::{daemonset, node, pod, revision_of};
use crate::model::{DaemonSet, Node, Pod};

const NODES: usize = 12;
const TARGET: &str = "kube-system/agent";

fn node_named(i: usize, ready: bool) -> Node {
    let builder = node(&format!("node-{i}"));
    if ready { builder } else { builder.not_ready() }.build()
}

/// Pod `k` (0 or 1: a surge pod) on node `i`, revision and health from `shape`.
fn pod_on(i: usize, k: usize, shape: u8) -> Pod {
    let hash = if shape & 1 == 0 { "h1" } else { "h2" };
    let builder = pod(&format!("agent-{i}-{k}"), &format!("node-{i}"), hash)
        .created(100 + i64::try_from(k).unwrap_or(0));
    let builder = match (shape >> 1) % 4 {
        0 => builder.ready_since(110),
        // Ready too recently to be available under minReadySeconds.
        1 => builder.ready_since(3590),
        2 => builder.phase("Running").waiting("CrashLoopBackOff", 3),
        _ => builder.phase("Pending"),
    };
    if shape & 0x10 == 0 {
        builder.build()
    } else {
        builder.terminating().build()
    }
}

fn strategy(which: usize) -> DaemonSet {
    let ds = daemonset("registry.example/agent:v2");
    match which {
        0 => ds.on_delete(),
        1 => ds.rolling(IntOrString::Int(2), IntOrString::Int(0)),
        _ => ds.rolling(IntOrString::Int(0), IntOrString::Int(2)),
    }
    .min_ready_seconds(30)
    .build()
}

fn cluster(ds: &DaemonSet) -> Cache {
    let mut cache = grid_streams_started();
    let v1 = daemonset("registry.example/agent:v1").build();
    list(
        &mut cache,
        WatchUpdate::Node,
        (0..NODES).map(|i| node_named(i, true)).collect(),
    );
    list(&mut cache, WatchUpdate::DaemonSet, vec![ds.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&v1, "h1", 1), revision_of(ds, "h2", 2)],
    );
    list(
        &mut cache,
        WatchUpdate::Pod,
        (0..NODES).map(|i| pod_on(i, 0, 0)).collect(),
    );
    cache
}

#[derive(Clone, Debug)]
enum Change {
    Pod(usize, usize, u8),
    DeletePod(usize, usize),
    NodeReady(usize, bool),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        4 => (0..NODES, 0..2_usize, any::<u8>()).prop_map(|(i, k, s)| Change::Pod(i, k, s)),
        1 => (0..NODES, 0..2_usize).prop_map(|(i, k)| Change::DeletePod(i, k)),
        1 => (0..NODES, any::<bool>()).prop_map(|(i, r)| Change::NodeReady(i, r)),
    ]
}

fn apply(cache: &mut Cache, change: &Change) {
    let update = match change {
        Change::Pod(i, k, shape) => WatchUpdate::Pod(watcher::Event::Apply(pod_on(*i, *k, *shape))),
        Change::DeletePod(i, k) => WatchUpdate::Pod(watcher::Event::Delete(pod_on(*i, *k, 0))),
        Change::NodeReady(i, ready) => {
            WatchUpdate::Node(watcher::Event::Apply(node_named(*i, *ready)))
        }
    };
    cache.apply(update, now());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After every event, the blocker kept with the rows equals the engine's
    /// answer over every row computed from scratch.
    #[test]
    fn incremental_blocker_equals_a_full_recompute(
        which in 0..3_usize,
        changes in proptest::collection::vec(change(), 1..40),
    ) {
        let ds = strategy(which);
        let mut cache = cluster(&ds);
        let mut rows = RowCache::default();
        let changed = cache.take_changes();
        rows.refresh(&cache, Some(TARGET), &changed, now());
        for change in &changes {
            apply(&mut cache, change);
            let changed = cache.take_changes();
            rows.refresh(&cache, Some(TARGET), &changed, now());
            let from_scratch =
                rollout_blocker_with(&ds, rows.iter().map(|r| (&r.coverage, r.node_ready)));
            prop_assert_eq!(rows.blocker(&ds), &from_scratch, "after {:?}", change);
        }
    }
}

/// Rows wait while a first list is still coming in, are computed when it is
/// in, and are not held back by a stream that failed instead.
#[test]
fn rows_wait_for_first_lists_but_not_for_a_failed_stream() {
    let ds = strategy(0);
    let mut cache = grid_streams_started();
    list(
        &mut cache,
        WatchUpdate::Node,
        (0..NODES).map(|i| node_named(i, true)).collect(),
    );
    list(&mut cache, WatchUpdate::DaemonSet, vec![ds.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&ds, "h2", 2)],
    );
    cache.apply(WatchUpdate::Pod(watcher::Event::Init), now());
    cache.apply(
        WatchUpdate::Pod(watcher::Event::InitApply(pod_on(0, 0, 1))),
        now(),
    );
    let mut rows = RowCache::default();
    let changed = cache.take_changes();
    rows.refresh(&cache, Some(TARGET), &changed, now());
    assert!(rows.is_empty(), "rows computed while pods were listing");

    cache.apply(WatchUpdate::Pod(watcher::Event::InitDone), now());
    let changed = cache.take_changes();
    let refreshed = rows.refresh(&cache, Some(TARGET), &changed, now());
    assert!(refreshed.membership);
    assert_eq!(rows.len(), NODES);
    assert!(rows.get("node-0").and_then(|r| r.pod()).is_some());

    // The rows deferred while listing were computed with the list: the next
    // change of one pod recomputes that node's row only.
    apply(&mut cache, &Change::Pod(3, 0, 4));
    let changed = cache.take_changes();
    let refreshed = rows.refresh(&cache, Some(TARGET), &changed, now());
    assert!(
        !refreshed.membership,
        "one pod's change recomputed every row"
    );
    assert_eq!(refreshed.nodes, ["node-3".to_owned()].into());

    let mut failed = grid_streams_started();
    list(
        &mut failed,
        WatchUpdate::Node,
        (0..NODES).map(|i| node_named(i, true)).collect(),
    );
    list(&mut failed, WatchUpdate::DaemonSet, vec![ds]);
    failed.apply(
        WatchUpdate::Error(StreamKind::Pods, "403 Forbidden".into()),
        now(),
    );
    failed.apply(
        WatchUpdate::Error(StreamKind::Revisions, "403 Forbidden".into()),
        now(),
    );
    let mut rows = RowCache::default();
    let changed = failed.take_changes();
    rows.refresh(&failed, Some(TARGET), &changed, now());
    assert_eq!(rows.len(), NODES, "a failed stream held the rows back");
}
