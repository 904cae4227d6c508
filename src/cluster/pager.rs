//! A list read page by page with one page ahead: once a page has arrived,
//! its head (the continue token) is read without decoding its items
//! ([`super::list_head`]) and the next page is asked for at once, while
//! this one is decoded off the runtime's threads. So the link and the
//! server's work on page N+1 overlap the client decoding page N; read
//! strictly in turn, each waited for the other. (Asking at the head, while
//! the rest of the page still streamed in, split a slow link between two
//! pages and delayed every page's arrival: a load's progress said nothing
//! for longer.) At most four pages are held at once (one decoding, one
//! waiting for it, one read whole, one downloading): memory stays flat
//! however long the list. Pages are handed on in order.

use std::time::Duration;

use kube::api::ListParams;
use tokio::sync::mpsc;

use super::list_head;
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
                let decoded =
                    tokio::task::spawn_blocking(move || (page::decode_page::<K>(&bytes), bytes))
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

/// A page being downloaded by its own task.
struct InFlight {
    body: AbortOnDrop<Result<Vec<u8>, kube::Error>>,
    on_continuation: bool,
}

type Downloaded = Result<(Vec<u8>, bool), Failed>;

/// Downloads the pages in order into `pages`, each page's request sent once
/// the page before has arrived whole (its head read, its items not yet
/// decoded).
async fn download(mut fetcher: Fetcher, first: ListParams, pages: mpsc::Sender<Downloaded>) {
    let mut current = fetcher.start(first.clone(), false);
    loop {
        let Some(body) = joined((&mut current.body.0).await) else {
            return;
        };
        // A body whose head does not read fails as a page.
        let body = body.and_then(|bytes| {
            let head = list_head::read(&bytes).map_err(kube::Error::SerdeError)?;
            Ok((bytes, head.continue_.filter(|token| !token.is_empty())))
        });
        let (body, next) = match body {
            Ok((bytes, token)) => {
                let next =
                    token.map(|token| fetcher.start(first.clone().continue_token(&token), true));
                (Ok((bytes, current.on_continuation)), next)
            }
            Err(error) => (
                Err(Failed {
                    error,
                    on_continuation: current.on_continuation,
                }),
                None,
            ),
        };
        let failed = body.is_err();
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
        let mut buffer = self.reused.try_recv().unwrap_or_default();
        let (client, url, stall) = (self.client.clone(), self.url.clone(), self.stall);
        let body = tokio::spawn(async move {
            page::fetch_page(&client, &url, &params, &mut buffer, stall)
                .await
                .map(|()| buffer)
        });
        InFlight {
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

    use tokio::sync::Notify;

    use super::*;
    use crate::model::Node;

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    /// A node list in three pages (`a`, `b`, `c`); `asked_second` is
    /// notified when the second is asked for.
    fn three_pages(asked_second: Arc<Notify>) -> kube::Client {
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let query = request.uri().query().unwrap_or_default().to_owned();
            let asked_second = asked_second.clone();
            async move {
                let body = if query.contains("continue=second") {
                    asked_second.notify_one();
                    r#"{"metadata":{"continue":"third"},"items":[{"metadata":{"name":"b"}}]}"#
                } else if query.contains("continue=third") {
                    r#"{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"c"}}]}"#
                } else {
                    r#"{"kind":"NodeList","metadata":{"continue":"second"},"items":[{"metadata":{"name":"a"}}]}"#
                };
                let response = http::Response::builder()
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(body.as_bytes().to_vec()))?;
                Ok::<_, BoxError>(response)
            }
        });
        kube::Client::new(service, "default")
    }

    #[tokio::test]
    async fn the_next_page_is_asked_for_before_this_one_is_handed_on_and_pages_come_in_order() {
        let asked_second = Arc::new(Notify::new());
        let client = three_pages(asked_second.clone());
        let url = crate::cluster::request::collection_url::<Node>(None);
        let limit = ListParams::default().limit(1);
        let mut pages = read_pages::<Node>(&client, &url, limit, Duration::from_secs(5));
        // Nobody has taken page one yet.
        let asked = tokio::time::timeout(Duration::from_secs(5), asked_second.notified()).await;
        assert!(
            asked.is_ok(),
            "page two was not asked for before page one was taken"
        );
        let mut names = Vec::new();
        while let Some(page) = pages.next().await {
            let page = page.expect("a page");
            names.extend(page.items.iter().map(|n| n.name().to_owned()));
        }
        assert_eq!(names, ["a", "b", "c"]);
    }
}
