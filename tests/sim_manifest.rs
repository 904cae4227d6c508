//! Rehearsing one's own manifest: `-f` adds objects to a cluster whose nodes
//! come from the files, the scenario's pools or `--nodes`, as the start says;
//! `rollcall demo -f` opens the console on the manifest's DaemonSet.

mod common;

use std::path::Path;
use std::time::Duration;

use rollcall::sim::embedded::{self, EmbeddedCluster, EmbeddedOptions};
use rollcall::sim::resources::ResourceKind;

const MANIFEST: &str = "\
apiVersion: v1
kind: Namespace
metadata: {name: kube-flannel}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kube-flannel-ds, namespace: kube-flannel}
spec:
  selector: {matchLabels: {app: flannel}}
  template:
    metadata: {labels: {app: flannel}}
    spec:
      hostNetwork: true
      tolerations: [{operator: Exists}]
      containers:
      - {name: kube-flannel, image: docker.io/flannel/flannel:v0.25.1}
";

async fn start(manifest: &Path, scenario: Option<&str>, nodes: Option<usize>) -> EmbeddedCluster {
    embedded::start(EmbeddedOptions {
        snapshot: vec![manifest.to_path_buf()],
        scenario: scenario.map(str::to_owned),
        nodes,
        ..EmbeddedOptions::default()
    })
    .await
    .expect("embedded cluster starts")
}

/// Waits until the manifest's DaemonSet has a pod on every node.
async fn wait_for_pods(cluster: &EmbeddedCluster, nodes: usize) {
    for _ in 0..100 {
        let (pods, _) = cluster
            .simulation
            .store
            .list(ResourceKind::Pod, Some("kube-flannel"));
        if pods.len() == nodes {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the DaemonSet never had a pod on each of {nodes} nodes");
}

fn manifest_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("kube-flannel.yml");
    std::fs::write(&path, MANIFEST).expect("write manifest");
    path
}

#[tokio::test]
async fn a_manifest_alone_runs_on_the_default_scenarios_nodes_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = manifest_file(dir.path());
    let cluster = start(&manifest, None, None).await;
    let loaded = cluster.simulation.loaded;
    assert_eq!((loaded.nodes, loaded.daemon_sets), (14, 1));
    let summary = cluster.simulation.load_report.last().expect("a summary");
    assert!(
        summary.starts_with("14 nodes from scenario default, 1 DaemonSet from ")
            && summary.contains("(the scenario's 3 DaemonSets left out"),
        "{summary}"
    );
    let first = cluster.simulation.first_daemon_set.clone().expect("first");
    assert_eq!(first.to_string(), "kube-flannel/kube-flannel-ds");
    wait_for_pods(&cluster, 14).await;
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_manifest_takes_the_nodes_of_the_named_scenario_or_of_nodes_n() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = manifest_file(dir.path());
    let small = start(&manifest, Some("small"), None).await;
    assert_eq!(small.simulation.loaded.nodes, 5);
    wait_for_pods(&small, 5).await;
    small.shutdown().await;
    let generated = start(&manifest, Some("small"), Some(20)).await;
    assert_eq!(generated.simulation.loaded.nodes, 20);
    assert!(
        generated
            .simulation
            .load_report
            .last()
            .expect("summary")
            .starts_with("20 generated nodes"),
        "{:?}",
        generated.simulation.load_report
    );
    wait_for_pods(&generated, 20).await;
    generated.shutdown().await;
}

#[test]
fn nodes_n_with_a_dump_that_brings_nodes_is_an_error_naming_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("nodes.json");
    std::fs::write(
        &dump,
        r#"{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1","uid":"u1"}}]}"#,
    )
    .expect("write");
    let output = common::run_rollcall(&["sim", "--nodes", "5", "-f", &dump.display().to_string()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--nodes 5 cannot be combined with")
            && stderr.contains("1 node(s) of its own"),
        "{stderr}"
    );
}

#[test]
fn demo_with_a_manifest_opens_the_console_on_its_daemon_set() {
    if !common::tool_available("tmux") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = manifest_file(dir.path());
    let command = format!(
        "{} demo --scenario small -f {} --log-file {}",
        common::rollcall_bin().display(),
        manifest.display(),
        dir.path().join("rollcall.log").display()
    );
    let tmux = common::tmux::Tmux::start("manifest", 120, 30, &command);
    tmux.wait_for(
        "the manifest's DaemonSet on the scenario's nodes",
        |screen| {
            screen.contains("kube-flannel/kube-flannel-ds")
                && common::tmux::row(screen, "general-01").is_some()
        },
    );
    tmux.send("q");
}
