//! The row cache's incremental blocker against a from-scratch recompute:
//! after random watch events (pods changing health and revision, surge pods,
//! pods stuck terminating, deletions, nodes going NotReady), the blocker the
//! console keeps equals the engine's answer over all rows.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::runtime::watcher;
use proptest::prelude::*;

use super::fixtures::{grid_streams_started, list, now};
use crate::cluster::cache::{Cache, Changes, WatchUpdate};
use crate::cluster::status::StreamKind;
use crate::engine::blockers::{BlockerCode, rollout_blocker_with};
use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
use crate::model::{DaemonSet, Meta, Node, ObjectMeta, Pod};
use crate::rows::RowCache;

/// Metadata whose resourceVersion the fake server stamps (slim or upstream).
trait Versioned {
    fn set_version(&mut self, version: String);
}

impl Versioned for Meta {
    fn set_version(&mut self, version: String) {
        self.resource_version = Some(version.into());
    }
}

impl Versioned for ObjectMeta {
    fn set_version(&mut self, version: String) {
        self.resource_version = Some(version);
    }
}

const NODES: usize = 12;
fn target() -> crate::model::Target {
    crate::model::Target::from_key("kube-system/agent").expect("a key")
}

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
        // Pending since 3310: starting until 3610 (READY_TIMEOUT), stalled after.
        _ if shape & 0x08 != 0 => builder.created(3310).phase("Pending"),
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
    cluster_of(
        ds,
        (0..NODES).map(|i| node_named(i, true)).collect(),
        (0..NODES).map(|i| pod_on(i, 0, 0)).collect(),
    )
}

/// A cache whose first lists hold `nodes`, `ds` (revisions h1 and h2) and `pods`.
fn cluster_of(ds: &DaemonSet, nodes: Vec<Node>, pods: Vec<Pod>) -> Cache {
    let mut cache = grid_streams_started();
    let v1 = daemonset("registry.example/agent:v1").build();
    list(&mut cache, WatchUpdate::Node, nodes);
    list(&mut cache, WatchUpdate::DaemonSet, vec![ds.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&v1, "h1", 1), revision_of(ds, "h2", 2)],
    );
    list(&mut cache, WatchUpdate::Pod, pods);
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
        rows.refresh(&cache, Some(&target()), &changed, now());
        for change in &changes {
            apply(&mut cache, change);
            let changed = cache.take_changes();
            rows.refresh(&cache, Some(&target()), &changed, now());
            let from_scratch = rollout_blocker_with(
                &ds,
                rows.iter().map(|r| (&r.coverage, r.node_ready)),
                now(),
            );
            prop_assert_eq!(rows.blocker(&ds), &from_scratch, "after {:?}", change);
        }
    }
}

/// One step of the watch streams for the relist property: an event, or a
/// relist (the watch was dropped) after which some objects changed.
#[derive(Clone, Debug)]
enum Step {
    Event(Change),
    /// Pods re-listed: these (node, pod, shape) changed meanwhile; `None`: gone.
    RelistPods(Vec<(usize, usize, Option<u8>)>),
    /// Nodes re-listed: these changed readiness meanwhile.
    RelistNodes(Vec<(usize, bool)>),
    /// Seconds pass with no change (pods Ready since 3590 turn available
    /// after 3620 under the DaemonSet's `minReadySeconds` of 30; pods Pending
    /// since 3310 stop counting as starting at 3610).
    Tick(u8),
}

fn step() -> impl Strategy<Value = Step> {
    let pods = proptest::collection::vec(
        (0..NODES, 0..2_usize, proptest::option::of(any::<u8>())),
        0..5,
    );
    let nodes = proptest::collection::vec((0..NODES, any::<bool>()), 0..4);
    prop_oneof![
        6 => change().prop_map(Step::Event),
        1 => pods.prop_map(Step::RelistPods),
        1 => nodes.prop_map(Step::RelistNodes),
        1 => (1..20_u8).prop_map(Step::Tick),
    ]
}

