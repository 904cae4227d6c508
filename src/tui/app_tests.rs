//! Behaviour of `App::update`: navigation and scrolling, selection that
//! follows its node across re-sorts, mouse clicks, filter and Esc, history
//! diff base, and the effects returned to the event loop.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::app::App;
use super::effect::Effect;
use super::fixtures::{self, now};
use super::index::{Entry, SortKey};
use super::keymap::Action;
use super::state::Screen;
use super::view_model::{Body, ConsoleInfo};
use crate::cluster::cache::Cache;

fn app(cache: &mut Cache, size: (u16, u16)) -> App {
    let mut app = App::new(
        ConsoleInfo::default(),
        crate::model::Target::from_key("kube-system/agent"),
        size,
    );
    app.refresh(cache, now());
    app
}

#[test]
fn moving_past_the_window_scrolls_and_stops_at_the_ends() {
    let mut cache = fixtures::mid_rollout();
    // 12 rows: 4 header + 1 status + 1 footer leaves 6, of which 3 are grid lines.
    let mut app = app(&mut cache, (100, 12));
    for _ in 0..4 {
        app.update(Action::Down, &cache, now());
    }
    assert_eq!(app.ui.selected, 4);
    assert_eq!(
        app.ui.offset, 2,
        "the selected row is the last visible line"
    );
    app.update(Action::Bottom, &cache, now());
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-06"));
    app.update(Action::Down, &cache, now());
    assert_eq!(app.ui.selected, 6, "stops at the last row");
    app.update(Action::Top, &cache, now());
    assert_eq!((app.ui.selected, app.ui.offset), (0, 0));
    app.update(Action::PageDown, &cache, now());
    assert_eq!(app.ui.selected, 3);
}

#[test]
fn selection_follows_its_node_when_the_order_changes() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (120, 30));
    app.update(Action::Down, &cache, now());
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-01"));
    app.update(Action::CycleSort, &cache, now());
    app.update(Action::CycleSort, &cache, now());
    assert_eq!(app.ui.sort, SortKey::State);
    let at = app.index.position_of("node-01");
    assert_eq!(Some(app.ui.selected), at);
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-01"));
}

#[test]
fn state_sort_puts_the_crash_loop_first() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (120, 30));
    app.update(Action::CycleSort, &cache, now());
    app.update(Action::CycleSort, &cache, now());
    assert_eq!(app.index.node_at(0), Some("node-03"));
    assert_eq!(
        app.index.node_at(1),
        Some("node-05"),
        "then the unready pod"
    );
    assert_eq!(app.index.node_at(6), Some("gpu-01"), "not eligible last");
}

#[test]
fn grouping_shows_the_heading_above_the_first_row() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (100, 12));
    app.update(Action::CycleGroup, &cache, now());
    // Lines: heading, node-01..03, heading, node-04..06, heading, gpu-01.
    app.update(Action::Bottom, &cache, now());
    assert_eq!(app.ui.offset, 7);
    for _ in 0..3 {
        app.update(Action::Up, &cache, now());
    }
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-04"));
    let entry = app.index.rows[app.ui.selected];
    assert!(matches!(
        app.index.entries[entry - 1],
        Entry::Heading { .. }
    ));
    assert_eq!(app.ui.offset, entry - 1, "the group heading stays in view");
}

#[test]
fn click_selects_the_row_under_the_pointer() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (120, 30));
    // Header 4 lines, grid border 1, column headings 1: the third row is at y = 8.
    let click = Event::Mouse(MouseEvent {
        kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: 3,
        row: 8,
        modifiers: KeyModifiers::NONE,
    });
    let action = app.action_for_event(&click).unwrap();
    app.update(action, &cache, now());
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-02"));
}

#[test]
fn keys_map_through_the_keymap_for_the_screen() {
    let mut cache = fixtures::mid_rollout();
    let app = app(&mut cache, (120, 30));
    let key = |code| Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    assert_eq!(
        app.action_for_event(&key(KeyCode::Char('j'))),
        Some(Action::Down)
    );
    assert_eq!(
        app.action_for_event(&key(KeyCode::Char('q'))),
        Some(Action::Quit)
    );
    assert_eq!(
        app.action_for_event(&Event::Resize(80, 24)),
        Some(Action::Resize(80, 24))
    );
}

