//! The console's rollout keys and fit: `a`, `n` and `A` on a step whose
//! node will not fit ask in a dialog of their own that names the node and
//! why (answered with `y` only: Esc or `n` sends nothing); a step that
//! preempts names its victims in its confirmation and its journal note.

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::json;

use super::confirm::Modal;
use super::fixtures::{self, list, now};
use super::keymap::{Action, Context};
use super::ops_tests::{app_on, select, writes};
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::cluster::status::StreamKind;
use crate::engine::fixtures::{daemonset, revision_of};
use crate::model::{ResourceList, Shared, UsagePod};
use crate::ops::write::Write;

/// The mid-rollout fixture with node usage known: every node allocates 1
/// cpu, the new revision asks 900m, and `others` run beside the daemon pods
/// ((node, namespace, name, cpu, priority) each).
fn cache_with(others: &[(&str, &str, &str, &str, i32)]) -> Cache {
    let mut cache = fixtures::started();
    cache.stream_started(StreamKind::NodeUsage);
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let mut v2 = fixtures::agent_v2();
    if let Some(spec) = v2.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
        spec.containers[0].resources = Some(ResourceRequirements {
            requests: Some([("cpu".to_owned(), Quantity("900m".into()))].into()),
            ..ResourceRequirements::default()
        });
    }
    let nodes = fixtures::nodes().into_iter().map(|mut node| {
        let mut allocatable = ResourceList::default();
        allocatable.set("cpu", 1000);
        allocatable.set("pods", 110);
        node.status.allocatable = Shared::new(allocatable);
        node
    });
    list(&mut cache, WatchUpdate::Node, nodes.collect());
    list(&mut cache, WatchUpdate::DaemonSet, vec![v2.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)],
    );
    list(&mut cache, WatchUpdate::Pod, fixtures::pods());
    let usage = others
        .iter()
        .map(|(node, namespace, name, cpu, priority)| {
            serde_json::from_value::<UsagePod>(json!({
                "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
                "spec": {"nodeName": node, "priority": priority,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
                "status": {"phase": "Running"}
            }))
            .expect("a usage pod")
        })
        .collect();
    list(&mut cache, WatchUpdate::Usage, usage);
    cache
}

#[test]
fn advancing_a_node_that_will_not_fit_asks_in_its_own_words_and_esc_sends_nothing() {
    let mut cache = cache_with(&[("node-06", "shop", "web", "500m", 0)]);
    let mut app = app_on(&mut cache);
    select(&mut app, "node-06");
    assert!(app.update(Action::AdvanceSelected, &cache, now()).is_none());
    let Some(Modal::Confirm(confirm)) = &app.ops.modal else {
        panic!("a dialog: {:?}", app.ops.modal)
    };
    assert_eq!(confirm.title, "node-06 won't fit: advance anyway?");
    assert!(
        confirm.lines[0].starts_with("node-06: won't fit: Insufficient cpu: needs 900m, 500m free"),
        "{:?}",
        confirm.lines
    );
    assert_eq!(app.ops.context(), Some(Context::Confirm), "answered with y");
    assert!(app.update(Action::Cancel, &cache, now()).is_none());
    assert!(app.ops.modal.is_none(), "Esc closes it, nothing sent");

    app.update(Action::AdvanceSelected, &cache, now());
    let sent = writes(app.update(Action::Confirm, &cache, now()));
    assert!(
        matches!(&sent[..], [(_, r)] if matches!(&r.write, Write::DeletePod { name, .. } if name == "agent-n6old")),
        "y deletes despite fit: {sent:?}"
    );
}

#[test]
fn a_step_that_preempts_names_the_victims_in_its_confirmation_and_journal() {
    let mut cache = cache_with(&[("node-06", "batch", "job", "600m", -10)]);
    let mut app = app_on(&mut cache);
    select(&mut app, "node-06");
    app.update(Action::AdvanceSelected, &cache, now());
    let Some(Modal::Confirm(confirm)) = &app.ops.modal else {
        panic!("a dialog: {:?}", app.ops.modal)
    };
    assert_eq!(confirm.title, "advance node node-06?", "it fits");
    assert!(
        confirm
            .lines
            .contains(&"node-06: its replacement preempts batch/job (priority -10)".to_owned()),
        "{:?}",
        confirm.lines
    );
    let sent = writes(app.update(Action::Confirm, &cache, now()));
    assert_eq!(
        sent[0].1.record.note.as_deref(),
        Some("preempts batch/job (priority -10)")
    );
}

