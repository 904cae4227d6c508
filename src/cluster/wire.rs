//! Which encoding lists and watches of nodes, pods and events ask for
//! (`--wire json|protobuf|auto`), and the client layer that asks.
//!
//! Kubernetes protobuf (client-go's choice for built-in kinds) is smaller
//! than JSON (0.65× for nodes and pods, 0.8× under gzip; docs/performance.md,
//! "The wire"), and a field rollcall does not read costs its decoder a
//! length prefix, not a scan. The layer sends client-go's
//! `Accept: application/vnd.kubernetes.protobuf, application/json` on GETs
//! of those three collections only (DaemonSets, ControllerRevisions and
//! writes stay JSON) and falls back to JSON per resource, saying so once in
//! the log, when the server answers 406 (the request is sent again asking
//! for JSON) or answers JSON anyway (a server or proxy without protobuf).
//! It needs a service it can clone (put it above a buffer); an error
//! answer in protobuf is [`super::retry_after`]'s to rewrite. The decoding itself is [`super::protobuf_read`]'s; request code tells the
//! two encodings apart by the body (`k8s\0`) or the Content-Type.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use tower::ServiceExt as _;

use crate::model::protobuf::MEDIA_TYPE;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `--wire`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Wire {
    /// Protobuf where it pays: remote servers; JSON to a loopback one.
    #[default]
    Auto,
    /// Always JSON.
    Json,
    /// Protobuf for nodes, pods and events wherever the server offers it.
    Protobuf,
}

/// What was chosen for one connection, and why (for the log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Ask for protobuf.
    pub protobuf: bool,
    /// Why, in a few words.
    pub why: &'static str,
}

/// The choice for a server at `url`.
pub fn choose(mode: Wire, url: &http::Uri) -> Choice {
    let (protobuf, why) = match mode {
        Wire::Json => (false, "--wire json"),
        Wire::Protobuf => (true, "--wire protobuf"),
        Wire::Auto if super::compression::is_loopback(url) => (
            false,
            "loopback server: the wire is free there and an embedded cluster pays to write protobuf (docs/performance.md)",
        ),
        Wire::Auto => (
            true,
            "remote server: 0.65× the bytes of JSON (0.8× under gzip), and a kube-apiserver writes it more cheaply than JSON",
        ),
    };
    Choice { protobuf, why }
}

/// The layer for a connection to `url`, with the choice logged.
pub fn layer(mode: Wire, url: &http::Uri) -> Layer {
    let choice = choose(mode, url);
    tracing::info!(
        server = %url,
        wire = if choice.protobuf { "protobuf" } else { "json" },
        "wire encoding for nodes, pods and events: {}",
        choice.why
    );
    Layer {
        fallbacks: choice.protobuf.then(Arc::default),
    }
}

/// The resources that fell back to JSON on this connection.
#[derive(Debug, Default)]
struct Fallbacks(Mutex<HashSet<&'static str>>);

impl Fallbacks {
    fn has(&self, resource: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(resource)
    }

    /// Records the fallback; logs it the first time.
    fn fall_back(&self, resource: &'static str, why: &str) {
        let first = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(resource);
        if first {
            tracing::warn!(
                resource,
                "protobuf refused ({why}): {resource} use JSON on this connection"
            );
        }
    }
}

/// Asks for protobuf (see the module docs); `fallbacks: None` asks for nothing.
#[derive(Clone, Debug, Default)]
pub struct Layer {
    fallbacks: Option<Arc<Fallbacks>>,
}

impl<S> tower::Layer<S> for Layer {
    type Service = Service<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Service {
            inner,
            fallbacks: self.fallbacks.clone(),
        }
    }
}

/// The service [`Layer`] makes.
#[derive(Clone, Debug)]
pub struct Service<S> {
    inner: S,
    fallbacks: Option<Arc<Fallbacks>>,
}

/// The resource of a GET on a collection that has a protobuf form here
/// (`/api/v1/nodes`, `/api/v1/namespaces/NS/pods`, `/api/v1/events`).
fn protobuf_resource<B>(request: &Request<B>) -> Option<&'static str> {
    if request.method() != http::Method::GET {
        return None;
    }
    let path = request.uri().path().strip_prefix("/api/v1/")?;
    let (["namespaces", _, resource] | [resource]) = path.split('/').collect::<Vec<_>>()[..] else {
        return None;
    };
    ["nodes", "pods", "events"]
        .into_iter()
        .find(|known| *known == resource)
}

/// client-go's Accept for built-in kinds.
const ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";

pub(super) fn is_protobuf(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with(MEDIA_TYPE))
}

type Answer = Response<axum::body::Body>;

impl<S, B> tower::Service<Request<kube::client::Body>> for Service<S>
where
    S: tower::Service<Request<kube::client::Body>, Response = Response<B>> + Clone + Send + 'static,
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

    fn call(&mut self, mut request: Request<kube::client::Body>) -> Self::Future {
        let asked = self.fallbacks.clone().and_then(|fallbacks| {
            let resource = protobuf_resource(&request).filter(|r| !fallbacks.has(r))?;
            Some((fallbacks, resource))
        });
        let Some((fallbacks, resource)) = asked else {
            let answer = self.inner.call(request);
            return Box::pin(async move {
                let response = answer.await.map_err(Into::into)?;
                Ok(response.map(axum::body::Body::new))
            });
        };
        // Sent again asking for JSON if the server answers 406.
        let again = json_again(&request);
        request.headers_mut().insert(
            http::header::ACCEPT,
            HeaderValue::from_static(ACCEPT_PROTOBUF),
        );
        // The ready service answers this call; a clone, the retry.
        let mut spare = self.inner.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await.map_err(Into::into)?;
            let status = response.status();
            if status == StatusCode::NOT_ACCEPTABLE
                && let Some(again) = again
            {
                fallbacks.fall_back(resource, "406 Not Acceptable");
                let response = spare.ready().await.map_err(Into::into)?.call(again).await;
                return Ok(response.map_err(Into::into)?.map(axum::body::Body::new));
            }
            if status.is_success() && !is_protobuf(response.headers()) {
                fallbacks.fall_back(resource, "the server answered JSON");
            }
            Ok(response.map(axum::body::Body::new))
        })
    }
}

/// The request again, asking for JSON (`None` when its body cannot be copied).
fn json_again(request: &Request<kube::client::Body>) -> Option<Request<kube::client::Body>> {
    let mut again = super::resend::copy_request(request)?;
    again.headers_mut().insert(
        http::header::ACCEPT,
        HeaderValue::from_static("application/json"),
    );
    Some(again)
}

#[cfg(test)]
mod tests;
