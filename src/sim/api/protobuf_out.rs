//! Serving nodes, pods and events as Kubernetes protobuf, for clients whose
//! Accept header prefers it (client-go's `application/vnd.kubernetes.protobuf,
//! application/json`): list bodies in the `k8s\0` envelope and watch streams
//! as length-prefixed frames, as kube-apiserver writes them (see
//! [`crate::model::protobuf::envelope`]). The stored JSON is written whole
//! through the shared field table, so a protobuf client reads the same
//! object a JSON client does. Other kinds answer JSON, as a server does for
//! a kind it has no protobuf for (CRDs); client-go accepts either.

use bytes::Bytes;
use serde_json::{Map, Value};

use super::status::ApiError;
use super::{RequestInfo, bytes_response, gzip};
use crate::model::protobuf::envelope::{self, MEDIA_TYPE};
use crate::model::protobuf::{encode_object, wire};
use crate::sim::resources::ResourceKind;
use crate::sim::store::StoredObject;

/// Whether to answer this list or watch in protobuf: the kind has a
/// protobuf form here and the Accept header's first acceptable type is
/// protobuf (upstream negotiates in the client's order of preference).
pub fn wants_protobuf(info: &RequestInfo, kind: ResourceKind) -> bool {
    has_protobuf(kind) && !info.wants_table() && prefers_protobuf(&info.headers)
}

/// The kinds served as protobuf.
pub fn has_protobuf(kind: ResourceKind) -> bool {
    matches!(
        kind,
        ResourceKind::Node | ResourceKind::Pod | ResourceKind::Event
    )
}

/// Whether the Accept header's first acceptable type is protobuf.
pub fn prefers_protobuf(headers: &http::HeaderMap) -> bool {
    first_is_protobuf(
        headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default(),
    )
}

fn first_is_protobuf(accept: &str) -> bool {
    accept
        .split(',')
        .find_map(|range| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next()?;
            let refused = parts.any(|p| p.replace(' ', "") == "q=0");
            (!refused && !media.is_empty()).then_some(media)
        })
        .is_some_and(|media| media.eq_ignore_ascii_case(MEDIA_TYPE))
}

/// Upstream's answer when no acceptable type can be served (the
/// `refuse-protobuf` fault plays a server without protobuf that is asked
/// for nothing else).
pub fn not_acceptable() -> ApiError {
    ApiError::new(
        http::StatusCode::NOT_ACCEPTABLE,
        "NotAcceptable",
        format!(
            "the server was unable to respond with a content type that the client supports (only {MEDIA_TYPE} was offered by the fault refuse-protobuf)"
        ),
    )
}

/// One object's message (without envelope): encoded from its stored JSON
/// once, then the same bytes (see [`StoredObject::protobuf`]).
fn message(kind: ResourceKind, object: &StoredObject) -> &[u8] {
    object.protobuf(|json| encode_json(kind, json))
}

fn encode_json(kind: ResourceKind, json: &[u8]) -> Vec<u8> {
    // The store wrote these bytes from a map, so they parse as one.
    let mut map: Map<String, Value> = serde_json::from_slice(json).unwrap_or_default();
    // TypeMeta travels in the envelope, not in the message.
    map.remove("kind");
    map.remove("apiVersion");
    let mut out = Vec::with_capacity(json.len() * 2 / 3);
    if let Some(encoded) = encode_object(kind.kind(), &map, &mut out)
        && !encoded.dropped.is_empty()
    {
        tracing::debug!(kind = kind.kind(), fields = ?encoded.dropped, "fields without a protobuf field were left out");
    }
    out
}

/// A list body: the envelope around {1: ListMeta, 2: items}.
pub fn list_body(
    kind: ResourceKind,
    metadata: &Value,
    items: &[std::sync::Arc<StoredObject>],
) -> Bytes {
    let size: usize = items.iter().map(|o| o.json.len()).sum();
    // Protobuf runs to about two thirds of the JSON; one allocation mostly.
    let mut body = Vec::with_capacity(size * 2 / 3 + 256);
    let list_kind = kind.list_kind();
    envelope::seal(kind.api_version(), &list_kind, &mut body, |raw| {
        let empty = Map::new();
        let meta = metadata.as_object().unwrap_or(&empty);
        wire::put_nested(raw, 1, |out| {
            encode_object("ListMeta", meta, out);
        });
        for item in items {
            wire::put_bytes_field(raw, 2, message(kind, item));
        }
    });
    Bytes::from(body)
}

