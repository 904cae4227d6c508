//! The embedded API server driven by kube-rs, in-process: typed Api list /
//! get / patch / create / delete, errors with code and reason, and a
//! kube-runtime watcher surviving server-side timeouts, dropped connections,
//! a server restart on the same port, and a 410 that forces a re-list.

#![allow(
    clippy::unwrap_used,
    reason = "integration test helpers: a failure must fail the test"
)]

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::DaemonSet;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};
// Upstream types: the server is checked through an independent client.
use k8s_openapi::api::core::v1::{Node as ApiNode, Pod as ApiPod};
use rollcall::model;

/// The node as rollcall reads it (its helpers: ready, labels, cordon).
fn as_model(node: &ApiNode) -> model::Node {
    serde_json::from_value(serde_json::to_value(node).unwrap()).unwrap()
}
use rollcall::sim::resources::ResourceKind;
use rollcall::sim::server::{ServeOptions, ServerHandle, serve};
use rollcall::sim::store::{PodTermination, Store, StoreOptions};
use serde_json::{Value, json};

fn node(name: &str) -> Value {
    json!({"metadata":{"name":name,"labels":{"pool":"a"}},
        "status":{"conditions":[{"type":"Ready","status":"True"}]}})
}

async fn start(store: &Store) -> (ServerHandle, Client) {
    let server = serve(store.clone(), ServeOptions::default()).await.unwrap();
    let client = Client::try_from(server.kube_config()).unwrap();
    (server, client)
}

