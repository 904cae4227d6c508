//! Rendered-frame snapshot tests of every view (TestBackend + insta, fixed
//! state and fixed `now`), plus colour assertions the text snapshots cannot make.

use kube::runtime::watcher;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

use super::app::App;
use super::fixtures::{self, now};
use super::keymap::Action;
use super::view_model::ConsoleInfo;
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::cluster::status::StreamKind;

fn info() -> ConsoleInfo {
    ConsoleInfo {
        context: "kind-test".into(),
        server: "https://127.0.0.1:6443/".into(),
        note: None,
    }
}

/// An app on the fixture DaemonSet with the cache's changes applied.
pub(super) fn app_on(cache: &mut Cache, size: (u16, u16)) -> App {
    let mut app = App::new(
        info(),
        crate::model::Target::from_key("kube-system/agent"),
        size,
    );
    app.refresh(cache, now());
    app
}

pub(super) fn draw(app: &App, cache: &Cache) -> Terminal<TestBackend> {
    let (width, height) = app.ui.size;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let view = app.view_model(cache, now());
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .unwrap();
    terminal
}

fn apply(app: &mut App, cache: &Cache, actions: &[Action]) {
    for action in actions {
        app.update(*action, cache, now());
    }
}

/// The foreground colour of the first cell where `text` starts on screen.
fn colour_of(buffer: &Buffer, text: &str) -> Option<Color> {
    let area = buffer.area;
    for y in 0..area.height {
        let line: String = (0..area.width)
            .map(|x| buffer[(x, y)].symbol().to_owned())
            .collect();
        if let Some(byte) = line.find(text) {
            let x = u16::try_from(line[..byte].chars().count()).ok()?;
            return Some(buffer[(x, y)].fg);
        }
    }
    None
}

