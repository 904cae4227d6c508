//! A list read page by page with one page ahead: the next page is asked for
//! as soon as this page's head (its continue token) has arrived
//! ([`super::list_head`]), while the rest of this page still streams in,
//! and each page is decoded off the runtime's threads while the next ones
//! download. So the server's work on page N+1 (listing, encoding,
//! compressing) overlaps the link carrying page N and the client decoding
//! page N−1; read strictly in turn, each stage waited for the others. At
//! most four pages are held at once (one decoding, one waiting for it, one
//! read whole, one downloading): memory stays flat however long the list.
//! Pages are handed on in order.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::ListParams;
use tokio::sync::{mpsc, oneshot};

use super::list_head::{self, Head};
use super::object::{Object, Page};
use super::page;

/// Why a paged list failed.
#[derive(Debug)]
pub struct Failed {
    /// What went wrong.
    pub error: kube::Error,
    /// Whether it was a continuation (a later page) that failed: a 410 there
    /// means the list's snapshot expired while paging.
    pub on_continuation: bool,
}

/// The pages of one list, decoded, in order; see [`read_pages`].
pub struct Pages<K> {
    decoded: mpsc::Receiver<Result<Page<K>, Failed>>,
    _reading: AbortOnDrop<()>,
}

impl<K> Pages<K> {
    /// The next page; `None` after the last one or after a failure.
    pub async fn next(&mut self) -> Option<Result<Page<K>, Failed>> {
        self.decoded.recv().await
    }
}

/// Starts reading every page of the list at `url` (`first`: the first
/// page's parameters, `limit` the page size). A request that receives
/// nothing for `stall` fails. Dropping the pages stops the reading.
pub fn read_pages<K: Object>(
    client: &kube::Client,
    url: &str,
    first: ListParams,
    stall: Duration,
) -> Pages<K> {
    let (pages, downloaded) = mpsc::channel(1);
    let (spare_buffers, reused) = mpsc::unbounded_channel();
    let (decoded_tx, decoded) = mpsc::channel(1);
    let fetcher = Fetcher {
        client: client.clone(),
        url: url.to_owned(),
        stall,
        reused,
    };
    let reading = tokio::spawn(async move {
        let download = download(fetcher, first, pages);
        let decode = decode(downloaded, spare_buffers, decoded_tx);
        // The download ends on its own (after the last page or a failure,
        // both sent on); the decode ends the reading.
        tokio::pin!(download, decode);
        let mut downloading = true;
        loop {
            tokio::select! {
                () = &mut download, if downloading => downloading = false,
                () = &mut decode => return,
            }
        }
    });
    Pages {
        decoded,
        _reading: AbortOnDrop(reading),
    }
}

/// Decodes the downloaded pages off the runtime's threads, in order, until
/// the first failure or until nobody reads them.
async fn decode<K: Object>(
    mut downloaded: mpsc::Receiver<Downloaded>,
    spare_buffers: mpsc::UnboundedSender<Vec<u8>>,
    decoded: mpsc::Sender<Result<Page<K>, Failed>>,
) {
    while let Some(body) = downloaded.recv().await {
        let page = match body {
            Ok((bytes, on_continuation)) => {
                let decoded = tokio::task::spawn_blocking(move || {
                    (page::decode_page::<K>(&bytes, |_| {}), bytes)
                })
                .await;
                let Some((page, bytes)) = joined(decoded) else {
                    return;
                };
                let _ = spare_buffers.send(bytes);
                page.map_err(|error| Failed {
                    error: kube::Error::SerdeError(error),
                    on_continuation,
                })
            }
            Err(failed) => Err(failed),
        };
        let failed = page.is_err();
        if decoded.send(page).await.is_err() || failed {
            return;
        }
    }
}

/// A task's result; `None` if it was cancelled (the runtime is shutting
/// down: whoever reads the pages is going too); a panic goes on unwinding.
fn joined<T>(result: Result<T, tokio::task::JoinError>) -> Option<T> {
    match result {
        Ok(value) => Some(value),
        Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
        Err(_) => None,
    }
}

/// What each page's request needs.
struct Fetcher {
    client: kube::Client,
    url: String,
    stall: Duration,
    /// Buffers of decoded pages, reused: a list's pages are alike in size,
    /// and a fresh multi-megabyte buffer per page left the allocator
    /// holding freed holes between the decoded objects.
    reused: mpsc::UnboundedReceiver<Vec<u8>>,
}

/// A page being downloaded by its own task; its head comes first.
struct InFlight {
    head: oneshot::Receiver<ListMeta>,
    body: AbortOnDrop<Result<Vec<u8>, kube::Error>>,
    on_continuation: bool,
}

