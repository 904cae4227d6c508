//! Rehearsal keeps the cluster as it was: `sim -f` on a dump at steady state
//! (a RollingUpdate and an OnDelete DaemonSet, the OnDelete one's pods owned
//! under `extensions/v1beta1`) replaces, creates and deletes no pod in 60 s of
//! simulated time, and each DaemonSet's counts equal the dump's status — with
//! the dump's ControllerRevisions, and without them (then the revision is
//! named after the hash the pods carry). Checked with the real kubectl.

mod common;
mod dump_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use dump_support as dump;
use rollcall::sim::embedded::{self, EmbeddedCluster, EmbeddedOptions};

fn kubectl(dir: &Path, args: &[&str]) -> Value {
    let cache: PathBuf = dir.join("kube-cache");
    let output = Command::new("kubectl")
        .arg(format!("--kubeconfig={}", dir.join("kubeconfig").display()))
        .arg(format!("--cache-dir={}", cache.display()))
        .args(args)
        .args(["-o", "json"])
        .env("HOME", dir)
        .env_remove("KUBECONFIG")
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("kubectl json")
}

/// Every pod as `namespace/name` → (uid, node, revision hash, ready).
fn pods(dir: &Path) -> BTreeMap<String, (String, String, String, bool)> {
    let list = kubectl(dir, &["get", "pods", "-A"]);
    let items = list["items"].as_array().expect("items").clone();
    items
        .into_iter()
        .map(|p| {
            let meta = &p["metadata"];
            let key = format!(
                "{}/{}",
                meta["namespace"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap_or_default()
            );
            let ready = p["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                key,
                (
                    text(&meta["uid"]),
                    text(&p["spec"]["nodeName"]),
                    text(&meta["labels"]["controller-revision-hash"]),
                    ready,
                ),
            )
        })
        .collect()
}

/// Each DaemonSet's five counts, as `kubectl get ds` shows them.
fn counts(dir: &Path) -> BTreeMap<String, Vec<i64>> {
    let list = kubectl(dir, &["get", "daemonsets", "-A"]);
    let items = list["items"].as_array().expect("items").clone();
    items
        .into_iter()
        .map(|ds| {
            let status = &ds["status"];
            let field = |name: &str| status[name].as_i64().unwrap_or(-1);
            (
                ds["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                vec![
                    field("desiredNumberScheduled"),
                    field("currentNumberScheduled"),
                    field("updatedNumberScheduled"),
                    field("numberReady"),
                    field("numberAvailable"),
                ],
            )
        })
        .collect()
}

async fn start(snapshot: &Path, dir: &Path) -> EmbeddedCluster {
    let options = EmbeddedOptions {
        snapshot: vec![snapshot.to_path_buf()],
        ..EmbeddedOptions::default()
    };
    let cluster = embedded::start(options)
        .await
        .expect("embedded cluster starts");
    cluster
        .server
        .write_kubeconfig(&dir.join("kubeconfig"))
        .expect("kubeconfig written");
    cluster
}

/// Runs the cluster for `seconds` of simulated time, in half-second steps.
async fn run_for(seconds: u64) {
    tokio::time::pause();
    for _ in 0..seconds * 2 {
        tokio::time::advance(Duration::from_millis(500)).await;
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }
    tokio::time::resume();
}

/// kubectl blocks the thread; the cluster needs the runtime meanwhile.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.expect("joined")
}

async fn rehearse(with_revisions: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let snapshot = dir.path().join("dump.json");
    std::fs::write(&snapshot, dump::pretty(&dump::kubectl_list(with_revisions))).expect("write");
    let cluster = start(&snapshot, dir.path()).await;
    let report = &cluster.simulation.load_report;
    assert!(
        report
            .iter()
            .all(|l| !l.contains("the dump's status records")),
        "a steady dump agrees with its status: {report:?}"
    );
    let path = dir.path().to_path_buf();
    // Let the controller's first syncs run, then take the "before" picture.
    run_for(1).await;
    let (before, one) = blocking({
        let path = path.clone();
        move || {
            let pod = kubectl(
                &path,
                &["get", "pod", "-n", "kube-system", "node-agent-x7k2p"],
            );
            ((pods(&path), counts(&path)), pod)
        }
    })
    .await;
    // Loaded whole: what the kubelets and `kubectl get -o wide` need is there.
    assert_eq!(one["status"]["hostIP"], "10.0.1.11", "{one}");
    assert_eq!(one["status"]["podIP"], "10.244.0.7", "{one}");
    assert_eq!(
        one["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            [0]["matchFields"][0]["values"][0],
        "ip-10-0-1-11"
    );
    assert_eq!(one["spec"]["tolerations"][0]["key"], "CriticalAddonsOnly");
    assert_eq!(before.0.len(), 5, "{:?}", before.0);
    let expected: BTreeMap<String, Vec<i64>> = dump::DAEMONS
        .iter()
        .map(|d| {
            let n = i64::try_from(dump::nodes_of(d).len()).expect("small");
            (d.name.to_owned(), vec![n; 5])
        })
        .collect();
    assert_eq!(before.1, expected, "counts equal the dump's status");
    for d in &dump::DAEMONS {
        for index in dump::nodes_of(d) {
            let pod = dump::pod(d, index);
            let key = format!(
                "{}/{}",
                d.namespace,
                pod["metadata"]["name"].as_str().expect("name")
            );
            let (uid, _, hash, ready) = before.0.get(&key).unwrap_or_else(|| panic!("{key} kept"));
            assert_eq!(uid, pod["metadata"]["uid"].as_str().expect("uid"), "{key}");
            assert_eq!(hash, d.hash, "{key}");
            assert!(ready, "{key} still ready");
        }
    }
    run_for(60).await;
    let after = blocking(move || {
        (
            pods(&path),
            counts(&path),
            kubectl(&path, &["get", "controllerrevisions", "-A"]),
        )
    })
    .await;
    assert_eq!(
        after.0, before.0,
        "no pod replaced, created or deleted in 60 s"
    );
    assert_eq!(after.1, expected);
    let mut names: Vec<String> = after.2["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|r| {
            r["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["log-agent-7c9f8d6b54", "node-agent-6d5f7b9c8d"],
        "the dump's revisions, or ones named after the pods' hash"
    );
    cluster.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_steady_dump_rehearses_without_changes_with_its_revisions() {
    if !common::tool_available("kubectl") {
        return;
    }
    rehearse(true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_steady_dump_without_revisions_adopts_the_pods_hash() {
    if !common::tool_available("kubectl") {
        return;
    }
    rehearse(false).await;
}