#[test]
fn enter_opens_detail_and_esc_goes_back_then_clears_the_filter() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (120, 30));
    app.update(Action::StartFilter, &cache, now());
    for c in "node-0".chars() {
        app.update(Action::FilterChar(c), &cache, now());
    }
    app.update(Action::ApplyFilter, &cache, now());
    assert_eq!(app.index.rows.len(), 6);
    app.update(Action::Open, &cache, now());
    assert!(matches!(app.ui.screen, Screen::Detail(_)));
    app.update(Action::Back, &cache, now());
    assert_eq!(app.ui.screen, Screen::Grid);
    assert_eq!(app.index.rows.len(), 6, "first Esc only leaves the detail");
    app.update(Action::Back, &cache, now());
    assert_eq!(app.index.rows.len(), 7, "second Esc clears the filter");
}

#[test]
fn a_bad_selector_is_an_error_in_the_status_line_and_keeps_the_input() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (120, 30));
    app.update(Action::StartFilter, &cache, now());
    for c in "pool in (a".chars() {
        app.update(Action::FilterChar(c), &cache, now());
    }
    app.update(Action::ApplyFilter, &cache, now());
    assert!(app.ui.filter_input.is_some());
    let message = app.ui.message.clone().unwrap();
    assert!(
        message.text.contains("bad label selector"),
        "{}",
        message.text
    );
    assert_eq!(app.index.rows.len(), 7);
}

#[test]
fn history_diff_base_can_be_chosen() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (120, 30));
    app.update(Action::History, &cache, now());
    let Body::History(history) = app.view_model(&cache, now()).body else {
        panic!("history not shown");
    };
    assert_eq!(history.diff_title, "template diff: revision 1 → 2");
    // Revision 1 alone has nothing earlier to compare with.
    app.update(Action::Down, &cache, now());
    let Body::History(history) = app.view_model(&cache, now()).body else {
        panic!("history not shown");
    };
    assert_eq!(
        history.diff_title,
        "template of revision 1 (no earlier revision)"
    );
    // Mark revision 2 as the base, then select revision 1: the diff goes 2 → 1.
    app.update(Action::Up, &cache, now());
    app.update(Action::MarkDiffBase, &cache, now());
    app.update(Action::Down, &cache, now());
    assert_eq!(app.ui.history().diff_base, Some(2));
    let Body::History(history) = app.view_model(&cache, now()).body else {
        panic!("history not shown");
    };
    assert_eq!(history.diff_title, "template diff: revision 2 → 1");
    assert!(
        history
            .diff
            .iter()
            .any(|line| line.text == "+  - image: registry.example/agent:v1")
    );
    // The history's state is its own: leaving and reopening starts fresh.
    app.update(Action::Back, &cache, now());
    assert_eq!(app.ui.history(), super::state::HistoryView::default());
    app.update(Action::History, &cache, now());
    assert_eq!(app.ui.history().diff_base, None);
}

#[test]
fn picking_a_daemonset_retargets_the_watches() {
    let mut cache = fixtures::mid_rollout();
    let mut app = App::new(ConsoleInfo::default(), None, (100, 20));
    app.refresh(&mut cache, now());
    assert!(matches!(app.ui.screen, Screen::Picker(_)));
    let effect = app.update(Action::Open, &cache, now());
    assert!(matches!(effect, Some(Effect::SetTarget(ref t)) if t.key() == "kube-system/agent"));
    assert_eq!(app.ui.screen, Screen::Grid);
    // Reopened, the list starts on the DaemonSet shown (not the first).
    let mut first = crate::engine::fixtures::daemonset("registry.example/other:v1").build();
    first.metadata.namespace = Some("a-first".into());
    cache.apply(
        crate::cluster::cache::WatchUpdate::DaemonSet(kube::runtime::watcher::Event::Apply(first)),
        now(),
    );
    app.update(Action::PickDaemonSet, &cache, now());
    let keys = super::view_model::picker::entries(&cache, "");
    assert_eq!(keys.len(), 2, "{keys:?}");
    let shown = keys.iter().position(|k| k.key() == "kube-system/agent");
    assert_eq!(Some(app.ui.picker().selected), shown, "{keys:?}");
    assert_eq!(shown, Some(1), "{keys:?}");
    assert_eq!(app.update(Action::Quit, &cache, now()), Some(Effect::Quit));
}

