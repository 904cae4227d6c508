//! One list-then-watch stream of one kind, with its health made visible.
//!
//! Like kube-runtime's watcher (paged list, then watch from the list's
//! resourceVersion, re-list on 410) but it reports what the console must know
//! to tell the truth: every BOOKMARK as proof of life ([`Signal::Alive`]), a
//! watch that delivers nothing past its expected interval (it is restarted and
//! reported as [`Signal::Stalled`]), throttling with the server's Retry-After
//! ([`Signal::Throttled`]), a server that went backwards or was replaced
//! ([`Signal::ServerChanged`]: resourceVersion lower than seen, or "Too large
//! resource version"), and a user who may not list or watch the kind
//! ([`Signal::Forbidden`]: a 403 ends the stream; asking again would only
//! repeat the refusal in a loop, and the view states the limitation
//! instead). Give it a client without kube's automatic retry layer (see
//! `connect::Connection::watch_client`), so 429/503/504 reach it instead of
//! being retried silently inside one request.
//!
//! The expected silence is twice the server's bookmark interval plus a
//! second, within [`StreamConfig::idle_floor`]..[`StreamConfig::idle_ceiling`].
//! The interval is the server's [`Rhythm`], shared by every stream on it:
//! learnt from the gap between two bookmarks of one watch, and until then
//! assumed from the server's kind (a kube-apiserver's minute; the embedded
//! cluster's own interval), so a watch that goes silent right after start is
//! noticed as soon as one that went silent later. What was learnt is kept
//! across reconnects. A watch also counts as stalled when it outlives its own
//! `timeoutSeconds` (the server ends it then) by [`WATCH_END_GRACE`]. After
//! any failure the stream re-lists rather than resuming: the list is fresh
//! evidence, and it clears the stale badge at once.
//!
//! A server's wait (429, or any answer with a Retry-After) is read once by
//! [`retry_after`], and honoured: the stream comes back no sooner than asked
//! (and up to a fifth later, so throttled clients do not return together).

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::runtime::watcher;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::pager;
use super::request::{self, Object};
use super::retry_after;
use super::rhythm::Rhythm;
use crate::model::MetaFields;

/// Timings of a stream.
#[derive(Clone, Copy, Debug)]
pub struct StreamConfig {
    /// A list that receives nothing for this long is abandoned and retried
    /// (however long the whole list takes while bytes keep coming).
    pub list_stall: Duration,
    /// The shortest silence that counts as a stall.
    pub idle_floor: Duration,
    /// The longest silence a live watch keeps, whatever the bookmark rhythm
    /// (learnt or assumed) would allow.
    pub idle_ceiling: Duration,
    /// The longest wait between retries (without a Retry-After).
    pub backoff_max: Duration,
    /// Objects per list page.
    pub page_size: u32,
    /// `timeoutSeconds` of each watch request (the server ends it then).
    pub watch_timeout: u32,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            list_stall: request::LIST_STALL,
            idle_floor: Duration::from_secs(3),
            // A kube-apiserver sends a bookmark about once a minute (and a
            // second or so late at most): a minute and a quarter.
            idle_ceiling: Duration::from_secs(75),
            // Short enough that the view is right soon after an outage ends.
            backoff_max: Duration::from_secs(10),
            page_size: 500,
            watch_timeout: 290,
        }
    }
}

/// What a stream reports.
#[derive(Debug)]
pub enum Signal<K> {
    /// A change, with kube-runtime's watcher semantics (Init..InitDone is a relist).
    Event(watcher::Event<K>),
    /// A bookmark arrived: the stream is alive and up to date.
    Alive,
    /// While a list loads: how many objects it will hold, by the server's
    /// estimate (those listed so far and its `remainingItemCount`).
    Expecting(u64),
    /// A request failed; the stream retries (and re-lists).
    Failed(String),
    /// Nothing arrived for `silent_for`, longer than expected; the watch is
    /// restarted (and re-lists).
    Stalled {
        /// Since the last event or bookmark.
        silent_for: Duration,
    },
    /// The server asked to slow down; the next try is in `retry_in`.
    Throttled {
        /// How long the stream waits before retrying.
        retry_in: Duration,
    },
    /// The server's state went backwards or it was replaced; the stream re-lists.
    ServerChanged(String),
    /// The server forbids this user the list or watch (403): the stream has
    /// stopped and is not retried. The last signal of a stream.
    Forbidden(String),
}

