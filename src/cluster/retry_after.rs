//! The one reading of how long a server asks to be left alone, for every
//! request and every watch stream.
//!
//! kube-apiserver says it in two places. Its max-inflight and Priority and
//! Fairness filters answer 429 with the wait in the HTTP `Retry-After` header
//! and a plain-text body (`Too many requests, please try again later.`);
//! handlers answer a `Status` whose `details.retryAfterSeconds` says it (and
//! usually the header too). kube turns any error answer into a `Status` and
//! drops the headers, so a header-only 429 reached the watch streams as "no
//! wait asked" and they came back every second.
//!
//! [`read`] takes the header first, then `details.retryAfterSeconds`, and
//! bounds the result to [`MIN`]..=[`MAX`]. [`Layer`] applies it to every
//! answer of a client, below kube's error handling and any retry policy: an
//! answer that asks for a wait carries it in both places, the same number, so
//! the one-off retry (`cluster::retry`, which sees headers) and the streams
//! (`cluster::stream`, which see a `Status`) honour the same
//! wait. A plain-text error body becomes a `Status` with that text as its
//! message. An error answer in Kubernetes protobuf (a real server writes
//! its Status in the encoding the client preferred, see [`super::wire`]) is
//! rewritten as the same Status in JSON first, so kube reads it as any
//! other. Never decides whether or when to retry.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use tower::BoxError;

/// The shortest wait a server's answer is taken to ask for (`Retry-After: 0`
/// is "soon", not "at once": a tight loop against a loaded server helps no one).
pub const MIN: Duration = Duration::from_secs(1);
/// The longest: a server asking for more (an hour, a typo) is asked again after this.
pub const MAX: Duration = Duration::from_secs(600);

/// Error answers read whole to find or write the wait (they are small:
/// a `Status` or a line of text). Larger ones pass unchanged.
const MAX_ERROR_BODY: usize = 1 << 20;

/// The wait an answer asks for: the `Retry-After` header (delta-seconds)
/// first, else the Status's `details.retryAfterSeconds`, within
/// [`MIN`]..=[`MAX`]; `None` when neither says one. (An HTTP-date
/// `Retry-After` is not read: kube-apiserver sends seconds.)
pub fn read(headers: &HeaderMap, status: Option<&kube::core::Status>) -> Option<Duration> {
    header_seconds(headers)
        .or_else(|| status.and_then(status_seconds))
        .map(bounded)
}

/// The wait a Status asks for (`details.retryAfterSeconds`), bounded as [`read`].
pub fn of_status(status: &kube::core::Status) -> Option<Duration> {
    status_seconds(status).map(bounded)
}

/// A wait the server asked for, lengthened by up to a fifth by `jitter`
/// (0..1), so that the clients a loaded server throttled together do not
/// all return in the same second; never shorter than asked.
pub fn spread(asked: Duration, jitter: f64) -> Duration {
    asked.mul_f64(1.0 + 0.2 * jitter.clamp(0.0, 1.0))
}

fn header_seconds(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
}

fn status_seconds(status: &kube::core::Status) -> Option<u64> {
    status
        .details
        .as_ref()
        .map(|d| u64::from(d.retry_after_seconds))
        .filter(|s| *s > 0)
}

fn bounded(seconds: u64) -> Duration {
    Duration::from_secs(seconds).clamp(MIN, MAX)
}

/// Whether an answer may ask for a wait worth reading its body for: a 429,
/// 503 or 504, or any error answer carrying `Retry-After`.
fn worth_reading(status: StatusCode, headers: &HeaderMap) -> bool {
    let error = status.is_client_error() || status.is_server_error();
    let may_ask = matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    ) || headers.contains_key(http::header::RETRY_AFTER);
    error && may_ask
}

/// An error answer with the wait written in both places. `body`: the answer's
/// bytes; a `Status` keeps every field but `details.retryAfterSeconds`, any
/// other body becomes a `Status` with its text as the message. Returns the
/// headers to set and the new body, or `None` when the answer asks for no wait.
fn normalise(code: StatusCode, headers: &HeaderMap, body: &[u8]) -> Option<(HeaderValue, Vec<u8>)> {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body)
        .ok()
        .filter(|v: &serde_json::Value| v.get("kind").and_then(|k| k.as_str()) == Some("Status"));
    let status: Option<kube::core::Status> = parsed
        .as_ref()
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    let wait = read(headers, status.as_ref())?;
    let seconds = wait.as_secs();
    let mut value = parsed.unwrap_or_else(|| {
        let text = String::from_utf8_lossy(body).trim().to_owned();
        let reason = match code {
            StatusCode::TOO_MANY_REQUESTS => "TooManyRequests",
            StatusCode::SERVICE_UNAVAILABLE => "ServiceUnavailable",
            StatusCode::GATEWAY_TIMEOUT => "Timeout",
            _ => "",
        };
        let message = if text.is_empty() {
            code.canonical_reason().unwrap_or_default().to_owned()
        } else {
            text
        };
        serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code.as_u16(),
        })
    });
    if !value["details"].is_object() {
        value["details"] = serde_json::json!({});
    }
    value["details"]["retryAfterSeconds"] = seconds.into();
    let body = serde_json::to_vec(&value).ok()?;
    Some((HeaderValue::from(seconds), body))
}

/// Writes the one reading of the wait into every error answer that asks for
/// one (see the module docs). Put it innermost, under kube's error handling
/// and any retry layer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Layer;

impl<S> tower::Layer<S> for Layer {
    type Service = Service<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Service { inner }
    }
}

/// The service [`Layer`] makes.
#[derive(Clone, Debug)]
pub struct Service<S> {
    inner: S,
}

