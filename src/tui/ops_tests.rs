//! Tests of the console's rollout keys: every action waits in a confirmation
//! holding its value; read-only and RBAC denials disable keys with a reason;
//! auto-advance and rollback produce exactly the writes they should.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::App;
use super::confirm::Modal;
use super::effect::Effect;
use super::fixtures::{self, now};
use super::keymap::{Action, Context};
use super::ops::{OpsConsole, OpsEvent};
use super::view_model::ConsoleInfo;
use crate::cluster::cache::Cache;
use crate::ops::rbac::{Access, Operation, Permission, Permissions};
use crate::ops::write::{Outcome, Write, WriteEvent};

pub(super) fn app_on(cache: &mut Cache) -> App {
    let info = ConsoleInfo {
        context: "kind-test".into(),
        server: "https://127.0.0.1:6443/".into(),
        note: None,
    };
    let mut app = App::new(
        info,
        crate::model::Target::from_key("kube-system/agent"),
        (120, 24),
    );
    app.refresh(cache, now());
    app.ops = OpsConsole::new(false, "ana@box".into());
    app
}

pub(super) fn select(app: &mut App, node: &str) {
    app.ui.selected_node = Some(node.to_owned());
}

pub(super) fn writes(effect: Option<Effect>) -> Vec<(u64, crate::ops::write::WriteRequest)> {
    match effect {
        Some(Effect::Writes(writes)) => writes,
        other => panic!("expected writes, got {other:?}"),
    }
}

pub(super) fn done(app: &mut App, id: u64, request: crate::ops::write::WriteRequest) {
    done_at(app, id, request, None);
}

/// Answers `request` as done; a DaemonSet patch returns `resource_version`.
fn done_at(
    app: &mut App,
    id: u64,
    request: crate::ops::write::WriteRequest,
    resource_version: Option<&str>,
) {
    let result = Ok(match request.write {
        Write::DeletePod { .. } => Outcome::PodDeleted,
        _ => Outcome::DaemonSetPatched {
            resource_version: resource_version.map(str::to_owned),
        },
    });
    app.ops_on_event(
        OpsEvent::Write(Box::new(WriteEvent {
            id,
            request,
            result,
            journal_error: None,
        })),
        now(),
    );
}

/// A console on `cache` that has just confirmed auto-advance, and the writes it sent.
/// node-03 crash-loops on the new revision: after the form's `y`, a dialog of
/// its own asks to advance past it, and only `F` answers it.
pub(super) fn auto_started(
    cache: &mut Cache,
) -> (App, Vec<(u64, crate::ops::write::WriteRequest)>) {
    let mut app = app_on(cache);
    app.update(Action::ToggleAuto, cache, now());
    assert!(app.update(Action::Confirm, cache, now()).is_none());
    let Some(Modal::Confirm(confirm)) = &app.ops.modal else {
        panic!("the failing-pods dialog: {:?}", app.ops.modal)
    };
    assert!(confirm.title.contains("failing"), "{}", confirm.title);
    // The footer names the key that answers it, not an ordinary dialog's y.
    let context = app.ops.context().expect("a dialog");
    assert_eq!(context, Context::FailingConfirm);
    let footer = super::keymap::hints(context);
    assert!(
        footer.contains(&("F".to_owned(), "advance anyway")),
        "{footer:?}"
    );
    assert!(!footer.iter().any(|(key, _)| key == "y"), "{footer:?}");
    assert!(
        app.update(Action::Confirm, cache, now()).is_none(),
        "y does not answer it"
    );
    assert!(app.ops.modal.is_some(), "the dialog stays");
    let sent = writes(app.update(Action::ConfirmDespite, cache, now()));
    (app, sent)
}

#[test]
fn advance_waits_for_yes_and_sends_one_uid_delete() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache);
    select(&mut app, "node-06");
    assert!(app.update(Action::AdvanceSelected, &cache, now()).is_none());
    assert_eq!(app.ops.context(), Some(Context::Confirm));
    let mut terminal = Terminal::new(TestBackend::new(120, 24)).unwrap();
    let view = app.view_model(&cache, now());
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .unwrap();
    insta::assert_snapshot!(terminal.backend());
    assert!(
        app.update(Action::Cancel, &cache, now()).is_none(),
        "no means nothing is sent"
    );
    assert!(app.ops.modal.is_none());

    app.update(Action::AdvanceSelected, &cache, now());
    let sent = writes(app.update(Action::Confirm, &cache, now()));
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].1.write,
        Write::DeletePod {
            namespace: "kube-system".into(),
            name: "agent-n6old".into(),
            uid: "uid-agent-n6old".into()
        }
    );
    app.update(Action::AdvanceNext, &cache, now());
    assert!(
        app.ops.modal.is_none(),
        "single flight: no new action while a write is pending"
    );
    assert!(
        app.ui
            .message
            .as_ref()
            .is_some_and(|m| m.text.contains("busy"))
    );
}

