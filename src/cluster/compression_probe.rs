//! `--compression auto` to a remote server: the connection's first list
//! pages are asked for uncompressed and timed, and once enough bytes have
//! come the choice is made, once, by [`super::compression::choose`] from
//! that throughput, logged, and kept for the connection. Until then (and
//! after, if it chose so) requests carry `Accept-Encoding: identity`; after
//! choosing gzip they carry nothing here and kube's decompression layer
//! below asks for gzip. Only list responses are timed: from the request
//! going out to the body's end, the union of the lists' times (pages in
//! parallel share the link), so the throughput is the link's as the lists
//! see it, server latency included.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt as _;
use http::{HeaderValue, Request, Response};

use super::compression::{self, Compression, Decision, Evidence, Throughput};

/// Uncompressed list bytes to time before choosing: enough to average
/// over a few pages (a page of 500 nodes is ~1.6 MB of protobuf, ~5 MB of
/// JSON), little enough that a slow link pays for it once (0.2 s at 100
/// Mbit/s over what gzip would have taken).
pub const PROBE_BYTES: u64 = 4 << 20;

/// Applies `mode` to `config`: the choice when it can be made now (logged),
/// or a layer that measures the first list pages and then chooses.
pub fn apply(mode: Compression, config: &mut kube::Config) -> Layer {
    let evidence = Evidence {
        loopback: compression::is_loopback(&config.cluster_url),
        kubeconfig_disables: config.disable_compression,
        measured: None,
    };
    let server = config.cluster_url.to_string();
    match compression::choose(mode, &evidence) {
        Decision::Chosen(choice) => {
            config.disable_compression = !choice.compress;
            compression::log(&server, &choice);
            Layer::default()
        }
        Decision::Measure => {
            // Able to decompress; the probe says when to ask.
            config.disable_compression = false;
            tracing::info!(
                server,
                "response compression: measuring the first {} MB of list pages uncompressed, then choosing",
                PROBE_BYTES >> 20
            );
            Layer::probing(server)
        }
    }
}

/// Probes a connection (see the module docs); the default probes nothing.
#[derive(Clone, Debug, Default)]
pub struct Layer {
    probe: Option<Arc<Probe>>,
}

impl Layer {
    /// A layer that measures the connection to `server` and then chooses.
    pub fn probing(server: String) -> Self {
        Layer {
            probe: Some(Arc::new(Probe {
                server,
                chosen: OnceLock::new(),
                meter: Mutex::new(Meter::default()),
            })),
        }
    }
}

impl<S> tower::Layer<S> for Layer {
    type Service = Service<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Service {
            inner,
            probe: self.probe.clone(),
        }
    }
}

/// One connection's measurement and choice.
#[derive(Debug)]
struct Probe {
    server: String,
    /// Whether to ask for gzip, once chosen.
    chosen: OnceLock<bool>,
    meter: Mutex<Meter>,
}

/// The list responses' bytes and the union of their times.
#[derive(Debug, Default)]
struct Meter {
    bytes: u64,
    busy: Duration,
    /// Responses open now, and since when at least one has been.
    open: usize,
    since: Option<Instant>,
}

impl Meter {
    fn opened(&mut self, now: Instant) {
        if self.open == 0 {
            self.since = Some(now);
        }
        self.open += 1;
    }

    fn closed(&mut self, now: Instant) {
        self.open = self.open.saturating_sub(1);
        if self.open == 0
            && let Some(since) = self.since.take()
        {
            self.busy += now.saturating_duration_since(since);
        }
    }

    /// The throughput so far, counting open responses' time up to `now`.
    fn throughput(&self, now: Instant) -> Throughput {
        let open = self
            .since
            .map_or(Duration::ZERO, |since| now.saturating_duration_since(since));
        Throughput {
            bytes: self.bytes,
            busy: self.busy + open,
        }
    }
}

impl Probe {
    fn meter(&self) -> std::sync::MutexGuard<'_, Meter> {
        self.meter.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `bytes` of a list body; chooses once enough have come.
    fn received(&self, bytes: usize, now: Instant) {
        if self.chosen.get().is_some() {
            return;
        }
        let measured = {
            let mut meter = self.meter();
            meter.bytes += bytes as u64;
            if meter.bytes < PROBE_BYTES {
                return;
            }
            meter.throughput(now)
        };
        let evidence = Evidence {
            measured: Some(measured),
            ..Evidence::default()
        };
        let Decision::Chosen(choice) = compression::choose(Compression::Auto, &evidence) else {
            return;
        };
        if self.chosen.set(choice.compress).is_ok() {
            compression::log(&self.server, &choice);
        }
    }
}

/// The service [`Layer`] makes.
#[derive(Clone, Debug)]
pub struct Service<S> {
    inner: S,
    probe: Option<Arc<Probe>>,
}

