//! Rendered-frame snapshots of the console with a roster (`--roster FILE`):
//! absent roster nodes keep a row, problems lead the WHY cell, the header
//! counts them, the detail pane explains them; plus the refresh throttle.

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;

use super::app::App;
use super::fixtures::{self, now};
use super::keymap::Action;
use super::roster::{MIN_INTERVAL, RosterState};
use super::view_model::ConsoleInfo;
use crate::audit::Roster;
use crate::cluster::cache::Cache;

/// The mid-rollout fixture audited against a roster with one problem of each
/// kind: node-02's UID differs, node-99 is absent, node-03 crash-loops and
/// gpu-01 is not eligible (no ready pod), node-05's node is NotReady, and
/// node-06 runs a daemon pod but is not on the roster. Ten entries in all:
/// mismatch node-02, node-99; not ready node-05; missing gpu-01, node-03,
/// node-05, node-99; unexpected node-06; unready pods on node-03 and node-05.
fn roster() -> Roster {
    let entries = [
        ("node-01", "uid-node-01"),
        ("node-02", "uid-node-02-old"),
        ("node-03", "uid-node-03"),
        ("node-04", "uid-node-04"),
        ("node-05", "uid-node-05"),
        ("gpu-01", "uid-gpu-01"),
        ("node-99", "uid-node-99"),
    ];
    Roster::from_entries(entries.map(|(n, u)| (n.to_owned(), u.to_owned()))).unwrap()
}

fn app_with_roster(cache: &mut Cache, size: (u16, u16)) -> App {
    let info = ConsoleInfo {
        context: "kind-test".into(),
        server: "https://127.0.0.1:6443/".into(),
        note: None,
    };
    let mut app = App::new(
        info,
        crate::model::Target::from_key("kube-system/agent"),
        size,
    );
    app.roster = Some(RosterState::new(roster()));
    app.refresh(cache, now());
    let target = app.ui.target.clone();
    if let Some(state) = &mut app.roster {
        state.recompute_now(cache, target.as_ref());
    }
    app.rebuild_index(cache);
    app
}

fn draw(app: &App, cache: &Cache) -> Terminal<TestBackend> {
    let (width, height) = app.ui.size;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let view = app.view_model(cache, now());
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .unwrap();
    terminal
}

fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The foreground colour `skip` characters into the first place `text` shows.
fn colour_at(terminal: &Terminal<TestBackend>, text: &str, skip: usize) -> Option<Color> {
    let lines = screen_text(terminal);
    let (y, line) = lines.lines().enumerate().find(|(_, l)| l.contains(text))?;
    let x = line[..line.find(text)?].chars().count() + skip;
    let at = (u16::try_from(x).ok()?, u16::try_from(y).ok()?);
    Some(terminal.backend().buffer()[at].fg)
}

#[test]
fn grid_with_roster_problems() {
    let mut cache = fixtures::mid_rollout();
    let app = app_with_roster(&mut cache, (140, 20));
    let terminal = draw(&app, &cache);
    let text = screen_text(&terminal);
    assert!(text.contains("roster 10 problems"), "{text}");
    assert!(text.contains("roster: absent — not in cluster"), "{text}");
    assert_eq!(colour_at(&terminal, "roster: absent", 0), Some(Color::Red));
    assert_eq!(
        colour_at(&terminal, "roster: UID differs", 0),
        Some(Color::Red)
    );
    // The header count's value ("10 problems"), after its label.
    assert_eq!(
        colour_at(&terminal, "roster 10 problems", 7),
        Some(Color::Red)
    );
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn grid_with_roster_problems_grouped_by_state() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_with_roster(&mut cache, (120, 24));
    // none → revision → pool/zone → state
    for _ in 0..3 {
        app.update(Action::CycleGroup, &cache, now());
    }
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn detail_of_an_absent_roster_node() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_with_roster(&mut cache, (120, 24));
    // Absent roster nodes come first in the grid.
    app.update(Action::Top, &cache, now());
    app.update(Action::Open, &cache, now());
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-99"));
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn detail_of_a_node_whose_uid_differs() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_with_roster(&mut cache, (120, 30));
    // node-99, gpu-01, node-01, node-02
    for action in [Action::Top, Action::Down, Action::Down, Action::Down] {
        app.update(action, &cache, now());
    }
    app.update(Action::Open, &cache, now());
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-02"));
    let text = screen_text(&draw(&app, &cache));
    assert!(
        text.contains("UID differs: the cluster's node has UID uid-node-02"),
        "{text}"
    );
    assert!(
        text.contains("on the roster, UID uid-node-02-old"),
        "{text}"
    );
}

#[test]
fn a_name_filter_applies_to_absent_rows_and_a_label_filter_hides_them() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_with_roster(&mut cache, (120, 20));
    let names = |app: &App| -> Vec<String> {
        (0..app.index.rows.len())
            .filter_map(|at| app.index.node_at(at).map(str::to_owned))
            .collect()
    };
    for (filter, expect_absent) in [("99", true), ("node-0", false), ("node-pool=gpu", false)] {
        app.update(Action::StartFilter, &cache, now());
        app.ui.filter_input = Some(filter.to_owned());
        app.update(Action::ApplyFilter, &cache, now());
        assert_eq!(
            names(&app).contains(&"node-99".to_owned()),
            expect_absent,
            "{filter}: {:?}",
            names(&app)
        );
    }
}