/// A list response: the body, gzipped when `compress` (see [`gzip`]).
pub fn response(body: Bytes, compress: bool) -> http::Response<axum::body::Body> {
    if !compress {
        return bytes_response(http::StatusCode::OK, MEDIA_TYPE, body);
    }
    let mut response = bytes_response(http::StatusCode::OK, MEDIA_TYPE, gzip::compress(&body));
    gzip::mark(&mut response);
    response
}

/// One sealed object (for a watch event).
pub fn sealed(kind: ResourceKind, object: &StoredObject) -> Vec<u8> {
    let message = message(kind, object);
    let mut out = Vec::with_capacity(message.len() + 64);
    envelope::seal(kind.api_version(), kind.kind(), &mut out, |raw| {
        raw.extend_from_slice(message);
    });
    out
}

/// A watch frame for a stored object.
pub fn object_frame(event_type: &str, kind: ResourceKind, object: &StoredObject) -> Bytes {
    frame(event_type, &sealed(kind, object))
}

/// A watch frame for an object given as JSON (bookmarks, Status): sealed
/// as `kind` (`Status`, or the watched kind for a bookmark).
pub fn json_frame(event_type: &str, api_version: &str, kind: &str, object: &Value) -> Bytes {
    let empty = Map::new();
    let map = object.as_object().unwrap_or(&empty);
    let mut sealed_object = Vec::new();
    envelope::seal(api_version, kind, &mut sealed_object, |raw| {
        let mut map = map.clone();
        map.remove("kind");
        map.remove("apiVersion");
        encode_object(kind, &map, raw);
    });
    frame(event_type, &sealed_object)
}

fn frame(event_type: &str, sealed_object: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(sealed_object.len() + 32);
    envelope::put_watch_frame(&mut frame, event_type, sealed_object);
    Bytes::from(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_is_served_when_it_comes_first_and_is_not_refused() {
        assert!(first_is_protobuf(
            "application/vnd.kubernetes.protobuf,application/json"
        ));
        assert!(first_is_protobuf("application/vnd.kubernetes.protobuf"));
        assert!(!first_is_protobuf(
            "application/json, application/vnd.kubernetes.protobuf"
        ));
        assert!(!first_is_protobuf(
            "application/vnd.kubernetes.protobuf;q=0, application/json"
        ));
        assert!(!first_is_protobuf(""));
        assert!(!first_is_protobuf("*/*"));
        assert!(has_protobuf(ResourceKind::Pod) && !has_protobuf(ResourceKind::DaemonSet));
    }

    #[test]
    fn a_list_body_opens_to_its_items() {
        let node = serde_json::json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "a", "resourceVersion": "3"}});
        let stored =
            std::sync::Arc::new(StoredObject::from_value(ResourceKind::Node, &node).unwrap());
        let body = list_body(
            ResourceKind::Node,
            &serde_json::json!({"resourceVersion": "9", "continue": "c"}),
            &[stored.clone(), stored],
        );
        let unknown = envelope::open(&body).unwrap();
        assert_eq!((unknown.api_version, unknown.kind), ("v1", "NodeList"));
        let (meta, items) = envelope::list_parts(unknown.raw).unwrap();
        let meta: Value = crate::model::protobuf::from_message("ListMeta", meta).unwrap();
        assert_eq!(
            meta,
            serde_json::json!({"resourceVersion": "9", "continue": "c"})
        );
        assert_eq!(items.len(), 2);
        let item: Value = crate::model::protobuf::from_message("Node", items[0]).unwrap();
        assert_eq!(
            item,
            serde_json::json!({"metadata": {"name": "a", "resourceVersion": "3"}})
        );
    }
}
