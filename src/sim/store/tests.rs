//! Store behaviour through its public API.

use std::time::Duration;

use serde_json::json;

use super::*;

fn store() -> Store {
    Store::with_options(StoreOptions {
        seed: 7,
        ..StoreOptions::default()
    })
}

fn node(name: &str) -> Value {
    json!({"metadata":{"name":name,"labels":{"pool":"a"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}})
}

fn pod(name: &str, node: &str) -> Value {
    json!({"metadata":{"name":name,"namespace":"default"},"spec":{"nodeName":node,"containers":[{"name":"c","image":"i"}]}})
}

#[test]
fn create_get_list_with_global_resource_version() {
    let store = store();
    let start = store.resource_version();
    let a = store.create(ResourceKind::Node, node("a")).unwrap();
    let b = store.create(ResourceKind::Node, node("b")).unwrap();
    assert_eq!(a["metadata"]["resourceVersion"], (start + 1).to_string());
    assert_eq!(b["metadata"]["resourceVersion"], (start + 2).to_string());
    assert_eq!(a["kind"], "Node");
    assert_eq!(a["apiVersion"], "v1");
    assert!(a["metadata"]["uid"].as_str().unwrap().len() == 36);
    assert_eq!(store.get(ResourceKind::Node, "", "a"), Some(a));
    let (nodes, rv) = store.list(ResourceKind::Node, None);
    assert_eq!(nodes.len(), 2);
    assert_eq!(rv, start + 2);
    assert!(matches!(
        store.create(ResourceKind::Node, node("a")),
        Err(StoreError::AlreadyExists { .. })
    ));
    let typed: Option<crate::model::Node> = store.get_as(ResourceKind::Node, "", "b").unwrap();
    assert!(typed.unwrap().is_ready());
}

#[test]
fn namespaces_scope_lists_and_appear_on_first_use() {
    let store = store();
    store.create(ResourceKind::Pod, pod("p1", "n")).unwrap();
    let mut other = pod("p2", "n");
    other["metadata"]["namespace"] = json!("team");
    store.create(ResourceKind::Pod, other).unwrap();
    assert_eq!(store.list(ResourceKind::Pod, Some("default")).0.len(), 1);
    assert_eq!(store.list(ResourceKind::Pod, Some("team")).0.len(), 1);
    assert_eq!(store.list(ResourceKind::Pod, None).0.len(), 2);
    assert!(store.get(ResourceKind::Namespace, "", "team").is_some());
    let created = store.get(ResourceKind::Pod, "default", "p1").unwrap();
    assert_eq!(created["status"]["phase"], "Pending");
}

#[test]
fn generate_name_gets_a_suffix() {
    let store = store();
    let obj = json!({"metadata":{"generateName":"agent-","namespace":"default"},"spec":{}});
    let created = store.create(ResourceKind::Pod, obj).unwrap();
    let name = created["metadata"]["name"].as_str().unwrap();
    assert!(
        name.starts_with("agent-") && name.len() == "agent-".len() + 5,
        "{name}"
    );
}

#[test]
fn update_is_optimistic_and_merge_patch_removes_keys() {
    let store = store();
    let created = store.create(ResourceKind::Node, node("a")).unwrap();
    let mut stale = created.clone();
    stale["metadata"]["labels"]["pool"] = json!("b");
    let updated = store.update(ResourceKind::Node, stale.clone()).unwrap();
    assert_eq!(updated["metadata"]["labels"]["pool"], "b");
    assert!(matches!(
        store.update(ResourceKind::Node, stale),
        Err(StoreError::Conflict { .. })
    ));
    let patched = store
        .patch_merge(
            ResourceKind::Node,
            "",
            "a",
            &json!({"metadata":{"labels":{"pool":null}}}),
        )
        .unwrap();
    assert!(patched["metadata"]["labels"].get("pool").is_none());
    let rv = store.resource_version();
    let again = store
        .patch_merge(
            ResourceKind::Node,
            "",
            "a",
            &json!({"metadata":{"labels":{"pool":null}}}),
        )
        .unwrap();
    assert_eq!(store.resource_version(), rv, "a no-op patch writes nothing");
    assert_eq!(again, patched);
}

#[test]
fn status_and_spec_are_split() {
    let store = store();
    let created = store.create(ResourceKind::Node, node("a")).unwrap();
    let mut change = created.clone();
    change["status"]["conditions"][0]["status"] = json!("False");
    change["spec"]["unschedulable"] = json!(true);
    let main = store.update(ResourceKind::Node, change.clone()).unwrap();
    assert_eq!(main["spec"]["unschedulable"], true);
    assert_eq!(main["status"]["conditions"][0]["status"], "True");
    change["metadata"]["resourceVersion"] = main["metadata"]["resourceVersion"].clone();
    change["spec"]["unschedulable"] = json!(false);
    let status = store.update_status(ResourceKind::Node, change).unwrap();
    assert_eq!(status["spec"]["unschedulable"], true);
    assert_eq!(status["status"]["conditions"][0]["status"], "False");
}

#[test]
fn delete_checks_preconditions() {
    let store = store();
    store.create(ResourceKind::Node, node("a")).unwrap();
    let wrong = Preconditions {
        uid: Some("nope".into()),
        resource_version: None,
    };
    let err = store
        .delete(ResourceKind::Node, "", "a", &wrong)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Precondition failed: UID in precondition: nope"),
        "{err}"
    );
    let outcome = store
        .delete(ResourceKind::Node, "", "a", &Preconditions::default())
        .unwrap();
    assert!(matches!(outcome, DeleteOutcome::Removed(_)));
    assert!(store.get(ResourceKind::Node, "", "a").is_none());
    assert!(matches!(
        store.delete(ResourceKind::Node, "", "a", &Preconditions::default()),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn dry_run_persists_nothing() {
    let store = store();
    let rv = store.resource_version();
    let dry = WriteOptions {
        dry_run: true,
        ..WriteOptions::default()
    };
    let created = store
        .create_with(ResourceKind::Node, node("a"), CreateMode::Api, dry)
        .unwrap();
    assert_eq!(created.key.name, "a");
    assert_eq!(store.resource_version(), rv);
    assert!(store.get(ResourceKind::Node, "", "a").is_none());
}

#[tokio::test]
async fn graceful_pod_delete_marks_then_removes() {
    let store = Store::with_options(StoreOptions {
        pod_termination: PodTermination::After(Duration::from_millis(50)),
        ..StoreOptions::default()
    });
    store.create(ResourceKind::Pod, pod("p", "n1")).unwrap();
    let mut changes = store.subscribe();
    let outcome = store
        .delete(ResourceKind::Pod, "default", "p", &Preconditions::default())
        .unwrap();
    let DeleteOutcome::Terminating(marked) = outcome else {
        panic!("expected graceful deletion")
    };
    assert!(marked.value()["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        changes.recv().await.unwrap().event_type,
        EventType::Modified
    );
    let deleted = tokio::time::timeout(Duration::from_secs(5), changes.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(deleted.event_type, EventType::Deleted);
    assert!(store.get(ResourceKind::Pod, "default", "p").is_none());
}

#[tokio::test]
async fn external_termination_waits_for_the_kubelet() {
    let store = Store::with_options(StoreOptions {
        pod_termination: PodTermination::External,
        ..StoreOptions::default()
    });
    let created = store.create(ResourceKind::Pod, pod("p", "n1")).unwrap();
    store
        .delete(ResourceKind::Pod, "default", "p", &Preconditions::default())
        .unwrap();
    assert!(store.get(ResourceKind::Pod, "default", "p").is_some());
    assert!(
        !store
            .finish_termination(ResourceKind::Pod, "default", "p", Some("other-uid"))
            .unwrap()
    );
    let uid = created["metadata"]["uid"].as_str();
    assert!(
        store
            .finish_termination(ResourceKind::Pod, "default", "p", uid)
            .unwrap()
    );
    assert!(store.get(ResourceKind::Pod, "default", "p").is_none());
}

#[tokio::test]
async fn subscribers_replay_and_fall_behind_with_gone() {
    let store = Store::with_options(StoreOptions {
        history_limit: 3,
        ..StoreOptions::default()
    });
    let from = store.resource_version();
    let mut live = store.subscribe();
    for name in ["a", "b", "c"] {
        store.create(ResourceKind::Node, node(name)).unwrap();
    }
    let mut replay = store.subscribe_from(from).unwrap();
    let batch = replay.next_batch().await.unwrap();
    assert_eq!(
        batch
            .iter()
            .map(|e| e.object.key.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert_eq!(live.recv().await.unwrap().object.key.name, "a");
    for name in ["d", "e", "f", "g"] {
        store.create(ResourceKind::Node, node(name)).unwrap();
    }
    // b and c were already fetched into the subscription's buffer.
    assert_eq!(live.next_batch().await.unwrap().len(), 2);
    assert!(matches!(
        live.next_batch().await,
        Err(StoreError::Gone { .. })
    ));
    assert!(matches!(
        store.subscribe_from(from),
        Err(StoreError::Gone { .. })
    ));
    store.compact();
    assert!(matches!(
        store.subscribe_from(store.resource_version() - 1),
        Err(StoreError::Gone { .. })
    ));
}

#[test]
fn pages_follow_keys() {
    let store = store();
    for i in 0..5 {
        store
            .create(ResourceKind::Node, node(&format!("n{i}")))
            .unwrap();
    }
    let first = store.list_page(ResourceKind::Node, None, None, 2, |_| true);
    assert_eq!(first.items.len(), 2);
    assert!(first.next.is_some());
    let exact = store.list_page(ResourceKind::Node, None, None, 5, |_| true);
    assert_eq!(exact.items.len(), 5);
    assert!(exact.next.is_none(), "a full last page has no continue");
    let next = first.next.clone().unwrap();
    let second = store.list_page(ResourceKind::Node, None, Some(&next), 10, |o| {
        o.key.name != "n3"
    });
    assert_eq!(
        second
            .items
            .iter()
            .map(|o| o.key.name.as_str())
            .collect::<Vec<_>>(),
        ["n2", "n4"]
    );
    assert!(second.next.is_none());
}

#[test]
fn a_page_reads_the_page_and_one_more_match_not_the_rest() {
    let store = store();
    for i in 0..200 {
        store
            .create(ResourceKind::Node, node(&format!("n{i:03}")))
            .unwrap();
    }
    let examined = std::cell::Cell::new(0);
    let count = |_: &StoredObject| {
        examined.set(examined.get() + 1);
        true
    };
    let first = store.list_page(ResourceKind::Node, None, None, 10, count);
    assert_eq!(first.items.len(), 10);
    assert_eq!(examined.get(), 11, "the page plus one look-ahead");
    examined.set(0);
    let after = first.next.expect("more");
    let second = store.list_page(ResourceKind::Node, None, Some(&after), 10, count);
    assert_eq!(second.items[0].key.name, "n010");
    assert_eq!(examined.get(), 11);
}

#[test]
fn deleting_a_namespace_removes_its_objects() {
    let store = store();
    let mut other = pod("p", "n1");
    other["metadata"]["namespace"] = json!("team");
    store.create(ResourceKind::Pod, other).unwrap();
    store.create(ResourceKind::Pod, pod("q", "n1")).unwrap();
    store
        .delete(
            ResourceKind::Namespace,
            "",
            "team",
            &Preconditions::default(),
        )
        .unwrap();
    assert!(store.get(ResourceKind::Pod, "team", "p").is_none());
    assert!(store.get(ResourceKind::Pod, "default", "q").is_some());
}