#[test]
fn no_comparison_before_the_lists_are_complete() {
    let cache = Cache::new();
    let mut state = RosterState::new(roster());
    assert!(!state.poll(
        &cache,
        crate::model::Target::from_key("kube-system/agent").as_ref(),
        Instant::now()
    ));
    assert!(state.report().is_none());
}

#[test]
fn comparisons_are_throttled_and_run_off_the_caller() {
    let mut cache = fixtures::mid_rollout();
    let _ = cache.take_changes();
    let mut state = RosterState::new(roster());
    let agent = crate::model::Target::from_key("kube-system/agent");
    let target = agent.as_ref();
    let start = Instant::now();
    // The first poll starts a comparison on its own thread.
    state.poll(&cache, target, start);
    let deadline = start + Duration::from_secs(10);
    while state.report().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        state.poll(&cache, target, start);
    }
    assert_eq!(
        state.report().map(crate::audit::AuditReport::problem_count),
        Some(10)
    );
    assert_eq!(state.absent(), ["node-99".to_owned()]);
    // Every node changing (a relist) within the interval marks it stale but
    // starts nothing.
    let changes = crate::cluster::cache::Changes {
        all_nodes: true,
        ..crate::cluster::cache::Changes::default()
    };
    state.note_changes(&changes, &cache, target);
    assert!(!state.poll(&cache, target, start + MIN_INTERVAL / 2));
    assert!(!state.poll(&cache, target, start + MIN_INTERVAL / 2));
    // After the interval it runs again and reports a (fresh) result.
    let later = start + MIN_INTERVAL;
    state.poll(&cache, target, later);
    let mut collected = false;
    while !collected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        collected = state.poll(&cache, target, later);
    }
    assert!(collected, "the second comparison never arrived");
}

/// A change to a few nodes is applied to the report in place, at once, with
/// no comparison started: the same report a comparison from scratch makes.
#[test]
fn node_changes_update_the_report_in_place() {
    use crate::cluster::cache::WatchUpdate;
    use crate::engine::fixtures::{node, pod};
    use kube::runtime::watcher;
    let mut cache = fixtures::mid_rollout();
    let _ = cache.take_changes();
    let agent = crate::model::Target::from_key("kube-system/agent");
    let target = agent.as_ref();
    let mut state = RosterState::new(roster());
    state.recompute_now(&cache, target);
    let before = state.report().map(crate::audit::AuditReport::problem_count);
    // node-01 goes NotReady; node-02's pod starts crash looping; node-03 leaves.
    let updates = [
        WatchUpdate::Node(watcher::Event::Apply(node("node-01").not_ready().build())),
        WatchUpdate::Pod(watcher::Event::Apply(
            pod("agent-n2", "node-02", "h1")
                .created(100)
                .phase("Running")
                .waiting("CrashLoopBackOff", 4)
                .build(),
        )),
        WatchUpdate::Node(watcher::Event::Delete(node("node-03").build())),
    ];
    for update in updates {
        cache.apply(update, now());
    }
    let changes = cache.take_changes();
    state.note_changes(&changes, &cache, target);
    assert!(
        !state.poll(&cache, target, Instant::now()),
        "no comparison started: the report is current"
    );
    let mut scratch = RosterState::new(roster());
    scratch.recompute_now(&cache, target);
    assert_eq!(state.report(), scratch.report());
    assert_eq!(state.absent(), scratch.absent());
    assert_ne!(
        state.report().map(crate::audit::AuditReport::problem_count),
        before
    );
}

/// Scale measurement (run with `cargo test --lib roster_scale -- --ignored
/// --nocapture`, add `--release` for release numbers): the snapshot copy (taken
/// under the cache lock) and the comparison (on its own thread) at 65,000
/// nodes. Prints numbers; asserts only correctness.
#[test]
#[ignore = "measurement; prints timings"]
fn roster_scale_65k() {
    use crate::cluster::cache::WatchUpdate;
    use crate::engine::fixtures::{node, pod};
    let nodes = 65_000;
    let mut cache = fixtures::mid_rollout();
    let names: Vec<String> = (0..nodes).map(|i| format!("big-{i:05}")).collect();
    let node_list = names.iter().map(|n| node(n).build()).collect();
    // Every tenth node has no daemon pod: 6,500 missing entries.
    let pods = (0..nodes)
        .filter(|i| i % 10 != 0)
        .map(|i| {
            pod(&format!("agent-big-{i:05}"), &names[i], "h2")
                .created(100)
                .ready_since(110)
                .build()
        })
        .collect();
    fixtures::list(&mut cache, WatchUpdate::Node, node_list);
    fixtures::list(&mut cache, WatchUpdate::Pod, pods);
    let entries = names.iter().map(|n| (n.clone(), format!("uid-{n}")));
    let roster = Roster::from_entries(entries).unwrap();
    let started = Instant::now();
    let snapshot = super::roster::Snapshot::take(
        &cache,
        crate::model::Target::from_key("kube-system/agent").as_ref(),
    )
    .unwrap();
    let copied = started.elapsed();
    let mut state = RosterState::new(roster);
    let started = Instant::now();
    state.recompute_now(
        &cache,
        crate::model::Target::from_key("kube-system/agent").as_ref(),
    );
    let total = started.elapsed();
    drop(snapshot);
    let report = state.report().unwrap();
    assert_eq!(report.issues.missing_ready.len(), nodes / 10);
    println!(
        "roster audit at {nodes} nodes: snapshot copy {copied:?}, copy + compare {total:?}, {} problems",
        report.problem_count()
    );
}
