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
}

/// What a continue token remembers.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    rv: u64,
    ns: String,
    name: String,
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
    let requested_rv = info.query.non_empty("resourceVersion");
    // Upstream serves resourceVersion=0 from its cache and ignores limit.
    let limit = match info.query.non_empty("limit").map(str::parse::<usize>) {
        Some(Err(_)) => {
            return Err(ApiError::bad_request(
                "limit must be a non-negative integer",
            ));
        }
        _ if requested_rv == Some("0") => usize::MAX,
        Some(Ok(0)) | None => usize::MAX,
        Some(Ok(n)) => n,
    };
    let token = info
        .query
        .non_empty("continue")
        .map(decode_token)
        .transpose()?;
    if let Some(token) = &token
        && token.rv < state.store.oldest_replayable()
    {
        return Err(ApiError::expired(
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
        ));
    }
    check_exact(state, info, requested_rv)?;
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
        metadata["continue"] = json!(encode_token(&ContinueToken {
            rv,
            ns: next.namespace.clone(),
            name: next.name.clone()
        }));
        metadata["remainingItemCount"] = json!(page.remaining);
    }
    if info.wants_table() {
        let include = IncludeObject::parse(info.query.get("includeObject"));
        let now = jiff::Timestamp::now();
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
    Ok(bytes_response(
        StatusCode::OK,
        "application/json",
        splice_list(kind, &metadata, &page.items),
    ))
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
    let head = format!(
        "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":[",
        kind.list_kind(),
        kind.api_version(),
        metadata
    );
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
