//! List and watch requests for any kind the cluster layer reads, decoded
//! straight into rollcall's types.
//!
//! kube's typed `Api<K>` needs the upstream `ObjectMeta` in every object;
//! nodes, pods and events keep the slim [`crate::model::Meta`] instead (a
//! third of the size, and there are hundreds of thousands of them). So the
//! URL comes from the kind's `k8s_openapi::Resource` constants, the request
//! from kube's own builder (`kube::core::Request`, the same query strings),
//! and the client sends it: the same requests `Api<K>` would send.

use futures::{AsyncBufReadExt, Stream};
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::core::ObjectList;

use crate::model::MetaFields;

/// A kind the cluster layer lists and watches: its URL from the
/// `k8s_openapi` constants, its metadata readable through [`MetaFields`].
pub trait Object:
    k8s_openapi::Resource
    + k8s_openapi::Metadata<Ty: MetaFields>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> Object for K where
    K: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty: MetaFields>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// The collection path of `K`: `/api/v1/nodes`, `/api/v1/namespaces/NS/pods`,
/// `/apis/apps/v1/daemonsets` (`namespace: None`: across namespaces, or a
/// cluster-scoped kind).
pub fn collection_url<K: k8s_openapi::Resource>(namespace: Option<&str>) -> String {
    let root = if K::GROUP.is_empty() { "api" } else { "apis" };
    let scope = namespace.map_or_else(String::new, |ns| format!("namespaces/{ns}/"));
    format!("/{root}/{}/{scope}{}", K::API_VERSION, K::URL_PATH_SEGMENT)
}

/// One list page, decoded straight from the response's bytes. (kube's
/// `Api::list` copies the body into a `String` and checks it is UTF-8
/// before decoding: two more passes over every page, megabytes each at
/// scale; the decoder checks the text itself.) `buffer`: the bytes of the
/// previous page, whose room is reused: a list's pages are alike in size,
/// and a fresh multi-megabyte buffer per page left the allocator holding
/// freed holes between the decoded objects.
pub async fn list_page<K: Object>(
    client: &kube::Client,
    url: &str,
    params: &ListParams,
    buffer: &mut Vec<u8>,
) -> Result<ObjectList<K>, kube::Error> {
    let mut request = kube::core::Request::new(url)
        .list(params)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("list");
    let mut body = client.request_stream(request).await?;
    buffer.clear();
    // Chunk by chunk as they arrive: `read_to_end` zero-fills the spare room
    // before every read (a tenth of the load's CPU at 65,000 nodes).
    loop {
        let chunk = body.fill_buf().await.map_err(kube::Error::ReadEvents)?;
        if chunk.is_empty() {
            break;
        }
        let read = chunk.len();
        buffer.extend_from_slice(chunk);
        body.consume_unpin(read);
    }
    serde_json::from_slice(buffer).map_err(kube::Error::SerdeError)
}

/// Every object of a list, page after page (`params.limit` sets the page size).
pub async fn list_all<K: Object>(
    client: &kube::Client,
    url: &str,
    params: &ListParams,
) -> Result<Vec<K>, kube::Error> {
    let mut params = params.clone();
    let mut buffer = Vec::new();
    let mut items = Vec::new();
    loop {
        let page = list_page::<K>(client, url, &params, &mut buffer).await?;
        items.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(items),
        }
    }
}

/// A watch from `version`, as `Api::watch` sends it.
pub async fn watch<K: Object>(
    client: &kube::Client,
    url: &str,
    params: &WatchParams,
    version: &str,
) -> Result<impl Stream<Item = Result<WatchEvent<K>, kube::Error>> + use<K>, kube::Error> {
    let mut request = kube::core::Request::new(url)
        .watch(params, version)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("watch");
    client.request_events::<K>(request).await
}

#[cfg(test)]
mod tests {
    use super::collection_url;
    use crate::model::{DaemonSet, Node, Pod};

    #[test]
    fn collection_urls_follow_the_api_paths() {
        assert_eq!(collection_url::<Node>(None), "/api/v1/nodes");
        assert_eq!(
            collection_url::<Pod>(Some("kube-system")),
            "/api/v1/namespaces/kube-system/pods"
        );
        assert_eq!(
            collection_url::<DaemonSet>(None),
            "/apis/apps/v1/daemonsets"
        );
        assert_eq!(
            collection_url::<DaemonSet>(Some("ns")),
            "/apis/apps/v1/namespaces/ns/daemonsets"
        );
    }
}
