//! LIST: selectors, `limit`/`continue` pagination and the response body,
//! either a plain list spliced together from the stored JSON (no
//! re-serialization) or a server-side Table. Continue tokens carry the first
//! page's resourceVersion; a token older than the history window is 410
//! Expired, and a watch from that resourceVersion replays every change made
//! while paging, so list-then-watch clients converge.

use std::sync::Arc;

use axum::body::Body;
use base64::Engine as _;
use bytes::{BufMut, Bytes, BytesMut};
use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::gzip;
use super::protobuf_out;
use super::selectors::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::table::{self, IncludeObject};
use super::{ApiState, RequestInfo, ResourcePath, bytes_response, json_response};
use crate::sim::resources::ResourceKind;
use crate::sim::store::{ObjectKey, StoredObject};

/// Parsed label and field selectors of a list or watch.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
}

impl Filter {
    /// From the query; bad selectors and unsupported fields are 400s.
    pub fn from_request(info: &RequestInfo, kind: ResourceKind) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(info.query.get("labelSelector").unwrap_or_default())
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields = FieldSelector::parse(info.query.get("fieldSelector").unwrap_or_default())
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        if let Some(field) = fields.unsupported_field(&StoredObject::supported_fields(kind)) {
            return Err(ApiError::bad_request(format!(
                "field label not supported: {field}"
            )));
        }
        Ok(Filter { labels, fields })
    }

    /// Whether an object matches both selectors.
    pub fn matches(&self, object: &StoredObject) -> bool {
        self.labels.matches(&object.labels) && self.fields.matches(object)
    }

    /// Whether neither selector narrows the list.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

/// What a continue token remembers.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    rv: u64,
    ns: String,
    name: String,
    /// Objects listed before the page this token asks for.
    #[serde(default)]
    served: usize,
}

fn encode_token(token: &ContinueToken) -> String {
    let json = serde_json::to_vec(token).unwrap_or_default();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

fn decode_token(text: &str) -> Result<ContinueToken, ApiError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| ApiError::bad_request("continue key is not valid"))
}

/// Answers a LIST request.
pub fn list(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
) -> Result<Response<Body>, ApiError> {
    let kind = path.kind;
    let filter = Filter::from_request(info, kind)?;
    let limit = page_limit(info)?;
    let token = continue_token(state, info)?;
    check_exact(state, info, info.query.non_empty("resourceVersion"))?;
    let after = token.as_ref().map(|t| ObjectKey::new(&t.ns, &t.name));
    let page = state.store.list_page(
        kind,
        path.namespace.as_deref(),
        after.as_ref(),
        limit,
        |o| filter.matches(o),
    );
    let rv = token.as_ref().map_or(page.resource_version, |t| t.rv);
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(next) = &page.next {
        let served = token.as_ref().map_or(0, |t| t.served) + page.items.len();
        let next = ContinueToken {
            rv,
            ns: next.namespace.clone(),
            name: next.name.clone(),
            served,
        };
        metadata["continue"] = json!(encode_token(&next));
        // As upstream, only without selectors (an estimate: objects may come
        // and go between pages); within one namespace it is left out, since
        // counting there would make a page O(remaining).
        if let Some(of_kind) = page.of_kind.filter(|_| filter.is_empty()) {
            metadata["remainingItemCount"] = json!(of_kind.saturating_sub(served));
        }
    }
    if info.wants_table() {
        let include = IncludeObject::parse(info.query.get("includeObject"));
        let now = crate::clock::now();
        let rows = page
            .items
            .iter()
            .map(|o| table::row(kind, &o.value(), include, now))
            .collect();
        return Ok(json_response(
            StatusCode::OK,
            &table::table(kind, rows, true, metadata),
        ));
    }
    if protobuf_out::wants_protobuf(info, kind) {
        if state.faults.refuses_protobuf() {
            return Err(protobuf_out::not_acceptable());
        }
        let body = protobuf_out::list_body(kind, &metadata, &page.items);
        let compress = body.len() > gzip::COMPRESS_ABOVE_BYTES && gzip::accepts_gzip(&info.headers);
        return Ok(protobuf_out::response(body, compress));
    }
    let size: usize = page.items.iter().map(|o| o.json.len()).sum();
    let compress = size > gzip::COMPRESS_ABOVE_BYTES && gzip::accepts_gzip(&info.headers);
    Ok(list_response(kind, &metadata, page.items, compress))
}

/// `limit`, or unlimited (absent, 0, or resourceVersion=0, which upstream
/// serves from its cache ignoring the limit).
fn page_limit(info: &RequestInfo) -> Result<usize, ApiError> {
    match info.query.non_empty("limit").map(str::parse::<usize>) {
        Some(Err(_)) => Err(ApiError::bad_request(
            "limit must be a non-negative integer",
        )),
        _ if info.query.non_empty("resourceVersion") == Some("0") => Ok(usize::MAX),
        Some(Ok(0)) | None => Ok(usize::MAX),
        Some(Ok(n)) => Ok(n),
    }
}

/// The decoded `continue` token, if any; 410 when the history window no
/// longer reaches back to the list's resourceVersion.
fn continue_token(state: &ApiState, info: &RequestInfo) -> Result<Option<ContinueToken>, ApiError> {
    let token = info
        .query
        .non_empty("continue")
        .map(decode_token)
        .transpose()?;
    if let Some(token) = &token
        && token.rv < state.store.oldest_replayable()
    {
        return Err(ApiError::continue_expired());
    }
    Ok(token)
}

