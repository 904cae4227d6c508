//! The embedded API server at the HTTP level, through curl: the open
//! `/version`, 401 without the token, discovery negotiation, dry runs that
//! persist nothing, watch stream forms (timeout, bookmarks, Table events, an
//! expired resourceVersion as an in-stream 410), and garbage requests that
//! must get a 4xx Status and leave the server serving, over HTTP/1.1; and
//! that HTTP/2 and HTTP/1.1 are both served, as ALPN chooses.

#![allow(
    clippy::unwrap_used,
    reason = "integration test helpers: a failure must fail the test"
)]

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use rollcall::sim::resources::ResourceKind;
use rollcall::sim::server::{ServeOptions, ServerHandle, serve};
use rollcall::sim::store::{Store, StoreOptions};
use serde_json::{Value, json};

struct Fixture {
    store: Store,
    server: ServerHandle,
    dir: tempfile::TempDir,
}

struct Reply {
    code: u16,
    content_type: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

impl Fixture {
    async fn start(store: Store, options: ServeOptions) -> Fixture {
        let server = serve(store.clone(), options).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), &server.ca_pem).unwrap();
        Fixture { store, server, dir }
    }

    fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// curl with the CA; `token` false leaves the Authorization header out.
    async fn curl(
        &self,
        method: &str,
        path: &str,
        headers: &[&str],
        body: Option<Vec<u8>>,
        token: bool,
    ) -> Reply {
        let body_file = self.dir.path().join(format!("body-{}", rand_suffix()));
        let mut command = Command::new("curl");
        command
            // HTTP/1.1, what these cases were written for (`Expect:
            // 100-continue`, an early 413); HTTP/2 has its own test below.
            .args([
                "-sS",
                "--http1.1",
                "--path-as-is",
                "--max-time",
                "20",
                "--cacert",
            ])
            .arg(self.ca())
            .args([
                "-X",
                method,
                "-o",
                "-",
                "-w",
                "\n%{http_code} %{content_type}",
            ]);
        if token {
            command.args([
                "-H",
                &format!("Authorization: Bearer {}", self.server.token),
            ]);
        }
        for header in headers {
            command.args(["-H", header]);
        }
        if let Some(body) = body {
            std::fs::write(&body_file, body).unwrap();
            command
                .arg("--data-binary")
                .arg(format!("@{}", body_file.display()));
        }
        command.arg(format!("{}{path}", self.server.url()));
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let (body, trailer) = text.rsplit_once('\n').unwrap_or(("", &text));
        let (code, content_type) = trailer.split_once(' ').unwrap_or((trailer, ""));
        Reply {
            code: code.parse().unwrap_or(0),
            content_type: content_type.to_owned(),
            body: body.to_owned(),
        }
    }

    async fn get(&self, path: &str) -> Reply {
        self.curl("GET", path, &[], None, true).await
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn node(name: &str) -> Value {
    json!({"metadata":{"name":name},"status":{"conditions":[{"type":"Ready","status":"True"}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_is_open_and_everything_else_needs_the_token() {
    if !common::tool_available("curl") {
        return;
    }
    let fixture = Fixture::start(Store::new(), ServeOptions::default()).await;
    let version = fixture
        .curl("GET", "/version?timeout=5s", &[], None, false)
        .await;
    assert_eq!(version.code, 200);
    assert!(
        version.json()["gitVersion"]
            .as_str()
            .unwrap()
            .starts_with("v1.32.")
    );
    let denied = fixture.curl("GET", "/api/v1/nodes", &[], None, false).await;
    assert_eq!(denied.code, 401);
    assert_eq!(denied.json()["reason"], "Unauthorized");
    let wrong = fixture
        .curl(
            "GET",
            "/api/v1/nodes",
            &["Authorization: Bearer nope"],
            None,
            false,
        )
        .await;
    assert_eq!(wrong.code, 401);
    fixture.server.shutdown().await;
}

/// curl `path` with the token, offering only `version` (`--http1.1` or
/// `--http2`): the HTTP status and the HTTP version spoken.
fn curl_speaking(fixture: &Fixture, version: &str, path: &str) -> (String, String) {
    let output = Command::new("curl")
        .args(["-sS", "--max-time", "20", version, "--cacert"])
        .arg(fixture.ca())
        .args(["-o", "/dev/null", "-w", "%{http_code} %{http_version}"])
        .args([
            "-H",
            &format!("Authorization: Bearer {}", fixture.server.token),
        ])
        .arg(format!("{}{path}", fixture.server.url()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (code, spoken) = text.split_once(' ').unwrap_or((&text, ""));
    (code.to_owned(), spoken.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_and_http1_are_both_served_as_alpn_chooses() {
    if !common::tool_available("curl") {
        return;
    }
    let store = Store::new();
    store.create(ResourceKind::Node, node("n1")).unwrap();
    let fixture = Fixture::start(store, ServeOptions::default()).await;
    for (offered, spoken) in [("--http1.1", "1.1"), ("--http2", "2")] {
        for path in ["/api/v1/nodes", "/api/v1/nodes?watch=true&timeoutSeconds=1"] {
            let fixture = &fixture;
            let answer = tokio::task::block_in_place(|| curl_speaking(fixture, offered, path));
            assert_eq!(
                answer,
                ("200".to_owned(), spoken.to_owned()),
                "{offered} {path}"
            );
        }
    }
    fixture.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_is_negotiated_from_accept() {
    if !common::tool_available("curl") {
        return;
    }
    let fixture = Fixture::start(Store::new(), ServeOptions::default()).await;
    let v2 = "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    let aggregated = fixture.curl("GET", "/apis", &[v2], None, true).await;
    assert_eq!(
        aggregated.content_type,
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    assert_eq!(aggregated.json()["kind"], "APIGroupDiscoveryList");
    let beta = "Accept: application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    let old = fixture.curl("GET", "/api", &[beta], None, true).await;
    assert_eq!(old.json()["apiVersion"], "apidiscovery.k8s.io/v2beta1");
    let legacy = fixture.get("/apis").await;
    assert_eq!(legacy.json()["kind"], "APIGroupList");
    let core = fixture.get("/api/v1").await.json();
    let names: Vec<&str> = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(
        names.contains(&"nodes/status") && names.contains(&"namespaces"),
        "{names:?}"
    );
    let v2 = fixture.get("/openapi/v2").await;
    assert_eq!((v2.code, v2.json()["swagger"].as_str()), (200, Some("2.0")));
    assert_eq!(fixture.get("/openapi/v3").await.code, 200);
    fixture.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_runs_persist_nothing_and_emit_no_events() {
    if !common::tool_available("curl") {
        return;
    }
    let store = Store::new();
    store.create(ResourceKind::Node, node("n1")).unwrap();
    let fixture = Fixture::start(store, ServeOptions::default()).await;
    let mut changes = fixture.store.subscribe();
    let json = "Content-Type: application/json";
    let created = fixture
        .curl(
            "POST",
            "/api/v1/nodes?dryRun=All",
            &[json],
            Some(node("n2").to_string().into_bytes()),
            true,
        )
        .await;
    assert_eq!(created.code, 201, "{}", created.body);
    let merge = "Content-Type: application/merge-patch+json";
    let patch = br#"{"metadata":{"labels":{"x":"y"}}}"#.to_vec();
    let patched = fixture
        .curl(
            "PATCH",
            "/api/v1/nodes/n1?dryRun=All",
            &[merge],
            Some(patch),
            true,
        )
        .await;
    assert_eq!(patched.json()["metadata"]["labels"]["x"], "y");
    let deleted = fixture
        .curl(
            "DELETE",
            "/api/v1/nodes/n1",
            &[json],
            Some(br#"{"dryRun":["All"]}"#.to_vec()),
            true,
        )
        .await;
    assert_eq!(deleted.code, 200);
    assert!(fixture.store.get(ResourceKind::Node, "", "n2").is_none());
    let n1 = fixture.store.get(ResourceKind::Node, "", "n1").unwrap();
    assert!(n1["metadata"].get("labels").is_none());
    assert!(changes.try_batch().unwrap().is_empty());
    fixture.server.shutdown().await;
}

fn lines(reply: &Reply) -> Vec<Value> {
    reply
        .body
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("bad line {line}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_streams_timeouts_bookmarks_tables_and_in_stream_410() {
    if !common::tool_available("curl") {
        return;
    }
    let store = Store::with_options(StoreOptions {
        history_limit: 4,
        ..StoreOptions::default()
    });
    store.create(ResourceKind::Node, node("n1")).unwrap();
    let options = ServeOptions {
        bookmark_interval: Duration::from_millis(300),
        ..ServeOptions::default()
    };
    let fixture = Fixture::start(store, options).await;

    let plain = fixture
        .get("/api/v1/nodes?watch=1&timeoutSeconds=1&allowWatchBookmarks=true")
        .await;
    assert_eq!(plain.code, 200);
    let events = lines(&plain);
    assert_eq!(events[0]["type"], "ADDED");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "BOOKMARK" && e["object"]["kind"] == "Node")
    );

    let table = "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let tabled = fixture
        .curl(
            "GET",
            "/api/v1/nodes?watch=true&timeoutSeconds=1",
            &[table],
            None,
            true,
        )
        .await;
    let first = &lines(&tabled)[0];
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(first["object"]["rows"][0]["cells"][1], "Ready");

    let streaming = fixture
        .get("/api/v1/nodes?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0")
        .await;
    let events = lines(&streaming);
    let end = events.iter().find(|e| e["type"] == "BOOKMARK").unwrap();
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );

    for i in 2..10 {
        fixture
            .store
            .create(ResourceKind::Node, node(&format!("n{i}")))
            .unwrap();
    }
    let expired = fixture
        .get("/api/v1/nodes?watch=true&resourceVersion=1&timeoutSeconds=1")
        .await;
    assert_eq!(expired.code, 200);
    let error = &lines(&expired)[0];
    assert_eq!(error["type"], "ERROR");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    fixture.server.shutdown().await;
}

/// method, path, headers, body, expected code, expected reason.
type Case = (
    &'static str,
    &'static str,
    Vec<&'static str>,
    Option<Vec<u8>>,
    u16,
    &'static str,
);

#[allow(clippy::too_many_lines, reason = "one row per hostile request")]
fn garbage_cases() -> Vec<Case> {
    let json = "Content-Type: application/json";
    let huge = vec![b' '; 4 * 1024 * 1024];
    vec![
        (
            "POST",
            "/api/v1/nodes",
            vec![json],
            Some(b"{not json".to_vec()),
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/nodes",
            vec![json],
            Some(b"[1,2]".to_vec()),
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/nodes",
            vec![json],
            Some(br#"{"metadata":{"name":"Bad Name"}}"#.to_vec()),
            422,
            "Invalid",
        ),
        (
            "POST",
            "/api/v1/nodes",
            vec![json],
            Some(br#"{"kind":"Pod","metadata":{"name":"x"}}"#.to_vec()),
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/nodes",
            vec![json],
            Some(node("n1").to_string().into_bytes()),
            409,
            "AlreadyExists",
        ),
        (
            "POST",
            "/api/v1/nodes",
            vec![json],
            Some(huge),
            413,
            "RequestEntityTooLarge",
        ),
        (
            "GET",
            "/api/v1/nodes?labelSelector=a%20in%20b",
            vec![],
            None,
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/nodes?fieldSelector=spec.bogus%3D1",
            vec![],
            None,
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/nodes?limit=-3",
            vec![],
            None,
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/nodes?limit=1&continue=garbage",
            vec![],
            None,
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/nodes?watch=true&resourceVersion=abc",
            vec![],
            None,
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/nodes/missing",
            vec![],
            None,
            404,
            "NotFound",
        ),
        ("GET", "/api/v1/widgets", vec![], None, 404, "NotFound"),
        (
            "GET",
            "/api/v1/namespaces/../nodes",
            vec![],
            None,
            404,
            "NotFound",
        ),
        ("GET", "/%ff%00", vec![], None, 404, "NotFound"),
        (
            "PUT",
            "/api/v1/nodes",
            vec![json],
            Some(b"{}".to_vec()),
            405,
            "MethodNotAllowed",
        ),
        (
            "PATCH",
            "/api/v1/nodes/n1",
            vec!["Content-Type: text/plain"],
            Some(b"{}".to_vec()),
            415,
            "UnsupportedMediaType",
        ),
        (
            "PATCH",
            "/api/v1/nodes/n1",
            vec!["Content-Type: application/json-patch+json"],
            Some(b"{}".to_vec()),
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            "/api/v1/nodes/n1",
            vec!["Content-Type: application/merge-patch+json"],
            Some(br#"{"metadata":{"name":"other"}}"#.to_vec()),
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            "/api/v1/nodes/n1",
            vec!["Content-Type: application/merge-patch+json"],
            Some(br#"{"metadata":{"resourceVersion":"1"}}"#.to_vec()),
            409,
            "Conflict",
        ),
        (
            "DELETE",
            "/api/v1/nodes/n1",
            vec![json],
            Some(b"{{{".to_vec()),
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            vec!["Content-Type: application/vnd.kubernetes.protobuf"],
            Some(b"k8s\0\xff\xff".to_vec()),
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/pods",
            vec![json],
            Some(b"{}".to_vec()),
            405,
            "MethodNotAllowed",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_requests_get_4xx_statuses() {
    if !common::tool_available("curl") {
        return;
    }
    let store = Store::new();
    store.create(ResourceKind::Node, node("n1")).unwrap();
    let fixture = Fixture::start(store, ServeOptions::default()).await;
    for (method, path, headers, body, code, reason) in garbage_cases() {
        let reply = fixture.curl(method, path, &headers, body, true).await;
        assert_eq!(reply.code, code, "{method} {path}: {}", reply.body);
        assert_eq!(reply.json()["reason"], reason, "{method} {path}");
        assert_eq!(reply.json()["code"], code, "{method} {path}");
    }
    assert_eq!(
        fixture.get("/api/v1/nodes/n1").await.code,
        200,
        "still serving"
    );
    fixture.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_collection_removes_only_matching_objects() {
    if !common::tool_available("curl") {
        return;
    }
    let store = Store::new();
    for (name, pool) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
        let mut n = node(name);
        n["metadata"]["labels"] = json!({"pool": pool});
        store.create(ResourceKind::Node, n).unwrap();
    }
    let fixture = Fixture::start(store, ServeOptions::default()).await;
    let reply = fixture
        .curl(
            "DELETE",
            "/api/v1/nodes?labelSelector=pool%3Da",
            &[],
            None,
            true,
        )
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.json()["items"].as_array().unwrap().len(), 2);
    let (left, _) = fixture.store.list(ResourceKind::Node, None);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["metadata"]["name"], "b1");
    fixture.server.shutdown().await;
}
