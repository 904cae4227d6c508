//! The fleet matrix drawn: rendered-frame snapshots at 80×24 and 200×60
//! with a live, a stale, an unreachable, a drifted, a paused and a
//! not-found cluster; the filter and the sort as the keys apply them; the
//! DaemonSet list; and the cell colours a snapshot cannot show.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

use super::run::{FleetScreen, FleetState, Mode};
use super::{FleetRequest, view::matrix_vm};
use crate::engine::fixtures::{daemonset, revision_of};
use crate::fleet::connection::ConnectionState;
use crate::fleet::live::matrix::Matrix;
use crate::fleet::live::row::{ClusterView, Link, Observation};
use crate::fleet::report::Read;
use crate::model::Target;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::annotations::{PAUSE_REASON, PAUSED_BY};
use crate::tui::fixtures::{self, now};

const CONTEXTS: [&str; 6] = [
    "prod-eu-west-1",
    "prod-us-east-1",
    "prod-ap-south-1",
    "staging-canary",
    "team-payments-sandbox",
    "dev",
];

/// The fixture cluster's cells, its DaemonSet changed by `edit`.
fn view(edit: impl Fn(&mut crate::model::DaemonSet)) -> ClusterView {
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let mut v2 = fixtures::agent_v2();
    edit(&mut v2);
    let revisions = vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)];
    let snapshot = Snapshot::new(v2, fixtures::nodes(), fixtures::pods(), revisions);
    ClusterView::of(&Read::of(&snapshot, now()).expect("the report builds"))
}

pub(super) fn fleet() -> Matrix {
    let mut matrix = Matrix::new(
        "kube-system/agent".to_owned(),
        CONTEXTS.iter().map(|c| (*c).to_owned()).collect(),
        None,
    );
    let plain = view(|_| {});
    let paused = view(|ds| {
        let annotations = ds.metadata.annotations.get_or_insert_with(Default::default);
        annotations.insert(PAUSED_BY.into(), "ana@box".into());
        annotations.insert(PAUSE_REASON.into(), "node-03 CrashLoopBackOff".into());
    });
    let drifted = view(|ds| {
        if let Some(spec) = ds.spec.as_mut()
            && let Some(pod) = spec.template.spec.as_mut()
        {
            pod.containers[0].image = Some("registry.example/agent:v3".into());
        }
    });
    let observed = |link: Link, view: &ClusterView| Observation {
        link,
        view: Some(view.clone()),
    };
    matrix.observe(0, observed(Link::Live, &plain));
    matrix.observe(1, observed(Link::Live, &paused));
    matrix.observe(
        1,
        Observation {
            link: Link::Stale {
                since: fixtures::at_offset(-12),
                why: "pods: connection refused".into(),
            },
            view: None,
        },
    );
    matrix.set_link(
        2,
        Link::Failed {
            state: ConnectionState::Unreachable,
            message: "connecting to https://10.20.0.4:6443: tcp connect error: connection refused"
                .into(),
        },
    );
    matrix.observe(3, observed(Link::Live, &drifted));
    matrix.set_link(
        4,
        Link::Failed {
            state: ConnectionState::NotFound,
            message: "daemonset kube-system/agent not found".into(),
        },
    );
    matrix.observe(5, observed(Link::Live, &plain));
    matrix
}

pub(super) fn state(matrix: Matrix) -> FleetState {
    let mut state = FleetState::new(FleetScreen {
        contexts: CONTEXTS.iter().map(|c| (*c).to_owned()).collect(),
        daemonset: Some(matrix.daemonset.clone()),
        reference: None,
        simulated: true,
    });
    state.mode = Mode::Matrix(matrix);
    state
}

pub(super) fn draw(state: &FleetState, (width, height): (u16, u16)) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal
        .draw(|frame| state.render(frame, now()))
        .expect("draws");
    terminal.backend().buffer().clone()
}

pub(super) fn text(buffer: &Buffer) -> String {
    crate::tui::layout_tests::text(buffer)
}

pub(super) fn press(state: &mut FleetState, keys: &[KeyCode]) -> Vec<FleetRequest> {
    let mut asked = Vec::new();
    for code in keys {
        let key = KeyEvent::new(*code, KeyModifiers::NONE);
        let action = state.action_for(&key).expect("a bound key");
        if let Ok(Some(request)) = state.update(action) {
            asked.push(request);
        }
    }
    asked
}

#[test]
fn the_matrix_at_80x24() {
    let screen = text(&draw(&state(fleet()), (80, 24)));
    insta::assert_snapshot!(screen);
    for word in ["live", "stale 12s", "unreachable: con…", "not found"] {
        assert!(screen.contains(word), "{word} missing:\n{screen}");
    }
}