/// Starts the stream (`label` names the kind in logs) on a server whose
/// bookmark `rhythm` it shares with the other streams on it; it runs until
/// the returned stream is dropped.
pub fn spawn<K>(
    label: &'static str,
    client: kube::Client,
    url: String,
    selector: Selector,
    config: StreamConfig,
    rhythm: Rhythm,
) -> impl futures::Stream<Item = Signal<K>> + Send + 'static
where
    K: Object,
{
    let (tx, rx) = mpsc::channel(256);
    let task = tokio::spawn(async move {
        let mut follower = Follower {
            label,
            client,
            url,
            selector,
            config,
            tx,
            resource_version: None,
            highest: 0,
            last_delivery: Instant::now(),
            last_bookmark: None,
            rhythm,
            failures: 0,
            forbidden: None,
        };
        let watcher = follower.tx.clone();
        tokio::select! {
            () = follower.run() => {}
            () = watcher.closed() => {}
        }
    });
    let guard = AbortOnDrop(task);
    tokio_stream::wrappers::ReceiverStream::new(rx).map(move |signal| {
        let _ = &guard;
        signal
    })
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Label and field selectors of a stream.
#[derive(Clone, Debug, Default)]
pub struct Selector {
    /// `labelSelector`.
    pub labels: Option<String>,
    /// `fieldSelector`.
    pub fields: Option<String>,
}

struct Follower<K> {
    label: &'static str,
    client: kube::Client,
    /// The collection's path ([`request::collection_url`]).
    url: String,
    selector: Selector,
    config: StreamConfig,
    tx: mpsc::Sender<Signal<K>>,
    /// Where the watch resumes; `None`: re-list first.
    resource_version: Option<String>,
    /// The highest resourceVersion seen from this server.
    highest: u64,
    last_delivery: Instant,
    /// The last bookmark of the current watch (gaps are measured within one
    /// watch: a reconnect in between is no gap in the server's rhythm).
    last_bookmark: Option<Instant>,
    /// The server's bookmark rhythm, shared with its other streams.
    rhythm: Rhythm,
    failures: u32,
    /// The server's 403, once seen: the stream stops.
    forbidden: Option<String>,
}

/// How long past its own `timeoutSeconds` a watch may stay open before it
/// counts as stalled (the server ends it at the timeout).
pub const WATCH_END_GRACE: Duration = Duration::from_secs(5);

/// What a reported failure asks of the stream.
struct Retry {
    /// Whether to wait before trying again.
    back_off: bool,
    /// The wait the server asked for (jittered, never shorter), if any.
    wait: Option<Duration>,
}

/// How one watch request ended.
enum Ended {
    /// The server closed it (timeout) or it was cut: resume from the last
    /// version. `at_once`: it ended within a second without delivering anything.
    Resume { at_once: bool },
    /// Re-list (410, stall, error).
    Relist,
}

impl<K> Follower<K>
where
    K: Object,
{
    async fn send(&self, signal: Signal<K>) {
        let _ = self.tx.send(signal).await;
    }

    async fn run(&mut self) {
        loop {
            if self.resource_version.is_none()
                && let Err(asked) = self.list().await
            {
                if self.stopped_forbidden().await {
                    return;
                }
                self.pause(asked).await;
                continue;
            }
            let ended = self.watch().await;
            if self.stopped_forbidden().await {
                return;
            }
            match ended {
                Ended::Resume { at_once: false } => self.failures = 0,
                Ended::Resume { at_once: true } => {
                    // Closed at once without a byte: back off so a cut
                    // connection does not spin.
                    if self.failures >= 2 {
                        self.send(Signal::Failed("watch closed at once, retrying".into()))
                            .await;
                        self.resource_version = None;
                    }
                    self.pause(None).await;
                }
                Ended::Relist => self.resource_version = None,
            }
        }
    }

    /// After a 403: says so (the stream's last signal) and returns true.
    async fn stopped_forbidden(&mut self) -> bool {
        let Some(message) = self.forbidden.take() else {
            return false;
        };
        tracing::warn!(kind = self.label, error = %message, "forbidden: not retrying this stream");
        self.send(Signal::Forbidden(message)).await;
        true
    }

    /// The silence after which the watch counts as stalled: from the
    /// server's rhythm, learnt or assumed.
    fn idle_bound(&self) -> Duration {
        self.rhythm
            .silence_bound(self.config.idle_floor, self.config.idle_ceiling)
    }

    /// Waits before the next try: `asked`, the server's wait (already
    /// jittered by [`Follower::report`]), else the exponential backoff.
    async fn pause(&mut self, asked: Option<Duration>) {
        self.failures = self.failures.saturating_add(1);
        let exponent = self.failures.min(10).saturating_sub(1);
        let backoff =
            (Duration::from_millis(250) * 2u32.pow(exponent)).min(self.config.backoff_max);
        tokio::time::sleep(asked.unwrap_or(backoff)).await;
    }

    /// Lists every page; on failure, the wait the server asked for (if any).
    async fn list(&mut self) -> Result<(), Option<Duration>> {
        self.send(Signal::Event(watcher::Event::Init)).await;
        let version = match self.list_pages().await {
            Ok(version) => version,
            Err(error) => {
                return Err(self.report(&error).await.wait);
            }
        };
        if let Some(listed) = parse_version(&version) {
            if listed < self.highest {
                let message = format!(
                    "the server's resourceVersion went backwards ({} → {listed}): it was restarted or replaced; relisted",
                    self.highest
                );
                tracing::warn!("{message}");
                self.send(Signal::ServerChanged(message)).await;
            }
            self.highest = listed;
        }
        self.send(Signal::Event(watcher::Event::InitDone)).await;
        self.resource_version = Some(version);
        self.last_delivery = Instant::now();
        self.failures = 0;
        Ok(())
    }

    /// Lists page by page, one page ahead ([`super::pager`]); returns the
    /// list's resourceVersion. When a continuation has expired (410: the
    /// server compacted the list's snapshot while we paged, as etcd does
    /// every five minutes, or sooner on a busy cluster), lists everything in
    /// one request instead, as client-go's pager does
    /// (`FullListIfExpired`): starting over page by page could expire
    /// again, and again, and never finish.
    async fn list_pages(&self) -> Result<String, kube::Error> {
        let mut whole = ListParams::default();
        if let Some(labels) = &self.selector.labels {
            whole = whole.labels(labels);
        }
        if let Some(fields) = &self.selector.fields {
            whole = whole.fields(fields);
        }
        let paged = whole.clone().limit(self.config.page_size);
        match self.read_pages(paged).await {
            Err(failed) if failed.on_continuation && is_expired(&failed.error) => {
                tracing::info!(
                    kind = self.label,
                    "list continuation expired (410); listing everything in one request"
                );
                // The pages so far are dropped: the whole list replaces them.
                self.send(Signal::Event(watcher::Event::Init)).await;
                self.read_pages(whole).await.map_err(|failed| failed.error)
            }
            read => read.map_err(|failed| failed.error),
        }
    }

    /// Reads the list's pages from `first`, handing every object on.
    async fn read_pages(&self, first: ListParams) -> Result<String, pager::Failed> {
        let mut listed = 0u64;
        let mut version = None;
        let mut pages =
            pager::read_pages::<K>(&self.client, &self.url, first, self.config.list_stall);
        while let Some(page) = pages.next().await {
            let page = page?;
            listed += page.items.len() as u64;
            for item in page.items {
                self.send(Signal::Event(watcher::Event::InitApply(item)))
                    .await;
            }
            if let Some(remaining) = page
                .metadata
                .remaining_item_count
                .and_then(|n| u64::try_from(n).ok())
            {
                self.send(Signal::Expecting(listed + remaining)).await;
            }
            version = page.metadata.resource_version;
        }
        Ok(version.unwrap_or_default())
    }

    async fn watch(&mut self) -> Ended {
        let version = self.resource_version.clone().unwrap_or_default();
        let mut params = WatchParams::default().timeout(self.config.watch_timeout);
        if let Some(labels) = &self.selector.labels {
            params = params.labels(labels);
        }
        if let Some(fields) = &self.selector.fields {
            params = params.fields(fields);
        }
        let stream = match tokio::time::timeout(
            self.idle_bound(),
            request::watch::<K>(&self.client, &self.url, &params, &version),
        )
        .await
        {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => {
                let retry = self.report(&error).await;
                if self.forbidden.is_none() {
                    self.pause(retry.wait).await;
                }
                return Ended::Relist;
            }
            Err(_) => return self.stalled("the watch request was not answered").await,
        };
        let mut stream = std::pin::pin!(stream.into_stream());
        let mut delivered = false;
        let started = Instant::now();
        let at_once = |delivered: bool| !delivered && started.elapsed() < Duration::from_secs(1);
        self.last_bookmark = None;
        // The server ends the watch at its timeoutSeconds: open past that,
        // it is dead whatever the rhythm says.
        let ends_by =
            started + Duration::from_secs(u64::from(self.config.watch_timeout)) + WATCH_END_GRACE;
        let mut rhythm = self.rhythm.subscribe();
        loop {
            let silent_until = self.last_delivery + self.idle_bound();
            let next = tokio::select! {
                next = stream.try_next() => next,
                () = tokio::time::sleep_until(silent_until.min(ends_by)) => {
                    let why = if silent_until <= ends_by {
                        "nothing delivered past the expected bookmark interval"
                    } else {
                        "the watch outlived its own timeoutSeconds"
                    };
                    return self.stalled(why).await;
                }
                // The rhythm was learnt (or the server's kind became known)
                // meanwhile: wait again with the new bound.
                Ok(()) = rhythm.changed() => continue,
            };
            let event = match next {
                Ok(None) => {
                    return Ended::Resume {
                        at_once: at_once(delivered),
                    };
                }
                Ok(Some(event)) => event,
                Err(error) => {
                    // A cut connection mid-stream: resume from the last version.
                    tracing::info!(error = %describe(&error), "watch stream ended with an error, resuming");
                    return Ended::Resume {
                        at_once: at_once(delivered),
                    };
                }
            };
            let first = !delivered;
            delivered = true;
            self.last_delivery = Instant::now();
            match event {
                WatchEvent::Added(object) | WatchEvent::Modified(object) => {
                    self.seen(object.metadata().resource_version());
                    self.send(Signal::Event(watcher::Event::Apply(object)))
                        .await;
                }
                WatchEvent::Deleted(object) => {
                    self.seen(object.metadata().resource_version());
                    self.send(Signal::Event(watcher::Event::Delete(object)))
                        .await;
                }
                WatchEvent::Bookmark(bookmark) => {
                    let now = Instant::now();
                    if let Some(previous) = self.last_bookmark {
                        self.rhythm.learn(now - previous);
                    }
                    self.last_bookmark = Some(now);
                    self.seen(Some(&bookmark.metadata.resource_version));
                    self.send(Signal::Alive).await;
                }
                WatchEvent::Error(status) => {
                    let error = kube::Error::Api(status);
                    // A 410 is routine (re-list at once) unless the watch
                    // from a fresh list gets it at once: then back off.
                    let retry = self.report(&error).await;
                    if (retry.back_off || first) && self.forbidden.is_none() {
                        self.pause(retry.wait).await;
                    }
                    return Ended::Relist;
                }
            }
        }
    }

    /// Records a version delivered by the watch (where to resume).
    fn seen(&mut self, version: Option<&str>) {
        if let Some(version) = version.filter(|v| !v.is_empty()) {
            if let Some(number) = parse_version(version) {
                self.highest = self.highest.max(number);
            }
            self.resource_version = Some(version.to_owned());
        }
    }

    async fn stalled(&mut self, why: &str) -> Ended {
        let silent_for = self.last_delivery.elapsed();
        tracing::warn!(
            kind = self.label,
            silent_secs = silent_for.as_secs_f32(),
            bound_secs = self.idle_bound().as_secs_f32(),
            rhythm_learnt = self.rhythm.learnt(),
            "watch stalled: {why}; restarting it"
        );
        self.send(Signal::Stalled { silent_for }).await;
        Ended::Relist
    }

    /// Reports a failure; returns whether to back off before retrying
    /// (not after a 410, which is routine: re-list at once; not after a 403,
    /// which stops the stream) and the wait the server asked for.
    async fn report(&mut self, error: &kube::Error) -> Retry {
        let kind = self.label;
        let wait = server_wait(error).map(jittered);
        let back_off = |back_off| Retry { back_off, wait };
        if let kube::Error::Api(status) = error {
            if status.code == 403 {
                self.forbidden = Some(describe(error));
                return back_off(false);
            }
            if status.code == 410 {
                tracing::info!(kind, "resourceVersion expired (410), relisting");
                return back_off(false);
            }
            if is_too_large(status) {
                let message = format!(
                    "the server has not reached our resourceVersion ({}): it was restarted or replaced; relisting",
                    status.message
                );
                tracing::warn!(kind, "{message}");
                self.highest = 0;
                self.send(Signal::ServerChanged(message)).await;
                return back_off(true);
            }
            if status.code == 429 {
                // A 429 that names no wait still asks for one: the shortest.
                let retry_in = wait.unwrap_or_else(|| jittered(retry_after::MIN));
                tracing::warn!(kind, retry_secs = retry_in.as_secs_f32(), "throttled (429)");
                self.send(Signal::Throttled { retry_in }).await;
                return Retry {
                    back_off: true,
                    wait: Some(retry_in),
                };
            }
        }
        let message = describe(error);
        tracing::warn!(kind, error = %message, "watch failed, retrying");
        self.send(Signal::Failed(message)).await;
        back_off(true)
    }
}

/// The wait the server asked for: its Retry-After header or the Status's
/// `details.retryAfterSeconds`, as [`retry_after`] reads them (the client's
/// [`retry_after::Layer`] put the header's into the Status).
fn server_wait(error: &kube::Error) -> Option<Duration> {
    match error {
        kube::Error::Api(status) => retry_after::of_status(status),
        _ => None,
    }
}

/// A server's wait, lengthened by up to a fifth at random.
fn jittered(asked: Duration) -> Duration {
    use tower::util::rng::{HasherRng, Rng as _};
    retry_after::spread(asked, HasherRng::default().next_f64())
}

fn parse_version(version: &str) -> Option<u64> {
    version.parse().ok()
}

/// Upstream's "Too large resource version" (504 Timeout, cause
/// `ResourceVersionTooLarge`): the server is behind the version we hold.
/// A 410 Gone/Expired answer (a resourceVersion or continue token too old).
fn is_expired(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 410)
}

