//! A `kube::Client` that talks to an embedded cluster's store through the
//! API router in the same task: no socket, no TLS, no HTTP framing. The
//! requests and answers are the very ones the HTTPS server carries (the same
//! [`api::handle`]), so kube's watcher, reflector and the one writer work
//! unchanged; only the transport is gone. A rehearsal (`rollcall fleet
//! rehearse`) runs whole fleets this way on tokio's paused clock, where a
//! real socket would stall the clock's auto-advance.
//!
//! Every caller is the cluster's admin (there is no credential to check).
//! Owns the transport only.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;

use crate::sim::api::{self, ApiState};
use crate::sim::auth::Authorizer;
use crate::sim::store::Store;

/// How often a watch that allows bookmarks gets one (as the HTTPS server's
/// default; on a simulated clock a bookmark costs nothing but a line).
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(30);

/// What the router would wait for a request body: it is already whole here.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A client of `store`'s API, answered in-process; `default_namespace` as a
/// kubeconfig context would give it.
pub fn client(store: &Store, default_namespace: &str) -> kube::Client {
    let state = Arc::new(ApiState {
        store: store.clone(),
        authenticator: None,
        authorizer: Authorizer::allow_all(),
        inflight: None,
        read_timeout: READ_TIMEOUT,
        server_address: "in-process".to_owned(),
        bookmark_interval: BOOKMARK_INTERVAL,
        faults: crate::sim::fault::Faults::none(),
        // Nobody reads an in-process client's requests back.
        requests: Arc::new(api::request_log::RequestLog::with_capacity(0)),
    });
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let state = Arc::clone(&state);
        async move { Ok::<_, Infallible>(api::handle(state, request.map(Body::new)).await) }
    });
    kube::Client::new(service, default_namespace)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DaemonSet;
    use k8s_openapi::api::core::v1::{Node, Pod};
    use kube::api::{Api, DeleteParams, ListParams};
    use kube::runtime::watcher;

    use super::*;
    use crate::sim::embedded::{EmbeddedOptions, Simulation};

    fn small() -> Simulation {
        Simulation::start(&EmbeddedOptions {
            scenario: Some("small".to_owned()),
            ..EmbeddedOptions::default()
        })
        .unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn lists_gets_and_deletes_without_a_socket() {
        let simulation = small();
        let client = client(&simulation.store, "default");
        let nodes: Api<Node> = Api::all(client.clone());
        let listed = nodes.list(&ListParams::default()).await.unwrap();
        assert!(!listed.items.is_empty());
        let daemon_sets: Api<DaemonSet> = Api::namespaced(client.clone(), "kube-system");
        let agent = daemon_sets.get("node-agent").await.unwrap();
        assert_eq!(agent.metadata.name.as_deref(), Some("node-agent"));
        let pods: Api<Pod> = Api::namespaced(client, "kube-system");
        let missing = pods.delete("no-such-pod", &DeleteParams::default()).await;
        assert!(
            matches!(missing, Err(kube::Error::Api(ref s)) if s.code == 404),
            "{missing:?}"
        );
        simulation.shutdown().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_sees_the_controller_replace_a_deleted_pod() {
        use futures::StreamExt as _;
        let simulation = small();
        let client = client(&simulation.store, "default");
        let pods: Api<Pod> = Api::namespaced(client, "kube-system");
        let selector = ListParams::default();
        let first = pods.list(&selector).await.unwrap();
        let victim = first
            .items
            .iter()
            .find(|p| {
                p.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with("node-agent"))
            })
            .and_then(|p| p.metadata.name.clone())
            .unwrap();
        let mut events = watcher(pods.clone(), watcher::Config::default()).boxed();
        pods.delete(&victim, &DeleteParams::default())
            .await
            .unwrap();
        // The controller recreates the pod on the node: an Apply of a new name.
        let replaced = tokio::time::timeout(Duration::from_secs(600), async {
            while let Some(event) = events.next().await {
                if let Ok(watcher::Event::Apply(pod)) = event
                    && pod.metadata.name.as_deref() != Some(victim.as_str())
                    && pod
                        .metadata
                        .name
                        .as_deref()
                        .is_some_and(|n| n.starts_with("node-agent"))
                    && first
                        .items
                        .iter()
                        .all(|p| p.metadata.name != pod.metadata.name)
                {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(replaced, Ok(true));
        simulation.shutdown().await;
    }
}
