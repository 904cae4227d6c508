//! A request copied to be sent again: by the retry policy after a 429 or
//! 5xx, and by the wire layer asking for JSON after a 406.

use http::Request;
use kube::client::Body;

/// A copy of `request` to send again (`None` when its body is streamed:
/// only a body held whole can be sent twice).
pub(super) fn copy_request(request: &Request<Body>) -> Option<Request<Body>> {
    // Only a body held whole can be sent again; a streamed one is not retried.
    let body = request.body().try_clone()?;
    let mut copy = Request::builder()
        .method(request.method().clone())
        .uri(request.uri().clone())
        .version(request.version())
        .body(body)
        .ok()?;
    copy.headers_mut().clone_from(request.headers());
    copy.extensions_mut().clone_from(request.extensions());
    Some(copy)
}