#[test]
fn loading_until_the_initial_lists_are_in() {
    let mut cache = Cache::new();
    for kind in [StreamKind::Nodes, StreamKind::DaemonSets] {
        cache.stream_started(kind);
    }
    cache.apply(WatchUpdate::Node(watcher::Event::Init), now());
    for node in fixtures::nodes() {
        cache.apply(WatchUpdate::Node(watcher::Event::InitApply(node)), now());
    }
    let app = app_on(&mut cache, (100, 16));
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

/// Over a slow link a large list takes minutes: the loading view says how
/// much of it is in when the server counts it (`remainingItemCount`, sent
/// for lists without selectors, such as nodes), and the estimate is gone
/// once the list is complete.
#[test]
fn loading_says_how_much_of_a_counted_list_is_in() {
    let mut cache = Cache::new();
    for kind in [StreamKind::Nodes, StreamKind::DaemonSets] {
        cache.stream_started(kind);
    }
    cache.apply(WatchUpdate::Node(watcher::Event::Init), now());
    let nodes = fixtures::nodes();
    let total = nodes.len() as u64 * 4;
    for node in nodes.iter().cloned() {
        cache.apply(WatchUpdate::Node(watcher::Event::InitApply(node)), now());
    }
    cache.apply(WatchUpdate::Expecting(StreamKind::Nodes, total), now());
    let app = app_on(&mut cache, (100, 16));
    let screen = format!("{:?}", draw(&app, &cache).backend());
    let expected = format!("nodes: loading… {} of {total} (25%)", nodes.len());
    assert!(screen.contains(&expected), "{screen}");
    cache.apply(WatchUpdate::Node(watcher::Event::InitDone), now());
    let status = &cache.streams()[&StreamKind::Nodes];
    assert_eq!(status.expected(), None, "complete: no estimate left");
}

/// A relist after a compaction, over a slow link: the previous grid stays,
/// and the status line says how far the new list is.
#[test]
fn resyncing_says_how_far_the_relist_is() {
    let mut cache = fixtures::mid_rollout();
    let nodes = fixtures::nodes();
    let total = nodes.len() as u64 * 4;
    cache.apply(WatchUpdate::Node(watcher::Event::Init), now());
    for node in nodes {
        cache.apply(WatchUpdate::Node(watcher::Event::InitApply(node)), now());
    }
    cache.apply(WatchUpdate::Expecting(StreamKind::Nodes, total), now());
    let app = app_on(&mut cache, (120, 20));
    let screen = format!("{:?}", draw(&app, &cache).backend());
    assert!(screen.contains("nodes: resyncing 25%"), "{screen}");
    assert!(
        screen.contains("r1 old"),
        "the previous grid stays: {screen}"
    );
}

#[test]
fn grid_mid_rollout() {
    let mut cache = fixtures::mid_rollout();
    let app = app_on(&mut cache, (120, 20));
    let terminal = draw(&app, &cache);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn updated_and_old_revisions_have_different_colours() {
    let mut cache = fixtures::mid_rollout();
    let app = app_on(&mut cache, (120, 20));
    let terminal = draw(&app, &cache);
    let buffer = terminal.backend().buffer();
    assert_eq!(colour_of(buffer, "r2 ✓"), Some(Color::Green));
    assert_eq!(colour_of(buffer, "r1 old"), Some(Color::Magenta));
    assert_eq!(colour_of(buffer, "CrashLoopBackOff"), Some(Color::Red));
    assert_eq!(colour_of(buffer, "NotReady"), Some(Color::Red));
}

#[test]
fn grid_wide_terminal_shows_every_column() {
    let mut cache = fixtures::mid_rollout();
    let app = app_on(&mut cache, (200, 20));
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn narrow_terminal_80x24() {
    let mut cache = fixtures::mid_rollout();
    let app = app_on(&mut cache, (80, 24));
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn detail_of_a_tainted_node() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 40));
    // Sorted by name, gpu-01 is the first row.
    apply(&mut app, &cache, &[Action::Top, Action::Open]);
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

/// The detail pane takes its taint verdicts from the engine's one decision:
/// an untolerated `PreferNoSchedule` taint is ignored by the controller, so
/// it is not shown as keeping the pod off (the pane once said "not tolerated"
/// in red beside an eligible node).
#[test]
fn detail_says_a_prefer_no_schedule_taint_does_not_keep_the_pod_off() {
    let mut cache = fixtures::mid_rollout();
    let gpu = crate::engine::fixtures::node("gpu-01")
        .label("node-pool", "gpu")
        .taint("dedicated", "gpu", "NoSchedule")
        .taint("spot", "", "PreferNoSchedule")
        .build();
    cache.apply(WatchUpdate::Node(watcher::Event::Apply(gpu)), now());
    let mut app = app_on(&mut cache, (200, 40));
    apply(&mut app, &cache, &[Action::Top, Action::Open]);
    let terminal = draw(&app, &cache);
    let buffer = terminal.backend().buffer();
    let screen: String = buffer
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(
        screen.contains(
            "spot:PreferNoSchedule  ignored: PreferNoSchedule never keeps a daemon pod off"
        ),
        "{screen}"
    );
    assert!(screen.contains("dedicated=gpu:NoSchedule  not tolerated"));
    // Drawn as a side note, not as the problem the blocking taint is.
    assert_eq!(
        colour_of(buffer, "ignored: PreferNoSchedule"),
        Some(Color::Reset)
    );
}

#[test]
fn detail_of_a_crash_looping_node() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 40));
    apply(
        &mut app,
        &cache,
        &[
            Action::Top,
            Action::Down,
            Action::Down,
            Action::Down,
            Action::Open,
        ],
    );
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-03"));
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn history_with_diff() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 30));
    apply(&mut app, &cache, &[Action::History]);
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn help_overlay_lists_every_key() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 50));
    apply(&mut app, &cache, &[Action::Help]);
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn filter_by_label_selector() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 16));
    let mut actions = vec![Action::StartFilter];
    actions.extend(
        "topology.kubernetes.io/zone=zone-b"
            .chars()
            .map(Action::FilterChar),
    );
    actions.push(Action::ApplyFilter);
    apply(&mut app, &cache, &actions);
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn filter_being_typed_shows_in_the_status_line() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (100, 16));
    apply(
        &mut app,
        &cache,
        &[
            Action::StartFilter,
            Action::FilterChar('n'),
            Action::FilterChar('o'),
        ],
    );
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn grouped_by_revision() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 24));
    apply(&mut app, &cache, &[Action::CycleGroup]);
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn stream_error_shows_in_the_status_line_not_over_the_grid() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 16));
    cache.apply(
        WatchUpdate::Error(
            StreamKind::Pods,
            "watch stream failed: connection refused".into(),
        ),
        fixtures::at_offset(-42),
    );
    app.refresh(&mut cache, now());
    app.ui.error("bad label selector \"pool in (\": expected )");
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

