//! `GET /api/v1/namespaces/{ns}/pods/{name}/log`: a container's log as
//! plain text, with kube-apiserver's parameters (`container`, `previous`,
//! `tailLines`, `limitBytes`, `timestamps`) and its errors (404 for a missing
//! pod; 400 when the pod has several containers and none is named, for an
//! unknown container, and for kubelet's refusals such as a `previous` that
//! never terminated; 422 for invalid options). The lines come from the
//! simulated kubelet ([`crate::sim::kubelet::container_log`]). `follow`
//! returns what there is and ends the stream.

use axum::body::Body;
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::status::ApiError;
use super::{ApiState, RequestInfo, ResourcePath, bytes_response};
use crate::sim::kubelet::container_log::{LogLine, container_log};
use crate::sim::kubelet::pod_status::container_names;
use crate::sim::store::StoreError;

/// The `PodLogOptions` the simulator honours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// The container (may be empty when the pod has one).
    pub container: Option<String>,
    /// The last terminated run instead of the current one.
    pub previous: bool,
    /// Only the last N lines.
    pub tail_lines: Option<u64>,
    /// At most N bytes (from the start of what remains after the tail).
    pub limit_bytes: Option<u64>,
    /// Prefix each line with its RFC 3339 time.
    pub timestamps: bool,
}

impl LogOptions {
    /// Reads the options from the query; invalid numbers are a 422 Invalid,
    /// as upstream's `ValidatePodLogOptions`.
    pub fn parse(info: &RequestInfo, pod: &str) -> Result<LogOptions, ApiError> {
        let query = &info.query;
        let number = |key: &str, min: i64, rule: &str| -> Result<Option<u64>, ApiError> {
            let Some(raw) = query.non_empty(key) else {
                return Ok(None);
            };
            match raw.parse::<i64>() {
                Ok(n) if n >= min => Ok(u64::try_from(n).ok()),
                Ok(n) => Err(invalid(pod, key, &n.to_string(), rule)),
                Err(_) => Err(ApiError::bad_request(format!(
                    "couldn't parse {key} {raw:?}: not an integer"
                ))),
            }
        };
        Ok(LogOptions {
            container: query.non_empty("container").map(str::to_owned),
            previous: query.flag("previous"),
            tail_lines: number("tailLines", 0, "must be greater than or equal to 0")?,
            limit_bytes: number("limitBytes", 1, "must be greater than 0")?,
            timestamps: query.flag("timestamps"),
        })
    }
}

fn invalid(pod: &str, field: &str, value: &str, rule: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        format!("PodLogOptions \"{pod}\" is invalid: {field}: Invalid value: {value}: {rule}"),
    )
    .with_details(json!({"name": pod, "kind": "PodLogOptions",
        "causes": [{"reason": "FieldValueInvalid", "message": format!("Invalid value: {value}: {rule}"), "field": field}]}))
}

/// Serves a pod's log.
pub fn logs(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
) -> Result<Response<Body>, ApiError> {
    let namespace = path.namespace.as_deref().unwrap_or_default();
    let name = path.name.as_deref().unwrap_or_default();
    let pod = state
        .store
        .get(path.kind, namespace, name)
        .ok_or_else(|| StoreError::NotFound {
            kind: path.kind,
            name: name.to_owned(),
        })?;
    let options = LogOptions::parse(info, name)?;
    let container = pick_container(&pod, name, options.container.as_deref())?;
    // Upstream: a pod not yet bound to a node has no kubelet to ask: empty body.
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        return Ok(text(Bytes::new()));
    }
    let lines = container_log(&pod, &container, options.previous)
        .map_err(|refusal| ApiError::bad_request(refusal.0))?;
    Ok(text(render(&lines, &options)))
}

/// The container to read: the named one (which must exist) or the only one.
fn pick_container(pod: &Value, pod_name: &str, asked: Option<&str>) -> Result<String, ApiError> {
    let names = container_names(pod);
    match asked {
        Some(asked) if names.iter().any(|n| n == asked) => Ok(asked.to_owned()),
        Some(asked) => Err(ApiError::bad_request(format!(
            "container {asked} is not valid for pod {pod_name}"
        ))),
        None => match names.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {pod_name}"
            ))),
            many => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {pod_name}, choose one of: [{}]",
                many.join(" ")
            ))),
        },
    }
}

