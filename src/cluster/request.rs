//! List and watch requests for any kind the cluster layer reads, decoded
//! straight into rollcall's types.
//!
//! kube's typed `Api<K>` needs the upstream `ObjectMeta` in every object;
//! nodes, pods and events keep the slim [`crate::model::Meta`] instead (a
//! third of the size, and there are hundreds of thousands of them). So the
//! URL comes from the kind's `k8s_openapi::Resource` constants, the request
//! from kube's own builder (`kube::core::Request`, the same query strings),
//! and the client sends it: the same requests `Api<K>` would send. Nodes,
//! pods and events may come back as Kubernetes protobuf (see
//! [`super::wire`]); pages and watch events are decoded either way.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use futures::Stream;
use kube::api::{ListParams, WatchEvent, WatchParams};

pub use super::object::{Object, Page};
pub use super::page::{LIST_STALL, decode_page, fetch_page};

/// The collection path of `K`: `/api/v1/nodes`, `/api/v1/namespaces/NS/pods`,
/// `/apis/apps/v1/daemonsets` (`namespace: None`: across namespaces, or a
/// cluster-scoped kind).
pub fn collection_url<K: k8s_openapi::Resource>(namespace: Option<&str>) -> String {
    let root = if K::GROUP.is_empty() { "api" } else { "apis" };
    let scope = namespace.map_or_else(String::new, |ns| format!("namespaces/{ns}/"));
    format!("/{root}/{}/{scope}{}", K::API_VERSION, K::URL_PATH_SEGMENT)
}

/// How far a list has come, readable while it loads: the objects listed so
/// far and, when the server counted the list (`remainingItemCount`), its size.
#[derive(Debug, Default)]
pub struct ListProgress {
    listed: AtomicU64,
    /// 0 while unknown.
    expected: AtomicU64,
    complete: AtomicBool,
}

impl ListProgress {
    /// The objects listed so far.
    pub fn listed(&self) -> u64 {
        self.listed.load(Ordering::Relaxed)
    }

    /// The server's count of the whole list, once it gave one.
    pub fn expected(&self) -> Option<u64> {
        Some(self.expected.load(Ordering::Relaxed)).filter(|n| *n > 0)
    }

    /// Whether the last page is in.
    pub fn complete(&self) -> bool {
        self.complete.load(Ordering::Relaxed)
    }

    fn page(&self, items: usize, remaining: Option<i64>) {
        let listed = self.listed.fetch_add(items as u64, Ordering::Relaxed) + items as u64;
        if let Some(remaining) = remaining.and_then(|n| u64::try_from(n).ok()) {
            self.expected.store(listed + remaining, Ordering::Relaxed);
        }
    }
}

/// Every object of a list, page after page with one page ahead (see
/// [`super::pager`]; `params.limit` sets the page size), counted into
/// `progress` as pages arrive.
pub async fn list_all<K: Object>(
    client: &kube::Client,
    url: &str,
    params: &ListParams,
    progress: Option<&ListProgress>,
) -> Result<Vec<K>, kube::Error> {
    let mut items = Vec::new();
    let mut pages = super::pager::read_pages::<K>(client, url, params.clone(), LIST_STALL);
    while let Some(page) = pages.next().await {
        let page = page.map_err(|failed| failed.error)?;
        if let Some(progress) = progress {
            progress.page(page.items.len(), page.metadata.remaining_item_count);
        }
        items.extend(page.items);
    }
    if let Some(progress) = progress {
        progress.complete.store(true, Ordering::Relaxed);
    }
    Ok(items)
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
    super::watch_body::events::<K>(client, request).await
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