/// What the server holds, each object with a `resourceVersion` (a relist
/// tells the unchanged ones by it).
#[derive(Default)]
struct Server {
    version: u64,
    pods: std::collections::BTreeMap<(usize, usize), Pod>,
    nodes: std::collections::BTreeMap<usize, Node>,
}

impl Server {
    fn stamp<K: k8s_openapi::Metadata<Ty: Versioned>>(&mut self, mut object: K) -> K {
        self.version += 1;
        object.metadata_mut().set_version(self.version.to_string());
        object
    }

    fn put_pod(&mut self, i: usize, k: usize, shape: Option<u8>) -> Option<Pod> {
        match shape {
            Some(shape) => {
                let pod = self.stamp(pod_on(i, k, shape));
                self.pods.insert((i, k), pod.clone());
                Some(pod)
            }
            None => self.pods.remove(&(i, k)),
        }
    }

    fn put_node(&mut self, i: usize, ready: bool) -> Node {
        let node = self.stamp(node_named(i, ready));
        self.nodes.insert(i, node.clone());
        node
    }

    /// Applies one step to the server and feeds the cache what a watch would.
    fn step(&mut self, cache: &mut Cache, step: &Step) {
        match step {
            Step::Event(Change::Pod(i, k, shape)) => {
                if let Some(pod) = self.put_pod(*i, *k, Some(*shape)) {
                    cache.apply(WatchUpdate::Pod(watcher::Event::Apply(pod)), now());
                }
            }
            Step::Event(Change::DeletePod(i, k)) => {
                if let Some(pod) = self.put_pod(*i, *k, None) {
                    cache.apply(WatchUpdate::Pod(watcher::Event::Delete(pod)), now());
                }
            }
            Step::Event(Change::NodeReady(i, ready)) => {
                let node = self.put_node(*i, *ready);
                cache.apply(WatchUpdate::Node(watcher::Event::Apply(node)), now());
            }
            Step::RelistPods(changed) => {
                for (i, k, shape) in changed {
                    self.put_pod(*i, *k, *shape);
                }
                list(
                    cache,
                    WatchUpdate::Pod,
                    self.pods.values().cloned().collect(),
                );
            }
            Step::RelistNodes(changed) => {
                for (i, ready) in changed {
                    self.put_node(*i, *ready);
                }
                list(
                    cache,
                    WatchUpdate::Node,
                    self.nodes.values().cloned().collect(),
                );
            }
            Step::Tick(_) => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// After every event, relist or passing of time, the rows kept
    /// incrementally (only the nodes a change or a relist touched, or whose
    /// pod turned available by the clock, are recomputed) equal rows computed
    /// from scratch at the same time, in the same name order, with the same
    /// blocker.
    #[test]
    fn incremental_rows_equal_a_full_recompute_across_relists(
        which in 0..3_usize,
        steps in proptest::collection::vec(step(), 1..30),
    ) {
        let ds = strategy(which);
        let mut server = Server::default();
        for i in 0..NODES {
            server.put_node(i, true);
            server.put_pod(i, 0, Some(0));
        }
        let mut cache = cluster_of(
            &ds,
            server.nodes.values().cloned().collect(),
            server.pods.values().cloned().collect(),
        );
        let mut rows = RowCache::default();
        let changed = cache.take_changes();
        let mut clock = 3600;
        rows.refresh(&cache, Some(&target()), &changed, at(clock));
        for step in &steps {
            server.step(&mut cache, step);
            if let Step::Tick(seconds) = step {
                clock += i64::from(*seconds);
            }
            let changed = cache.take_changes();
            prop_assert!(!changed.all_nodes || matches!(step, Step::RelistPods(_) | Step::RelistNodes(_)));
            rows.refresh(&cache, Some(&target()), &changed, at(clock));
            let mut fresh = RowCache::default();
            let everything = Changes { all_nodes: true, ..Changes::default() };
            fresh.refresh(&cache, Some(&target()), &everything, at(clock));
            let kept: Vec<_> = rows.in_name_order().collect();
            let rebuilt: Vec<_> = fresh.in_name_order().collect();
            prop_assert_eq!(kept, rebuilt, "after {:?}", step);
            prop_assert_eq!(rows.blocker(&ds), fresh.blocker(&ds), "after {:?}", step);
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
    rows.refresh(&cache, Some(&target()), &changed, now());
    assert!(rows.is_empty(), "rows computed while pods were listing");

    cache.apply(WatchUpdate::Pod(watcher::Event::InitDone), now());
    let changed = cache.take_changes();
    let refreshed = rows.refresh(&cache, Some(&target()), &changed, now());
    assert!(refreshed.membership);
    assert_eq!(rows.len(), NODES);
    assert!(rows.get("node-0").and_then(|r| r.pod()).is_some());

    // The rows deferred while listing were computed with the list: the next
    // change of one pod recomputes that node's row only.
    apply(&mut cache, &Change::Pod(3, 0, 4));
    let changed = cache.take_changes();
    let refreshed = rows.refresh(&cache, Some(&target()), &changed, now());
    assert!(
        !refreshed.membership,
        "one pod's change recomputed every row"
    );
    assert_eq!(refreshed.nodes, ["node-3".into()].into());

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
    rows.refresh(&failed, Some(&target()), &changed, now());
    assert_eq!(rows.len(), NODES, "a failed stream held the rows back");
}

/// A relist after a dropped watch recomputes only the rows of what it
/// changed: a DaemonSet whose status alone moved recomputes none, nodes
/// re-listed with one changed recompute that one.
#[test]
fn a_relist_recomputes_only_what_it_changed() {
    let ds = strategy(1);
    let mut server = Server::default();
    let mut cache = grid_streams_started();
    for i in 0..NODES {
        server.put_node(i, true);
    }
    list(
        &mut cache,
        WatchUpdate::Node,
        server.nodes.values().cloned().collect(),
    );
    let stamped = server.stamp(ds.clone());
    list(&mut cache, WatchUpdate::DaemonSet, vec![stamped.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&ds, "h2", 2)],
    );
    list(&mut cache, WatchUpdate::Pod, Vec::new());
    let mut rows = RowCache::default();
    let changed = cache.take_changes();
    rows.refresh(&cache, Some(&target()), &changed, now());

    let mut status_only = server.stamp(stamped);
    if let Some(status) = status_only.status.as_mut() {
        status.number_ready += 1;
    }
    list(&mut cache, WatchUpdate::DaemonSet, vec![status_only]);
    let changed = cache.take_changes();
    assert!(changed.daemonsets && !changed.all_nodes, "{changed:?}");

    server.put_node(4, false);
    list(
        &mut cache,
        WatchUpdate::Node,
        server.nodes.values().cloned().collect(),
    );
    let changed = cache.take_changes();
    assert!(!changed.all_nodes);
    assert_eq!(changed.nodes, ["node-4".into()].into());
    let refreshed = rows.refresh(&cache, Some(&target()), &changed, now());
    assert!(!refreshed.membership);
    assert_eq!(refreshed.nodes, ["node-4".into()].into());
}

/// Upstream `IsPodAvailable` counts a pod available once its Ready condition
/// is older than `minReadySeconds`, with no change to the pod: the cached row
/// says when that is, and the next refresh after it (no change from the
/// cache) recomputes that row, and the blocker with it.
#[test]
fn a_row_turns_available_by_the_clock_alone() {
    let ds = strategy(0);
    // Both on the current revision; node-0's pod Ready since 3590, with
    // minReadySeconds 30: available strictly after 3620.
    let mut cache = cluster_of(
        &ds,
        vec![node_named(0, true), node_named(1, true)],
        vec![pod_on(0, 0, 3), pod_on(1, 0, 1)],
    );
    let mut rows = RowCache::default();
    let changed = cache.take_changes();
    rows.refresh(&cache, Some(&target()), &changed, at(3600));
    let available = |rows: &RowCache| {
        rows.get("node-0")
            .and_then(|r| r.pod())
            .map(|p| p.available)
    };
    assert_eq!(available(&rows), Some(false));
    assert_eq!(rows.next_due(), Some(at(3620)));
    assert!(
        !rows.due(at(3620)),
        "available strictly after minReadySeconds"
    );
    assert_eq!(
        rows.blocker(&ds).message,
        "waiting for minReadySeconds: node-0 (Ready, not yet available (minReadySeconds))"
    );

    let nothing = Changes::default();
    let out = rows.refresh(&cache, Some(&target()), &nothing, at(3621));
    assert_eq!(available(&rows), Some(true));
    assert!(out.nodes.contains("node-0"), "{out:?}");
    assert_eq!(rows.next_due(), None);
    let mut fresh = RowCache::default();
    let everything = Changes {
        all_nodes: true,
        ..Changes::default()
    };
    fresh.refresh(&cache, Some(&target()), &everything, at(3621));
    assert_eq!(rows.blocker(&ds), fresh.blocker(&ds));
    assert_eq!(
        rows.blocker(&ds).message,
        "nothing to do: every node runs the current revision"
    );
}

/// A RollingUpdate whose one unavailable slot is held by a pod that is
/// starting is rolling; once the pod has been Pending for READY_TIMEOUT the
/// same rows are stuck, with no change from the cache: the row cache is due
/// then and its blocker says so at the next refresh.
#[test]
fn a_spent_budget_turns_stuck_by_the_clock_alone() {
    let ds = daemonset("registry.example/agent:v2")
        .rolling(IntOrString::Int(1), IntOrString::Int(0))
        .build();
    // node-0 runs the old revision; node-1's new pod Pending since 3310.
    let mut cache = cluster_of(
        &ds,
        vec![node_named(0, true), node_named(1, true)],
        vec![pod_on(0, 0, 0), pod_on(1, 0, 0x0f)],
    );
    let mut rows = RowCache::default();
    let changed = cache.take_changes();
    rows.refresh(&cache, Some(&target()), &changed, at(3600));
    assert_eq!(rows.blocker(&ds).code, BlockerCode::Progressing);
    assert_eq!(
        rows.blocker(&ds).message,
        "rolling: replacing pods within maxUnavailable=1: node-1 (pod Pending); \
         1 node(s) on old revisions"
    );
    assert_eq!(rows.next_due(), Some(at(3610)));
    assert!(!rows.due(at(3610)));

    let nothing = Changes::default();
    let out = rows.refresh(&cache, Some(&target()), &nothing, at(3611));
    assert!(out.nodes.is_empty(), "no row changed: {out:?}");
    assert_eq!(rows.blocker(&ds).code, BlockerCode::MaxUnavailableSpent);
    assert_eq!(
        rows.blocker(&ds).message,
        "rolling update stopped at 1 old node(s): maxUnavailable=1 is spent by \
         node-1 (pod Pending for over 5m)"
    );
    assert_eq!(rows.next_due(), None);
}

/// The console refreshes on its tick with no change from the cache once a
/// row is due (a pod turned available), and not before.
#[test]
fn the_console_refreshes_a_row_that_turns_available_with_no_change() {
    let ds = strategy(0);
    let mut cache = cluster_of(
        &ds,
        vec![node_named(0, true), node_named(1, true)],
        vec![pod_on(0, 0, 3), pod_on(1, 0, 1)],
    );
    let mut app = super::app::App::new(
        super::view_model::ConsoleInfo::default(),
        Some(target()),
        (100, 24),
    );
    assert!(app.refresh(&mut cache, at(3600)));
    let available = |app: &super::app::App| {
        app.rows
            .get("node-0")
            .and_then(|r| r.pod())
            .map(|p| p.available)
    };
    assert_eq!(available(&app), Some(false));
    assert!(!app.refresh(&mut cache, at(3610)), "nothing due yet");
    assert!(
        app.refresh(&mut cache, at(3621)),
        "node-0's pod turned available"
    );
    assert_eq!(available(&app), Some(true));
    assert!(!app.refresh(&mut cache, at(3622)), "nothing due any more");
}

/// A full recompute large enough to be spread over threads gives every node
/// exactly the row computed for it alone.
#[test]
fn rows_computed_on_several_threads_equal_rows_computed_one_by_one() {
    let ds = strategy(1);
    let count = crate::rows::PARALLEL_FLOOR + 1_000;
    let nodes: Vec<Node> = (0..count).map(|i| node_named(i, i % 7 != 0)).collect();
    let pods = (0..count)
        .filter(|i| i % 11 != 0)
        .map(|i| pod_on(i, 0, u8::try_from(i % 32).unwrap_or(0)))
        .collect();
    let mut cache = cluster_of(&ds, nodes.clone(), pods);
    let mut rows = RowCache::default();
    let everything = Changes {
        all_nodes: true,
        ..cache.take_changes()
    };
    rows.refresh(&cache, Some(&target()), &everything, at(3600));
    assert_eq!(rows.len(), count);
    let revisions: Vec<_> = cache.revisions().cloned().collect();
    let index = crate::engine::revision::RevisionIndex::new(&ds, &revisions);
    for node in &nodes {
        let alone = crate::rows::NodeRow::compute(node, &ds, &index, &cache, at(3600));
        assert_eq!(rows.get(node.name()), Some(&alone), "{}", node.name());
    }
}

fn node_on_kubelet(i: usize, version: &str) -> Node {
    let mut node = node_named(i, true);
    node.status.node_info.kubelet_version = Some(version.into());
    node
}

/// The header's kubelet skew follows the nodes as they change version, come
/// and go, and equals what `status` works out from the same nodes.
#[test]
fn kubelet_skew_is_kept_with_the_rows_and_named_as_status_names_it() {
    let ds = strategy(0);
    let nodes = (0..NODES).map(|i| node_on_kubelet(i, "v1.33.2")).collect();
    let mut cache = cluster_of(&ds, nodes, (0..NODES).map(|i| pod_on(i, 0, 0)).collect());
    let mut rows = RowCache::default();
    let mut step = |cache: &mut Cache, update: Option<WatchUpdate>| {
        if let Some(update) = update {
            cache.apply(update, now());
        }
        let changed = cache.take_changes();
        rows.refresh(cache, Some(&target()), &changed, now());
        rows.kubelet_skew()
            .map(crate::ops::status_kubelets::KubeletSkew::describe)
    };
    assert_eq!(step(&mut cache, None), None, "one minor: no skew");

    let behind = WatchUpdate::Node(watcher::Event::Apply(node_on_kubelet(3, "v1.32.9-eks-1")));
    assert_eq!(
        step(&mut cache, Some(behind)).as_deref(),
        Some("v1.33 on 11 nodes, v1.32 on 1 node (node-3)")
    );
    let upgraded = WatchUpdate::Node(watcher::Event::Apply(node_on_kubelet(3, "v1.33.0")));
    assert_eq!(step(&mut cache, Some(upgraded)), None, "upgraded: no skew");

    let older = WatchUpdate::Node(watcher::Event::Apply(node_on_kubelet(5, "v1.31.1")));
    assert!(step(&mut cache, Some(older)).is_some());
    let gone = WatchUpdate::Node(watcher::Event::Delete(node_on_kubelet(5, "v1.31.1")));
    assert_eq!(step(&mut cache, Some(gone)), None, "the lagging node left");
}
