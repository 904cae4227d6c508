//! A read of one node's pods past the watch: before a gate fails a node for
//! a timeout it judges on what the API server says now, not on a stream that
//! may have stalled. Used by the headless follower and the console's effects
//! side alike; the pods read land in the shared watch cache, so the next
//! decision (made from the cache's rows, as always) sees them.

use crate::cluster::cache::WatchUpdate;
use crate::cluster::watch::Shared;
use crate::model::Target;
use crate::ops::error::OpsError;

/// Lists the pods on `node` in `target`'s namespace (a LIST by
/// `spec.nodeName`) and applies them to `shared`, waking its reader.
pub async fn read_pods_on(
    client: &kube::Client,
    shared: &Shared,
    target: &Target,
    node: &str,
) -> Result<(), OpsError> {
    let url = crate::cluster::request::collection_url::<k8s_openapi::api::core::v1::Pod>(Some(
        &target.namespace,
    ));
    let params = kube::api::ListParams::default().fields(&format!("spec.nodeName={node}"));
    let pods = crate::cluster::request::list_all::<crate::model::Pod>(client, &url, &params, None)
        .await
        .map_err(|err| OpsError::Transient {
            attempt: format!("list pods on node {node}"),
            message: err.to_string(),
        })?;
    {
        let mut cache = shared.lock();
        let now = crate::clock::now();
        for pod in pods {
            cache.apply(
                WatchUpdate::Pod(kube::runtime::watcher::Event::Apply(pod)),
                now,
            );
        }
    }
    shared.notify();
    Ok(())
}
