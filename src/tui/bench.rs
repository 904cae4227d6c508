//! Scale measurements (run with `cargo test --release --lib grid_bench -- --ignored --nocapture`):
//! building rows, order, one frame (view model + render) and applying one pod
//! event, at 5,000 and 65,000 nodes; what the row cache holds per node
//! (`row_cache_memory`). Prints numbers; asserts only correctness, never
//! timings.

use std::time::{Duration, Instant};

use kube::runtime::watcher;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::App;
use super::fixtures::{grid_streams_started, list, now};
use super::index::{Filter, GridIndex, GroupKey, SortKey};
use super::keymap::Action;
use super::view_model::ConsoleInfo;
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::engine::fixtures::{daemonset, node, pod, revision_of};
use crate::rows::RowCache;

fn cluster(nodes: usize) -> Cache {
    let mut cache = grid_streams_started();
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let v2 = daemonset("registry.example/agent:v2").on_delete().build();
    let node_list = (0..nodes)
        .map(|i| {
            let builder = node(&format!("node-{i:05}"))
                .label("node-pool", &format!("pool-{}", i % 20))
                .label("topology.kubernetes.io/zone", &format!("zone-{}", i % 3));
            if i % 50 == 0 {
                builder.taint("dedicated", "gpu", "NoSchedule").build()
            } else {
                builder.build()
            }
        })
        .collect();
    let pods = (0..nodes)
        .filter(|i| i % 50 != 0)
        .map(|i| {
            let hash = if i % 2 == 0 { "h2" } else { "h1" };
            pod(&format!("agent-{i:05}"), &format!("node-{i:05}"), hash)
                .created(100)
                .ready_since(110)
                .build()
        })
        .collect();
    list(&mut cache, WatchUpdate::Node, node_list);
    list(&mut cache, WatchUpdate::DaemonSet, vec![v2.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)],
    );
    list(&mut cache, WatchUpdate::Pod, pods);
    cache
}

fn frame(app: &App, cache: &Cache, terminal: &mut Terminal<TestBackend>) {
    let view = app.view_model(cache, now());
    terminal.draw(|f| f.render_widget(&view, f.area())).unwrap();
}

fn per_iteration(total: Duration, n: u32) -> String {
    format!("{:.3} ms", total.as_secs_f64() * 1000.0 / f64::from(n))
}

fn measure(nodes: usize) {
    let mut cache = cluster(nodes);
    let mut app = App::new(
        ConsoleInfo::default(),
        crate::model::Target::from_key("kube-system/agent"),
        (200, 60),
    );
    let start = Instant::now();
    app.refresh(&mut cache, now());
    let initial = start.elapsed();
    assert_eq!(app.rows.len(), nodes);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    app.update(Action::Bottom, &cache, now());
    let start = Instant::now();
    for _ in 0..20 {
        frame(&app, &cache, &mut terminal);
    }
    let frame_200 = start.elapsed();
    let start = Instant::now();
    for _ in 0..20 {
        app.update(Action::CycleSort, &cache, now());
    }
    let resort = start.elapsed();
    let start = Instant::now();
    for _ in 0..20 {
        let index = GridIndex::build(
            &app.rows,
            &cache,
            SortKey::Name,
            GroupKey::None,
            &Filter::None,
        );
        assert_eq!(index.rows.len(), nodes);
    }
    let index_only = start.elapsed();
    // One pod event: a ready pod starts crash looping.
    let start = Instant::now();
    let rounds = 50;
    for round in 0..rounds {
        let i = 1 + 2 * (round as usize % (nodes / 4));
        let event = pod(&format!("agent-{i:05}"), &format!("node-{i:05}"), "h1")
            .created(100)
            .phase("Running")
            .waiting("CrashLoopBackOff", i32::try_from(round).unwrap_or(0))
            .build();
        cache.apply(WatchUpdate::Pod(watcher::Event::Apply(event)), now());
        app.refresh(&mut cache, now());
        frame(&app, &cache, &mut terminal);
    }
    let event = start.elapsed();
    // The same with the grid sorted by state: the changed row moves, so the order is rebuilt.
    app.update(Action::CycleSort, &cache, now());
    app.update(Action::CycleSort, &cache, now());
    let start = Instant::now();
    for round in 0..rounds {
        let i = 1 + 2 * (round as usize % (nodes / 4));
        let ready = pod(&format!("agent-{i:05}"), &format!("node-{i:05}"), "h1")
            .created(100)
            .ready_since(110)
            .build();
        cache.apply(WatchUpdate::Pod(watcher::Event::Apply(ready)), now());
        app.refresh(&mut cache, now());
        frame(&app, &cache, &mut terminal);
    }
    let event_resorted = start.elapsed();
    println!(
        "nodes {nodes:>6}: initial rows+order {:.1} ms | frame 200x60 (view model + render) {} | \
         re-sort {} (order build alone {}) | one pod event + refresh + frame {} by name, {} by state",
        initial.as_secs_f64() * 1000.0,
        per_iteration(frame_200, 20),
        per_iteration(resort, 20),
        per_iteration(index_only, 20),
        per_iteration(event, rounds),
        per_iteration(event_resorted, rounds),
    );
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn grid_bench() {
    measure(5_000);
    measure(65_000);
}

/// Resident memory of this process, in bytes (Linux).
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// What the row cache holds per node at 65,000 nodes: the growth of this
/// process's RSS while the rows are computed (run alone: it reads the RSS).
#[test]
#[ignore = "measurement: run alone with --ignored --nocapture"]
fn row_cache_memory() {
    const NODES: usize = 65_000;
    let mut cache = cluster(NODES);
    let changes = cache.take_changes();
    let before = rss_bytes().unwrap_or(0);
    let mut rows = RowCache::default();
    rows.refresh(
        &cache,
        crate::model::Target::from_key("kube-system/agent").as_ref(),
        &changes,
        now(),
    );
    let after = rss_bytes().unwrap_or(0);
    assert_eq!(rows.len(), NODES);
    #[allow(clippy::cast_precision_loss, reason = "display only")]
    let per_node = after.saturating_sub(before) as f64 / NODES as f64;
    println!(
        "row cache: {per_node:.0} B per node at {NODES} nodes (NodeRow {} B inline)",
        std::mem::size_of::<crate::rows::NodeRow>()
    );
}
