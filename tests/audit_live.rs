//! The live read of `rollcall audit` against a small scripted API server on
//! loopback (plain HTTP): paginated lists, the before/after DaemonSet check with
//! its bounded retry, 404, and the binary end to end through a kubeconfig.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use rollcall::audit::live::{LiveError, read_consistent};
use rollcall::audit::{Roster, compare};
use rollcall::model::Target;

/// The DaemonSet the scripted server serves.
fn node_agent() -> Target {
    Target {
        namespace: "kube-system".into(),
        name: "node-agent".into(),
    }
}

/// What the scripted server serves.
struct Script {
    daemonset: Value,
    nodes: Vec<Value>,
    pods: Vec<Value>,
    /// Generation returned by the n-th DaemonSet GET (last one repeats).
    generations: Vec<i64>,
    ds_gets: AtomicUsize,
    node_pages: AtomicUsize,
}

fn healthy_items(kind: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit/healthy.json");
    let text = std::fs::read_to_string(path).expect("read fixture");
    let list: Value = serde_json::from_str(&text).expect("fixture is JSON");
    list["items"]
        .as_array()
        .expect("a List")
        .iter()
        .filter(|o| o["kind"] == kind)
        .cloned()
        .collect()
}

fn script(generations: Vec<i64>) -> Arc<Script> {
    Arc::new(Script {
        daemonset: healthy_items("DaemonSet").remove(0),
        nodes: healthy_items("Node"),
        pods: healthy_items("Pod"),
        generations,
        ds_gets: AtomicUsize::new(0),
        node_pages: AtomicUsize::new(0),
    })
}

async fn get_daemonset(State(s): State<Arc<Script>>) -> Response {
    let n = s.ds_gets.fetch_add(1, Ordering::SeqCst);
    if s.generations.is_empty() {
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "daemonsets.apps \"node-agent\" not found", "reason": "NotFound", "code": 404});
        return (StatusCode::NOT_FOUND, Json(status)).into_response();
    }
    let generation = s.generations[n.min(s.generations.len() - 1)];
    let mut ds = s.daemonset.clone();
    ds["metadata"]["generation"] = json!(generation);
    Json(ds).into_response()
}

/// Nodes in pages of two, with a continue token, whatever limit the client asks.
async fn list_nodes(
    State(s): State<Arc<Script>>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Json<Value> {
    s.node_pages.fetch_add(1, Ordering::SeqCst);
    let start: usize = q.get("continue").and_then(|c| c.parse().ok()).unwrap_or(0);
    let end = (start + 2).min(s.nodes.len());
    let mut metadata = json!({"resourceVersion": "500"});
    if end < s.nodes.len() {
        metadata["continue"] = json!(end.to_string());
    }
    Json(
        json!({"kind": "NodeList", "apiVersion": "v1", "metadata": metadata,
        "items": s.nodes[start..end]}),
    )
}

async fn list_pods(State(s): State<Arc<Script>>) -> Json<Value> {
    Json(
        json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "500"},
        "items": s.pods}),
    )
}

async fn serve(script: Arc<Script>) -> String {
    let app = Router::new()
        .route(
            "/apis/apps/v1/namespaces/kube-system/daemonsets/node-agent",
            get(get_daemonset),
        )
        .route("/api/v1/nodes", get(list_nodes))
        .route("/api/v1/namespaces/kube-system/pods", get(list_pods))
        .with_state(script);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn client(url: &str) -> kube::Client {
    let config = kube::Config::new(url.parse().expect("url"));
    kube::Client::try_from(config).expect("client")
}

#[tokio::test]
async fn stable_read_pages_through_nodes_and_audits_clean() {
    let s = script(vec![4]);
    let url = serve(s.clone()).await;
    let read = read_consistent(&client(&url), &node_agent(), 5)
        .await
        .unwrap();
    assert_eq!(read.attempts, 1);
    assert_eq!(read.nodes.len(), 3);
    assert_eq!(s.node_pages.load(Ordering::SeqCst), 2, "two pages of nodes");
    assert_eq!(s.ds_gets.load(Ordering::SeqCst), 2, "before and after");
    let roster = Roster::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit/healthy-roster.json"),
    )
    .unwrap();
    let report = compare(&roster, &read.daemonset, &read.nodes, &read.pods).unwrap();
    assert!(report.is_ok(), "{:?}", report.issues);
}

#[tokio::test]
async fn generation_change_during_the_read_retries() {
    // Attempt 1 sees 4 then 5; attempt 2 sees 5 and 5.
    let s = script(vec![4, 5]);
    let url = serve(s.clone()).await;
    let read = read_consistent(&client(&url), &node_agent(), 5)
        .await
        .unwrap();
    assert_eq!(read.attempts, 2);
    assert_eq!(read.daemonset.metadata.generation, Some(5));
    assert_eq!(s.ds_gets.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_daemonset_that_never_settles_gives_up_after_the_bound() {
    let s = script((1..=20).collect());
    let url = serve(s.clone()).await;
    let err = read_consistent(&client(&url), &node_agent(), 5)
        .await
        .unwrap_err();
    assert!(
        matches!(err, LiveError::Unstable { attempts: 5, .. }),
        "{err}"
    );
    assert_eq!(s.ds_gets.load(Ordering::SeqCst), 10);
}

#[tokio::test]
async fn missing_daemonset_is_not_found() {
    let url = serve(script(vec![])).await;
    let err = read_consistent(&client(&url), &node_agent(), 5)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "daemonset kube-system/node-agent not found"
    );
}

fn write_kubeconfig(dir: &Path, url: &str) -> std::path::PathBuf {
    let kubeconfig = dir.join("config");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n  cluster:\n    server: {url}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: kube-system\nusers:\n- name: fake\n  user:\n    token: t\n"
        ),
    )
    .expect("write kubeconfig");
    kubeconfig
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_writes_a_roster_from_live_nodes() {
    let url = serve(script(vec![4])).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_kubeconfig(dir.path(), &url);
    let out = dir.path().join("roster.json");
    let out_arg = out.clone();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(common::rollcall_bin())
            .args([
                "audit",
                "--nodes-selector",
                "pool=general",
                "--write-roster",
            ])
            .arg(&out_arg)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let expected = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit/healthy-roster.json"),
    )
    .unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, serde_json::from_str::<Value>(&expected).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_audits_a_live_cluster_through_a_kubeconfig() {
    let url = serve(script(vec![4])).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = write_kubeconfig(dir.path(), &url);
    let roster =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit/healthy-roster.json");
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(common::rollcall_bin())
            .args(["audit", "--daemonset", "node-agent", "--roster"])
            .arg(&roster)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["-o", "json"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["daemonset"]["name"], json!("node-agent"));
    assert_eq!(report["pods"].as_array().unwrap().len(), 3);
}