/// Whether a request is a list (a GET that is not a watch).
fn is_list<B>(request: &Request<B>) -> bool {
    request.method() == http::Method::GET
        && !request.uri().query().is_some_and(|query| {
            query
                .split('&')
                .any(|p| p == "watch=true" || p == "watch=1")
        })
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, ReqBody, ResBody> tower::Service<Request<ReqBody>> for Service<S>
where
    S: tower::Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<axum::body::Body>;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<ReqBody>) -> Self::Future {
        let Some(probe) = self.probe.clone() else {
            let answer = self.inner.call(request);
            return Box::pin(async move { Ok(answer.await?.map(axum::body::Body::new)) });
        };
        let chosen = probe.chosen.get().copied();
        if chosen != Some(true) {
            request.headers_mut().insert(
                http::header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        // Timed from the request going out (server latency included).
        let timed = (chosen.is_none() && is_list(&request)).then(|| Open::new(probe));
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let Some(open) = timed else {
                return Ok(response.map(axum::body::Body::new));
            };
            Ok(response.map(|body| {
                let counted = axum::body::Body::new(body)
                    .into_data_stream()
                    .map(move |chunk| {
                        if let Ok(bytes) = &chunk {
                            open.0.received(bytes.len(), Instant::now());
                        }
                        chunk
                    });
                axum::body::Body::from_stream(counted)
            }))
        })
    }
}

/// A list response being timed: open from the request until its body is
/// read or dropped.
struct Open(Arc<Probe>);

impl Open {
    fn new(probe: Arc<Probe>) -> Self {
        probe.meter().opened(Instant::now());
        Open(probe)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.meter().closed(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tower::{Layer as _, Service as _, ServiceExt as _};

    use super::*;

    /// A server answering every GET with `MB` megabytes in 1 MB chunks,
    /// `gap` apart, and recording each request's Accept-Encoding.
    fn server(
        gap: Duration,
        seen: Arc<Mutex<Vec<Option<String>>>>,
    ) -> impl tower::Service<
        Request<()>,
        Response = Response<axum::body::Body>,
        Error = std::convert::Infallible,
        Future = impl Future<Output = Result<Response<axum::body::Body>, std::convert::Infallible>>
                 + Send
                 + 'static,
    > + Clone {
        tower::service_fn(move |request: Request<()>| {
            let encoding = request
                .headers()
                .get(http::header::ACCEPT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            seen.lock().expect("lock").push(encoding);
            async move {
                let chunks = futures::stream::iter(0..MB).then(move |_| async move {
                    tokio::time::sleep(gap).await;
                    Ok::<_, std::io::Error>(Bytes::from(vec![0u8; 1 << 20]))
                });
                Ok(Response::new(axum::body::Body::from_stream(chunks)))
            }
        })
    }

    const MB: usize = 3;

    /// Reads two lists (6 MB, past the probe's 4 MB), then one more;
    /// returns what each asked for.
    async fn asked(gap: Duration) -> Vec<Option<String>> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut service =
            Layer::probing("https://api.example.com".into()).layer(server(gap, seen.clone()));
        for _ in 0..3 {
            let request = Request::get("/api/v1/nodes?limit=500")
                .body(())
                .expect("request");
            let response = service
                .ready()
                .await
                .expect("ready")
                .call(request)
                .await
                .expect("response");
            axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .expect("body");
        }
        seen.lock().expect("lock").clone()
    }

    #[tokio::test]
    async fn a_slow_link_measured_uncompressed_turns_gzip_on() {
        // 1 MB every 100 ms: about 84 Mbit/s.
        let asked = asked(Duration::from_millis(100)).await;
        assert_eq!(
            asked[..2],
            [Some("identity".into()), Some("identity".into())]
        );
        assert_eq!(
            asked[2], None,
            "kube's decompression layer below asks for gzip"
        );
    }

    #[tokio::test]
    async fn a_fast_link_stays_uncompressed() {
        // The chunks back to back: tens of gigabits a second.
        let asked = asked(Duration::ZERO).await;
        assert!(
            asked.iter().all(|a| a.as_deref() == Some("identity")),
            "{asked:?}"
        );
    }

    #[test]
    fn parallel_lists_count_their_shared_time_once() {
        let mut meter = Meter::default();
        let start = Instant::now();
        meter.opened(start);
        meter.opened(start + Duration::from_millis(10));
        meter.closed(start + Duration::from_millis(50));
        meter.closed(start + Duration::from_millis(100));
        meter.opened(start + Duration::from_millis(200));
        assert_eq!(
            meter.throughput(start + Duration::from_millis(250)).busy,
            Duration::from_millis(150)
        );
    }
}
