//! Helpers for the rollout-operation end-to-end tests: an embedded cluster on
//! loopback with its kubeconfig on disk, the `rollcall` binary and the real
//! kubectl (each run with its own cache dir) as independent clients.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use rollcall::sim::embedded::{EmbeddedCluster, EmbeddedOptions, start};
use serde_json::Value;

/// A running embedded cluster with a kubeconfig file and a journal path.
pub struct Env {
    /// The cluster.
    pub cluster: EmbeddedCluster,
    /// Temp dir holding the kubeconfig, kubectl caches and the journal.
    pub dir: tempfile::TempDir,
    /// The kubeconfig file.
    pub kubeconfig: PathBuf,
    /// The journal file the commands write.
    pub journal: PathBuf,
    /// A client for direct checks.
    pub client: kube::Client,
}

/// Starts the `small` scenario (5 nodes: general-01..03, edge-01..02;
/// kube-system/node-agent OnDelete with revision 2 pending, failing on edge;
/// kube-system/log-shipper RollingUpdate).
pub async fn small() -> Env {
    small_at(1.0).await
}

/// As [`small`], with every kubelet delay divided by `speed` (0.4: 2.5 times slower).
pub async fn small_at(speed: f64) -> Env {
    let options = EmbeddedOptions {
        scenario: Some("small".to_owned()),
        speed,
        ..EmbeddedOptions::default()
    };
    env(start(options).await.expect("embedded cluster starts")).await
}

/// Starts the `default` scenario (14 nodes, general-06 NotReady,
/// kube-system/log-shipper RollingUpdate maxUnavailable=1), without waiting for pods.
pub async fn default_scenario() -> Env {
    let options = EmbeddedOptions {
        scenario: Some("default".to_owned()),
        ..EmbeddedOptions::default()
    };
    wrap(start(options).await.expect("embedded cluster starts"))
}

/// Starts the scenario written in `yaml` (the `assets/scenarios/` format),
/// without waiting for pods.
pub async fn scenario_text(yaml: &str) -> Env {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("scenario.yaml");
    std::fs::write(&file, yaml).expect("scenario written");
    let options = EmbeddedOptions {
        scenario: Some(file.display().to_string()),
        ..EmbeddedOptions::default()
    };
    wrap(start(options).await.expect("embedded cluster starts"))
}

/// Wraps a started cluster.
pub async fn env(cluster: EmbeddedCluster) -> Env {
    let env = wrap(cluster);
    env.wait_pods(
        "node-agent",
        "a Ready node-agent pod on every node",
        |pods| pods.len() == 5 && all_ready(pods),
    )
    .await;
    env
}

/// Wraps a started cluster without waiting for its pods.
pub fn env_of(cluster: EmbeddedCluster) -> Env {
    wrap(cluster)
}

fn wrap(cluster: EmbeddedCluster) -> Env {
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("kubeconfig written");
    let client = kube::Client::try_from(cluster.server.kube_config()).expect("client");
    let journal = dir.path().join("journal.jsonl");
    Env {
        cluster,
        dir,
        kubeconfig,
        journal,
        client,
    }
}

impl Env {
    /// Runs `rollcall ARGS --kubeconfig K --journal J` (journal only for acting commands).
    pub async fn rollcall(&self, args: &[&str]) -> Output {
        let acting = ["advance", "auto", "pause", "resume", "rollback"].contains(&args[0]);
        let mut command = std::process::Command::new(crate::common::rollcall_bin());
        command.args(args).arg("--kubeconfig").arg(&self.kubeconfig);
        if acting {
            command.arg("--journal").arg(&self.journal);
        }
        command
            .env("XDG_STATE_HOME", self.dir.path())
            .stdin(std::process::Stdio::null());
        run_blocking(command).await
    }

    /// Runs kubectl with its own cache dir; returns stdout (panics on failure).
    pub async fn kubectl(&self, args: &[&str]) -> String {
        let output = self.kubectl_output(args).await;
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Runs kubectl and returns its whole output.
    pub async fn kubectl_output(&self, args: &[&str]) -> Output {
        let cache = self
            .dir
            .path()
            .join(format!("kubectl-cache-{}", rand_suffix()));
        let mut command = std::process::Command::new("kubectl");
        command
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env("KUBECACHEDIR", &cache)
            .env("HOME", self.dir.path());
        run_blocking(command).await
    }

    /// The DaemonSet's pods (not terminating) as kubectl sees them.
    pub async fn pods_of(&self, ds: &str) -> Vec<Value> {
        let text = self
            .kubectl(&["get", "pods", "-n", "kube-system", "-o", "json"])
            .await;
        let list: Value = serde_json::from_str(&text).expect("pod list json");
        pods_in(&list, ds)
    }

    /// The DaemonSet as kubectl sees it.
    pub async fn daemonset(&self, ds: &str) -> Value {
        let text = self
            .kubectl(&["get", "daemonset", ds, "-n", "kube-system", "-o", "json"])
            .await;
        serde_json::from_str(&text).expect("daemonset json")
    }

    /// Waits (real time, at most 60 s) until the DaemonSet's pods satisfy `done`; returns them.
    pub async fn wait_pods(
        &self,
        ds: &str,
        what: &str,
        done: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let pods = self.pods_of(ds).await;
            if done(&pods) {
                return pods;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}: {:?}",
                placements(&pods)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits (real time, at most 30 s) until the DaemonSet, as kubectl sees
    /// it, satisfies `done`; returns it.
    pub async fn wait_daemonset(
        &self,
        ds: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let object = self.daemonset(ds).await;
            if done(&object) {
                return object;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}: {}",
                object["status"]
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The journal lines.
    pub fn journal_lines(&self) -> Vec<Value> {
        read_jsonl(&self.journal)
    }
}

/// `(node, image, uid)` of each pod.
pub fn placements(pods: &[Value]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = pods
        .iter()
        .map(|p| {
            (
                p["spec"]["nodeName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                p["spec"]["containers"][0]["image"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                p["metadata"]["uid"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Whether the DaemonSet controller's last status write came from a sync
/// that saw the DaemonSet's current spec (`observedGeneration` is its
/// `generation`).
pub fn observed(ds: &Value) -> bool {
    let generation = &ds["metadata"]["generation"];
    !generation.is_null() && ds["status"]["observedGeneration"] == *generation
}

/// Whether every pod is Ready.
pub fn all_ready(pods: &[Value]) -> bool {
    pods.iter().all(|p| {
        p["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
    })
}

/// Reads a JSON-lines file.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("journal line is json"))
        .collect()
}

/// Runs a child process off the runtime's worker threads (the embedded
/// cluster serves on them meanwhile).
async fn run_blocking(mut command: std::process::Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().expect("process runs"))
        .await
        .expect("process thread")
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Text of an output's stdout and stderr.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The images of node-agent's two revisions in the small scenario.
pub const OLD_IMAGE: &str = "registry.example.com/platform/node-agent:1.4.2";
/// The new (current) image, which crash-loops on the edge pool.
pub const NEW_IMAGE: &str = "registry.example.com/platform/node-agent:1.5.0";

/// The pods of a kubectl pod list that `ds` owns and that are not terminating.
pub fn pods_in(list: &Value, ds: &str) -> Vec<Value> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            p["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|o| o.iter().any(|r| r["name"] == ds))
                && p["metadata"]["deletionTimestamp"].is_null()
        })
        .cloned()
        .collect()
}
