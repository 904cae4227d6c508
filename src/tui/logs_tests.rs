//! Why a container fails, in the console: the detail pane's "Why it fails"
//! section (last termination, waiting message, newest Warning), and the logs
//! overlay (`l`): the request it makes, the answer it shows (bounded,
//! sanitised, opened at the end), scrolling, errors in words, Esc.

use kube::runtime::watcher;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::App;
use super::effect::Effect;
use super::fixtures::{self, event, now};
use super::keymap::{Action, Context, action_for};
use super::logs::{LogsContent, LogsRequest, LogsResult, TAIL_LINES};
use super::logs_link::describe;
use super::view_model::ConsoleInfo;
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::engine::fixtures::pod;
use crate::model::{ContainerState, StateDetail};

/// The mid-rollout fixture with node-03's crash-looping pod telling why:
/// exit code 1 and the exec error in its last termination, the back-off in
/// its waiting message, and a newer Warning than the BackOff.
fn crashing() -> Cache {
    let mut cache = fixtures::mid_rollout();
    let mut crash = pod("agent-n3new", "node-03", "h2")
        .created(3200)
        .phase("Running")
        .waiting("CrashLoopBackOff", 4)
        .build();
    let container = &mut crash.status.container_statuses[0];
    container.state.waiting.as_mut().expect("waiting").message =
        Some("back-off 1m20s restarting failed container=main pod=agent-n3new_kube-system".into());
    container.last_state = ContainerState {
        terminated: Some(Box::new(StateDetail {
            reason: Some("Error".into()),
            message: Some("exec /usr/bin/agent: exec format error\u{1b}[2J".into()),
            exit_code: Some(1),
            ..StateDetail::default()
        })),
        ..ContainerState::default()
    };
    cache.apply(WatchUpdate::Pod(watcher::Event::Apply(crash)), now());
    let mut warning = event(
        "agent-n3new.2",
        "Pod",
        "agent-n3new",
        "BackOff",
        "Back-off restarting failed container main in pod agent-n3new",
        3590,
    );
    warning.type_ = Some("Warning".into());
    cache.apply(WatchUpdate::PodEvent(watcher::Event::Apply(warning)), now());
    cache
}

fn app_on(cache: &mut Cache, size: (u16, u16)) -> App {
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
    app.refresh(cache, now());
    app
}

fn select_node_03(app: &mut App, cache: &Cache) {
    for action in [Action::Top, Action::Down, Action::Down, Action::Down] {
        app.update(action, cache, now());
    }
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-03"));
}

fn screen(app: &App, cache: &Cache) -> String {
    let (width, height) = app.ui.size;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    let view = app.view_model(cache, now());
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .expect("draw");
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn detail_pane_says_why_the_container_fails() {
    let mut cache = crashing();
    let mut app = app_on(&mut cache, (120, 60));
    select_node_03(&mut app, &cache);
    app.update(Action::Open, &cache, now());
    let text = screen(&app, &cache);
    assert!(text.contains("Why it fails"), "{text}");
    assert!(
        text.contains("main         last termination  exit code 1 (Error)"),
        "{text}"
    );
    assert!(
        text.contains("message           exec /usr/bin/agent: exec format error"),
        "{text}"
    );
    assert!(
        !text.contains("[2J"),
        "escape sequences are stripped: {text}"
    );
    assert!(
        text.contains("waiting           CrashLoopBackOff: back-off 1m20s restarting"),
        "{text}"
    );
    assert!(
        text.contains(
            "newest warning    BackOff 10s ago: Back-off restarting failed container main in pod"
        ),
        "{text}"
    );
}

#[test]
fn detail_pane_of_a_healthy_node_has_no_failure_section() {
    let mut cache = crashing();
    let mut app = app_on(&mut cache, (120, 60));
    app.update(Action::Top, &cache, now());
    app.update(Action::Down, &cache, now());
    app.update(Action::Open, &cache, now());
    assert_eq!(app.ui.selected_node.as_deref(), Some("node-01"));
    assert!(!screen(&app, &cache).contains("Why it fails"));
}

fn crash_request() -> LogsRequest {
    LogsRequest {
        namespace: "kube-system".into(),
        pod: "agent-n3new".into(),
        container: Some("main".into()),
        previous: true,
    }
}

#[test]
fn l_asks_for_the_previous_container_of_a_crash_loop() {
    let mut cache = crashing();
    let mut app = app_on(&mut cache, (120, 30));
    select_node_03(&mut app, &cache);
    let key = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('l'));
    assert_eq!(action_for(Context::Grid, &key), Some(Action::ShowLogs));
    let effect = app.update(Action::ShowLogs, &cache, now());
    assert_eq!(effect, Some(Effect::FetchLogs(crash_request())));
    assert!(screen(&app, &cache).contains("fetching the log…"));
    // A healthy node: its current container.
    app.logs = None;
    app.update(Action::Top, &cache, now());
    app.update(Action::Down, &cache, now());
    let Some(Effect::FetchLogs(request)) = app.update(Action::ShowLogs, &cache, now()) else {
        panic!("no fetch");
    };
    assert_eq!(request.pod, "agent-n1new");
    assert!(!request.previous);
}

