//! The console's cluster layer against the embedded API server (no controller
//! or kubelets: the test writes every object itself through kube-rs): the
//! watch task lists and watches each stream, the cache converges, the engine
//! rows say the right thing, and later writes (a taint, a pod delete) arrive
//! through the watch.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use rollcall::cluster::cache::Cache;
use rollcall::cluster::status::{StreamKind, StreamStatus};
use rollcall::cluster::watch::{self, Target, WatchHandle};
// The test writes through the upstream types, as any client would.
use k8s_openapi::api::core::v1::{Node, Pod};
use rollcall::sim::server::{ServeOptions, serve};
use rollcall::sim::store::Store;
use rollcall::tui::app::App;
use rollcall::tui::view_model::ConsoleInfo;
use serde_json::json;

const DS_UID_FIELD: &str = "/metadata/uid";

fn node(name: &str) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"node-pool": "general"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}
    }))
    .expect("node json")
}

fn daemonset() -> DaemonSet {
    serde_json::from_value(json!({
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "updateStrategy": {"type": "OnDelete"},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "main", "image": "agent:v1"}]}
            }
        }
    }))
    .expect("daemonset json")
}

fn owner(uid: &str) -> serde_json::Value {
    json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": uid, "controller": true}])
}

/// Waits (bounded) until the cache satisfies `done`, applying changes to the app.
async fn wait_for(
    handle: &WatchHandle,
    app: &mut App,
    what: &str,
    done: impl Fn(&Cache, &App) -> bool,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        {
            let mut cache = handle.shared.lock();
            app.refresh(&mut cache, jiff::Timestamp::now());
            if done(&cache, app) {
                return;
            }
        }
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        assert!(!remaining.is_zero(), "timed out waiting for {what}");
        let _ = tokio::time::timeout(
            remaining.min(Duration::from_millis(200)),
            handle.shared.changed(),
        )
        .await;
    }
}

/// Writes two nodes, the DaemonSet, its revision and one pod on node-1.
async fn seed(client: &kube::Client) {
    let nodes: kube::Api<Node> = kube::Api::all(client.clone());
    let post = PostParams::default();
    for name in ["node-1", "node-2"] {
        nodes.create(&post, &node(name)).await.expect("create node");
    }
    let daemonsets: kube::Api<DaemonSet> = kube::Api::namespaced(client.clone(), "kube-system");
    let ds = daemonsets
        .create(&post, &daemonset())
        .await
        .expect("create daemonset");
    let uid = serde_json::to_value(&ds)
        .expect("ds json")
        .pointer(DS_UID_FIELD)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    let template =
        serde_json::to_value(&ds.spec.as_ref().expect("spec").template).expect("template json");
    let mut data = template;
    data["$patch"] = json!("replace");
    let revision: ControllerRevision = serde_json::from_value(json!({
        "metadata": {"name": "agent-h1", "namespace": "kube-system",
                     "labels": {"app": "agent", "controller-revision-hash": "h1"}, "ownerReferences": owner(&uid)},
        "data": {"spec": {"template": data}},
        "revision": 1
    }))
    .expect("revision json");
    kube::Api::<ControllerRevision>::namespaced(client.clone(), "kube-system")
        .create(&post, &revision)
        .await
        .expect("create revision");
    let pods: kube::Api<Pod> = kube::Api::namespaced(client.clone(), "kube-system");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "agent-abcde", "namespace": "kube-system",
                     "labels": {"app": "agent", "controller-revision-hash": "h1"}, "ownerReferences": owner(&uid)},
        "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "agent:v1"}]}
    }))
    .expect("pod json");
    pods.create(&post, &pod).await.expect("create pod");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_converge_and_follow_writes() {
    let server = serve(Store::new(), ServeOptions::default())
        .await
        .expect("server starts");
    let client = kube::Client::try_from(server.kube_config()).expect("client");
    seed(&client).await;
    let nodes: kube::Api<Node> = kube::Api::all(client.clone());
    let pods: kube::Api<Pod> = kube::Api::namespaced(client.clone(), "kube-system");

    let handle = watch::spawn(
        client.clone(),
        None,
        Some(Target {
            namespace: "kube-system".into(),
            name: "agent".into(),
        }),
    );
    let mut app = App::new(
        ConsoleInfo::default(),
        rollcall::model::Target::from_key("kube-system/agent"),
        (120, 30),
    );
    wait_for(
        &handle,
        &mut app,
        "every stream listed and both rows",
        |cache, app| {
            [
                StreamKind::Nodes,
                StreamKind::DaemonSets,
                StreamKind::Pods,
                StreamKind::Revisions,
            ]
            .iter()
            .all(|k| cache.streams().get(k).is_some_and(StreamStatus::synced))
                && app.rows.len() == 2
                && app.rows.get("node-1").is_some_and(|r| r.pod().is_some())
        },
    )
    .await;
    {
        let row = app.rows.get("node-1").expect("row");
        let pod = row.pod().expect("pod");
        assert_eq!(pod.revision, Some(1));
        assert!(pod.updated, "the pod runs the current revision");
        assert!(
            app.rows
                .get("node-2")
                .is_some_and(|r| r.pod().is_none() && r.coverage.verdict.should_run)
        );
    }

    // A NoExecute taint: the node is no longer eligible, and says why.
    let taint = json!({"spec": {"taints": [{"key": "maintenance", "value": "yes", "effect": "NoExecute"}]}});
    nodes
        .patch("node-2", &PatchParams::default(), &Patch::Merge(&taint))
        .await
        .expect("taint");
    wait_for(&handle, &mut app, "node-2 not eligible", |_, app| {
        app.rows
            .get("node-2")
            .is_some_and(|r| !r.coverage.verdict.should_run)
    })
    .await;
    let reason = app
        .rows
        .get("node-2")
        .and_then(|r| r.coverage.verdict.headline().map(str::to_owned));
    assert!(
        reason
            .as_deref()
            .is_some_and(|r| r.contains("maintenance=yes:NoExecute")),
        "{reason:?}"
    );

    // The pod is deleted: the row has no pod.
    pods.delete(
        "agent-abcde",
        &DeleteParams {
            grace_period_seconds: Some(0),
            ..DeleteParams::default()
        },
    )
    .await
    .expect("delete pod");
    wait_for(&handle, &mut app, "node-1 without its pod", |_, app| {
        app.rows.get("node-1").is_some_and(|r| r.pod().is_none())
    })
    .await;
    drop(handle);
    server.shutdown().await;
}