#[test]
fn skipped_nodes_say_why() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache);
    select(&mut app, "node-04");
    app.update(Action::AdvanceSelected, &cache, now());
    assert!(app.ops.modal.is_none());
    let message = app.ui.message.clone().unwrap().text;
    assert_eq!(message, "node node-04 is skipped: cordoned");
}

#[test]
fn read_only_and_rbac_disable_keys_with_a_reason() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache);
    app.ops = OpsConsole::new(true, "ana".into());
    select(&mut app, "node-06");
    app.update(Action::AdvanceSelected, &cache, now());
    assert!(app.ops.modal.is_none());
    assert!(
        app.ui
            .message
            .clone()
            .unwrap()
            .text
            .starts_with("read-only mode")
    );

    app.ops = OpsConsole::new(false, "ana".into());
    let delete = Permission {
        verb: "delete",
        group: "",
        resource: "pods",
    };
    app.ops.permissions = Some(Permissions::from_answers(
        "kube-system",
        [(delete, Access::Denied(String::new()))].into(),
    ));
    app.update(Action::AdvanceSelected, &cache, now());
    assert!(app.ops.modal.is_none());
    assert_eq!(
        app.ui.message.clone().unwrap().text,
        "advance disabled: not allowed to delete pods in namespace kube-system"
    );
    assert!(
        app.ops
            .permissions
            .as_ref()
            .unwrap()
            .allows(Operation::Pause)
            .is_ok()
    );
}

#[test]
fn dialogs_are_modal() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache);
    select(&mut app, "node-06");
    app.update(Action::AdvanceSelected, &cache, now());
    let q = crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('q'),
        crossterm::event::KeyModifiers::NONE,
    ));
    assert_eq!(
        app.action_for_event(&q),
        None,
        "q must not quit over a confirmation"
    );
    let y = crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('y'),
        crossterm::event::KeyModifiers::NONE,
    ));
    assert_eq!(app.action_for_event(&y), Some(Action::Confirm));
}

#[test]
fn rollback_picks_previous_shows_diff_and_moves_nodes_back() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache);
    app.update(Action::Rollback, &cache, now());
    let Some(Modal::Rollback(picker)) = &app.ops.modal else {
        panic!("{:?}", app.ops.modal)
    };
    assert_eq!(picker.revisions[picker.selected].0, 1);
    assert!(
        picker
            .diff
            .iter()
            .any(|l| l.starts_with('+') && l.contains("agent:v1")),
        "{:?}",
        picker.diff
    );
    app.update(Action::Confirm, &cache, now());
    assert_eq!(app.ops.context(), Some(Context::Confirm));
    let sent = writes(app.update(Action::Confirm, &cache, now()));
    assert!(
        matches!(sent[0].1.write, Write::PatchTemplate { .. }),
        "{sent:?}"
    );
    assert!(
        matches!(sent[1].1.write, Write::PatchState { .. }),
        "{sent:?}"
    );
    assert!(
        app.ops.auto.is_some(),
        "OnDelete: nodes move back through the advance machinery"
    );
}

#[test]
fn a_rolling_update_rollback_records_its_revision_and_leaves_no_run() {
    use crate::ops::state::Mode;
    let mut cache = fixtures::mid_rollout();
    let mut rolling = fixtures::agent_v2();
    if let Some(spec) = rolling.spec.as_mut() {
        spec.update_strategy = Some(k8s_openapi::api::apps::v1::DaemonSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: None,
        });
    }
    fixtures::list(
        &mut cache,
        crate::cluster::cache::WatchUpdate::DaemonSet,
        vec![rolling],
    );
    let mut app = app_on(&mut cache);
    app.update(Action::Rollback, &cache, now());
    app.update(Action::Confirm, &cache, now());
    let sent = writes(app.update(Action::Confirm, &cache, now()));
    let Write::PatchState { after, .. } = &sent[1].1.write else {
        panic!("{sent:?}")
    };
    // The controller moves the nodes: nothing drives a run that could stall.
    let expected = (Mode::Idle, Some(1), None, Some(now()));
    let got: (Mode, Option<i64>, _, _) = (
        after.mode,
        after.rollback_to,
        after.heartbeat,
        after.updated_at,
    );
    assert_eq!(got, expected, "{after:?}");
    assert!(app.ops.auto.is_none());
}