#[test]
fn the_overlay_shows_the_end_of_the_log_sanitised_and_scrolls() {
    let mut cache = crashing();
    let mut app = app_on(&mut cache, (120, 30));
    select_node_03(&mut app, &cache);
    app.update(Action::ShowLogs, &cache, now());
    let mut text = (1..=600)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    text.push('\n');
    text.push_str("level=error msg=\"exec format error\"\u{1b}]0;pwned\u{7}\n");
    // An answer for another request is not this overlay's.
    let mut other = crash_request();
    other.pod = "agent-n1new".into();
    app.logs_on_result(LogsResult {
        request: other,
        outcome: Ok("wrong".into()),
    });
    assert_eq!(
        app.logs.as_ref().map(|l| &l.content),
        Some(&LogsContent::Loading)
    );
    app.logs_on_result(LogsResult {
        request: crash_request(),
        outcome: Ok(text),
    });
    let Some(LogsContent::Lines(lines)) = app.logs.as_ref().map(|l| l.content.clone()) else {
        panic!("lines");
    };
    assert_eq!(lines.len(), usize::try_from(TAIL_LINES).expect("fits"));
    assert_eq!(lines[0], "line 102");
    let shown = screen(&app, &cache);
    assert!(
        shown.contains("level=error msg=\"exec format error\""),
        "{shown}"
    );
    assert!(!shown.contains("pwned"), "OSC sequence stripped: {shown}");
    assert!(shown.contains("of 500 · Esc closes"), "{shown}");
    // Scroll keys come from the list bindings.
    let j = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('j'));
    assert_eq!(action_for(Context::Logs, &j), Some(Action::Down));
    app.update(Action::Top, &cache, now());
    let top = screen(&app, &cache);
    assert!(
        top.contains("line 102") && top.contains("lines 1–"),
        "{top}"
    );
    app.update(Action::Down, &cache, now());
    app.update(Action::PageDown, &cache, now());
    let page = app.logs_page();
    assert_eq!(app.logs.as_ref().map(|l| l.scroll), Some(1 + page));
    assert_eq!(
        app.ui.selected_node.as_deref(),
        Some("node-03"),
        "grid untouched"
    );
    app.update(Action::Bottom, &cache, now());
    assert_eq!(app.logs.as_ref().map(|l| l.scroll), Some(500 - page));
    app.update(Action::Back, &cache, now());
    assert!(app.logs.is_none());
    assert!(!screen(&app, &cache).contains("Esc closes"));
}

#[test]
fn errors_show_in_words() {
    let mut cache = crashing();
    let mut app = app_on(&mut cache, (120, 30));
    select_node_03(&mut app, &cache);
    app.update(Action::ShowLogs, &cache, now());
    let status = |code: u16, reason: &str, message: &str| {
        kube::Error::Api(
            kube::core::Status::failure(message, reason)
                .with_code(code)
                .boxed(),
        )
    };
    let request = crash_request();
    let forbidden = describe(&status(403, "Forbidden", "cannot get pods/log"), &request);
    assert!(forbidden.starts_with("not allowed to read the log of kube-system/agent-n3new"));
    let gone = describe(
        &status(404, "NotFound", "pods \"agent-n3new\" not found"),
        &request,
    );
    assert!(gone.starts_with("pod kube-system/agent-n3new not found"));
    let refused = "container \"main\" in pod \"agent-n3new\" is waiting to start: trying and failing to pull image";
    assert_eq!(
        describe(&status(400, "BadRequest", refused), &request),
        refused
    );
    app.logs_on_result(LogsResult {
        request,
        outcome: Err(refused.into()),
    });
    let shown = screen(&app, &cache);
    assert!(shown.contains("no log:"), "{shown}");
    assert!(
        shown.contains("trying and failing to pull image"),
        "{shown}"
    );
}

#[tokio::test]
async fn an_unreachable_cluster_is_said_in_words() {
    // Nothing listens on port 1 of the loopback: the connection is refused at once.
    let config = kube::Config::new("http://127.0.0.1:1".parse().expect("url"));
    let client = kube::Client::try_from(config).expect("client");
    let answer = super::logs_link::fetch(client, &crash_request()).await;
    let message = answer.expect_err("no cluster there");
    assert!(message.starts_with("cluster unreachable: "), "{message}");
}