#[test]
fn a_missing_daemonset_says_so_instead_of_loading_forever() {
    let mut cache = fixtures::mid_rollout();
    let mut app = App::new(
        ConsoleInfo::default(),
        crate::model::Target::from_key("kube-system/nope"),
        (100, 20),
    );
    app.refresh(&mut cache, now());
    let Body::Empty(cell) = app.view_model(&cache, now()).body else {
        panic!("expected the not-found message");
    };
    assert!(
        cell.text.contains("kube-system/nope not found"),
        "{}",
        cell.text
    );
}

#[test]
fn the_connection_note_opens_the_status_line() {
    let info = ConsoleInfo {
        note: Some("embedded cluster · scenario small".into()),
        ..ConsoleInfo::default()
    };
    let app = App::new(info, None, (80, 24));
    assert_eq!(
        app.ui.message.map(|m| m.text).as_deref(),
        Some("embedded cluster · scenario small")
    );
}

#[test]
fn a_bad_filter_says_why_while_typing_and_a_new_filter_starts_empty() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (100, 20));
    app.update(Action::StartFilter, &cache, now());
    for c in "pool in (".chars() {
        app.update(Action::FilterChar(c), &cache, now());
    }
    app.update(Action::ApplyFilter, &cache, now());
    assert!(app.ui.filter_input.is_some(), "the prompt stays open");
    let status = app.view_model(&cache, fixtures::now()).status.message;
    let status = status.map(|c| c.text).unwrap_or_default();
    assert!(status.starts_with("/pool in (▏ "), "{status}");
    assert!(
        status.len() > "/pool in (▏ ".len(),
        "the error shows: {status}"
    );
    app.update(Action::Back, &cache, now());
    app.update(Action::StartFilter, &cache, now());
    app.update(Action::FilterChar('x'), &cache, now());
    assert_eq!(app.ui.filter_input.as_deref(), Some("x"));
}

#[test]
fn a_screen_note_does_not_follow_into_another_screen() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (100, 20));
    app.update(Action::History, &cache, now());
    app.update(Action::MarkDiffBase, &cache, now());
    assert!(
        app.ui
            .message
            .as_ref()
            .is_some_and(|m| m.text.starts_with("diff base"))
    );
    app.update(Action::Back, &cache, now());
    assert_eq!(app.ui.message, None);
}

#[test]
fn the_connection_note_stays_across_screens() {
    let mut cache = fixtures::mid_rollout();
    let info = ConsoleInfo {
        note: Some("kubectl --kubeconfig /tmp/rollcall-demo-1.kubeconfig".into()),
        ..ConsoleInfo::default()
    };
    let mut app = App::new(
        info,
        crate::model::Target::from_key("kube-system/agent"),
        (100, 20),
    );
    app.refresh(&mut cache, now());
    app.update(Action::History, &cache, now());
    app.update(Action::Back, &cache, now());
    assert!(
        app.ui
            .message
            .is_some_and(|m| m.text.contains("rollcall-demo-1"))
    );
}

/// Opened from the fleet matrix, `q` goes back to it, and the footer says so.
#[test]
fn a_console_opened_from_the_fleet_says_q_goes_back_to_it() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app(&mut cache, (200, 40));
    let hint = |app: &App| {
        app.view_model(&cache, now())
            .hints
            .into_iter()
            .find(|(key, _)| key == "q")
            .map(|(_, hint)| hint)
    };
    assert_eq!(hint(&app), Some("quit"));
    app.leave_on_back = true;
    assert_eq!(hint(&app), Some("fleet"));
}