/// A plain list: built whole when short, streamed in chunks when long.
/// `compress`: gzip it (see [`gzip`]).
fn list_response(
    kind: ResourceKind,
    metadata: &Value,
    items: Vec<Arc<StoredObject>>,
    compress: bool,
) -> Response<Body> {
    if items.len() <= STREAM_ABOVE_ITEMS {
        let body = splice_list(kind, metadata, &items);
        if !compress {
            return bytes_response(StatusCode::OK, "application/json", body);
        }
        let mut response =
            bytes_response(StatusCode::OK, "application/json", gzip::compress(&body));
        gzip::mark(&mut response);
        return response;
    }
    let chunks = ListChunks {
        head: Some(list_head(kind, metadata)),
        items: items.into_iter(),
        written: 0,
        done: false,
    };
    let mut response = if compress {
        let stream = futures::stream::iter(gzip::Gzipped::new(chunks).map(Ok::<_, std::io::Error>));
        let mut response = Response::new(Body::from_stream(stream));
        gzip::mark(&mut response);
        response
    } else {
        Response::new(Body::from_stream(futures::stream::iter(
            chunks.map(Ok::<_, std::io::Error>),
        )))
    };
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Lists longer than this are streamed in chunks rather than built whole,
/// so a 65,000-node list never holds its full body in memory at once.
const STREAM_ABOVE_ITEMS: usize = 256;

/// Target size of one streamed chunk.
const CHUNK_BYTES: usize = 256 * 1024;

/// Yields the list body in chunks of about [`CHUNK_BYTES`].
struct ListChunks {
    head: Option<String>,
    items: std::vec::IntoIter<Arc<StoredObject>>,
    written: usize,
    done: bool,
}

impl Iterator for ListChunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        let mut chunk = BytesMut::with_capacity(CHUNK_BYTES + 16 * 1024);
        if let Some(head) = self.head.take() {
            chunk.put_slice(head.as_bytes());
        }
        while chunk.len() < CHUNK_BYTES {
            let Some(item) = self.items.next() else {
                chunk.put_slice(b"]}");
                self.done = true;
                break;
            };
            if self.written > 0 {
                chunk.put_u8(b',');
            }
            self.written += 1;
            chunk.put_slice(&item.json);
        }
        Some(chunk.freeze())
    }
}

fn list_head(kind: ResourceKind, metadata: &Value) -> String {
    format!(
        "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":[",
        kind.list_kind(),
        kind.api_version(),
        metadata
    )
}

/// `resourceVersionMatch=Exact` can only be served for the current version.
fn check_exact(
    state: &ApiState,
    info: &RequestInfo,
    requested: Option<&str>,
) -> Result<(), ApiError> {
    if info.query.get("resourceVersionMatch") != Some("Exact") {
        return Ok(());
    }
    let current = state.store.resource_version();
    match requested.map(str::parse::<u64>) {
        Some(Ok(rv)) if rv == current => Ok(()),
        Some(Ok(rv)) => Err(ApiError::expired(format!(
            "too old resource version: {rv} ({current})"
        ))),
        _ => Err(ApiError::bad_request(
            "resourceVersionMatch=Exact requires a resourceVersion",
        )),
    }
}

/// `{"kind":"…List","apiVersion":…,"metadata":…,"items":[<stored bytes>,…]}`.
fn splice_list(kind: ResourceKind, metadata: &Value, items: &[Arc<StoredObject>]) -> Bytes {
    let head = list_head(kind, metadata);
    let size = head.len() + items.iter().map(|o| o.json.len() + 1).sum::<usize>() + 2;
    let mut body = BytesMut::with_capacity(size);
    body.put_slice(head.as_bytes());
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            body.put_u8(b',');
        }
        body.put_slice(&item.json);
    }
    body.put_slice(b"]}");
    body.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let token = ContinueToken {
            rv: 42,
            ns: "default".into(),
            name: "p-1".into(),
            served: 500,
        };
        assert_eq!(decode_token(&encode_token(&token)).unwrap(), token);
        assert_eq!(
            decode_token("%%%").unwrap_err().code,
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            decode_token("e30").unwrap_err().code,
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn streamed_list_is_valid_json_whatever_the_chunking() {
        let node = json!({"metadata":{"name":"a","resourceVersion":"3","pad":"x".repeat(CHUNK_BYTES / 4)}});
        let stored = Arc::new(StoredObject::from_value(ResourceKind::Node, &node).unwrap());
        for count in [0, 1, 4, 9] {
            let chunks = ListChunks {
                head: Some(list_head(
                    ResourceKind::Node,
                    &json!({"resourceVersion":"9"}),
                )),
                items: vec![stored.clone(); count].into_iter(),
                written: 0,
                done: false,
            };
            let body: Vec<u8> = chunks.flat_map(|c| c.to_vec()).collect();
            let parsed: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(parsed["items"].as_array().unwrap().len(), count);
        }
    }

    #[test]
    fn spliced_list_is_valid_json() {
        let node = json!({"metadata":{"name":"a","resourceVersion":"3"}});
        let stored = Arc::new(StoredObject::from_value(ResourceKind::Node, &node).unwrap());
        let body = splice_list(
            ResourceKind::Node,
            &json!({"resourceVersion":"9"}),
            &[stored.clone(), stored],
        );
        let parsed: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(parsed["kind"], "NodeList");
        assert_eq!(parsed["metadata"]["resourceVersion"], "9");
        assert_eq!(parsed["items"].as_array().unwrap().len(), 2);
        let empty: Value =
            serde_json::from_slice(&splice_list(ResourceKind::Pod, &json!({}), &[])).unwrap();
        assert_eq!(empty["items"], json!([]));
    }
}
