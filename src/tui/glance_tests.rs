//! Issue 33, "on call at a glance": every row says its state. A cordoned
//! node's WHY says the plan skips it; a pod on a node where none should be
//! placed (`keep`, counted misscheduled) is marked `!`; a crash loop is
//! marked `!` between its restarts too, and its WHY is the cause
//! (`exit 1: exec format error`), not the kubelet's back-off text. Rendered
//! at 80×24 and 200×60.

use kube::runtime::watcher;

use super::fixtures::{self, now};
use super::tests::{app_on, draw};
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::engine::fixtures::pod;

/// The mid-rollout fixture with node-03's crash loop between two restarts
/// (running again, not Ready, exit 1 last time) and a pod left on the
/// tainted gpu-01 (`keep`: misscheduled by the DaemonSet's count).
fn glance() -> Cache {
    let mut cache = fixtures::mid_rollout();
    let running_again = pod("agent-n3new", "node-03", "h2")
        .created(3200)
        .running_not_ready(3500)
        .running_again(4)
        .last_terminated(1, "Error", "exec format error")
        .build();
    let kept = pod("agent-g1old", "gpu-01", "h1")
        .created(60)
        .ready_since(70)
        .build();
    for p in [running_again, kept] {
        cache.apply(WatchUpdate::Pod(watcher::Event::Apply(p)), now());
    }
    cache
}

/// The grid line of `node`.
fn line_of(screen: &str, node: &str) -> String {
    screen
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == node))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn every_row_says_its_state() {
    for size in [(80, 24), (200, 60)] {
        let mut cache = glance();
        let app = app_on(&mut cache, size);
        let terminal = draw(&app, &cache);
        let screen = super::layout_tests::text(terminal.backend().buffer());
        let crash = line_of(&screen, "node-03");
        assert!(crash.starts_with(" !"), "{size:?}: {crash}");
        assert!(crash.contains("CrashLoopBackOff"), "{size:?}: {crash}");
        assert!(
            crash.contains("exit 1: exec format error"),
            "{size:?}: {crash}"
        );
        assert!(!crash.contains("Back-off"), "{size:?}: {crash}");
        let kept = line_of(&screen, "gpu-01");
        assert!(kept.starts_with(" !"), "misscheduled: {size:?}: {kept}");
        assert!(kept.contains("keep"), "{size:?}: {kept}");
        let cordoned = line_of(&screen, "node-04");
        assert!(
            cordoned.contains("plan skips: cordoned"),
            "{size:?}: {cordoned}"
        );
        insta::assert_snapshot!(
            format!("rows_say_their_state_{}x{}", size.0, size.1),
            terminal.backend()
        );
    }
}

/// The first line of the rendered screen that starts with `prefix`.
fn line_starting(screen: &str, prefix: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_default()
        .to_owned()
}

/// Issue 33 item 2: at 80×24 the GitOps owner never drops from the header
/// (the strategy is cut instead), the title cuts the server URL before the
/// DaemonSet's name, the footer leads with the rollout keys, and a message
/// too long for the status line keeps its start and says `m` shows it whole.
#[test]
fn nothing_that_matters_is_cut_at_80x24() {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let mut ds = crate::engine::fixtures::daemonset("registry.example/agent:v2")
        .rolling(IntOrString::Int(1), IntOrString::Int(0))
        .annotation(
            "argocd.argoproj.io/tracking-id",
            "node-agents:apps/DaemonSet:kube-system/agent",
        )
        .build();
    ds.status = fixtures::agent_v2().status;
    let mut cache = fixtures::mid_rollout();
    fixtures::list(&mut cache, WatchUpdate::DaemonSet, vec![ds]);
    let mut app = app_on(&mut cache, (80, 24));
    app.info.server = "https://api.prod-eu-west-1.k8s.example.com:6443/".into();
    let message = "pause/resume disabled: not allowed to patch daemonsets.apps in kube-system (forbidden by RBAC for user ana)";
    app.ui.error(message);
    let terminal = draw(&app, &cache);
    let screen = super::layout_tests::text(terminal.backend().buffer());
    let title = screen.lines().next().unwrap_or_default();
    assert!(
        title.ends_with("daemonset kube-system/agent"),
        "the name whole, the URL cut: {title}"
    );
    let summary = line_starting(&screen, "kube-system/agent · ");
    assert!(
        summary.contains("managed by Argo CD app node-agents"),
        "{summary}"
    );
    let footer = screen.lines().last().unwrap_or_default();
    assert_eq!(
        footer.trim_end(),
        "a advance  n next  c canary  A auto  p pause  r rollback  P plan  l logs  ? help"
    );
    let status = screen.lines().rev().nth(1).unwrap_or_default();
    assert!(
        status.contains("pause/resume disabled: not allowed to patch daemonsets"),
        "{status}"
    );
    assert!(status.trim_end().ends_with("…[m]"), "{status}");
    insta::assert_snapshot!(terminal.backend());
    // `m` shows it whole.
    app.update(super::keymap::Action::ShowInFull, &cache, now());
    let full = super::layout_tests::text(draw(&app, &cache).backend().buffer());
    let full: String = full
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(full.contains("forbidden by RBAC for user ana"), "{full}");
}

