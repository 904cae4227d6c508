//! The Kubernetes API over HTTP: authentication, routing of `/api`, `/apis`,
//! `/openapi`, `/version` and resource paths to their handlers, and the
//! response helpers they share. Owns request parsing and error mapping; the
//! objects themselves live in the [`Store`], TLS and sockets in
//! `sim::server`. Hostile input gets a 4xx Status, never a panic.

pub mod apply;
pub mod cells;
pub mod discovery;
pub mod gzip;
pub mod inert_cells;
pub mod list;
pub mod logs;
pub mod openapi;
pub mod patch;
mod protobuf;
pub mod protobuf_out;
pub mod query;
pub mod request_log;
pub mod routes;
pub mod selectors;
pub mod ssar;
pub mod ssrr;
pub mod status;
pub mod table;
pub mod watch;
pub mod write;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::Value;

use crate::sim::auth::{self, Attributes, Authorizer, Identity};
use crate::sim::authn::{Authenticator, Refusal};
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
    /// The credentials required on every request but `/version`; `None`
    /// disables the check (every caller is the admin).
    pub authenticator: Option<Authenticator>,
    /// The authorization policy.
    pub authorizer: Authorizer,
    /// API Priority and Fairness stand-in: at most this many requests in
    /// flight (watches count only while starting); beyond, 429 with Retry-After.
    pub inflight: Option<Arc<tokio::sync::Semaphore>>,
    /// How long a request body may take to arrive before the request is cut.
    pub read_timeout: Duration,
    /// `host:port` clients reach the server at (for `/api`).
    pub server_address: String,
    /// How often watches that allow bookmarks get one.
    pub bookmark_interval: Duration,
    /// Injected faults (`rollcall sim --fault`); empty by default.
    pub faults: crate::sim::fault::Faults,
    /// Every request asked, as an audit log keeps them (the newest few thousand).
    pub requests: Arc<request_log::RequestLog>,
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
    /// Who is asking (after impersonation).
    pub user: Identity,
}

/// The verified client certificate's identity of the connection a request
/// came on, put into the request's extensions by `sim::server`.
#[derive(Clone, Debug)]
pub struct PeerCertificate(pub Identity);

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
pub async fn handle(state: Arc<ApiState>, request: Request<Body>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let route = route(parts.uri.path(), &state.store);
    let certificate = parts.extensions.get::<PeerCertificate>().map(|c| &c.0);
    let user = if route == Some(Route::Version) {
        Ok(Identity::new("system:anonymous", &[]))
    } else {
        authenticate(&state, &parts.headers, certificate)
    };
    let user = match user.and_then(|user| impersonate(&state, &parts.headers, user)) {
        Ok(user) => user,
        Err(error) => return error_response(&error),
    };
    state.requests.record(
        &user.user,
        parts.method.as_str(),
        parts.uri.path(),
        parts.uri.query().unwrap_or_default(),
        request_log::Accepts {
            gzip: gzip::accepts_gzip(&parts.headers),
            protobuf: protobuf_out::prefers_protobuf(&parts.headers),
        },
    );
    let info = RequestInfo {
        method: parts.method,
        query: Query::parse(parts.uri.query().unwrap_or_default()),
        headers: parts.headers,
        user,
    };
    let watching = matches!(info.query.get("watch"), Some("true" | "1"));
    let Ok(permit) = admit(&state, route.as_ref()) else {
        return too_many_requests();
    };
    let continuation = info.query.non_empty("continue").is_some();
    if let Some(injected) = state.faults.before_request(continuation).await {
        return injected;
    }
    let result = match route {
        None => Err(ApiError::unknown_path()),
        Some(route) => dispatch(&state, &info, route, body).await,
    };
    let mut response = result.unwrap_or_else(|error| error_response(&error));
    // Changes to stored objects only: access reviews (POST) are questions.
    if matches!(info.method, Method::PUT | Method::PATCH | Method::DELETE) {
        response = state.faults.after_write(response);
    }
    match permit {
        // A long-running watch stops counting once it has started, as upstream;
        // anything else counts until its body has been sent.
        Some(permit) if !watching => hold_until_sent(response, permit),
        _ if watching => state.faults.wrap_watch(response),
        _ => response,
    }
}

