//! PriorityClasses (`scheduling.k8s.io/v1`) on the embedded API server,
//! driven by kube-rs: the built-in system classes, create / get / list /
//! patch / delete / watch, upstream's validation and admission refusals, and
//! the `Priority` admission plugin resolving a pod's class into
//! `spec.priority`.

#![allow(
    clippy::unwrap_used,
    reason = "integration test helpers: a failure must fail the test"
)]

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{
    DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::{Api, Client};
use rollcall::sim::server::{ServeOptions, ServerHandle, serve};
use rollcall::sim::store::Store;
use serde_json::json;

async fn start() -> (ServerHandle, Client) {
    let server = serve(Store::new(), ServeOptions::default()).await.unwrap();
    let client = Client::try_from(server.kube_config()).unwrap();
    (server, client)
}

fn class(name: &str, value: i32) -> PriorityClass {
    serde_json::from_value(json!({"metadata": {"name": name}, "value": value})).unwrap()
}

/// The API error of a failed call: `(code, reason, message)`.
fn refusal<T: std::fmt::Debug>(result: kube::Result<T>) -> (u16, String, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.reason, status.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn priority_classes_are_served_with_the_system_classes_built_in() {
    let (server, client) = start().await;
    let classes: Api<PriorityClass> = Api::all(client);
    let listed = classes.list(&ListParams::default()).await.unwrap();
    let names: Vec<(String, i32)> = listed
        .items
        .iter()
        .map(|c| (c.metadata.name.clone().unwrap(), c.value))
        .collect();
    assert_eq!(
        names,
        [
            ("system-cluster-critical".to_owned(), 2_000_000_000),
            ("system-node-critical".to_owned(), 2_000_001_000)
        ]
    );

    let mut watch = classes
        .watch(
            &WatchParams::default(),
            &listed.metadata.resource_version.unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    let created = classes
        .create(&PostParams::default(), &class("low", 100))
        .await
        .unwrap();
    assert_eq!(
        created.preemption_policy.as_deref(),
        Some("PreemptLowerPriority"),
        "defaulted as upstream's SetDefaults_PriorityClass"
    );
    let Some(Ok(WatchEvent::Added(added))) = watch.next().await else {
        panic!("the watch sees the new class")
    };
    assert_eq!(added.metadata.name.as_deref(), Some("low"));

    let patched = classes
        .patch(
            "low",
            &PatchParams::default(),
            &Patch::Merge(json!({"description": "batch"})),
        )
        .await
        .unwrap();
    assert_eq!(patched.description.as_deref(), Some("batch"));
    let (code, _, message) = refusal(
        classes
            .patch(
                "low",
                &PatchParams::default(),
                &Patch::Merge(json!({"value": 5})),
            )
            .await,
    );
    assert_eq!(code, 422);
    assert!(
        message.contains("value: Forbidden: may not be changed in an update."),
        "{message}"
    );

    classes
        .delete("low", &DeleteParams::default())
        .await
        .unwrap();
    let (code, reason, message) = refusal(
        classes
            .delete("system-node-critical", &DeleteParams::default())
            .await,
    );
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        "priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a system priority class and cannot be deleted"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn user_classes_are_validated_and_admitted_as_upstream() {
    let (server, client) = start().await;
    let classes: Api<PriorityClass> = Api::all(client);
    let (code, _, message) = refusal(
        classes
            .create(&PostParams::default(), &class("too-high", 1_000_000_001))
            .await,
    );
    assert_eq!(code, 422);
    assert!(
        message.contains("maximum allowed value of a user defined priority is 1000000000"),
        "{message}"
    );
    let (code, _, _) = refusal(
        classes
            .create(&PostParams::default(), &class("system-mine", 1))
            .await,
    );
    assert_eq!(code, 422, "system- names are reserved");

    let mut first = class("first", 10);
    first.global_default = Some(true);
    classes
        .create(&PostParams::default(), &first)
        .await
        .unwrap();
    let mut second = class("second", 20);
    second.global_default = Some(true);
    let (code, _, message) = refusal(classes.create(&PostParams::default(), &second).await);
    assert_eq!(code, 403);
    assert!(
        message.ends_with(
            "PriorityClass first is already marked as default. Only one default can exist"
        ),
        "{message}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn pods_get_their_priority_from_the_class_at_create() {
    let (server, client) = start().await;
    let classes: Api<PriorityClass> = Api::all(client.clone());
    let mut batch = class("batch", 100);
    batch.preemption_policy = Some("Never".to_owned());
    classes
        .create(&PostParams::default(), &batch)
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod = |name: &str, class: Option<&str>| -> Pod {
        let mut spec = json!({"containers": [{"name": "c", "image": "i"}]});
        if let Some(class) = class {
            spec["priorityClassName"] = json!(class);
        }
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
    };
    let created = pods
        .create(&PostParams::default(), &pod("named", Some("batch")))
        .await
        .unwrap();
    let spec = created.spec.unwrap();
    assert_eq!(spec.priority, Some(100));
    assert_eq!(spec.preemption_policy.as_deref(), Some("Never"));
    let critical = pods
        .create(
            &PostParams::default(),
            &pod("agent", Some("system-node-critical")),
        )
        .await
        .unwrap();
    assert_eq!(critical.spec.unwrap().priority, Some(2_000_001_000));
    let plain = pods
        .create(&PostParams::default(), &pod("plain", None))
        .await
        .unwrap();
    assert_eq!(
        plain.spec.unwrap().priority,
        Some(0),
        "no class, no default: 0"
    );
    let (code, _, message) = refusal(
        pods.create(&PostParams::default(), &pod("lost", Some("nope")))
            .await,
    );
    assert_eq!(code, 403);
    assert_eq!(
        message,
        "pods \"lost\" is forbidden: no PriorityClass with name nope was found"
    );
    server.shutdown().await;
}