/// `A` checks the run's first batch: past the failing-pods dialog (`F`),
/// a second dialog names the node that will not fit; `y` starts the run
/// despite fit.
#[test]
fn auto_advance_whose_first_batch_will_not_fit_asks_before_starting() {
    let mut cache = cache_with(&[("node-06", "shop", "web", "500m", 0)]);
    let mut app = app_on(&mut cache);
    app.update(Action::ToggleAuto, &cache, now());
    assert!(
        app.update(Action::Confirm, &cache, now()).is_none(),
        "the form"
    );
    assert!(
        app.update(Action::ConfirmDespite, &cache, now()).is_none(),
        "F: past the failing pods, then the fit dialog"
    );
    let Some(Modal::Confirm(confirm)) = &app.ops.modal else {
        panic!("the fit dialog: {:?}", app.ops.modal)
    };
    assert_eq!(
        confirm.title,
        "node-06 won't fit: start auto-advance anyway?"
    );
    assert!(app.update(Action::Cancel, &cache, now()).is_none());
    assert!(app.ops.modal.is_none() && app.ops.auto.is_none(), "no run");

    app.update(Action::ToggleAuto, &cache, now());
    app.update(Action::Confirm, &cache, now());
    app.update(Action::ConfirmDespite, &cache, now());
    let sent = writes(app.update(Action::Confirm, &cache, now()));
    assert_eq!(sent.len(), 1, "the run's start: {sent:?}");
    let run = app.ops.auto.as_ref().expect("a run");
    assert!(run.run.settings().despite_fit && run.run.settings().despite_failing);
}

/// WHY marks the nodes whose next step fit affects, readable at 80×24:
/// node-06 (old revision, 500m taken) `won't fit`, and with a preemptible
/// job instead, `preempts 1`.
#[test]
fn why_marks_wont_fit_and_preempts_at_80x24() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    for (name, others) in [
        ("wont_fit", [("node-06", "shop", "web", "500m", 0)]),
        ("preempts", [("node-06", "batch", "job", "600m", -10)]),
    ] {
        let mut cache = cache_with(&others);
        let mut app = app_on(&mut cache);
        app.update(Action::Resize(80, 24), &cache, now());
        let view = app.view_model(&cache, now());
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        terminal
            .draw(|frame| frame.render_widget(&view, frame.area()))
            .expect("draws");
        insta::assert_snapshot!(format!("why_marks_{name}"), terminal.backend());
    }
}

/// The plan (`P`) says fit per step: node-06 will not fit.
#[test]
fn the_plan_says_fit_per_step() {
    let mut cache = cache_with(&[("node-06", "shop", "web", "500m", 0)]);
    let mut app = app_on(&mut cache);
    app.update(Action::ShowPlan, &cache, now());
    let Some(Modal::Info { lines, .. }) = &app.ops.modal else {
        panic!("the plan: {:?}", app.ops.modal)
    };
    let step = lines
        .iter()
        .find(|l| l.contains(". node-06"))
        .expect("node-06 is a step");
    assert!(
        step.contains("— won't fit: Insufficient cpu: needs 900m, 500m free"),
        "{step}"
    );
}

/// The detail pane of node-06: allocatable, requested (and by whom), the
/// daemon pod's requests, QoS and priority, and the new revision's fit.
#[test]
fn the_detail_pane_shows_capacity_and_fit() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut cache = cache_with(&[("node-06", "shop", "web", "500m", 0)]);
    let mut app = app_on(&mut cache);
    app.update(Action::Resize(120, 40), &cache, now());
    select(&mut app, "node-06");
    app.update(Action::Open, &cache, now());
    let view = app.view_model(&cache, now());
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .expect("draws");
    insta::assert_snapshot!(terminal.backend());
}