fn authenticate(
    state: &ApiState,
    headers: &HeaderMap,
    certificate: Option<&Identity>,
) -> Result<Identity, ApiError> {
    let Some(authenticator) = &state.authenticator else {
        return Ok(Identity::admin());
    };
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    authenticator
        .authenticate(authorization, certificate, now)
        .map_err(|refusal| match refusal {
            Refusal::Expired => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "Unauthorized",
                "Unauthorized: the token has expired",
            ),
            Refusal::Missing | Refusal::UnknownToken => ApiError::unauthorized(),
        })
}

/// Applies `Impersonate-User`/`Impersonate-Group` when `user` may impersonate.
fn impersonate(
    state: &ApiState,
    headers: &HeaderMap,
    user: Identity,
) -> Result<Identity, ApiError> {
    let text = |value: &header::HeaderValue| value.to_str().unwrap_or_default().to_owned();
    let target_user = headers.get("impersonate-user").map(text);
    let groups: Vec<String> = headers
        .get_all("impersonate-group")
        .iter()
        .map(text)
        .collect();
    let Some(target_user) = target_user else {
        if groups.is_empty() {
            return Ok(user);
        }
        return Err(ApiError::bad_request(
            "requested impersonation of groups without a user",
        ));
    };
    let wanted = std::iter::once(("users", target_user.clone()))
        .chain(groups.iter().map(|g| ("groups", g.clone())));
    for (resource, name) in wanted {
        let attributes = Attributes {
            verb: "impersonate".into(),
            resource: resource.into(),
            name,
            ..Attributes::default()
        };
        if state.authorizer.check(&user, &attributes).is_err() {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "Forbidden",
                auth::forbidden_message(&user, &attributes),
            )
            .with_details(serde_json::json!({"kind": resource, "name": attributes.name})));
        }
    }
    Ok(Identity {
        user: target_user,
        groups,
    })
}

/// The in-flight limit is reached.
struct Throttled;

/// The in-flight limit: a permit (`None` when unlimited), or [`Throttled`].
fn admit(
    state: &ApiState,
    route: Option<&Route>,
) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, Throttled> {
    let Some(inflight) = &state.inflight else {
        return Ok(None);
    };
    if matches!(route, Some(Route::Version | Route::Health)) {
        return Ok(None);
    }
    Arc::clone(inflight)
        .try_acquire_owned()
        .map(Some)
        .map_err(|_| Throttled)
}

/// The 429 a loaded API server answers (`--max-inflight`), with `Retry-After: 1`.
fn too_many_requests() -> Response<Body> {
    too_many_requests_plain(1)
}

/// A 429 as kube-apiserver's max-inflight and Priority and Fairness filters
/// write it: the wait only in `Retry-After`, the body plain text (no Status).
pub fn too_many_requests_plain(seconds: u64) -> Response<Body> {
    let mut response = Response::new(Body::from("Too many requests, please try again later.\n"));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
    response
}