#[tokio::test]
async fn typed_node_api_lists_pages_gets_and_patches() {
    let store = Store::new();
    for i in 0..5 {
        store
            .create(ResourceKind::Node, node(&format!("node-{i}")))
            .unwrap();
    }
    let (server, client) = start(&store).await;
    let nodes: Api<ApiNode> = Api::all(client);

    let first = nodes.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(first.items.len(), 2);
    // As upstream, a page says how many objects remain when no selector narrows the list.
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().expect("a continue token");
    let second = nodes
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(second.metadata.remaining_item_count, Some(1));
    let rest = nodes
        .list(&ListParams::default().limit(10).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 3);
    assert_eq!(rest.metadata.remaining_item_count, None, "the last page");
    assert_eq!(
        rest.metadata.resource_version,
        first.metadata.resource_version
    );
    let narrowed = nodes
        .list(&ListParams::default().limit(2).labels("pool=a"))
        .await
        .unwrap();
    assert!(narrowed.metadata.continue_.is_some());
    assert_eq!(
        narrowed.metadata.remaining_item_count, None,
        "left out with a selector, as upstream"
    );

    let selected = nodes
        .list(&ListParams::default().fields("metadata.name=node-3"))
        .await
        .unwrap();
    assert_eq!(selected.items.len(), 1);
    assert!(as_model(&selected.items[0]).is_ready());

    let patch = json!({"metadata":{"labels":{"zone":"z1"}}});
    let patched = nodes
        .patch("node-1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(as_model(&patched).label("zone"), Some("z1"));
    let cordon = json!({"spec":{"unschedulable":true}});
    let cordoned = nodes
        .patch(
            "node-1",
            &PatchParams::default(),
            &Patch::Strategic(&cordon),
        )
        .await
        .unwrap();
    assert!(as_model(&cordoned).spec.unschedulable);
    assert_eq!(
        as_model(&nodes.get("node-1").await.unwrap()).label("zone"),
        Some("z1")
    );

    let missing = nodes.get("nope").await.unwrap_err();
    let kube::Error::Api(status) = missing else {
        panic!("expected an API error")
    };
    assert_eq!(status.code, 404);
    assert!(status.is_not_found());
    server.shutdown().await;
}

#[tokio::test]
async fn daemonset_create_bumps_generation_and_conflicts_on_stale_update() {
    let store = Store::new();
    let (server, client) = start(&store).await;
    let daemonsets: Api<DaemonSet> = Api::namespaced(client, "default");
    let ds: DaemonSet = serde_json::from_value(json!({"metadata":{"name":"agent"},
        "spec":{"selector":{"matchLabels":{"app":"agent"}},
            "template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"agent","image":"agent:v1"}]}}}}))
    .unwrap();
    let created = daemonsets
        .create(&PostParams::default(), &ds)
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let set_image =
        json!({"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"agent:v2"}]}}}});
    let updated = daemonsets
        .patch(
            "agent",
            &PatchParams::default(),
            &Patch::Strategic(&set_image),
        )
        .await
        .unwrap();
    assert_eq!(updated.metadata.generation, Some(2));
    let error = daemonsets
        .replace("agent", &PostParams::default(), &created)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = error else {
        panic!("expected an API error")
    };
    assert_eq!(status.code, 409);
    assert!(status.is_conflict());
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let mut other = ds.clone();
    other.metadata.name = Some("dry".into());
    daemonsets.create(&dry, &other).await.unwrap();
    assert!(
        store
            .get(ResourceKind::DaemonSet, "default", "dry")
            .is_none()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn pod_delete_with_uid_precondition() {
    let store = Store::with_options(StoreOptions {
        pod_termination: PodTermination::External,
        ..StoreOptions::default()
    });
    let pod = store
        .create(ResourceKind::Pod, json!({"metadata":{"name":"p","namespace":"default"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]}}))
        .unwrap();
    let (server, client) = start(&store).await;
    let pods: Api<ApiPod> = Api::namespaced(client, "default");
    let wrong = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("other".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let kube::Error::Api(status) = pods.delete("p", &wrong).await.unwrap_err() else {
        panic!("expected an API error")
    };
    assert_eq!(status.code, 409);
    assert!(
        status.message.contains("Precondition failed"),
        "{}",
        status.message
    );
    let uid = pod["metadata"]["uid"].as_str().map(str::to_owned);
    let right = DeleteParams {
        preconditions: Some(Preconditions {
            uid,
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let terminating = pods
        .delete("p", &right)
        .await
        .unwrap()
        .left()
        .expect("the pod itself");
    assert!(terminating.metadata.deletion_timestamp.is_some());
    server.shutdown().await;
}

#[tokio::test]
async fn requests_without_the_token_are_unauthorized() {
    let store = Store::new();
    let (server, _) = start(&store).await;
    let mut config = server.kube_config();
    config.auth_info.token = Some(String::from("wrong").into());
    let nodes: Api<ApiNode> = Api::all(Client::try_from(config).unwrap());
    let kube::Error::Api(status) = nodes.list(&ListParams::default()).await.unwrap_err() else {
        panic!("expected an API error")
    };
    assert_eq!(status.code, 401);
    assert_eq!(status.reason, "Unauthorized");
    server.shutdown().await;
}

/// Collects watcher events until `done` says stop (or fails after 20 s).
async fn until<S>(stream: &mut S, mut done: impl FnMut(&Event<ApiNode>) -> bool)
where
    S: futures::Stream<Item = Result<Event<ApiNode>, watcher::Error>> + Unpin,
{
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(event) = stream.next().await {
            if let Ok(event) = event
                && done(&event)
            {
                return;
            }
        }
        panic!("watch stream ended");
    })
    .await
    .expect("expected watcher event within 20 s");
}

fn applied(name: &'static str) -> impl FnMut(&Event<ApiNode>) -> bool {
    move |event| matches!(event, Event::Apply(n) | Event::InitApply(n) if n.metadata.name.as_deref() == Some(name))
}

#[tokio::test]
async fn watcher_survives_timeouts_dropped_connections_restarts_and_410() {
    let store = Store::new();
    store.create(ResourceKind::Node, node("node-0")).unwrap();
    let (server, client) = start(&store).await;
    let nodes: Api<ApiNode> = Api::all(client);
    // A 1 s server-side timeout: the stream ends cleanly and kube re-watches.
    let mut stream = watcher::watcher(nodes, watcher::Config::default().timeout(1))
        .default_backoff()
        .boxed();
    until(&mut stream, |e| matches!(e, Event::InitDone)).await;

    // Evidence of the re-watch, from the server's request log: the stream,
    // driven meanwhile, asks for a second watch once the first times out,
    // resuming from its version (no second list).
    let node_requests = |watch: bool| {
        server
            .requests()
            .into_iter()
            .filter(|r| r.path == "/api/v1/nodes" && r.is_watch() == watch)
            .collect::<Vec<_>>()
    };
    tokio::time::timeout(Duration::from_secs(10), async {
        while node_requests(true).len() < 2 {
            if let Ok(Some(event)) =
                tokio::time::timeout(Duration::from_millis(50), stream.next()).await
            {
                assert!(event.is_ok(), "no error on a server timeout: {event:?}");
            }
        }
    })
    .await
    .expect("a re-watch within 10 s of a 1 s watch timeout");
    let watches = node_requests(true);
    let resumed = watches[1].param("resourceVersion").unwrap_or_default();
    assert!(
        !resumed.is_empty() && resumed != "0",
        "re-watched from its version: {watches:?}"
    );
    assert_eq!(node_requests(false).len(), 1, "listed once: {watches:?}");
    store
        .create(ResourceKind::Node, node("after-timeout"))
        .unwrap();
    until(&mut stream, applied("after-timeout")).await;

    server.drop_connections();
    store
        .create(ResourceKind::Node, node("after-drop"))
        .unwrap();
    until(&mut stream, applied("after-drop")).await;

    let (addr, tls, token) = (server.addr, server.tls(), server.token.clone());
    server.shutdown().await;
    store
        .create(ResourceKind::Node, node("while-down"))
        .unwrap();
    let options = ServeOptions {
        listen: addr,
        token: Some(token),
        tls: Some(tls),
        ..ServeOptions::default()
    };
    let server = serve(store.clone(), options).await.unwrap();
    until(&mut stream, applied("while-down")).await;

    // Forget the history while the watcher is disconnected: its resume
    // version is now too old, the server answers an in-stream 410, and kube
    // re-lists from scratch.
    server.drop_connections();
    store
        .create(ResourceKind::Node, node("after-compaction"))
        .unwrap();
    store.compact();
    until(&mut stream, |e| matches!(e, Event::Init)).await;
    until(&mut stream, applied("after-compaction")).await;
    server.shutdown().await;
}

#[tokio::test]
async fn streaming_list_watcher_becomes_ready() {
    let store = Store::new();
    for i in 0..3 {
        store
            .create(ResourceKind::Node, node(&format!("node-{i}")))
            .unwrap();
    }
    let (server, client) = start(&store).await;
    let nodes: Api<ApiNode> = Api::all(client);
    let mut stream = watcher::watcher(nodes, watcher::Config::default().streaming_lists())
        .default_backoff()
        .boxed();
    let mut initial = 0;
    until(&mut stream, |e| {
        if matches!(e, Event::InitApply(_)) {
            initial += 1;
        }
        matches!(e, Event::InitDone)
    })
    .await;
    assert_eq!(initial, 3);
    store.create(ResourceKind::Node, node("live")).unwrap();
    until(&mut stream, applied("live")).await;
    server.shutdown().await;
}

#[tokio::test]
async fn access_reviews_and_requests_follow_the_authorizer() {
    use k8s_openapi::api::authorization::v1::{
        ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
    };
    use rollcall::sim::auth::Authorizer;

    let store = Store::new();
    store.create(ResourceKind::Node, node("n1")).unwrap();
    let authorizer = Authorizer::allow_all().deny("patch", "nodes", None);
    let server = serve(
        store.clone(),
        ServeOptions {
            authorizer,
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap();
    let client = Client::try_from(server.kube_config()).unwrap();
    let reviews: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let ask = |verb: &str| SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some(verb.to_owned()),
                resource: Some("nodes".to_owned()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    let allowed = reviews
        .create(&PostParams::default(), &ask("list"))
        .await
        .unwrap();
    assert!(allowed.status.unwrap().allowed);
    let denied = reviews
        .create(&PostParams::default(), &ask("patch"))
        .await
        .unwrap();
    assert!(!denied.status.unwrap().allowed);

    let nodes: Api<ApiNode> = Api::all(client);
    let patch = json!({"metadata":{"labels":{"x":"y"}}});
    let error = nodes
        .patch("n1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = error else {
        panic!("expected an API error")
    };
    assert_eq!(status.code, 403);
    assert!(status.is_forbidden());
    assert!(
        status.message.contains("cannot patch resource \"nodes\""),
        "{}",
        status.message
    );
    assert!(nodes.get("n1").await.is_ok());
    server.shutdown().await;
}
