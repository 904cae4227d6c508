//! The Kubernetes API over HTTP: authentication, routing of `/api`, `/apis`,
//! `/openapi`, `/version` and resource paths to their handlers, and the
//! response helpers they share. Owns request parsing and error mapping; the
//! objects themselves live in the [`Store`], TLS and sockets in
//! `sim::server`. Hostile input gets a 4xx Status, never a panic.

pub mod cells;
pub mod discovery;
pub mod list;
pub mod logs;
pub mod openapi;
pub mod patch;
pub mod query;
pub mod routes;
pub mod selectors;
pub mod ssar;
pub mod status;
pub mod table;
pub mod watch;
pub mod write;

use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::Value;

use crate::sim::auth::{self, Attributes, Authorizer};
use crate::sim::store::Store;
use query::Query;
pub use routes::ResourcePath;
use routes::{Route, route};
use status::ApiError;

/// Request bodies above this size are refused (upstream's limit is 3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// What every handler needs. Shared by `Arc` across connections.
#[derive(Clone, Debug)]
pub struct ApiState {
    /// The objects.
    pub store: Store,
    /// The bearer token required on every request but `/version`; `None` disables the check.
    pub token: Option<String>,
    /// The authorization policy.
    pub authorizer: Authorizer,
    /// `host:port` clients reach the server at (for `/api`).
    pub server_address: String,
    /// How often watches that allow bookmarks get one.
    pub bookmark_interval: Duration,
}

/// The parsed parts of a request handlers look at.
#[derive(Debug)]
pub struct RequestInfo {
    /// The HTTP method.
    pub method: Method,
    /// The decoded query.
    pub query: Query,
    /// The request headers.
    pub headers: HeaderMap,
}

impl RequestInfo {
    /// A header as text (empty when absent or not text).
    pub fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// Whether the client asked for a server-side Table.
    pub fn wants_table(&self) -> bool {
        self.header(header::ACCEPT)
            .split(',')
            .any(|part| part.replace(' ', "").contains("as=Table"))
    }

    /// `dryRun=All`.
    pub fn dry_run(&self) -> bool {
        self.query.get("dryRun") == Some("All")
    }
}

/// Handles one request end to end.
pub async fn handle(state: std::sync::Arc<ApiState>, request: Request<Body>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let info = RequestInfo {
        method: parts.method,
        query: Query::parse(parts.uri.query().unwrap_or_default()),
        headers: parts.headers,
    };
    let route = route(parts.uri.path());
    if route != Some(Route::Version) && !authenticated(&state, &info) {
        return error_response(&ApiError::unauthorized());
    }
    let result = match route {
        None => Err(ApiError::unknown_path()),
        Some(route) => dispatch(&state, &info, route, body).await,
    };
    result.unwrap_or_else(|error| error_response(&error))
}

fn authenticated(state: &ApiState, info: &RequestInfo) -> bool {
    state.token.as_deref().is_none_or(|token| {
        auth::bearer_matches(
            info.headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok()),
            token,
        )
    })
}

async fn dispatch(
    state: &ApiState,
    info: &RequestInfo,
    route: Route,
    body: Body,
) -> Result<Response<Body>, ApiError> {
    let read_only = |value: Option<Value>| -> Result<Response<Body>, ApiError> {
        if info.method != Method::GET {
            return Err(ApiError::method_not_allowed(&info.method));
        }
        value
            .map(|v| json_response(StatusCode::OK, &v))
            .ok_or_else(ApiError::unknown_path)
    };
    match route {
        Route::Version => read_only(Some(discovery::version())),
        Route::CoreVersions | Route::Groups => {
            let core = route == Route::CoreVersions;
            match discovery::negotiate(info.header(header::ACCEPT)) {
                Some(version) if info.method == Method::GET => Ok(bytes_response(
                    StatusCode::OK,
                    discovery::aggregated_content_type(version),
                    to_bytes(&discovery::aggregated(core, version)),
                )),
                _ if core => read_only(Some(discovery::core_versions(&state.server_address))),
                _ => read_only(Some(discovery::group_list())),
            }
        }
        Route::Group(group) => read_only(discovery::group(&group)),
        Route::GroupVersion(group) => read_only(discovery::resource_list(&group)),
        Route::Health => Ok(bytes_response(
            StatusCode::OK,
            "text/plain",
            Bytes::from_static(b"ok"),
        )),
        Route::OpenApiIndex => read_only(Some(openapi::index())),
        Route::OpenApiGroup(group) => read_only(openapi::group_version(&group)),
        Route::AccessReview => {
            if info.method != Method::POST {
                return Err(ApiError::method_not_allowed(&info.method));
            }
            let body = read_body(body).await?;
            let answer = ssar::review(&body, info.header(header::CONTENT_TYPE), &state.authorizer)?;
            Ok(json_response(StatusCode::CREATED, &answer))
        }
        Route::Resource(path) => {
            authorize(state, info, &path)?;
            resource(state, info, &path, body).await
        }
    }
}