/// Issue 33 item 3: `r` while this console's auto-advance runs refuses up
/// front, with the way out, and opens no revision picker; the `A` form says
/// there are no canaries when none are marked.
#[test]
fn dialogs_refuse_up_front_and_say_what_they_will_do() {
    use super::confirm::Modal;
    use super::keymap::Action;
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (120, 40));
    app.update(Action::ToggleAuto, &cache, now());
    let Some(Modal::AutoForm(form)) = &app.ops.modal else {
        panic!("the auto form: {:?}", app.ops.modal)
    };
    let lines: Vec<String> = form.lines().into_iter().map(|c| c.text).collect();
    assert!(
        lines.iter().any(|l| l.contains("canaries        none:")),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("the nodes marked with c")),
        "{lines:?}"
    );
    app.update(Action::Cancel, &cache, now());

    let (mut app, sent) = super::ops_tests::auto_started(&mut cache);
    for (id, request) in sent {
        super::ops_tests::done(&mut app, id, request);
    }
    app.update(Action::Rollback, &cache, now());
    assert!(app.ops.modal.is_none(), "no picker: {:?}", app.ops.modal);
    let message = app.ui.message.as_ref().map(|m| m.text.clone());
    assert_eq!(
        message.as_deref(),
        Some("rollback refused: auto-advance is running in this console: press A to stop it first"),
    );
}

/// Issue 33 item 4: `p` asks for the pause's reason (optional, as `pause
/// --reason`), typed in a field of its own; Enter goes on to the
/// confirmation, which shows it, and the pause records it with who paused.
#[test]
fn a_pause_says_why() {
    use super::confirm::Modal;
    use super::keymap::{Action, Context, action_for};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut cache = fixtures::mid_rollout();
    let mut app = app_on(&mut cache, (80, 24));
    app.ops = super::ops::OpsConsole::new(false, "kind-admin (ana@jump)".into());
    app.update(Action::TogglePause, &cache, now());
    assert!(matches!(app.ops.modal, Some(Modal::PauseReason(_))));
    assert_eq!(app.ops.context(), Some(Context::ReasonInput));
    // Every character is text here, `y` and `n` included.
    for c in "canary broke edge-01 nodes".chars() {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        let action = action_for(Context::ReasonInput, &key).expect("typed");
        app.update(action, &cache, now());
    }
    app.update(Action::FilterBackspace, &cache, now());
    let screen = super::layout_tests::text(draw(&app, &cache).backend().buffer());
    assert!(
        screen.contains("reason: canary broke edge-01 node▏"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
    app.update(Action::Confirm, &cache, now());
    let Some(Modal::Confirm(confirm)) = &app.ops.modal else {
        panic!("the confirmation: {:?}", app.ops.modal)
    };
    assert!(
        confirm
            .lines
            .iter()
            .any(|l| l == "reason: canary broke edge-01 node"),
        "{:?}",
        confirm.lines
    );
    let sent = super::ops_tests::writes(app.update(Action::Confirm, &cache, now()));
    let written = format!("{sent:?}");
    assert!(written.contains("canary broke edge-01 node"), "{written}");
    assert!(written.contains("kind-admin (ana@jump)"), "{written}");
}

/// Issue 33: the quit dialog during a run says its keys once (its own lines
/// are its keys; the generic `y: yes  n / Esc: no` is not added).
#[test]
fn the_quit_dialog_says_its_keys_once() {
    use super::keymap::Action;
    let mut cache = fixtures::mid_rollout();
    let (mut app, sent) = super::ops_tests::auto_started(&mut cache);
    for (id, request) in sent {
        super::ops_tests::done(&mut app, id, request);
    }
    app.update(Action::Quit, &cache, now());
    let dialog = app.ops.modal.as_ref().expect("the quit dialog").view();
    let text: Vec<String> = dialog.lines.iter().map(|c| c.text.clone()).collect();
    assert_eq!(
        text.iter().filter(|l| l.contains("Esc")).count(),
        1,
        "{text:?}"
    );
    assert_eq!(
        text.iter().filter(|l| l.starts_with("y:")).count(),
        1,
        "{text:?}"
    );
}

/// Issue 33: the plan (`P`) and ELIG say one word for a node the DaemonSet
/// should not run on: `keep` where a pod stays, `no` where none is.
#[test]
fn the_plan_speaks_elig_words() {
    use super::confirm::Modal;
    use super::keymap::Action;
    let mut cache = glance();
    let mut app = app_on(&mut cache, (120, 40));
    app.update(Action::ShowPlan, &cache, now());
    let Some(Modal::Info { lines, .. }) = &app.ops.modal else {
        panic!("the plan: {:?}", app.ops.modal)
    };
    assert!(
        lines.contains(
            &"skip gpu-01: eligibility keep: taint dedicated=gpu:NoSchedule not tolerated"
                .to_owned()
        ),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("not eligible")),
        "{lines:?}"
    );
}