/// The body: the tail, with timestamps if asked, cut at the byte limit.
fn render(lines: &[LogLine], options: &LogOptions) -> Bytes {
    let skip = options
        .tail_lines
        .and_then(|tail| usize::try_from(tail).ok())
        .map_or(0, |tail| lines.len().saturating_sub(tail));
    let mut body = String::new();
    for line in &lines[skip..] {
        if options.timestamps {
            body.push_str(&line.time);
            body.push(' ');
        }
        body.push_str(&line.text);
        body.push('\n');
    }
    let mut bytes = body.into_bytes();
    if let Some(limit) = options.limit_bytes.and_then(|l| usize::try_from(l).ok()) {
        bytes.truncate(limit);
    }
    Bytes::from(bytes)
}

fn text(body: Bytes) -> Response<Body> {
    bytes_response(StatusCode::OK, "text/plain", body)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::Arc;
    use std::time::Duration;

    use http::{Method, Request};

    use super::super::{ApiState, handle};
    use crate::sim::auth::Authorizer;
    use crate::sim::kubelet::pod_status;
    use crate::sim::resources::ResourceKind;
    use crate::sim::store::Store;
    use serde_json::{Value, json};

    fn state() -> Arc<ApiState> {
        let store = Store::new();
        store.ensure_namespace("ns");
        let mut crashing = pod("crashing", &["agent"]);
        pod_status::accepted(&mut crashing, "10.0.0.1", "2026-01-01T00:00:01Z");
        pod_status::running(&mut crashing, "100.64.0.5", "c1", "2026-01-01T00:00:02Z");
        pod_status::crashed(
            &mut crashing,
            1,
            "exec format error",
            std::time::Duration::from_secs(10),
            "2026-01-01T00:00:04Z",
        );
        let mut healthy = pod("healthy", &["agent"]);
        pod_status::accepted(&mut healthy, "10.0.0.1", "2026-01-01T00:00:01Z");
        pod_status::running(&mut healthy, "100.64.0.6", "c2", "2026-01-01T00:00:02Z");
        pod_status::ready(&mut healthy, "2026-01-01T00:00:03Z");
        let mut pulling = pod("pulling", &["agent"]);
        pod_status::accepted(&mut pulling, "10.0.0.1", "2026-01-01T00:00:01Z");
        pod_status::waiting(&mut pulling, "ImagePullBackOff", "Back-off pulling image");
        let mut unbound = pod("unbound", &["agent"]);
        unbound["spec"]["nodeName"] = Value::Null;
        for p in [crashing, healthy, pulling, unbound, pod("two", &["a", "b"])] {
            store.restore(ResourceKind::Pod, p).unwrap();
        }
        Arc::new(ApiState {
            store,
            authenticator: None,
            authorizer: Authorizer::allow_all(),
            inflight: None,
            read_timeout: Duration::from_secs(30),
            server_address: "127.0.0.1:0".into(),
            bookmark_interval: Duration::from_secs(60),
            faults: crate::sim::fault::Faults::none(),
            requests: Arc::default(),
        })
    }

    fn pod(name: &str, containers: &[&str]) -> Value {
        let containers: Vec<Value> = containers
            .iter()
            .map(|c| json!({"name": c, "image": "reg/agent:1.5.0"}))
            .collect();
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
               "spec": {"nodeName": "edge-01", "containers": containers}})
    }

    async fn get(state: &Arc<ApiState>, uri: &str) -> (u16, String, String) {
        let request = Request::builder()
            .method(Method::GET)
            .uri(uri)
            .body(axum::body::Body::empty())
            .unwrap();
        let response = handle(Arc::clone(state), request).await;
        let code = response.status().as_u16();
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (
            code,
            content_type,
            String::from_utf8(body.to_vec()).unwrap(),
        )
    }

    const BASE: &str = "/api/v1/namespaces/ns/pods";

    #[tokio::test]
    async fn serves_plain_text_with_tail_limit_and_timestamps() {
        let state = state();
        let (code, content_type, body) = get(&state, &format!("{BASE}/healthy/log")).await;
        assert_eq!((code, content_type.as_str()), (200, "text/plain"));
        assert_eq!(body.lines().count(), 4, "{body}");
        assert!(
            body.starts_with("level=info msg=\"starting agent\""),
            "{body}"
        );
        let (_, _, tail) = get(&state, &format!("{BASE}/healthy/log?tailLines=1")).await;
        assert_eq!(tail, "level=info msg=\"ready: watching the node\"\n");
        let (_, _, none) = get(&state, &format!("{BASE}/healthy/log?tailLines=0")).await;
        assert_eq!(none, "");
        let (_, _, stamped) = get(
            &state,
            &format!("{BASE}/healthy/log?timestamps=true&tailLines=4"),
        )
        .await;
        assert!(
            stamped.starts_with("2026-01-01T00:00:02Z level=info"),
            "{stamped}"
        );
        let (_, _, cut) = get(&state, &format!("{BASE}/healthy/log?limitBytes=10")).await;
        assert_eq!(cut, "level=info");
        let (_, _, named) = get(&state, &format!("{BASE}/healthy/log?container=agent")).await;
        assert_eq!(named, body);
    }

    #[tokio::test]
    async fn a_crash_loop_logs_its_failure_now_and_previously() {
        let state = state();
        for query in ["", "?previous=true"] {
            let (code, _, body) = get(&state, &format!("{BASE}/crashing/log{query}")).await;
            assert_eq!(code, 200, "{query}: {body}");
            assert!(
                body.contains("level=error msg=\"exec format error\"\n"),
                "{query}: {body}"
            );
        }
    }

    #[tokio::test]
    async fn errors_are_statuses_like_the_apiserver() {
        let state = state();
        let cases = [
            ("missing/log", 404, "NotFound", "pods \"missing\" not found"),
            (
                "two/log",
                400,
                "BadRequest",
                "a container name must be specified for pod two, choose one of: [a b]",
            ),
            (
                "healthy/log?container=nope",
                400,
                "BadRequest",
                "container nope is not valid for pod healthy",
            ),
            (
                "healthy/log?previous=true",
                400,
                "BadRequest",
                "previous terminated container \"agent\" in pod \"healthy\" not found",
            ),
            (
                "pulling/log",
                400,
                "BadRequest",
                "container \"agent\" in pod \"pulling\" is waiting to start: trying and failing to pull image",
            ),
            (
                "healthy/log?tailLines=-1",
                422,
                "Invalid",
                "PodLogOptions \"healthy\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                "healthy/log?limitBytes=0",
                422,
                "Invalid",
                "PodLogOptions \"healthy\" is invalid: limitBytes: Invalid value: 0: must be greater than 0",
            ),
            (
                "healthy/log?tailLines=ten",
                400,
                "BadRequest",
                "couldn't parse tailLines \"ten\": not an integer",
            ),
        ];
        for (path, code, reason, message) in cases {
            let (got, content_type, body) = get(&state, &format!("{BASE}/{path}")).await;
            assert_eq!(got, code, "{path}: {body}");
            assert_eq!(content_type, "application/json", "{path}");
            let status: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(status["kind"], "Status", "{path}");
            assert_eq!(status["reason"], reason, "{path}");
            assert_eq!(status["message"], message, "{path}");
        }
    }

    #[tokio::test]
    async fn an_unbound_pod_has_an_empty_log_and_other_verbs_are_refused() {
        let state = state();
        assert_eq!(
            get(&state, &format!("{BASE}/unbound/log")).await,
            (200, "text/plain".into(), String::new())
        );
        let request = Request::builder()
            .method(Method::DELETE)
            .uri(format!("{BASE}/healthy/log"))
            .body(axum::body::Body::empty())
            .unwrap();
        let refused = handle(Arc::clone(&state), request).await;
        assert_eq!(refused.status().as_u16(), 405);
        let (code, _, _) = get(&state, "/api/v1/nodes/n1/log").await;
        assert_eq!(code, 404, "only pods have logs");
    }
}
