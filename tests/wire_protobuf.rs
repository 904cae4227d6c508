//! `--wire`: nodes, pods and events read as Kubernetes protobuf give the
//! same status as JSON, compressed or not; the embedded cluster's protobuf
//! list is upstream's envelope; and a server that refuses protobuf is read
//! in JSON, with one log line saying so.

mod common;

use std::sync::{Arc, Mutex};

use rollcall::cluster::wire::Wire;
use rollcall::model::protobuf::{self, envelope};
use rollcall::sim::embedded::{EmbeddedCluster, EmbeddedOptions};
use serde_json::Value;

async fn cluster(nodes: Option<usize>, spec: &str) -> EmbeddedCluster {
    let faults = rollcall::sim::fault::Faults::none();
    let options = EmbeddedOptions {
        nodes,
        faults: faults.clone(),
        ..EmbeddedOptions::default()
    };
    let cluster = rollcall::sim::embedded::start(options)
        .await
        .expect("embedded cluster starts");
    if !spec.is_empty() {
        faults.install(rollcall::sim::fault::parse(spec).expect("fault spec"));
    }
    cluster
}

/// What a status run's node lists asked for.
#[derive(Debug, PartialEq, Eq)]
struct Asked {
    protobuf: bool,
    gzip: bool,
}

/// The real binary's `status -o json` with `args`: its report (exit 0 or 1).
async fn status_json(args: Vec<String>) -> Value {
    let output = tokio::task::spawn_blocking(move || {
        common::run_rollcall(&args.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .expect("rollcall ran");
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("status JSON")
}

/// `status -o json` over `wire` and `compression`, and what its node lists
/// asked for.
async fn status_with(
    cluster: &EmbeddedCluster,
    kubeconfig: &std::path::Path,
    wire: &str,
    compression: &str,
) -> (Value, Asked) {
    let seen = cluster.server.requests().len();
    let args: Vec<String> = [
        "--kubeconfig",
        kubeconfig.to_str().expect("utf-8 path"),
        "--wire",
        wire,
        "--compression",
        compression,
        "status",
        "kube-system/node-agent",
        "-o",
        "json",
        "--all",
    ]
    .map(str::to_owned)
    .to_vec();
    let report = status_json(args).await;
    let node_lists: Vec<_> = cluster.server.requests()[seen..]
        .iter()
        .filter(|r| r.path == "/api/v1/nodes" && !r.is_watch())
        .cloned()
        .collect();
    assert!(!node_lists.is_empty(), "status listed no nodes");
    let asked = Asked {
        protobuf: node_lists.iter().all(|r| r.prefers_protobuf),
        gzip: node_lists.iter().all(|r| r.accepts_gzip),
    };
    (report, asked)
}

/// Every wire × compression gives the status plain JSON gives; each asks
/// for what it says (`auto`, to a loopback server: neither).
async fn same_status_every_way(nodes: Option<usize>) {
    let cluster = cluster(nodes, "").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("kubeconfig");
    let (json, asked) = status_with(&cluster, &kubeconfig, "json", "off").await;
    let neither = Asked {
        protobuf: false,
        gzip: false,
    };
    assert_eq!(asked, neither, "--wire json --compression off");
    if let Some(nodes) = nodes {
        assert_eq!(json["nodes"].as_array().map(Vec::len), Some(nodes));
    }
    for (wire, compression) in [
        ("protobuf", "off"),
        ("protobuf", "on"),
        ("json", "on"),
        ("auto", "auto"),
    ] {
        let (report, asked) = status_with(&cluster, &kubeconfig, wire, compression).await;
        let expected = Asked {
            protobuf: wire == "protobuf",
            gzip: compression == "on",
        };
        assert_eq!(asked, expected, "--wire {wire} --compression {compression}");
        for part in ["nodes", "totals", "summary", "currentRevision", "strategy"] {
            assert_eq!(
                report[part], json[part],
                "{part} over --wire {wire} --compression {compression}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_is_the_same_over_every_wire_and_compression() {
    same_status_every_way(None).await;
}

/// Lists far past the 128 KB the server compresses above, in pages. (2,000
/// nodes, not 5,000: five status runs at 5,000 took 27 s in a debug build,
/// over this suite's budget; the pages, gzip and protobuf paths are the
/// same.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_is_the_same_every_way_at_2000_nodes() {
    same_status_every_way(Some(2000)).await;
}

/// A GET asking for protobuf first, as client-go (and `kubectl get --raw`
/// could not: it sends no Accept of its own choosing).
async fn raw_get(cluster: &EmbeddedCluster, path: &str) -> (String, Vec<u8>) {
    let client = kube::Client::try_from(cluster.server.kube_config()).expect("client");
    let request = http::Request::get(path)
        .header(
            http::header::ACCEPT,
            "application/vnd.kubernetes.protobuf, application/json",
        )
        .body(kube::client::Body::empty())
        .expect("request");
    let response = client.send(request).await.expect("answered");
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = axum::body::to_bytes(axum::body::Body::new(response.into_body()), usize::MAX)
        .await
        .expect("body");
    (content_type, body.to_vec())
}

/// The list a protobuf client gets is upstream's envelope around the same
/// objects (whole: every stored field) that a JSON client gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protobuf_list_is_the_envelope_around_the_same_objects() {
    let cluster = cluster(None, "").await;
    let mut compared = Vec::new();
    for path in ["/api/v1/nodes", "/api/v1/pods", "/api/v1/events"] {
        let (content_type, body) = raw_get(&cluster, path).await;
        assert_eq!(content_type, protobuf::MEDIA_TYPE, "{path}");
        assert!(body.starts_with(b"k8s\0"), "{path}");
        let unknown = envelope::open(&body).expect("an envelope");
        let kind = unknown.kind.strip_suffix("List").expect("a list kind");
        assert_eq!(unknown.api_version, "v1");
        let (meta, items) = envelope::list_parts(unknown.raw).expect("a list");
        let meta: Value = protobuf::from_message("ListMeta", meta).expect("ListMeta");
        assert!(meta["resourceVersion"].as_str().is_some(), "{path}: {meta}");
        // The same list in JSON, read next: objects unchanged in between
        // (same resourceVersion) must be the same objects.
        let client = kube::Client::try_from(cluster.server.kube_config()).expect("client");
        let request = http::Request::get(path).body(Vec::new()).expect("request");
        let json: Value = client.request(request).await.expect("JSON list");
        let by_version: std::collections::HashMap<String, &Value> = json["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| (version_of(item), item))
            .collect();
        let mut same = 0;
        for item in &items {
            let mut from_protobuf: Value = protobuf::from_message(kind, item).expect("decodes");
            let Some(json_item) = by_version.get(&version_of(&from_protobuf)) else {
                continue;
            };
            let mut from_json = (*json_item).clone();
            for value in [&mut from_protobuf, &mut from_json] {
                value.as_object_mut().expect("an object").remove("kind");
                value
                    .as_object_mut()
                    .expect("an object")
                    .remove("apiVersion");
            }
            to_the_second(kind, &mut from_json);
            assert_eq!(from_protobuf, from_json, "{path}");
            same += 1;
        }
        // Most objects hold still between two reads. (The default scenario
        // has nodes and pods at once; events may not have come yet.)
        let may_be_empty = path.ends_with("events");
        assert!(
            same * 2 > items.len() || (may_be_empty && items.is_empty()),
            "{path}: {same} of {} compared",
            items.len()
        );
        compared.push((path, same));
    }
    eprintln!("whole objects compared: {compared:?}");
}

fn version_of(object: &Value) -> String {
    let meta = &object["metadata"];
    format!(
        "{}/{}/{}",
        meta["namespace"], meta["name"], meta["resourceVersion"]
    )
}

/// The JSON as a protobuf client reads it: `null` is absent (protobuf has
/// no null; Go writes a nil time as absent), and times are to the second
/// (the embedded cluster's JSON writes metav1.Time with nanoseconds, which
/// upstream writes to the second in JSON and in protobuf alike; events'
/// `eventTime` is a MicroTime, kept to the microsecond both ways).
fn to_the_second(kind: &str, value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, inner| !inner.is_null());
            for (key, inner) in map.iter_mut() {
                if kind == "Event" && key == "eventTime" {
                    continue;
                }
                to_the_second(kind, inner);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| to_the_second(kind, item)),
        Value::String(text) => {
            if let Ok(at) = text.parse::<jiff::Timestamp>()
                && text.len() > "2025-01-01T00:00:00Z".len()
                && text.contains('T')
            {
                let second = jiff::Timestamp::from_second(at.as_second()).expect("in range");
                *text = second.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            }
        }
        _ => {}
    }
}

/// A tracing writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A forced-protobuf client against a server that answers 406: the list
/// is read in JSON at once (no failed attempt), later ones ask JSON only,
/// and the log says so once.
#[tokio::test(flavor = "current_thread")]
async fn a_server_refusing_protobuf_is_read_in_json_and_the_log_says_so() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let cluster = cluster(None, "refuse-protobuf=1h").await;
    let connection = rollcall::cluster::connect::connection_from_config(
        cluster.server.kube_config(),
        "sim".into(),
        None,
        Wire::Protobuf,
        rollcall::cluster::compression::Compression::Auto,
    )
    .expect("connection");
    let seen = cluster.server.requests().len();
    let url = rollcall::cluster::request::collection_url::<rollcall::model::Node>(None);
    let params = kube::api::ListParams::default();
    for _ in 0..2 {
        let nodes: Vec<rollcall::model::Node> =
            rollcall::cluster::request::list_all(&connection.client, &url, &params, None)
                .await
                .expect("listed in JSON");
        assert!(!nodes.is_empty());
    }
    let asked: Vec<bool> = cluster.server.requests()[seen..]
        .iter()
        .filter(|r| r.path == url)
        .map(|r| r.prefers_protobuf)
        .collect();
    assert_eq!(
        asked,
        [true, false, false],
        "protobuf, then JSON at once, then JSON"
    );
    let log = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf-8");
    let lines: Vec<_> = log
        .lines()
        .filter(|l| l.contains("protobuf refused"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("406 Not Acceptable") && lines[0].contains("nodes"),
        "{}",
        lines[0]
    );
}

/// The real binary, headless: `status --wire protobuf --log-file F` against
/// a server that refuses protobuf reports as JSON would, and its log (only
/// where `--log-file` says: a headless command's output is stdout) names the
/// fallback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_command_logs_the_protobuf_fallback_where_log_file_says() {
    let cluster = cluster(None, "refuse-protobuf=1h").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    let log = dir.path().join("rollcall.log");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("kubeconfig");
    let args: Vec<String> = [
        "--kubeconfig",
        kubeconfig.to_str().expect("utf-8 path"),
        "--wire",
        "protobuf",
        "--log-file",
        log.to_str().expect("utf-8 path"),
        "status",
        "kube-system/node-agent",
        "-o",
        "json",
    ]
    .map(str::to_owned)
    .to_vec();
    let report = status_json(args).await;
    assert!(
        report["nodes"].is_array() || report["totals"].is_object(),
        "{report}"
    );
    let written = std::fs::read_to_string(&log).expect("the log file was written");
    assert!(
        written
            .lines()
            .any(|l| l.contains("protobuf refused") && l.contains("406")),
        "{written}"
    );
}

/// kubectl's typed client (`drain` lists the node's pods with client-go's
/// protobuf Accept) reads the embedded cluster's protobuf pod list: Go's own
/// decoder agrees with the table (it names the DaemonSet pods it skips,
/// which it finds by their owner references).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectls_typed_client_reads_the_protobuf_pod_list() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = common::sim::InProcess::start("default", 1.0).await;
    let seen = sim.cluster.server.requests().len();
    let output = sim
        .kubectl_output(&[
            "drain",
            "general-03",
            "--ignore-daemonsets",
            "--dry-run=server",
        ])
        .await;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("ignoring DaemonSet-managed Pods: kube-system/"),
        "{said}"
    );
    let protobuf_lists = sim.cluster.server.requests()[seen..]
        .iter()
        .filter(|r| r.path == "/api/v1/pods" && r.prefers_protobuf)
        .count();
    assert!(
        protobuf_lists >= 1,
        "kubectl did not ask for protobuf: {said}"
    );
}

