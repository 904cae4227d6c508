//! The console on a GitOps-owned DaemonSet: the header names the owner (at
//! 80×24 too), a pause a GitOps controller reverted is not shown as paused,
//! and a reverted rollback of a RollingUpdate DaemonSet is named.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use super::app::App;
use super::fixtures::{self, list, now};
use super::view_model::ConsoleInfo;
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::model::DaemonSet;

fn argo_owned(reverted: bool) -> DaemonSet {
    let mut ds = fixtures::agent_v2();
    let annotations = ds.metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert(
        "argocd.argoproj.io/tracking-id".into(),
        "node-agents:apps/DaemonSet:kube-system/agent".into(),
    );
    if reverted {
        annotations.insert("rollcall.dev/paused-by".into(), "ana@box".into());
        annotations.insert(
            "rollcall.dev/saved-update-strategy".into(),
            r#"{"type":"RollingUpdate"}"#.into(),
        );
        if let Some(strategy) = ds.spec.as_mut().and_then(|s| s.update_strategy.as_mut()) {
            strategy.type_ = Some("RollingUpdate".into());
        }
        ds.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("argocd-controller".into()),
            operation: Some("Update".into()),
            fields_v1: Some(FieldsV1(
                json!({"f:spec": {"f:updateStrategy": {"f:type": {}}}}),
            )),
            time: Some(Time(now())),
            ..ManagedFieldsEntry::default()
        }]);
    }
    ds
}

fn screen(ds: DaemonSet) -> (String, App, Cache) {
    let mut cache = fixtures::mid_rollout();
    list(&mut cache, WatchUpdate::DaemonSet, vec![ds]);
    let info = ConsoleInfo {
        context: "kind-test".into(),
        server: "https://127.0.0.1:6443/".into(),
        note: None,
    };
    let mut app = App::new(
        info,
        crate::model::Target::from_key("kube-system/agent"),
        (80, 24),
    );
    app.refresh(&mut cache, now());
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let view = app.view_model(&cache, now());
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let text = (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n");
    (text, app, cache)
}

#[test]
fn header_names_the_owner_at_80x24() {
    let (text, _, _) = screen(argo_owned(false));
    assert!(
        text.contains("managed by Argo CD app node-agents"),
        "{text}"
    );
    let (plain, _, _) = screen(fixtures::agent_v2());
    assert!(!plain.contains("managed by"), "{plain}");
}

#[test]
fn a_reverted_pause_is_not_shown_as_paused() {
    let (_, app, cache) = screen(argo_owned(true));
    let header = app.view_model(&cache, now()).header.unwrap();
    assert!(
        header
            .state
            .text
            .starts_with("pause reverted by argocd-controller at "),
        "{}",
        header.state.text
    );
    assert!(
        !header.state.text.contains("paused"),
        "{}",
        header.state.text
    );
}

#[test]
fn a_reverted_rolling_update_rollback_is_shown_in_the_header() {
    let mut ds = argo_owned(false);
    let before = now() - jiff::SignedDuration::from_secs(5);
    let annotations = ds.metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert("rollcall.dev/rollback-to".into(), "1".into());
    annotations.insert("rollcall.dev/updated-at".into(), before.to_string());
    if let Some(strategy) = ds.spec.as_mut().and_then(|s| s.update_strategy.as_mut()) {
        strategy.type_ = Some("RollingUpdate".into());
    }
    let healed = |at: jiff::Timestamp| {
        vec![ManagedFieldsEntry {
            manager: Some("argocd-controller".into()),
            operation: Some("Update".into()),
            fields_v1: Some(FieldsV1(json!({"f:spec": {"f:template": {}}}))),
            time: Some(Time(at)),
            ..ManagedFieldsEntry::default()
        }]
    };
    let state = |ds: DaemonSet| {
        let (_, app, cache) = screen(ds);
        app.view_model(&cache, now()).header.unwrap().state.text
    };
    ds.metadata.managed_fields = Some(healed(now()));
    let text = state(ds.clone());
    assert!(
        text.starts_with("rollback reverted by argocd-controller at "),
        "{text}"
    );
    // A template write before the rollback is not a revert of it.
    ds.metadata.managed_fields = Some(healed(before - jiff::SignedDuration::from_secs(1)));
    let text = state(ds);
    assert!(!text.contains("reverted"), "{text}");
}
