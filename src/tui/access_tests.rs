//! The console of a user with namespace rights only (the embedded cluster's
//! `rollcall-sim-viewer`): nodes and node events forbidden, no writes. The
//! grid is built from the pods, the header says what is limited and why, the
//! rollout keys refuse with the reason and send nothing.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::App;
use super::fixtures::{self, now};
use super::keymap::Action;
use super::view_model::{Body, ConsoleInfo, GridLine};
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::cluster::status::StreamKind;
use crate::engine::fixtures::{daemonset, revision_of};
use crate::ops::rbac::{Access, Operation, Permission, Permissions};

/// The viewer's cache: DaemonSets, pods and revisions listed; nodes and node
/// events answered 403.
fn viewer_cache() -> Cache {
    let mut cache = fixtures::started();
    let forbidden = |what: &str| format!("403 Forbidden: {what} is forbidden");
    cache.apply(
        WatchUpdate::Forbidden(StreamKind::Nodes, forbidden("nodes")),
        now(),
    );
    cache.apply(
        WatchUpdate::Forbidden(StreamKind::NodeEvents, forbidden("events")),
        now(),
    );
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let v2 = fixtures::agent_v2();
    fixtures::list(&mut cache, WatchUpdate::DaemonSet, vec![v2.clone()]);
    fixtures::list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)],
    );
    fixtures::list(&mut cache, WatchUpdate::Pod, fixtures::pods());
    fixtures::list(&mut cache, WatchUpdate::PodEvent, Vec::new());
    cache
}

fn denied_writes() -> Permissions {
    let denied = || Access::Denied(String::new());
    Permissions::from_answers(
        "kube-system",
        [
            (
                Permission {
                    verb: "delete",
                    group: "",
                    resource: "pods",
                },
                denied(),
            ),
            (
                Permission {
                    verb: "patch",
                    group: "apps",
                    resource: "daemonsets",
                },
                denied(),
            ),
        ]
        .into(),
    )
}

fn viewer_app(cache: &mut Cache) -> App {
    let info = ConsoleInfo {
        context: "rollcall-sim-viewer".into(),
        server: "https://127.0.0.1:6443/".into(),
        note: None,
    };
    let mut app = App::new(
        info,
        crate::model::Target::from_key("kube-system/agent"),
        (120, 16),
    );
    app.refresh(cache, now());
    app.ops.permissions = Some(denied_writes());
    app
}

#[test]
fn viewer_sees_rows_from_pods_and_the_limitation() {
    let mut cache = viewer_cache();
    let app = viewer_app(&mut cache);
    let view = app.view_model(&cache, now());
    let Body::Grid(grid) = &view.body else {
        panic!("the grid is shown, not {:?}", view.body);
    };
    let rows: Vec<(String, String)> = grid
        .lines
        .iter()
        .filter_map(|line| match line {
            GridLine::Row { cells, .. } => Some((cells[1].text.clone(), cells[2].text.clone())),
            GridLine::Heading(_) => None,
        })
        .collect();
    let expected: Vec<(String, String)> = (1..=6)
        .map(|n| (format!("node-0{n}"), "unknown".to_owned()))
        .collect();
    assert_eq!(
        rows, expected,
        "one row per node a pod runs on; gpu-01 has none"
    );
    let limits: Vec<String> = view
        .header
        .as_ref()
        .map(|h| h.limits.iter().map(|c| c.text.clone()).collect())
        .unwrap_or_default();
    assert_eq!(
        limits,
        [
            "view limited: cannot list nodes (forbidden) — eligibility unknown, nodes without a pod not shown",
            "not allowed: you may not delete pods or patch daemonsets.apps in namespace kube-system — advance, auto-advance, pause/resume, rollback, plan edits disabled",
            "cannot watch node events (forbidden)",
        ]
    );
    let mut terminal = Terminal::new(TestBackend::new(120, 16)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .unwrap();
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn viewer_rollout_keys_refuse_with_the_reason_and_send_nothing() {
    let mut cache = viewer_cache();
    let mut app = viewer_app(&mut cache);
    for action in [
        Action::AdvanceSelected,
        Action::AdvanceNext,
        Action::ToggleAuto,
        Action::TogglePause,
        Action::Rollback,
    ] {
        let effect = app.update(action, &cache, now());
        assert!(effect.is_none(), "{action:?} sent {effect:?}");
        assert!(app.ops.modal.is_none(), "{action:?} opened a dialog");
        let message = app.ui.message.clone().unwrap().text;
        assert!(
            message.contains("disabled: not allowed to"),
            "{action:?}: {message}"
        );
    }
    assert!(denied_writes().allows(Operation::Advance).is_err());
}

/// The detail of a node the user may not read: its pod and why the rest is
/// missing, not "node is gone".
#[test]
fn viewer_detail_shows_the_pod_of_an_unreadable_node() {
    let mut cache = viewer_cache();
    let mut app = viewer_app(&mut cache);
    app.update(Action::Open, &cache, now());
    let view = app.view_model(&cache, now());
    let Body::Detail(_, detail) = &view.body else {
        panic!("the detail is shown, not {:?}", view.body);
    };
    let text: Vec<String> = detail
        .lines
        .iter()
        .map(|line| line.iter().map(|c| c.text.as_str()).collect())
        .collect();
    let text = text.join("\n");
    assert!(text.contains("unknown"), "{text}");
    assert!(text.contains("cannot read nodes (forbidden)"), "{text}");
    assert!(text.contains("agent-n1new"), "{text}");
    assert!(!text.contains("node is gone"), "{text}");
}

/// DaemonSets forbidden: the body says so instead of waiting for the
/// DaemonSet to appear.
#[test]
fn forbidden_daemonsets_are_stated_not_awaited() {
    let mut cache = fixtures::started();
    cache.apply(
        WatchUpdate::Forbidden(StreamKind::DaemonSets, "403 Forbidden".into()),
        now(),
    );
    let app = viewer_app(&mut cache);
    let view = app.view_model(&cache, now());
    let Body::Empty(cell) = &view.body else {
        panic!("an explanation, not {:?}", view.body);
    };
    assert_eq!(
        cell.text,
        "view limited: cannot list daemonsets (forbidden) — the daemonset is not shown"
    );
    // Listing them, with no DaemonSet named: it says how to name a namespace.
    let mut listing = App::new(app.info.clone(), None, (80, 24));
    listing.refresh(&mut cache, now());
    let view = listing.view_model(&cache, now());
    let Body::Empty(cell) = &view.body else {
        panic!("an explanation, not {:?}", view.body);
    };
    assert!(cell.text.contains("-n NAMESPACE"), "{}", cell.text);
}