/// This machine's own non-loopback address (the route's source address;
/// no packet is sent), if it has one.
fn own_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    Some(socket.local_addr().ok()?.ip()).filter(|ip| !ip.is_loopback())
}

/// `--compression auto` to a server at a non-loopback address over a
/// 100 Mbit/s link: the first list pages come uncompressed and are timed,
/// the log names the rate and the choice (gzip), and the lists after it
/// ask for gzip.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_compression_measures_the_first_pages_and_the_log_names_the_choice() {
    let Some(address) = own_address() else {
        eprintln!("skipped: this machine has no non-loopback address");
        return;
    };
    let faults = rollcall::sim::fault::Faults::none();
    let cluster = rollcall::sim::embedded::start(EmbeddedOptions {
        nodes: Some(2000),
        faults: faults.clone(),
        listen: Some(std::net::SocketAddr::from(([0, 0, 0, 0], 0))),
        ..EmbeddedOptions::default()
    })
    .await
    .expect("embedded cluster starts");
    faults.install(rollcall::sim::fault::parse("bandwidth:100Mbit=1h").expect("fault spec"));
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    let log = dir.path().join("rollcall.log");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("kubeconfig");
    // The same server at the machine's own address; the context that names
    // the certificate's server name.
    let text = std::fs::read_to_string(&kubeconfig).expect("kubeconfig");
    std::fs::write(
        &kubeconfig,
        text.replace("https://127.0.0.1:", &format!("https://{address}:")),
    )
    .expect("kubeconfig rewritten");
    let seen = cluster.server.requests().len();
    let args: Vec<String> = [
        "--kubeconfig",
        kubeconfig.to_str().expect("utf-8 path"),
        "--context",
        rollcall::sim::kubeconfig::TLS_NAME_CONTEXT,
        "--log-file",
        log.to_str().expect("utf-8 path"),
        "status",
        "kube-system/node-agent",
        "-o",
        "json",
        "--all",
    ]
    .map(str::to_owned)
    .to_vec();
    let report = status_json(args).await;
    assert_eq!(report["nodes"].as_array().map(Vec::len), Some(2000));
    let written = std::fs::read_to_string(&log).expect("the log file was written");
    let chosen = written
        .lines()
        .find(|l| l.contains("response compression: the first list pages came uncompressed at"))
        .unwrap_or_else(|| panic!("no choice logged:\n{written}"));
    assert!(
        chosen.contains("below 2000 Mbit/s") && chosen.contains("gzip"),
        "{chosen}"
    );
    let lists: Vec<_> = cluster.server.requests()[seen..]
        .iter()
        .filter(|r| !r.is_watch() && r.path.starts_with("/api/v1/") && r.path.ends_with('s'))
        .map(|r| (r.path.clone(), r.accepts_gzip))
        .collect();
    assert!(
        !lists[0].1,
        "the first list is measured uncompressed: {lists:?}"
    );
    assert!(
        lists.iter().any(|(_, gzip)| *gzip),
        "later lists ask gzip: {lists:?}"
    );
}