#[test]
fn auto_advance_starts_with_the_first_plan_node() {
    let mut cache = fixtures::mid_rollout();
    let (mut app, sent) = auto_started(&mut cache);
    assert_eq!(sent.len(), 1, "first the state write");
    assert!(
        app.ops_on_change(&cache, now()).is_none(),
        "nothing while a write is pending"
    );
    for (id, request) in sent {
        done(&mut app, id, request);
    }
    let deletes = writes(app.ops_on_change(&cache, now()));
    let nodes: Vec<_> = deletes
        .iter()
        .filter_map(|(_, r)| r.record.node.clone())
        .collect();
    assert_eq!(
        nodes,
        ["node-06"],
        "cordoned node-04 and NotReady node-05 are skipped"
    );
    app.update(Action::ToggleAuto, &cache, now());
    assert!(app.ops.auto.is_none());
}

/// The lease's renewal is bookkeeping: its success must not replace what
/// the run last said in the status line ("heartbeat: done" did).
#[test]
fn a_heartbeat_write_leaves_the_runs_message_in_place() {
    let mut cache = fixtures::mid_rollout();
    let (mut app, sent) = auto_started(&mut cache);
    let said = app.ui.message.clone().map(|m| m.text);
    assert!(
        said.as_deref()
            .is_some_and(|t| t.starts_with("auto-advance started")),
        "{said:?}"
    );
    for (id, mut request) in sent {
        request.record.action = crate::ops::journal_action::JournalAction::Heartbeat;
        done(&mut app, id, request);
    }
    assert_eq!(app.ui.message.clone().map(|m| m.text), said);
}

/// Read-your-writes: right after its start write the watch may still hold
/// the DaemonSet as it was (a rollback read the old pause back and stopped
/// itself); the run decides nothing until the cache shows the write.
#[test]
fn auto_advance_waits_until_the_watch_shows_its_own_write() {
    let mut cache = fixtures::mid_rollout();
    let (mut app, sent) = auto_started(&mut cache);
    for (id, request) in sent {
        done_at(&mut app, id, request, Some("41"));
    }
    assert!(
        app.ops_on_change(&cache, now()).is_none(),
        "the cache does not hold the write yet"
    );
    let mut echoed = cache
        .daemonset(&crate::model::Target::from_key("kube-system/agent").expect("a key"))
        .cloned()
        .expect("target");
    echoed.metadata.resource_version = Some("41".into());
    fixtures::list(
        &mut cache,
        crate::cluster::cache::WatchUpdate::DaemonSet,
        vec![echoed],
    );
    let next = writes(app.ops_on_change(&cache, now()));
    let nodes: Vec<_> = next
        .iter()
        .filter(|(_, r)| matches!(r.write, Write::DeletePod { .. }))
        .filter_map(|(_, r)| r.record.node.clone())
        .collect();
    assert_eq!(nodes, ["node-06"], "then the first batch");
    assert!(app.ops.unechoed.is_none());
}

#[test]
fn plan_overlay_lists_order_canaries_and_skips() {
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache);
    app.update(Action::ShowPlan, &cache, now());
    assert_eq!(app.ops.context(), Some(Context::PlanView));
    let Some(Modal::Info { lines, .. }) = &app.ops.modal else {
        panic!("{:?}", app.ops.modal)
    };
    assert!(lines.iter().any(|l| l.contains("1. node-06")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l == "skip node-04: cordoned"),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l == "skip node-05: node not Ready"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("skip gpu-01: eligibility no: taint dedicated=gpu:NoSchedule")),
        "{lines:?}"
    );
    app.update(Action::Cancel, &cache, now());
    assert!(app.ops.modal.is_none());
}

#[test]
fn quitting_while_this_console_drives_auto_asks_then_pauses_before_quitting() {
    let mut cache = fixtures::mid_rollout();
    let (mut app, sent) = auto_started(&mut cache);
    for (id, request) in sent {
        done(&mut app, id, request);
    }
    assert!(app.ops.auto.is_some());
    assert_eq!(app.update(Action::Quit, &cache, now()), None, "asks first");
    assert!(matches!(app.ops.modal, Some(Modal::Confirm(_))));
    app.update(Action::Cancel, &cache, now());
    assert!(app.ops.auto.is_some(), "Esc keeps the run and the console");
    app.update(Action::Quit, &cache, now());
    let sent = writes(app.update(Action::Confirm, &cache, now()));
    assert_eq!(sent.len(), 1);
    match &sent[0].1.write {
        Write::PatchState { after, .. } => {
            let reason = after
                .pause
                .as_ref()
                .and_then(|p| p.reason.clone())
                .unwrap_or_default();
            // The same words a headless run's interrupt writes.
            assert_eq!(reason, "interrupted by ana@box (console closed)");
            let by = after.pause.as_ref().map(|p| p.by.as_str());
            assert_eq!(by, Some("rollcall auto (ana@box)"));
        }
        other => panic!("expected the pause, got {other:?}"),
    }
    assert!(app.ops.auto.is_none());
    assert!(app.ops.quit_when_idle, "quits once the pause is answered");
}

