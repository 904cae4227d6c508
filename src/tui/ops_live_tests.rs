//! The console's live snapshot (the watch cache's objects borrowed, the row
//! cache's coverage rows kept per changed node) against a snapshot copied
//! and computed from scratch: after random watch events (pods changing
//! revision and health, surge and terminating pods, deletions, nodes going
//! NotReady, cordoned, relabelled into another pool or the canaries), the
//! rows, the next batch, the plan's page, the blocker, the failing nodes and
//! every auto-advance decision are the same.

use std::collections::BTreeSet;

use kube::runtime::watcher;
use proptest::prelude::*;

use super::fixtures::{grid_streams_started, list, now};
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::engine::coverage::NodeCoverage;
use crate::engine::fixtures::{daemonset, node, pod, revision_of};
use crate::engine::rollout::next_batch;
use crate::model::{DaemonSet, Node, Pod, Target};
use crate::ops::advance::AdvanceTarget;
use crate::ops::auto::{AutoPolicy, AutoRun};
use crate::ops::preflight::failing_updated;
use crate::ops::run::decide::{Next, next_move};
use crate::ops::run::settings::RunSettings as AutoSettings;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::RolloutState;
use crate::rows::RowCache;

const NODES: usize = 10;

fn target() -> Target {
    Target::from_key("kube-system/agent").unwrap_or_else(|| unreachable!())
}

/// Node `i`: Ready or not, cordoned or not, in pool `pool % 3` (none at 0),
/// in a zone or not, labelled a canary or not.
fn node_shaped(i: usize, shape: u8) -> Node {
    let mut builder = node(&format!("node-{i}"));
    if shape & 1 != 0 {
        builder = builder.not_ready();
    }
    if shape & 2 != 0 {
        builder = builder.cordoned();
    }
    match (shape >> 2) % 3 {
        0 => {}
        pool => builder = builder.label("node-pool", &format!("pool-{pool}")),
    }
    if shape & 0x20 != 0 {
        builder = builder.label("canary", "yes");
    }
    if shape & 0x40 != 0 {
        builder = builder.label(
            "topology.kubernetes.io/zone",
            &format!("zone-{}", shape >> 7),
        );
    }
    builder.build()
}

