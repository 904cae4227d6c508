//! kube-rs watchers through the whole embedded cluster (server, controller,
//! kubelets): a pod watcher keeps converging while the server times the
//! watch out, drops connections, and answers a 410 after its history is
//! compacted. After each disruption a daemon pod is deleted, and the watcher
//! must see the controller's replacement become Ready through the kubelets.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector};
use kube::{Api, Client};
// The watcher decodes the upstream type, as any kube-rs client would.
use k8s_openapi::api::core::v1::Pod as ApiPod;
use rollcall::model::Pod;
use rollcall::sim::embedded::{self, EmbeddedOptions};
use rollcall::sim::resources::ResourceKind;
use rollcall::sim::store::{Preconditions, Store};

fn agent_on(store: &Store, node: &str) -> Option<Pod> {
    let (pods, _) = store
        .list_as::<Pod>(ResourceKind::Pod, Some("kube-system"))
        .ok()?;
    pods.into_iter().find(|p| {
        p.name().starts_with("node-agent-") && p.node_name() == Some(node) && !p.is_terminating()
    })
}

/// Deletes the agent pod on `node` and waits until the reflector holds a
/// Ready replacement with another uid.
/// The reflector's pods, read through rollcall's slim decoding.
fn held(reader: &reflector::Store<ApiPod>) -> Vec<Pod> {
    reader
        .state()
        .iter()
        .map(|pod| {
            serde_json::to_value(pod.as_ref())
                .and_then(serde_json::from_value)
                .expect("a pod")
        })
        .collect()
}

async fn replace_and_observe(store: &Store, reader: &reflector::Store<ApiPod>, node: &str) {
    let old = agent_on(store, node).expect("an agent pod");
    store
        .delete(
            ResourceKind::Pod,
            "kube-system",
            old.name(),
            &Preconditions::default(),
        )
        .expect("delete");
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let pods = held(reader);
            let seen = pods.iter().any(|p| {
                p.node_name() == Some(node)
                    && p.uid() != old.uid()
                    && p.name().starts_with("node-agent-")
                    && p.is_ready()
            });
            let old_gone = pods.iter().all(|p| p.uid() != old.uid());
            if seen && old_gone {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("watcher never saw the replacement on {node}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn pod_watcher_survives_timeouts_drops_and_410_through_the_embedded_cluster() {
    let options = EmbeddedOptions {
        scenario: Some("small".to_owned()),
        speed: 2.0,
        ..EmbeddedOptions::default()
    };
    let cluster = embedded::start(options).await.expect("starts");
    let store = cluster.simulation.store.clone();
    let client = Client::try_from(cluster.server.kube_config()).expect("client");
    let pods: Api<ApiPod> = Api::namespaced(client, "kube-system");
    let (reader, writer) = reflector::store();
    let (inits_tx, mut inits) = tokio::sync::mpsc::unbounded_channel();
    let stream = watcher::watcher(pods, watcher::Config::default().timeout(1))
        .default_backoff()
        .inspect_ok(move |event| {
            if matches!(event, Event::Init) {
                let _ = inits_tx.send(());
            }
        })
        .reflect(writer)
        .applied_objects();
    let task = tokio::spawn(async move {
        let mut stream = stream.boxed();
        while stream.next().await.is_some() {}
    });
    reader.wait_until_ready().await.expect("reflector ready");
    inits.recv().await.expect("first list");

    // Server-side timeouts (1 s) end the stream; kube re-watches from its
    // version. Evidence from the server's request log: two re-watches, each
    // resuming from a version, and no second list.
    let pod_requests = |watch: bool| {
        cluster
            .server
            .requests()
            .into_iter()
            .filter(|r| r.path == "/api/v1/namespaces/kube-system/pods" && r.is_watch() == watch)
            .collect::<Vec<_>>()
    };
    tokio::time::timeout(Duration::from_secs(10), async {
        while pod_requests(true).len() < 3 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("two re-watches within 10 s of 1 s watch timeouts");
    let watches = pod_requests(true);
    assert!(
        watches[1..].iter().all(|w| w
            .param("resourceVersion")
            .is_some_and(|v| !v.is_empty() && v != "0")),
        "re-watched from a version: {watches:?}"
    );
    assert_eq!(pod_requests(false).len(), 1, "listed once: {watches:?}");
    assert!(inits.try_recv().is_err(), "no re-list after a timeout");
    replace_and_observe(&store, &reader, "general-01").await;

    // A dropped connection: kube reconnects and catches up by replay.
    cluster.server.drop_connections();
    replace_and_observe(&store, &reader, "general-02").await;

    // History compacted past what the watcher has seen: its reconnect gets a
    // 410, then it re-lists. A change to another kind first moves the store's
    // version beyond the watcher's last pod event, so the compaction always
    // covers it (whatever the controller happened to be doing), and the
    // connections drop only after it, so no watch slips in between.
    store
        .create(
            ResourceKind::Namespace,
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "compaction-marker"},
            }),
        )
        .expect("a namespace (nothing reacts to it) to move the store version");
    store.compact();
    cluster.server.drop_connections();
    replace_and_observe(&store, &reader, "general-03").await;
    tokio::time::timeout(Duration::from_secs(20), inits.recv())
        .await
        .expect("a re-list after 410")
        .expect("open");

    task.abort();
    cluster.shutdown().await;
}