/// Advances node-06 by hand and answers its delete; the status line then
/// says the old pod was deleted and the node is being followed.
fn advanced_node_06(cache: &mut Cache) -> App {
    let mut app = app_on(cache);
    select(&mut app, "node-06");
    app.update(Action::AdvanceSelected, cache, now());
    for (id, request) in writes(app.update(Action::Confirm, cache, now())) {
        done(&mut app, id, request);
    }
    assert_eq!(
        app.ui.message.as_ref().map(|m| m.text.as_str()),
        Some("advance: node node-06 advancing (old pod deleted)")
    );
    app
}

/// The controller's answer to the delete: the old pod gone, `new` in its place.
fn replaced_on_node_06(cache: &mut Cache, new: crate::model::Pod) {
    use crate::cluster::cache::WatchUpdate;
    use kube::runtime::watcher::Event;
    let old = fixtures::pods()
        .into_iter()
        .find(|p| p.node_name() == Some("node-06"))
        .expect("node-06 has a pod");
    cache.apply(WatchUpdate::Pod(Event::Delete(old)), now());
    cache.apply(WatchUpdate::Pod(Event::Apply(new)), now());
}

fn status_line(app: &App) -> (String, bool) {
    let message = app.ui.message.as_ref().expect("a status message");
    (
        message.text.clone(),
        message.level == super::state::Level::Error,
    )
}

/// `advance --wait` follows a node through the batch gate; the console's `n`
/// did not, and its line kept "advancing (old pod deleted)" after the node was
/// Ready. The console now says how the advance ended.
#[test]
fn a_hand_advance_is_followed_until_ready_and_available() {
    use crate::engine::fixtures::pod;
    let mut cache = fixtures::mid_rollout();
    let mut app = advanced_node_06(&mut cache);
    app.ops_on_change(&cache, now());
    assert_eq!(
        status_line(&app).0,
        "advance: node node-06 advancing (old pod deleted)",
        "nothing has happened yet"
    );

    replaced_on_node_06(
        &mut cache,
        pod("agent-n6new", "node-06", "h2")
            .created(3605)
            .running_not_ready(3605)
            .build(),
    );
    app.refresh(&mut cache, fixtures::at_offset(10));
    app.ops_on_change(&cache, fixtures::at_offset(10));
    assert_eq!(
        status_line(&app).0,
        "advance: node node-06 advancing (old pod deleted)",
        "starting is not the end"
    );

    replaced_on_node_06(
        &mut cache,
        pod("agent-n6new", "node-06", "h2")
            .created(3605)
            .ready_since(3615)
            .build(),
    );
    app.refresh(&mut cache, fixtures::at_offset(20));
    app.ops_on_change(&cache, fixtures::at_offset(20));
    assert_eq!(
        status_line(&app),
        (
            "advance: node node-06 on revision 2, Ready and available".to_owned(),
            false
        )
    );
    assert!(
        app.ops.followed.is_none(),
        "followed to its end, no further"
    );
}

#[test]
fn a_hand_advance_whose_replacement_fails_says_why() {
    use crate::engine::fixtures::pod;
    let mut cache = fixtures::mid_rollout();
    let mut app = advanced_node_06(&mut cache);
    replaced_on_node_06(
        &mut cache,
        pod("agent-n6new", "node-06", "h2")
            .created(3605)
            .phase("Running")
            .waiting("CrashLoopBackOff", 2)
            .build(),
    );
    app.refresh(&mut cache, fixtures::at_offset(20));
    app.ops_on_change(&cache, fixtures::at_offset(20));
    let (text, error) = status_line(&app);
    assert!(error, "{text}");
    assert!(
        text.starts_with(
            "advance: node node-06 failed: replacement pod failing (CrashLoopBackOff)"
        ) && text.ends_with("(rollout not paused)"),
        "{text}"
    );
    assert!(app.ops.followed.is_none());
}
