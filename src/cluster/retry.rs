//! The retry of one-off requests (reads, access reviews, rollcall's own state
//! patches) on 429, 503 and 504, in place of kube's: kube waits whatever
//! `Retry-After` says, however long, up to 15 times and says nothing (a
//! server asking for 60 s kept `status` silent for a quarter of an hour).
//! Here each wait is the server's (its `Retry-After` or `Status`, read once
//! by [`crate::cluster::retry_after`]) or an exponential backoff, capped at
//! [`MAX_WAIT`], jittered, logged; after [`MAX_RETRIES`] the server's answer
//! is returned and the caller says it in words. A wait the server asked for
//! is never shortened by the jitter, only lengthened.
//! Watches do not come through here: they retry themselves and show it.

use std::time::Duration;

use http::{Request, Response, StatusCode};
use kube::client::Body;
use tower::BoxError;
use tower::util::rng::{HasherRng, Rng as _};

/// Retries of one request before the server's answer is given back.
pub const MAX_RETRIES: u32 = 6;
/// The longest single wait, whatever `Retry-After` asks.
pub const MAX_WAIT: Duration = Duration::from_secs(10);
/// The first backoff when the server gives no `Retry-After`.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// A per-request retry policy (tower clones it for each request).
#[derive(Clone, Debug)]
pub struct Policy {
    retries: u32,
    max_retries: u32,
    max_wait: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new(MAX_RETRIES, MAX_WAIT)
    }
}

impl Policy {
    /// At most `max_retries` retries, each wait at most `max_wait`.
    pub fn new(max_retries: u32, max_wait: Duration) -> Self {
        Policy {
            retries: 0,
            max_retries,
            max_wait,
        }
    }
}

/// How long to wait before retry number `retry` (0-based), with `jitter`
/// (0..1) so that clients told the same do not return together: the
/// server's `asked` lengthened by up to a fifth (never sooner than asked),
/// else the backoff shortened by up to a fifth; at most `cap` either way.
pub fn wait(retry: u32, asked: Option<Duration>, cap: Duration, jitter: f64) -> Duration {
    let jitter = jitter.clamp(0.0, 1.0);
    if let Some(asked) = asked {
        return crate::cluster::retry_after::spread(asked, jitter).min(cap);
    }
    let backoff = FIRST_BACKOFF.saturating_mul(2u32.saturating_pow(retry.min(16)));
    backoff.min(cap).mul_f64(1.0 - 0.2 * jitter)
}

