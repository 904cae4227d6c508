//! The embedded API server checked by the real kubectl (an independent
//! client): tables and columns, describe, -o yaml, label, annotate, taint,
//! cordon/uncordon, delete, edit, apply (including a stale-resourceVersion
//! conflict), auth can-i allowed and denied, and get -w seeing a later
//! change. Each kubectl run gets its own cache dir and the written kubeconfig.

#![allow(
    clippy::unwrap_used,
    reason = "integration test helpers: a failure must fail the test"
)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use rollcall::sim::auth::Authorizer;
use rollcall::sim::resources::ResourceKind;
use rollcall::sim::server::{ServeOptions, ServerHandle, serve};
use rollcall::sim::store::Store;
use serde_json::{Value, json};

struct Cluster {
    store: Store,
    server: ServerHandle,
    dir: tempfile::TempDir,
}

impl Cluster {
    async fn start(authorizer: Authorizer) -> Cluster {
        let store = Store::new();
        seed(&store);
        let server = serve(
            store.clone(),
            ServeOptions {
                authorizer,
                ..ServeOptions::default()
            },
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        server
            .write_kubeconfig(&dir.path().join("kubeconfig"))
            .unwrap();
        Cluster { store, server, dir }
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    fn command(&self, args: &[&str]) -> Command {
        // A fresh discovery cache per run, removed with the cluster's temp dir.
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cache = self.dir.path().join(format!("cache-{run}"));
        let mut command = Command::new("kubectl");
        command
            .arg(format!("--kubeconfig={}", self.kubeconfig().display()))
            .arg(format!("--cache-dir={}", cache.display()))
            .args(args)
            .env("KUBECACHEDIR", &cache)
            .env("HOME", self.dir.path())
            .env_remove("KUBECONFIG");
        command
    }

    async fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_with(args, &[]).await
    }

    async fn kubectl_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = self.command(args);
        for (key, value) in env {
            command.env(key, value);
        }
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    async fn ok(&self, args: &[&str]) -> String {
        let output = self.kubectl(args).await;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "kubectl {args:?} failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    fn node(&self, name: &str) -> Value {
        self.store.get(ResourceKind::Node, "", name).unwrap()
    }
}

fn seed(store: &Store) {
    for (name, cordoned) in [("node-a", false), ("node-b", true)] {
        let mut node = json!({"metadata":{"name":name,"labels":{"node-role.kubernetes.io/worker":"","pool":"p1"}},
            "status":{"conditions":[{"type":"Ready","status":"True"}],
                "addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
                "nodeInfo":{"kubeletVersion":"v1.32.4","osImage":"Linux","kernelVersion":"6.1","containerRuntimeVersion":"containerd://1.7"}}});
        if cordoned {
            node["spec"] = json!({"unschedulable": true});
        }
        store.create(ResourceKind::Node, node).unwrap();
    }
    let ds = store
        .create(ResourceKind::DaemonSet, json!({"metadata":{"name":"agent","namespace":"default"},
            "spec":{"selector":{"matchLabels":{"app":"agent"}},
                "template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"agent","image":"agent:v1"}]}}}}))
        .unwrap();
    let owner = json!([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"agent","uid":ds["metadata"]["uid"],"controller":true,"blockOwnerDeletion":true}]);
    for (name, revision, image) in [("agent-abc", 1, "agent:v0"), ("agent-def", 2, "agent:v1")] {
        let template = json!({"$patch":"replace","metadata":{"labels":{"app":"agent"}},
            "spec":{"containers":[{"name":"agent","image":image}]}});
        let revision = json!({"metadata":{"name":name,"namespace":"default",
            "labels":{"app":"agent","controller-revision-hash":name},"ownerReferences":owner},
            "data":{"spec":{"template":template}},"revision":revision});
        store
            .create(ResourceKind::ControllerRevision, revision)
            .unwrap();
    }
    store
        .create(ResourceKind::Pod, json!({"metadata":{"name":"agent-x1","namespace":"default","labels":{"app":"agent"},"ownerReferences":owner},
            "spec":{"nodeName":"node-a","containers":[{"name":"agent","image":"agent:v1"}]}}))
        .unwrap();
    store
        .create(
            ResourceKind::Event,
            json!({"metadata":{"name":"agent-x1.1","namespace":"default"},
            "involvedObject":{"kind":"Pod","name":"agent-x1","namespace":"default"},
            "reason":"Pulled","message":"pulled image agent:v1","type":"Normal","count":1,
            "source":{"component":"kubelet","host":"node-a"}}),
        )
        .unwrap();
}

fn header(output: &str) -> Vec<&str> {
    output
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_prints_server_side_columns() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster = Cluster::start(Authorizer::allow_all()).await;
    let nodes = cluster.ok(&["get", "no"]).await;
    assert_eq!(
        header(&nodes),
        ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    );
    assert!(nodes.contains("Ready,SchedulingDisabled"), "{nodes}");
    assert!(nodes.contains("worker"), "{nodes}");
    let pods = cluster.ok(&["get", "po", "-o", "wide"]).await;
    assert_eq!(
        &header(&pods)[..7],
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    );
    assert!(
        pods.contains("node-a") && pods.contains("Pending"),
        "{pods}"
    );
    let all_namespaces = cluster.ok(&["get", "pods", "-A"]).await;
    assert!(
        all_namespaces
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("default"),
        "{all_namespaces}"
    );
    let ds = cluster.ok(&["get", "ds"]).await;
    assert_eq!(
        header(&ds),
        [
            "NAME",
            "DESIRED",
            "CURRENT",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "NODE",
            "SELECTOR",
            "AGE"
        ]
    );
    let revisions = cluster.ok(&["get", "controllerrevisions"]).await;
    assert!(revisions.contains("daemonset.apps/agent"), "{revisions}");
    let events = cluster.ok(&["get", "ev"]).await;
    assert!(
        events.contains("pod/agent-x1") && events.contains("Pulled"),
        "{events}"
    );
    let namespaces = cluster.ok(&["get", "ns"]).await;
    assert!(namespaces.contains("kube-system"), "{namespaces}");
    let yaml = cluster.ok(&["get", "ds", "agent", "-o", "yaml"]).await;
    assert!(
        yaml.contains("kind: DaemonSet") && yaml.contains("generation: 1"),
        "{yaml}"
    );
    let missing = cluster.kubectl(&["get", "ds", "nope"]).await;
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("Error from server (NotFound): daemonsets.apps \"nope\" not found")
    );
    for kind in ["nodes", "pods", "ds"] {
        let described = cluster.ok(&["describe", kind]).await;
        assert!(described.contains("Name:"), "{described}");
    }
    cluster.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_annotate_taint_cordon_and_delete() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster = Cluster::start(Authorizer::allow_all()).await;
    cluster.ok(&["label", "node", "node-a", "tier=log"]).await;
    assert_eq!(cluster.node("node-a")["metadata"]["labels"]["tier"], "log");
    cluster.ok(&["label", "node", "node-a", "tier-"]).await;
    assert!(
        cluster.node("node-a")["metadata"]["labels"]
            .get("tier")
            .is_none()
    );
    cluster.ok(&["annotate", "node", "node-a", "note=hi"]).await;
    assert_eq!(
        cluster.node("node-a")["metadata"]["annotations"]["note"],
        "hi"
    );
    cluster
        .ok(&["taint", "nodes", "node-a", "dedicated=infra:NoSchedule"])
        .await;
    assert_eq!(
        cluster.node("node-a")["spec"]["taints"][0]["key"],
        "dedicated"
    );
    cluster
        .ok(&["taint", "nodes", "node-a", "dedicated-"])
        .await;
    assert!(cluster.node("node-a")["spec"].get("taints").is_none());
    cluster.ok(&["cordon", "node-a"]).await;
    assert_eq!(cluster.node("node-a")["spec"]["unschedulable"], true);
    cluster.ok(&["uncordon", "node-b"]).await;
    assert!(
        cluster.node("node-b")["spec"]
            .get("unschedulable")
            .is_none()
    );
    let deleted = cluster.ok(&["delete", "pod", "agent-x1"]).await;
    assert!(deleted.contains("deleted"), "{deleted}");
    assert!(
        cluster
            .store
            .get(ResourceKind::Pod, "default", "agent-x1")
            .is_none()
    );
    cluster.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_and_apply_pass_validation_and_conflict_on_stale_versions() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster = Cluster::start(Authorizer::allow_all()).await;
    let editor = cluster.dir.path().join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/agent:v1/agent:v2/' \"$1\"\n").unwrap();
    set_executable(&editor);
    let edit = cluster
        .kubectl_with(
            &["edit", "ds", "agent"],
            &[("KUBE_EDITOR", editor.to_str().unwrap())],
        )
        .await;
    assert!(
        edit.status.success(),
        "{}",
        String::from_utf8_lossy(&edit.stderr)
    );
    let ds = cluster
        .store
        .get(ResourceKind::DaemonSet, "default", "agent")
        .unwrap();
    assert_eq!(
        ds["spec"]["template"]["spec"]["containers"][0]["image"],
        "agent:v2"
    );
    assert_eq!(ds["metadata"]["generation"], 2);

    let manifest = cluster.dir.path().join("ds.yaml");
    let mut applied = json!({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"logs","namespace":"default"},
        "spec":{"selector":{"matchLabels":{"app":"logs"}},"template":{"metadata":{"labels":{"app":"logs"}},
        "spec":{"containers":[{"name":"logs","image":"logs:v1"}]}}}});
    std::fs::write(&manifest, applied.to_string()).unwrap();
    cluster
        .ok(&["apply", "-f", manifest.to_str().unwrap()])
        .await;
    applied["spec"]["template"]["spec"]["containers"][0]["image"] = json!("logs:v2");
    std::fs::write(&manifest, applied.to_string()).unwrap();
    cluster
        .ok(&["apply", "-f", manifest.to_str().unwrap()])
        .await;
    let logs = cluster
        .store
        .get(ResourceKind::DaemonSet, "default", "logs")
        .unwrap();
    assert_eq!(
        logs["spec"]["template"]["spec"]["containers"][0]["image"],
        "logs:v2"
    );
    assert!(
        logs["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );

    applied["metadata"]["resourceVersion"] = json!("1");
    std::fs::write(&manifest, applied.to_string()).unwrap();
    let stale = cluster
        .kubectl(&["replace", "-f", manifest.to_str().unwrap()])
        .await;
    let stderr = String::from_utf8_lossy(&stale.stderr);
    assert!(stderr.contains("Error from server (Conflict)"), "{stderr}");
    cluster.server.shutdown().await;
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_can_i_reports_the_policy_and_denied_requests_are_forbidden() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster =
        Cluster::start(Authorizer::allow_all().deny("delete", "pods", Some("default"))).await;
    let allowed = cluster.kubectl(&["auth", "can-i", "list", "pods"]).await;
    assert!(allowed.status.success());
    assert_eq!(String::from_utf8_lossy(&allowed.stdout).trim(), "yes");
    let denied = cluster.kubectl(&["auth", "can-i", "delete", "pods"]).await;
    assert!(!denied.status.success());
    assert!(String::from_utf8_lossy(&denied.stdout).starts_with("no"));
    let forbidden = cluster.kubectl(&["delete", "pod", "agent-x1"]).await;
    let stderr = String::from_utf8_lossy(&forbidden.stderr);
    assert!(
        stderr.contains("Error from server (Forbidden): pods \"agent-x1\" is forbidden"),
        "{stderr}"
    );
    cluster.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_watch_sees_a_pod_created_later() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster = Cluster::start(Authorizer::allow_all()).await;
    let mut child = cluster
        .command(&["get", "pods", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    // The initial list arrives first; then create a pod and wait for its row.
    let first = tokio::time::timeout(Duration::from_secs(20), lines_rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(first.starts_with("NAME"), "{first}");
    // Created after kubectl's watch began: its request is in the server's log.
    let watching = || {
        cluster
            .server
            .requests()
            .iter()
            .any(|r| r.path == "/api/v1/namespaces/default/pods" && r.is_watch())
    };
    tokio::time::timeout(Duration::from_secs(20), async {
        while !watching() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("kubectl's watch request");
    cluster
        .store
        .create(ResourceKind::Pod, json!({"metadata":{"name":"late-pod","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i"}]}}))
        .unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines_rx.recv().await {
            if line.starts_with("late-pod") {
                return line;
            }
        }
        String::new()
    })
    .await
    .unwrap();
    assert!(seen.contains("Pending"), "{seen}");
    let _ = child.kill();
    let _ = child.wait();
    cluster.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_history_undo_set_image_chunks_and_get_all() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster = Cluster::start(Authorizer::allow_all()).await;
    let history = cluster.ok(&["rollout", "history", "ds/agent"]).await;
    assert!(
        history.contains("REVISION") && history.contains('1') && history.contains('2'),
        "{history}"
    );
    let undone = cluster.ok(&["rollout", "undo", "ds/agent"]).await;
    assert!(undone.contains("rolled back"), "{undone}");
    let image = |c: &Cluster| {
        let ds = c
            .store
            .get(ResourceKind::DaemonSet, "default", "agent")
            .unwrap();
        (
            ds["spec"]["template"]["spec"]["containers"][0]["image"].clone(),
            ds["metadata"]["generation"].clone(),
        )
    };
    assert_eq!(image(&cluster), (json!("agent:v0"), json!(2)));
    cluster
        .ok(&["set", "image", "ds/agent", "agent=agent:v3"])
        .await;
    assert_eq!(image(&cluster), (json!("agent:v3"), json!(3)));

    let second = json!({"metadata":{"name":"second","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i"}]}});
    cluster.store.create(ResourceKind::Pod, second).unwrap();
    let chunked = cluster.ok(&["get", "pods", "--chunk-size=1"]).await;
    assert!(
        chunked.contains("agent-x1") && chunked.contains("second"),
        "{chunked}"
    );
    let all = cluster.ok(&["get", "all"]).await;
    assert!(
        all.contains("pod/agent-x1") && all.contains("daemonset.apps/agent"),
        "{all}"
    );
    cluster.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_and_newer_kubectl_negotiate_discovery() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster = Cluster::start(Authorizer::allow_all()).await;
    for version in ["1.28", "1.33"] {
        let binary = PathBuf::from(format!("/usr/lib/google-cloud-sdk/bin/kubectl.{version}"));
        if !binary.is_file() {
            eprintln!("skipping kubectl {version}: {} not found", binary.display());
            continue;
        }
        let template = cluster.command(&["get", "ds"]);
        let mut command = Command::new(&binary);
        command
            .args(template.get_args())
            .env("HOME", cluster.dir.path());
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "kubectl {version}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("UP-TO-DATE"), "kubectl {version}: {stdout}");
    }
    cluster.server.shutdown().await;
}

/// `kubectl get/create priorityclass` and a pod's class resolved into
/// `spec.priority` by the `Priority` admission plugin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn priority_classes_and_pod_priority() {
    if !common::tool_available("kubectl") {
        return;
    }
    let cluster = Cluster::start(Authorizer::allow_all()).await;
    let classes = cluster.ok(&["get", "priorityclasses"]).await;
    assert_eq!(
        header(&classes),
        ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    );
    assert!(
        classes.contains("system-node-critical") && classes.contains("2000001000"),
        "{classes}"
    );
    cluster
        .ok(&["create", "priorityclass", "low", "--value=100"])
        .await;
    cluster
        .ok(&[
            "run",
            "batch-1",
            "--image=batch:v1",
            "--overrides={\"spec\":{\"priorityClassName\":\"low\"}}",
        ])
        .await;
    let priority = cluster
        .ok(&["get", "pod", "batch-1", "-o", "jsonpath={.spec.priority}"])
        .await;
    assert_eq!(priority, "100");
    let refused = cluster
        .kubectl(&["delete", "pc", "system-cluster-critical"])
        .await;
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("Error from server (Forbidden)"),
        "{refused:?}"
    );
    cluster.server.shutdown().await;
}