#[test]
fn the_matrix_at_200x60() {
    let screen = text(&draw(&state(fleet()), (200, 60)));
    insta::assert_snapshot!(screen);
    for word in [
        "paused by ana@box: node-03 CrashLoopBackOff",
        "image",
        "SIMULATED",
        "≠",
    ] {
        assert!(screen.contains(word), "{word} missing:\n{screen}");
    }
}

#[test]
fn filtered_by_context_and_sorted_by_trouble() {
    let mut state = state(fleet());
    press(
        &mut state,
        &[
            KeyCode::Char('/'),
            KeyCode::Char('p'),
            KeyCode::Char('r'),
            KeyCode::Char('o'),
            KeyCode::Char('d'),
            KeyCode::Enter,
            KeyCode::Char('s'),
        ],
    );
    let screen = text(&draw(&state, (80, 24)));
    insta::assert_snapshot!(screen);
    let rows: Vec<&str> = screen
        .lines()
        .skip(4)
        .filter(|line| !line.trim().is_empty())
        .take(3)
        .collect();
    assert!(
        rows[0].starts_with("prod-ap-sou")
            && rows[1].starts_with("prod-us-east-1")
            && rows[2].starts_with("prod-eu-west-1"),
        "only the prod clusters, trouble (unreachable, stale) first:\n{screen}"
    );
    assert!(
        !screen.contains("staging") && !screen.contains("\ndev "),
        "{screen}"
    );
    assert!(screen.contains("filter /prod") && screen.contains("sort trouble"));
}

#[test]
fn enter_asks_for_the_selected_clusters_console() {
    let mut state = state(fleet());
    let asked = press(&mut state, &[KeyCode::Down, KeyCode::Down, KeyCode::Enter]);
    assert_eq!(asked, [FleetRequest::Open(2)]);
    let screen = text(&draw(&state, (80, 24)));
    assert!(
        screen.contains("opening the console on prod-ap-south-1"),
        "{screen}"
    );
}

#[test]
fn connection_cells_are_coloured_by_how_far_from_live() {
    let state = state(fleet());
    let buffer = draw(&state, (200, 60));
    let matrix = match &state.mode {
        Mode::Matrix(matrix) => matrix,
        Mode::Picking(_) => unreachable!("a matrix"),
    };
    let vm = matrix_vm(matrix, true, now(), (200, 60));
    let column = vm.headings[0].1 + 1;
    let colour = |row: u16| buffer[(column, 4 + row)].fg;
    assert_eq!(colour(0), Color::Green, "live");
    assert_eq!(colour(1), Color::Yellow, "stale");
    assert_eq!(colour(2), Color::Red, "unreachable");
    assert_eq!(colour(3), Color::Yellow, "drifted");
}

#[test]
fn the_daemonset_list_counts_clusters_and_enter_chooses() {
    let mut state = FleetState::new(FleetScreen {
        contexts: vec!["a".into(), "b".into(), "c".into()],
        daemonset: None,
        reference: None,
        simulated: false,
    });
    let target = |ns: &str, name: &str| Target {
        namespace: ns.into(),
        name: name.into(),
    };
    if let Mode::Picking(list) = &mut state.mode {
        list.add(
            "a",
            Ok(vec![
                target("kube-system", "agent"),
                target("logging", "fluent-bit"),
            ]),
        );
        list.add("b", Ok(vec![target("kube-system", "agent")]));
        list.add("c", Err("connection refused".into()));
    }
    let screen = text(&draw(&state, (80, 24)));
    insta::assert_snapshot!(screen);
    assert!(screen.contains("2 of 3 clusters listed · 1 failed (c: connection refused)"));
    let asked = press(&mut state, &[KeyCode::Enter]);
    assert_eq!(asked, [FleetRequest::Choose("kube-system/agent".into())]);
    assert!(matches!(state.mode, Mode::Matrix(_)));
}

#[test]
fn the_title_says_simulated_once_a_server_says_it_is_the_embedded_cluster() {
    let mut state = state(fleet());
    state.simulated = false;
    let title = |state: &FleetState| {
        text(&draw(state, (80, 24)))
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(!title(&state).contains("SIMULATED"), "{}", title(&state));
    state.on_connected(false);
    assert!(!title(&state).contains("SIMULATED"), "a real server");
    state.on_connected(true);
    assert!(title(&state).contains("SIMULATED"), "{}", title(&state));
    state.on_connected(false);
    assert!(
        title(&state).contains("SIMULATED"),
        "one simulated member is enough"
    );
}
