//! CRDs registering their kinds, custom resources stored, and namespaces and
//! CRDs finalized after their contents, through the store's public API.

use serde_json::{Value, json};

use super::*;
use crate::sim::store::{DeleteOutcome, Preconditions, StoreError};

fn crd(scope: &str) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": scope,
            "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true}]}})
}

fn widget(name: &str) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "team"}, "spec": {"size": 3}})
}

#[test]
fn a_crd_registers_its_kind_and_takes_its_resources_when_deleted() {
    let store = Store::new();
    assert!(store.resolve("example.com", "v1", "widgets").is_none());
    let created = store
        .create(ResourceKind::crd(), crd("Namespaced"))
        .unwrap();
    assert_eq!(created["status"]["conditions"][1]["type"], "Established");
    let kind = store
        .resolve("example.com", "v1", "widgets")
        .expect("registered");
    assert!(store.resolve("example.com", "v2", "widgets").is_none());
    assert!(store.served_kinds().contains(&kind));
    assert_eq!(kind.api_version(), "example.com/v1");
    assert!(kind.namespaced());

    let stored = store.create(kind, widget("a")).unwrap();
    assert_eq!(stored["metadata"]["generation"], 1);
    assert!(stored["metadata"]["uid"].is_string());
    assert_eq!(
        store.create(kind, widget("a")),
        Err(StoreError::AlreadyExists {
            kind,
            name: "a".into()
        })
    );
    assert_eq!(store.list(kind, Some("team")).0.len(), 1);
    assert_eq!(store.list(kind, Some("other")).0.len(), 0);

    let mut changes = store.subscribe();
    // No runtime: the finalization runs at once.
    store
        .delete(
            ResourceKind::crd(),
            "",
            "widgets.example.com",
            &Preconditions::default(),
        )
        .unwrap();
    assert!(store.get(kind, "team", "a").is_none(), "its resources went");
    assert!(store.resolve("example.com", "v1", "widgets").is_none());
    assert!(
        store
            .get(ResourceKind::crd(), "", "widgets.example.com")
            .is_none()
    );
    let seen: Vec<_> = changes
        .try_batch()
        .unwrap()
        .iter()
        .map(|event| (event.kind.plural(), event.event_type))
        .collect();
    assert_eq!(
        seen,
        [
            ("customresourcedefinitions", EventType::Modified),
            ("widgets", EventType::Deleted),
            ("customresourcedefinitions", EventType::Deleted),
        ],
        "marked, contents removed, then removed"
    );
}

#[test]
fn invalid_or_changed_crds_are_refused() {
    let store = Store::new();
    let mut nameless = crd("Namespaced");
    nameless["metadata"]["name"] = json!("widgets");
    assert!(matches!(
        store.create(ResourceKind::crd(), nameless),
        Err(StoreError::Invalid { ref field, .. }) if field == "metadata.name"
    ));
    store
        .create(ResourceKind::crd(), crd("Namespaced"))
        .unwrap();
    let mut rescoped = store
        .get(ResourceKind::crd(), "", "widgets.example.com")
        .unwrap();
    rescoped["spec"]["scope"] = json!("Cluster");
    assert!(matches!(
        store.update(ResourceKind::crd(), rescoped),
        Err(StoreError::Invalid { ref field, .. }) if field == "spec.scope"
    ));
    let mut renamed = store
        .get(ResourceKind::crd(), "", "widgets.example.com")
        .unwrap();
    renamed["spec"]["names"]["shortNames"] = json!(["wdg"]);
    store.update(ResourceKind::crd(), renamed).unwrap();
    let kind = store.resolve("example.com", "v1", "widgets").unwrap();
    assert_eq!(kind.short_names(), ["wdg"], "an update re-registers");
}

#[test]
fn a_deleted_namespace_takes_inert_objects_too() {
    let store = Store::new();
    let config_maps = ResourceKind::from_group_plural("", "configmaps").unwrap();
    let cm = json!({"metadata": {"name": "c", "namespace": "team"}, "data": {"a": "b"}});
    store.create(config_maps, cm).unwrap();
    store
        .delete(
            ResourceKind::Namespace,
            "",
            "team",
            &Preconditions::default(),
        )
        .unwrap();
    assert!(store.get(config_maps, "team", "c").is_none());
    assert!(store.get(ResourceKind::Namespace, "", "team").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_namespace_being_deleted_refuses_new_objects_until_it_is_gone() {
    let store = Store::new();
    let config_maps = ResourceKind::from_group_plural("", "configmaps").unwrap();
    let cm = |name: &str| json!({"metadata": {"name": name, "namespace": "team"}});
    store.create(config_maps, cm("a")).unwrap();
    let outcome = store
        .delete(
            ResourceKind::Namespace,
            "",
            "team",
            &Preconditions::default(),
        )
        .unwrap();
    assert!(matches!(outcome, DeleteOutcome::Terminating(_)));
    let namespace = store.get(ResourceKind::Namespace, "", "team").unwrap();
    assert_eq!(namespace["status"]["phase"], "Terminating");
    assert!(
        store.get(config_maps, "team", "a").is_some(),
        "contents stay until finalized"
    );
    assert!(matches!(
        store.create(config_maps, cm("b")),
        Err(StoreError::Forbidden { .. })
    ));
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert!(store.get(ResourceKind::Namespace, "", "team").is_none());
    assert!(store.get(config_maps, "team", "a").is_none());
}