type Downloaded = Result<(Vec<u8>, bool), Failed>;

/// Downloads the pages in order into `pages`, each page's request sent once
/// the page before has shown its head.
async fn download(mut fetcher: Fetcher, first: ListParams, pages: mpsc::Sender<Downloaded>) {
    let mut current = fetcher.start(first.clone(), false);
    loop {
        // The head, or nothing if the page failed (its error comes below).
        let next = current
            .head
            .await
            .ok()
            .and_then(|head| head.continue_)
            .filter(|token| !token.is_empty())
            .map(|token| fetcher.start(first.clone().continue_token(&token), true));
        let Some(body) = joined((&mut current.body.0).await) else {
            return;
        };
        let body = body.map(|bytes| (bytes, current.on_continuation));
        let failed = body.is_err();
        let body = body.map_err(|error| Failed {
            error,
            on_continuation: current.on_continuation,
        });
        if pages.send(body).await.is_err() || failed {
            return;
        }
        match next {
            Some(next) => current = next,
            None => return,
        }
    }
}

impl Fetcher {
    /// Starts downloading the page `params` asks for.
    fn start(&mut self, params: ListParams, on_continuation: bool) -> InFlight {
        let (head_tx, head) = oneshot::channel();
        let mut buffer = self.reused.try_recv().unwrap_or_default();
        let (client, url, stall) = (self.client.clone(), self.url.clone(), self.stall);
        let body = tokio::spawn(async move {
            let mut head_tx = Some(head_tx);
            let mut on_bytes = |bytes: &[u8], whole: bool| {
                if head_tx.is_none() {
                    return Ok(());
                }
                match list_head::peek(bytes, whole) {
                    Ok(Head::Read(meta)) => {
                        if let Some(tx) = head_tx.take() {
                            let _ = tx.send(meta);
                        }
                        Ok(())
                    }
                    Ok(Head::NotYet) => Ok(()),
                    Err(error) => Err(kube::Error::SerdeError(error)),
                }
            };
            page::fetch_page(&client, &url, &params, &mut buffer, stall, &mut on_bytes)
                .await
                .map(|()| buffer)
        });
        InFlight {
            head,
            body: AbortOnDrop(body),
            on_continuation,
        }
    }
}

/// A task stopped when the list is dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use futures::StreamExt as _;
    use tokio::sync::Notify;

    use super::*;
    use crate::model::Node;

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    /// A node list in three pages whose first page sends its head, then
    /// holds the rest of its body until the second page has been asked for.
    fn ahead_client(asked_second: Arc<Notify>) -> kube::Client {
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let query = request.uri().query().unwrap_or_default().to_owned();
            let asked_second = asked_second.clone();
            async move {
                let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = if query
                    .contains("continue=second")
                {
                    asked_second.notify_one();
                    vec![Ok(
                        r#"{"metadata":{"continue":"third"},"items":[{"metadata":{"name":"b"}}]}"#
                            .into(),
                    )]
                } else if query.contains("continue=third") {
                    vec![Ok(r#"{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"c"}}]}"#.into())]
                } else {
                    vec![
                        Ok(r#"{"kind":"NodeList","metadata":{"continue":"second"},"#.into()),
                        Ok(r#""items":[{"metadata":{"name":"a"}}]}"#.into()),
                    ]
                };
                let first_page = chunks.len() == 2;
                let body = futures::stream::iter(chunks).then(move |chunk| {
                    let asked_second = asked_second.clone();
                    async move {
                        // The rest of page one only once page two is asked for.
                        if first_page && chunk.as_ref().is_ok_and(|c| c.starts_with(b"\"items\"")) {
                            asked_second.notified().await;
                        }
                        chunk
                    }
                });
                let response = http::Response::builder()
                    .header("content-type", "application/json")
                    .body(axum::body::Body::from_stream(body))?;
                Ok::<_, BoxError>(response)
            }
        });
        kube::Client::new(service, "default")
    }

    #[tokio::test]
    async fn the_next_page_is_asked_for_once_the_head_is_in_and_pages_come_in_order() {
        let client = ahead_client(Arc::new(Notify::new()));
        let url = crate::cluster::request::collection_url::<Node>(None);
        let mut pages = read_pages::<Node>(
            &client,
            &url,
            ListParams::default().limit(1),
            Duration::from_secs(5),
        );
        let mut names = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), async {
            while let Some(page) = pages.next().await {
                let page = page.expect("a page");
                names.extend(page.items.iter().map(|n| n.name().to_owned()));
            }
        })
        .await;
        assert!(
            read.is_ok(),
            "page two was not asked for while page one streamed"
        );
        assert_eq!(names, ["a", "b", "c"]);
    }
}