fn hold_until_sent(
    response: Response<Body>,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Response<Body> {
    use futures::StreamExt as _;
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _held = &permit;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
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
        Route::Version => read_only(Some(discovery::version(state.bookmark_interval))),
        Route::CoreVersions | Route::Groups => {
            let core = route == Route::CoreVersions;
            let kinds = state.store.served_kinds();
            match discovery::negotiate(info.header(header::ACCEPT)) {
                Some(version) if info.method == Method::GET => Ok(bytes_response(
                    StatusCode::OK,
                    discovery::aggregated_content_type(version),
                    to_bytes(&discovery::aggregated(&kinds, core, version)),
                )),
                _ if core => read_only(Some(discovery::core_versions(&state.server_address))),
                _ => read_only(Some(discovery::group_list(&kinds))),
            }
        }
        Route::Group(group) => read_only(discovery::group(&state.store.served_kinds(), &group)),
        Route::GroupVersion(group, version) => read_only(discovery::resource_list(
            &state.store.served_kinds(),
            &group,
            &version,
        )),
        Route::Health => Ok(bytes_response(
            StatusCode::OK,
            "text/plain",
            Bytes::from_static(b"ok"),
        )),
        Route::OpenApiV2 if info.method == Method::GET => {
            let (content_type, body) = openapi::v2_document(info.header(header::ACCEPT));
            Ok(bytes_response(
                StatusCode::OK,
                content_type,
                Bytes::from(body),
            ))
        }
        Route::OpenApiV2 => Err(ApiError::method_not_allowed(&info.method)),
        Route::OpenApiIndex => read_only(Some(openapi::index(&state.store.served_kinds()))),
        Route::OpenApiGroup(group, version) => read_only(openapi::group_version(
            &state.store.served_kinds(),
            &group,
            &version,
        )),
        Route::AccessReview => {
            if info.method != Method::POST {
                return Err(ApiError::method_not_allowed(&info.method));
            }
            let body = read_body(state.read_timeout, body).await?;
            let answer = ssar::review(
                &body,
                info.header(header::CONTENT_TYPE),
                &state.authorizer,
                &info.user,
            )?;
            Ok(json_response(StatusCode::CREATED, &answer))
        }
        Route::RulesReview => {
            if info.method != Method::POST {
                return Err(ApiError::method_not_allowed(&info.method));
            }
            let body = read_body(state.read_timeout, body).await?;
            let answer = ssrr::review(
                &body,
                info.header(header::CONTENT_TYPE),
                &state.authorizer,
                &info.user,
            )?;
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
        (None, &Method::POST) => write::create(
            state,
            info,
            path,
            &read_body(state.read_timeout, body).await?,
        ),
        (None, &Method::DELETE) => write::delete_collection(
            state,
            info,
            path,
            &read_body(state.read_timeout, body).await?,
        ),
        (Some(_), &Method::GET) => write::get(state, info, path),
        (Some(_), &Method::PUT) => write::update(
            state,
            info,
            path,
            &read_body(state.read_timeout, body).await?,
        ),
        (Some(_), &Method::PATCH) => write::patch(
            state,
            info,
            path,
            &read_body(state.read_timeout, body).await?,
        ),
        (Some(_), &Method::DELETE) => write::delete(
            state,
            info,
            path,
            &read_body(state.read_timeout, body).await?,
        ),
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
    state
        .authorizer
        .check(&info.user, &attributes)
        .map_err(|_| {
            let mut details =
                serde_json::json!({"group": path.kind.group(), "kind": path.kind.plural()});
            if let Some(name) = &path.name {
                details["name"] = Value::from(name.as_str());
            }
            ApiError::new(
                StatusCode::FORBIDDEN,
                "Forbidden",
                auth::forbidden_message(&info.user, &attributes),
            )
            .with_details(details)
        })
}

/// Reads a body up to [`MAX_BODY_BYTES`], giving up after `timeout` (a
/// trickling body is cut: the error ends the connection, the body unread).
async fn read_body(timeout: Duration, body: Body) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            format!(
                "the request body is too large or could not be read (limit {MAX_BODY_BYTES} bytes)"
            ),
        )
    };
    // A declared Content-Length past the limit is refused before a byte is
    // read, so a client waiting on `Expect: 100-continue` gets 413 at once
    // instead of a "100 Continue" and a connection reset mid-upload.
    let declared = axum::body::HttpBody::size_hint(&body).lower();
    if usize::try_from(declared).map_or(true, |n| n > MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let read = tokio::time::timeout(timeout, axum::body::to_bytes(body, MAX_BODY_BYTES));
    match read.await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(too_large()),
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "Timeout",
            format!(
                "the request body did not arrive within {}s",
                timeout.as_secs()
            ),
        )),
    }
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