type Answer = Response<axum::body::Body>;

impl<S, Req, B> tower::Service<Req> for Service<S>
where
    S: tower::Service<Req, Response = Response<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Answer;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await.map_err(Into::into)?;
            let (mut parts, body) = response.into_parts();
            let body = axum::body::Body::new(body);
            let protobuf_error =
                !parts.status.is_success() && super::wire::is_protobuf(&parts.headers);
            if !worth_reading(parts.status, &parts.headers) && !protobuf_error {
                return Ok(Response::from_parts(parts, body));
            }
            let Ok(mut bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
                // Too large to be a Status, or cut: kube says the status code.
                return Ok(Response::from_parts(parts, axum::body::Body::empty()));
            };
            if let Some(json) = protobuf_error
                .then(|| super::protobuf_read::status_json(&bytes))
                .flatten()
            {
                parts.headers.remove(http::header::CONTENT_LENGTH);
                parts.headers.insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                bytes = Bytes::from(json);
            }
            match normalise(parts.status, &parts.headers, &bytes) {
                Some((seconds, rewritten)) => {
                    parts.headers.insert(http::header::RETRY_AFTER, seconds);
                    parts.headers.remove(http::header::CONTENT_LENGTH);
                    parts.headers.insert(
                        http::header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    );
                    Ok(Response::from_parts(
                        parts,
                        axum::body::Body::from(rewritten),
                    ))
                }
                None => Ok(Response::from_parts(parts, axum::body::Body::from(bytes))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A case: its name, the header, the Status, the wait read (seconds).
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a kube::core::Status>,
        Option<u64>,
    );

    fn headers(retry_after: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = retry_after {
            headers.insert(
                http::header::RETRY_AFTER,
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    fn status(json: serde_json::Value) -> kube::core::Status {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_header_first_then_the_status_within_bounds() {
        let asks_95 = status(json!({"code": 429, "details": {"retryAfterSeconds": 95}}));
        let asks_nothing = status(json!({"code": 429}));
        let cases: [Case<'_>; 8] = [
            ("header alone", Some("120"), None, Some(120)),
            ("header over status", Some("30"), Some(&asks_95), Some(30)),
            ("status alone", None, Some(&asks_95), Some(95)),
            ("neither", None, Some(&asks_nothing), None),
            ("zero is a second", Some("0"), None, Some(1)),
            ("an hour is ten minutes", Some("3600"), None, Some(600)),
            ("spaces are fine", Some(" 7 "), None, Some(7)),
            // An HTTP-date is not read; the Status still is.
            (
                "a date falls back to the status",
                Some("Wed, 21 Oct 2015 07:28:00 GMT"),
                Some(&asks_95),
                Some(95),
            ),
        ];
        for (case, header, status, expected) in cases {
            assert_eq!(
                read(&headers(header), status),
                expected.map(Duration::from_secs),
                "{case}"
            );
        }
        assert_eq!(of_status(&asks_95), Some(Duration::from_secs(95)));
        assert_eq!(of_status(&asks_nothing), None);
    }

    #[test]
    fn an_answer_asking_for_a_wait_says_it_in_both_places() {
        // kube-apiserver's max-inflight / APF answer: header, plain text.
        let (value, body) = normalise(
            StatusCode::TOO_MANY_REQUESTS,
            &headers(Some("120")),
            b"Too many requests, please try again later.\n",
        )
        .expect("asks for a wait");
        assert_eq!(value, "120");
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["code"], 429);
        assert_eq!(body["reason"], "TooManyRequests");
        assert_eq!(
            body["message"],
            "Too many requests, please try again later."
        );
        assert_eq!(body["details"]["retryAfterSeconds"], 120);
        // A Status without the header: its own wait, now in the header too;
        // its other fields kept.
        let original = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "code": 503, "reason": "ServiceUnavailable", "message": "etcd is down",
            "details": {"name": "x", "retryAfterSeconds": 5}});
        let (value, body) = normalise(
            StatusCode::SERVICE_UNAVAILABLE,
            &headers(None),
            original.to_string().as_bytes(),
        )
        .expect("asks for a wait");
        assert_eq!(value, "5");
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body, original);
        // Nothing asked: unchanged.
        assert!(normalise(StatusCode::SERVICE_UNAVAILABLE, &headers(None), b"busy").is_none());
        assert!(!worth_reading(StatusCode::OK, &headers(Some("5"))));
        assert!(!worth_reading(StatusCode::NOT_FOUND, &headers(None)));
        assert!(worth_reading(StatusCode::NOT_FOUND, &headers(Some("5"))));
        assert!(worth_reading(StatusCode::TOO_MANY_REQUESTS, &headers(None)));
    }

    /// Through a kube client: a header-only 429 reaches the caller as a
    /// `Status` whose details carry the header's wait.
    #[tokio::test]
    async fn a_header_only_429_reaches_kube_as_a_status_with_the_wait() {
        let service = tower::service_fn(|_request: http::Request<kube::client::Body>| async {
            Response::builder()
                .status(429)
                .header("retry-after", "30")
                .header("content-type", "text/plain; charset=utf-8")
                .body(kube::client::Body::from(
                    b"Too many requests, please try again later.\n".to_vec(),
                ))
                .map_err(BoxError::from)
        });
        let client = kube::Client::new(
            tower::ServiceBuilder::new().layer(Layer).service(service),
            "default",
        );
        let nodes: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(client);
        match nodes.list(&kube::api::ListParams::default()).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 429);
                assert_eq!(of_status(&status), Some(Duration::from_secs(30)));
                assert_eq!(status.message, "Too many requests, please try again later.");
            }
            other => panic!("{other:?}"),
        }
    }
}