/// The whole screen as text, one line per row.
fn screen(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let width = usize::from(buffer.area.width);
    buffer
        .content()
        .chunks(width)
        .map(|row| {
            row.iter()
                .map(ratatui::buffer::Cell::symbol)
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn stalls_and_throttling_are_never_shown_as_live() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (160, 16));
    assert!(screen(&draw(&app, &cache)).contains("● live"));
    cache.apply(
        WatchUpdate::Stalled(StreamKind::Pods, std::time::Duration::from_secs(9)),
        now(),
    );
    app.refresh(&mut cache, now());
    let text = screen(&draw(&app, &cache));
    assert!(!text.contains("● live"), "{text}");
    assert!(
        text.contains("pods: stale 9s, reconnecting (no data for 9s"),
        "{text}"
    );
    cache.apply(
        WatchUpdate::Throttled(StreamKind::Pods, std::time::Duration::from_secs(95)),
        now(),
    );
    app.refresh(&mut cache, now());
    let text = screen(&draw(&app, &cache));
    assert!(text.contains("throttled, retrying in 95s"), "{text}");
    cache.apply(WatchUpdate::Alive(StreamKind::Pods), now());
    app.refresh(&mut cache, now());
    assert!(
        screen(&draw(&app, &cache)).contains("● live"),
        "a bookmark clears it"
    );
}

#[test]
fn hostile_text_is_sanitised_before_drawing() {
    let mut cache = fixtures::mid_rollout();
    let hostile = fixtures::event(
        "evil.1",
        "Node",
        "node-06",
        "Evil\u{1b}[2J",
        &format!(
            "\u{1b}]0;pwned\u{07}ring\u{07}\rover\u{202e}written {}",
            "x".repeat(600)
        ),
        3590,
    );
    cache.apply(
        WatchUpdate::NodeEvent(watcher::Event::Apply(hostile)),
        now(),
    );
    let mut app = app_on(&mut cache, (200, 16));
    app.refresh(&mut cache, now());
    let terminal = draw(&app, &cache);
    let screen: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(
        !screen.chars().any(|c| c.is_control() || c == '\u{202e}'),
        "control characters reached the screen"
    );
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn picker_lists_daemonsets() {
    let mut cache = fixtures::mid_rollout();
    let mut app = App::new(info(), None, (100, 12));
    app.refresh(&mut cache, now());
    insta::assert_snapshot!(draw(&app, &cache).backend());
    let effect = app.update(Action::Open, &cache, now());
    assert_eq!(
        effect,
        Some(super::effect::Effect::SetTarget(
            crate::cluster::watch::Target {
                namespace: "kube-system".into(),
                name: "agent".into()
            }
        ))
    );
}

#[test]
fn one_pod_event_recomputes_one_row() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 20));
    let mut pod = fixtures::pods().remove(2);
    pod.status.container_statuses.clear();
    pod.status.phase = Some("Running".into());
    cache.apply(WatchUpdate::Pod(watcher::Event::Apply(pod)), now());
    let changes = cache.take_changes();
    assert_eq!(changes.nodes.len(), 1);
    assert!(!changes.all_nodes);
    let refreshed = app
        .rows
        .refresh(&cache, app.ui.target.as_ref(), &changes, now());
    assert_eq!(refreshed.nodes.iter().collect::<Vec<_>>(), ["node-03"]);
    assert!(!refreshed.membership);
}

#[test]
fn detail_beside_the_grid_on_a_wide_terminal() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (200, 30));
    apply(
        &mut app,
        &cache,
        &[Action::Down, Action::Down, Action::Down, Action::Open],
    );
    insta::assert_snapshot!(draw(&app, &cache).backend());
}

#[test]
fn confirmation_dialog() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (100, 20));
    app.ops = super::ops::OpsConsole::new(false, "ana@box".into());
    app.ui.selected_node = Some("node-04".into());
    app.update(Action::AdvanceSelected, &cache, now());
    insta::assert_snapshot!(draw(&app, &cache).backend());
}