async fn resource(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
    body: Body,
) -> Result<Response<Body>, ApiError> {
    if path.subresource.as_deref() == Some("log") {
        return match info.method {
            Method::GET => logs::logs(state, info, path),
            ref method => Err(ApiError::method_not_allowed(method)),
        };
    }
    let watching = matches!(info.query.get("watch"), Some("true" | "1"));
    match (&path.name, &info.method) {
        (None, &Method::GET) if watching => watch::watch(state, info, path),
        (None, &Method::GET) => list::list(state, info, path),
        (None, &Method::POST) => write::create(state, info, path, &read_body(body).await?),
        (None, &Method::DELETE) => {
            write::delete_collection(state, info, path, &read_body(body).await?)
        }
        (Some(_), &Method::GET) => write::get(state, info, path),
        (Some(_), &Method::PUT) => write::update(state, info, path, &read_body(body).await?),
        (Some(_), &Method::PATCH) => write::patch(state, info, path, &read_body(body).await?),
        (Some(_), &Method::DELETE) => write::delete(state, info, path, &read_body(body).await?),
        (_, method) => Err(ApiError::method_not_allowed(method)),
    }
}

/// The verb an authorizer sees for this request.
fn verb(info: &RequestInfo, path: &ResourcePath) -> &'static str {
    let watching = matches!(info.query.get("watch"), Some("true" | "1"));
    match (&info.method, path.name.is_some()) {
        (&Method::GET, _) if watching => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, false) => "deletecollection",
        (&Method::DELETE, true) => "delete",
        _ => "unknown",
    }
}

fn authorize(state: &ApiState, info: &RequestInfo, path: &ResourcePath) -> Result<(), ApiError> {
    let attributes = Attributes {
        verb: verb(info, path).to_owned(),
        group: path.kind.group().to_owned(),
        resource: path.kind.plural().to_owned(),
        subresource: path.subresource.clone().unwrap_or_default(),
        namespace: path.namespace.clone().unwrap_or_default(),
        name: path.name.clone().unwrap_or_default(),
    };
    state.authorizer.check(&attributes).map_err(|_| {
        let mut details =
            serde_json::json!({"group": path.kind.group(), "kind": path.kind.plural()});
        if let Some(name) = &path.name {
            details["name"] = Value::from(name.as_str());
        }
        ApiError::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            auth::forbidden_message(&attributes),
        )
        .with_details(details)
    })
}

async fn read_body(body: Body) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            format!("the request body is too large or could not be read (limit {MAX_BODY_BYTES} bytes)"),
        )
    })
}

/// Serializes a value (infallible for JSON values).
pub fn to_bytes(value: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

/// A JSON response.
pub fn json_response(code: StatusCode, value: &Value) -> Response<Body> {
    bytes_response(code, "application/json", to_bytes(value))
}

/// A response with a given Content-Type.
pub fn bytes_response(code: StatusCode, content_type: &str, body: Bytes) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

/// The Status response for an error.
pub fn error_response(error: &ApiError) -> Response<Body> {
    json_response(error.code, &error.to_status())
}
