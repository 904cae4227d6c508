//! A watch request and its answer's events, in whichever encoding the
//! server chose: JSON lines (as kube's `request_events` reads them) or
//! protobuf frames ([`super::protobuf_read::frames`]). The Content-Type
//! says which; the [`super::wire`] layer decided what was asked for.

use std::io;

use futures::{AsyncBufReadExt, Stream, StreamExt, TryStreamExt, future::ready};
use kube::api::WatchEvent;
use kube::core::Status;

use super::object::Object;
use super::protobuf_read;
use crate::model::protobuf::MEDIA_TYPE;

/// Sends a watch request; its events as they arrive.
pub async fn events<K: Object>(
    client: &kube::Client,
    mut request: http::Request<Vec<u8>>,
) -> Result<impl Stream<Item = Result<WatchEvent<K>, kube::Error>> + use<K>, kube::Error> {
    // As kube: watches are not compressed (kube's decompression reads only a
    // gzip stream's first member, and Kubernetes gzips each event alone).
    request
        .headers_mut()
        .entry(http::header::ACCEPT_ENCODING)
        .or_insert(http::HeaderValue::from_static("identity"));
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let response = api_error(response).await?;
    let protobuf = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with(MEDIA_TYPE));
    let body = axum::body::Body::new(response.into_body())
        .into_data_stream()
        .map_err(|error| {
            // A cut connection is the end of the watch (it resumes), as kube
            // reads it; anything else is an error.
            let cut = std::error::Error::source(&error)
                .is_some_and(|s| s.to_string().contains("EOF"))
                || error.to_string().contains("unexpected EOF");
            let kind = if cut {
                io::ErrorKind::UnexpectedEof
            } else {
                io::ErrorKind::Other
            };
            io::Error::new(kind, error)
        })
        .into_async_read();
    Ok(if protobuf {
        protobuf_read::frames(body)
            .filter_map(|frame| {
                ready(step(
                    frame.map(|f: Vec<u8>| Some(protobuf_read::watch_event::<K>(&f))),
                ))
            })
            .left_stream()
    } else {
        body.lines()
            .filter_map(|line| ready(step(line.map(|l: String| json_event::<K>(&l)))))
            .right_stream()
    })
}

/// One item of the body: an event, an error, or nothing (a blank line; the
/// client's own read timeout; the end of a cut stream).
fn step<K>(
    read: io::Result<Option<Result<WatchEvent<K>, kube::Error>>>,
) -> Option<Result<WatchEvent<K>, kube::Error>> {
    match read {
        Ok(event) => event,
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::UnexpectedEof
            ) =>
        {
            tracing::debug!(%error, "watch body ended");
            None
        }
        Err(error) => Some(Err(kube::Error::ReadEvents(error))),
    }
}

/// One JSON line: an event, or a Status sent bare (kube reads those too).
fn json_event<K: Object>(line: &str) -> Option<Result<WatchEvent<K>, kube::Error>> {
    if line.trim().is_empty() {
        return None;
    }
    Some(match serde_json::from_str::<WatchEvent<K>>(line) {
        Ok(event) => Ok(event),
        Err(error) => match serde_json::from_str::<Status>(line) {
            Ok(status) => Err(kube::Error::Api(Box::new(status))),
            Err(_) => Err(kube::Error::SerdeError(error)),
        },
    })
}

/// An error answer as kube's `Error::Api` (a JSON Status, or one made up
/// from the HTTP code and the body's text), as kube reads error answers.
async fn api_error(
    response: http::Response<kube::client::Body>,
) -> Result<http::Response<kube::client::Body>, kube::Error> {
    let code = response.status();
    if !(code.is_client_error() || code.is_server_error()) {
        return Ok(response);
    }
    // A Status is a few hundred bytes; a body past this is not one.
    let body = axum::body::to_bytes(axum::body::Body::new(response.into_body()), 1 << 20)
        .await
        .unwrap_or_default();
    if let Ok(status) = serde_json::from_slice::<Status>(&body) {
        return Err(kube::Error::Api(Box::new(status)));
    }
    let text = String::from_utf8_lossy(&body);
    let status =
        Status::failure(text.trim(), "Failed to parse error data").with_code(code.as_u16());
    Err(kube::Error::Api(Box::new(status)))
}