fn retryable(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

impl<B> tower::retry::Policy<Request<Body>, Response<B>, BoxError> for Policy {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        request: &mut Request<Body>,
        result: &mut Result<Response<B>, BoxError>,
    ) -> Option<Self::Future> {
        let Ok(response) = result else {
            return None;
        };
        let status = response.status();
        if !retryable(status) {
            return None;
        }
        let what = format!("{} {}", request.method(), request.uri().path());
        if self.retries >= self.max_retries {
            tracing::warn!(
                status = status.as_u16(),
                retries = self.retries,
                request = %what,
                "still refused after retries, giving up"
            );
            return None;
        }
        let wait = wait(
            self.retries,
            // The layer below wrote the one reading into the header.
            crate::cluster::retry_after::read(response.headers(), None),
            self.max_wait,
            HasherRng::default().next_f64(),
        );
        self.retries += 1;
        let why = if status == StatusCode::TOO_MANY_REQUESTS {
            "throttled (429)"
        } else {
            "server unavailable"
        };
        tracing::warn!(
            status = status.as_u16(),
            retry_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            retry = self.retries,
            request = %what,
            "{why}, retrying"
        );
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(&mut self, request: &Request<Body>) -> Option<Request<Body>> {
        super::resend::copy_request(request)
    }
}

/// One cluster's kube stack ([`crate::cluster::transport`]: HTTP/2 where the
/// server offers it): `config`'s TLS connector, connection pool,
/// authentication (one exec plugin run, one refreshed token) and
/// decompression, under the wire layer and the one reading of a server's
/// `Retry-After` ([`crate::cluster::retry_after::Layer`]), without any
/// retry. As a client it is what the watch streams use (they retry
/// themselves and show it); [`client_over`] puts the retrying client for
/// one-off requests over the same stack, so both share the cluster's
/// connections (HTTP/2: one for everything; HTTP/1.1: an idle connection is
/// reused, a watch holds its own) instead of each opening its own pool.
pub fn shared_stack(
    mut config: kube::Config,
    wire: crate::cluster::wire::Layer,
    compression: crate::cluster::compression_probe::Layer,
) -> Result<kube::Client, kube::Error> {
    config.default_retry = false;
    let layers = tower::ServiceBuilder::new()
        .layer(wire)
        .layer(tower::buffer::BufferLayer::new(1024))
        .layer(crate::cluster::retry_after::Layer)
        .layer(compression);
    Ok(crate::cluster::transport::stack(&config)?
        .with_layer(&layers)
        .build())
}

/// A client whose one-off requests retry by `policy`, sent through `stack`
/// (a [`shared_stack`]): the same connections, credentials and wire.
pub fn client_over(stack: &kube::Client, policy: Policy) -> kube::Client {
    kube::client::ClientBuilder::new(Through(stack.clone()), stack.default_namespace())
        .with_layer(&tower::retry::RetryLayer::new(policy))
        .with_valid_until(*stack.valid_until())
        .build()
}

/// `config` as a client of its own whose one-off requests retry by `policy`
/// (a one-off command's: nothing else shares its connections).
pub fn client(
    config: kube::Config,
    policy: Policy,
    wire: crate::cluster::wire::Layer,
) -> Result<kube::Client, kube::Error> {
    let compression = crate::cluster::compression_probe::Layer::default();
    Ok(client_over(
        &shared_stack(config, wire, compression)?,
        policy,
    ))
}

/// A client as a service: requests go through its stack. Its errors are
/// kube's own (boxed), so the client above unboxes them unchanged.
#[derive(Clone)]
struct Through(kube::Client);

impl tower::Service<Request<Body>> for Through {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = futures::future::BoxFuture<'static, Result<Response<Body>, BoxError>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        // The stack's own buffer waits for capacity inside `send`.
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let client = self.0.clone();
        Box::pin(async move { client.send(request).await.map_err(BoxError::from) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::wire::Layer;

    #[test]
    fn waits_follow_retry_after_capped_and_jittered_else_back_off() {
        let second = Some(Duration::from_secs(1));
        assert_eq!(wait(0, second, MAX_WAIT, 0.0), Duration::from_secs(1));
        assert_eq!(wait(5, second, MAX_WAIT, 0.0), Duration::from_secs(1));
        // Never sooner than the server asked.
        assert_eq!(wait(0, second, MAX_WAIT, 1.0), Duration::from_millis(1_200));
        let hour = Some(Duration::from_secs(3600));
        assert_eq!(wait(0, hour, MAX_WAIT, 0.0), MAX_WAIT);
        assert_eq!(wait(0, hour, MAX_WAIT, 1.0), MAX_WAIT);
        assert_eq!(wait(0, None, MAX_WAIT, 0.0), Duration::from_millis(250));
        assert_eq!(wait(2, None, MAX_WAIT, 0.0), Duration::from_secs(1));
        assert_eq!(wait(40, None, MAX_WAIT, 0.0), MAX_WAIT);
        let jittered = wait(1, None, MAX_WAIT, 0.5);
        assert!(jittered < Duration::from_millis(500) && jittered >= Duration::from_millis(400));
    }

    async fn throttled_cluster(spec: &str) -> crate::sim::embedded::EmbeddedCluster {
        let faults = crate::sim::fault::Faults::none();
        let options = crate::sim::embedded::EmbeddedOptions {
            scenario: Some("small".to_owned()),
            faults: faults.clone(),
            ..crate::sim::embedded::EmbeddedOptions::default()
        };
        let cluster = crate::sim::embedded::start(options).await.unwrap();
        faults.install(crate::sim::fault::parse(spec).unwrap());
        cluster
    }

    async fn list_nodes(client: kube::Client) -> kube::Result<usize> {
        let nodes: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(client);
        Ok(nodes
            .list(&kube::api::ListParams::default())
            .await?
            .items
            .len())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_waits_out_a_short_throttle_as_retry_after_says() {
        // Throttled for 300 ms only, but told to come back in 2 s: a
        // backoff alone (250 ms, then 500 ms) would be back within 0.8 s.
        let cluster = throttled_cluster("throttle:2=0s+300ms").await;
        let client = client(
            cluster.server.kube_config(),
            Policy::default(),
            Layer::default(),
        )
        .unwrap();
        let started = std::time::Instant::now();
        assert_eq!(list_nodes(client).await.unwrap(), 5);
        let took = started.elapsed();
        // Retry-After 2, plus a jitter of at most a fifth.
        assert!(took >= Duration::from_secs(2), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_gives_up_within_its_bound_when_told_to_wait_an_hour() {
        let cluster = throttled_cluster("throttle:3600=0s+1m").await;
        let policy = Policy::new(3, Duration::from_millis(100));
        let client = client(cluster.server.kube_config(), policy, Layer::default()).unwrap();
        let started = std::time::Instant::now();
        let err = list_nodes(client).await.unwrap_err();
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert!(
            took >= Duration::from_millis(240),
            "three capped waits: {took:?}"
        );
        match err {
            kube::Error::Api(status) => assert_eq!(status.code, 429, "{status:?}"),
            other => panic!("{other:?}"),
        }
    }
}