/// Pod `k` (1: a surge pod) on node `i`, revision and health from `shape`.
fn pod_shaped(i: usize, k: usize, shape: u8) -> Pod {
    let hash = if shape & 1 == 0 { "h1" } else { "h2" };
    let builder = pod(&format!("agent-{i}-{k}"), &format!("node-{i}"), hash)
        .created(100 + i64::try_from(k).unwrap_or(0));
    let builder = match (shape >> 1) % 4 {
        0 => builder.ready_since(110),
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

fn daemonset_v2() -> DaemonSet {
    daemonset("registry.example/agent:v2")
        .on_delete()
        .min_ready_seconds(30)
        .build()
}

fn cluster(ds: &DaemonSet) -> Cache {
    let mut cache = grid_streams_started();
    let v1 = daemonset("registry.example/agent:v1").build();
    list(
        &mut cache,
        WatchUpdate::Node,
        (0..NODES).map(|i| node_shaped(i, 0)).collect(),
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
        (0..NODES).map(|i| pod_shaped(i, 0, 0)).collect(),
    );
    cache
}

#[derive(Clone, Debug)]
enum Change {
    Pod(usize, usize, u8),
    DeletePod(usize, usize),
    Node(usize, u8),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        4 => (0..NODES, 0..2_usize, any::<u8>()).prop_map(|(i, k, s)| Change::Pod(i, k, s)),
        1 => (0..NODES, 0..2_usize).prop_map(|(i, k)| Change::DeletePod(i, k)),
        2 => (0..NODES, any::<u8>()).prop_map(|(i, s)| Change::Node(i, s)),
    ]
}

fn apply(cache: &mut Cache, change: &Change) {
    let update = match change {
        Change::Pod(i, k, s) => WatchUpdate::Pod(watcher::Event::Apply(pod_shaped(*i, *k, *s))),
        Change::DeletePod(i, k) => WatchUpdate::Pod(watcher::Event::Delete(pod_shaped(*i, *k, 0))),
        Change::Node(i, s) => WatchUpdate::Node(watcher::Event::Apply(node_shaped(*i, *s))),
    };
    cache.apply(update, now());
}

/// The rows in name order (live rows come in the row cache's order).
fn owned_rows(rows: &crate::ops::snapshot::Rows<'_>) -> Vec<NodeCoverage> {
    let mut all: Vec<NodeCoverage> = rows.iter().cloned().collect();
    all.sort_by(|a, b| a.node.cmp(&b.node));
    all
}

/// Everything a rollout key reads agrees between the two snapshots.
fn same_reads(
    live: &Snapshot<'_>,
    scratch: &Snapshot<'_>,
    state: &RolloutState,
    size: usize,
) -> Result<(), TestCaseError> {
    let (live_index, scratch_index) = (live.index(), scratch.index());
    let live_rows = live.rows(&live_index, now());
    let scratch_rows = scratch.rows(&scratch_index, now());
    prop_assert_eq!(owned_rows(&live_rows), owned_rows(&scratch_rows));
    for i in 0..NODES {
        let name = format!("node-{i}");
        prop_assert_eq!(live_rows.fresh(&name), scratch_rows.fresh(&name));
    }
    prop_assert_eq!(failing_updated(&live_rows), failing_updated(&scratch_rows));
    prop_assert_eq!(
        live.blocker(&live_rows, now()),
        scratch.blocker(&scratch_rows, now())
    );
    let plan = scratch.plan(&scratch_rows, state).map_err(fail)?;
    let none = BTreeSet::new();
    let next = live
        .plan_for(&live_rows, state, &AdvanceTarget::Next(size), &none, false)
        .map_err(fail)?;
    let expected: Vec<_> = next_batch(&plan, size, &none)
        .into_iter()
        .cloned()
        .collect();
    if expected.is_empty() {
        prop_assert_eq!(&next, &plan);
    } else {
        prop_assert_eq!(&next.steps, &expected);
    }
    let head = live.plan_head(&live_rows, state, 3).map_err(fail)?;
    prop_assert_eq!(head.steps, plan.steps.len());
    prop_assert_eq!(&head.plan.steps[..], &plan.steps[..plan.steps.len().min(3)]);
    prop_assert_eq!(head.skipped, plan.skipped.len());
    prop_assert_eq!(
        &head.plan.skipped[..],
        &plan.skipped[..plan.skipped.len().min(3)]
    );
    Ok(())
}

fn fail(err: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(err.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn live_snapshot_reads_and_decides_as_a_full_rebuild(
        changes in proptest::collection::vec(change(), 1..30),
        canaries in proptest::collection::vec(0..NODES, 0..3),
        by_selector in any::<bool>(),
        size in 1..4_usize,
    ) {
        let ds = daemonset_v2();
        let mut cache = cluster(&ds);
        let mut rows = RowCache::default();
        let changed = cache.take_changes();
        rows.refresh(&cache, crate::model::Target::from_key("kube-system/agent").as_ref(), &changed, now());
        let state = RolloutState {
            canaries: canaries.iter().map(|i| format!("node-{i}")).collect(),
            ..RolloutState::default()
        };
        let settings = AutoSettings {
            policy: AutoPolicy {
                batch: size,
                soak: std::time::Duration::ZERO,
                timeout: std::time::Duration::from_secs(600),
            },
            canary_selector: by_selector.then(|| "canary=yes".to_owned()),
            rollback: None,
            despite_failing: true,
            despite_fit: false,
            include_cordoned: false,
            fleet_run: None,
        };
        let mut live_run = AutoRun::new(settings.policy);
        let mut scratch_run = AutoRun::new(settings.policy);
        for change in &changes {
            apply(&mut cache, change);
            let changed = cache.take_changes();
            rows.refresh(&cache, crate::model::Target::from_key("kube-system/agent").as_ref(), &changed, now());
            let live = Snapshot::live(&cache, &target(), &rows).ok_or_else(|| fail("no live snapshot"))?;
            prop_assert!(live.is_live(), "the row cache is in step: no copy");
            let scratch = Snapshot::from_cache(&cache, &target()).ok_or_else(|| fail("no snapshot"))?;
            same_reads(&live, &scratch, &state, size)?;
            let live_next = next_move(&mut live_run, &live, &state, &settings, None, now()).map_err(fail)?;
            let scratch_next = next_move(&mut scratch_run, &scratch, &state, &settings, None, now()).map_err(fail)?;
            prop_assert_eq!(&live_next, &scratch_next, "after {:?}", change);
            if let Next::Delete(victims, _) = &live_next {
                for victim in victims {
                    live_run.deleted(&victim.node, Ok(()), now());
                    scratch_run.deleted(&victim.node, Ok(()), now());
                }
            }
        }
    }
}