fn is_too_large(status: &kube::core::Status) -> bool {
    let cause = status.details.as_ref().is_some_and(|d| {
        d.causes
            .iter()
            .any(|c| c.reason == "ResourceVersionTooLarge")
    });
    cause || status.message.contains("Too large resource version")
}

/// An error in words an operator can act on: the API's own message for a
/// Status, "the server's certificate changed" for a TLS trust failure, the
/// innermost cause for a connection failure.
pub fn describe(error: &kube::Error) -> String {
    if let kube::Error::Api(status) = error {
        let reason = if status.reason.is_empty() {
            String::new()
        } else {
            format!(" {}", status.reason)
        };
        return format!("{}{reason}: {}", status.code, status.message);
    }
    if let kube::Error::ReadEvents(io) = error
        && io.kind() == std::io::ErrorKind::TimedOut
    {
        // Our own stall bound (`request::fetch_page`), already in words.
        return io.to_string();
    }
    let mut chain = Vec::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        chain.push(current.to_string());
        source = current.source();
    }
    if chain
        .iter()
        .any(|text| text.contains("invalid peer certificate") || text.contains("UnknownIssuer"))
    {
        return "the server's certificate changed: it is not signed by the CA in the kubeconfig (a new server? fetch its kubeconfig again)".into();
    }
    let innermost = chain.last().cloned().unwrap_or_default();
    if chain.len() > 1 {
        format!("{}: {innermost}", chain[0])
    } else {
        innermost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn status(json: serde_json::Value) -> Status {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn upstreams_too_large_answer_is_recognised() {
        let too_large = status(serde_json::json!({
            "code": 504, "reason": "Timeout",
            "message": "Too large resource version: 90, current: 12",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}
        }));
        assert!(is_too_large(&too_large));
        let timeout = status(
            serde_json::json!({"code": 504, "reason": "Timeout", "message": "request timed out"}),
        );
        assert!(!is_too_large(&timeout));
    }

    /// A server that answers every request with 403, counting them.
    fn forbidding_client(requests: std::sync::Arc<std::sync::atomic::AtomicUsize>) -> kube::Client {
        let service = tower::service_fn(move |_request: http::Request<kube::client::Body>| {
            requests.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let body = serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
                "reason": "Forbidden",
                "message": "nodes is forbidden: User \"viewer\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
            });
            let response = http::Response::builder()
                .status(403)
                .header("content-type", "application/json")
                .body(kube::client::Body::from(body.to_string().into_bytes()));
            async move { response.map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>) }
        });
        kube::Client::new(service, "default")
    }

    /// A forbidden list is asked once, says so, and the stream ends: no
    /// retry loop against a refusal that will not change.
    #[tokio::test(start_paused = true)]
    async fn a_forbidden_list_stops_the_stream_after_one_request() {
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut signals = std::pin::pin!(spawn::<crate::model::Node>(
            "nodes",
            forbidding_client(requests.clone()),
            request::collection_url::<crate::model::Node>(None),
            Selector::default(),
            StreamConfig::default(),
            Rhythm::default()
        ));
        let mut forbidden = None;
        let mut failures = 0;
        // Paused time: the timeout passes as soon as the stream is idle, so a
        // hot loop or a backoff retry would show as more requests here.
        let _ = tokio::time::timeout(Duration::from_secs(600), async {
            while let Some(signal) = signals.next().await {
                match signal {
                    Signal::Forbidden(message) => forbidden = Some(message),
                    Signal::Failed(_) | Signal::Throttled { .. } => failures += 1,
                    _ => {}
                }
            }
        })
        .await;
        let message = forbidden.expect("the stream says it is forbidden");
        assert!(
            message.starts_with("403 Forbidden: nodes is forbidden"),
            "{message}"
        );
        assert_eq!(failures, 0, "a 403 is not a failure to retry");
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// A server whose node list has two pages: the first (node `a`, continue
    /// token `next`) and `second`, the answer to `continue=next`.
    fn paging_client(second: &'static str) -> kube::Client {
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let query = request.uri().query().unwrap_or_default();
            let body = if query.contains("continue=next") {
                second.to_owned()
            } else if query.contains("watch=true") {
                String::new()
            } else {
                r#"{"kind":"NodeList","metadata":{"resourceVersion":"5","continue":"next"},"items":[{"metadata":{"name":"a"}}]}"#.to_owned()
            };
            let response = http::Response::builder()
                .header("content-type", "application/json")
                .body(kube::client::Body::from(body.into_bytes()));
            async move { response.map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>) }
        });
        kube::Client::new(service, "default")
    }

    /// The signals of a node stream up to the first `InitDone` or failure.
    async fn first_list(client: kube::Client) -> Vec<String> {
        let mut signals = std::pin::pin!(spawn::<crate::model::Node>(
            "nodes",
            client,
            request::collection_url::<crate::model::Node>(None),
            Selector::default(),
            StreamConfig::default(),
            Rhythm::default()
        ));
        let mut seen = Vec::new();
        while let Some(signal) = signals.next().await {
            let (text, last) = match signal {
                Signal::Event(watcher::Event::Init) => ("init".to_owned(), false),
                Signal::Event(watcher::Event::InitApply(node)) => (node.name().to_owned(), false),
                Signal::Event(watcher::Event::InitDone) => ("done".to_owned(), true),
                Signal::Failed(message) => (format!("failed: {message}"), true),
                other => (format!("{other:?}"), false),
            };
            seen.push(text);
            if last {
                break;
            }
        }
        seen
    }

    /// Pages decoded while the next downloads still reach the cache whole
    /// and in order.
    #[tokio::test]
    async fn a_paged_list_is_handed_on_in_order() {
        let second = r#"{"kind":"NodeList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"b"}},{"metadata":{"name":"c"}}]}"#;
        assert_eq!(
            first_list(paging_client(second)).await,
            ["init", "a", "b", "c", "done"]
        );
    }

    /// A page that does not decode (a proxy cut it short) fails the list:
    /// it is not taken for the list's end.
    #[tokio::test]
    async fn a_page_cut_short_fails_the_list() {
        let second = r#"{"kind":"NodeList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"b"}"#;
        let seen = first_list(paging_client(second)).await;
        assert_eq!(seen[..2], ["init", "a"]);
        let last = seen.last().expect("a signal");
        assert!(
            last.starts_with("failed: ") && last.contains("EOF"),
            "{seen:?}"
        );
    }

    #[test]
    fn api_errors_are_described_with_code_reason_and_message() {
        let error = kube::Error::Api(Box::new(status(serde_json::json!({
            "code": 503, "reason": "ServiceUnavailable", "message": "etcd is down"
        }))));
        assert_eq!(describe(&error), "503 ServiceUnavailable: etcd is down");
    }
}
