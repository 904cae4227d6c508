//! `--compression`: rollcall asks for gzip as kubectl does (on, or auto to a
//! remote server) and reads the compressed lists the embedded cluster then
//! sends, exactly as it reads plain ones; auto leaves it off on loopback.

mod common;

use serde_json::Value;

/// `status -o json` over `compression`, and whether its nodes list asked for gzip.
async fn status_with(
    cluster: &rollcall::sim::embedded::EmbeddedCluster,
    kubeconfig: &std::path::Path,
    compression: &str,
) -> (Value, bool) {
    let seen = cluster.server.requests().len();
    let kubeconfig = kubeconfig.to_str().expect("utf-8 path").to_owned();
    let compression = compression.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        common::run_rollcall(&[
            "--kubeconfig",
            &kubeconfig,
            "--compression",
            &compression,
            "status",
            "kube-system/node-agent",
            "-o",
            "json",
            "--all",
        ])
    })
    .await
    .expect("rollcall ran");
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("status JSON");
    let asked_gzip = cluster.server.requests()[seen..]
        .iter()
        .filter(|r| r.path == "/api/v1/nodes" && !r.is_watch())
        .all(|r| r.accepts_gzip);
    (report, asked_gzip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_and_plain_lists_give_the_same_status() {
    // 400 nodes: the node list is far past the 128 KB the server compresses above.
    let options = rollcall::sim::embedded::EmbeddedOptions {
        nodes: Some(400),
        ..rollcall::sim::embedded::EmbeddedOptions::default()
    };
    let cluster = rollcall::sim::embedded::start(options)
        .await
        .expect("embedded cluster starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("kubeconfig");
    let (plain, plain_gzip) = status_with(&cluster, &kubeconfig, "off").await;
    let (gzipped, asked) = status_with(&cluster, &kubeconfig, "on").await;
    let (_, auto_gzip) = status_with(&cluster, &kubeconfig, "auto").await;
    assert!(!plain_gzip, "--compression off asked for gzip");
    assert!(asked, "--compression on did not ask for gzip");
    assert!(!auto_gzip, "auto asked for gzip from a loopback server");
    assert_eq!(plain["nodes"].as_array().map(Vec::len), Some(400));
    assert_eq!(plain["nodes"], gzipped["nodes"]);
    assert_eq!(plain["totals"], gzipped["totals"]);
}
