//! End to end: the real binary in tmux. `rollcall demo --scenario small`
//! starts the embedded cluster and the console; the test reads the screen with
//! `tmux capture-pane`, checks every node of the scenario with its eligibility,
//! revision and readiness, then changes the cluster with the real kubectl (a
//! NoExecute taint, a pod delete) and waits for the screen to show it. Every
//! wait is bounded; timings never decide pass/fail beyond that bound.

mod common;

use common::tmux::{DEADLINE, Tmux};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Nodes of `assets/scenarios/small.yaml`.
const NODES: [&str; 5] = [
    "edge-01",
    "edge-02",
    "general-01",
    "general-02",
    "general-03",
];

fn kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> Output {
    let output = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The screen line of a node's grid row (after the marks column).
fn row<'a>(screen: &'a str, node: &str) -> Option<&'a str> {
    screen.lines().find(|line| {
        line.trim_start_matches([' ', '◆', '!', '×'])
            .starts_with(&format!("{node} "))
    })
}

fn start_demo(dir: &Path) -> (Tmux, PathBuf) {
    let kubeconfig = dir.join("kubeconfig");
    let log = dir.join("rollcall.log");
    let command = format!(
        "{} demo --scenario small --kubeconfig-out {} --log-file {} kube-system/node-agent",
        common::rollcall_bin().display(),
        kubeconfig.display(),
        log.display()
    );
    let tmux = Tmux::start("test", 200, 50, &command);
    (tmux, kubeconfig)
}

#[test]
fn demo_shows_every_node_and_follows_kubectl() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("kube-cache");
    let (tmux, kubeconfig) = start_demo(dir.path());

    // Every node, eligible, with a ready pod on revision 1 (old: revision 2 is
    // applied but not rolled out in the small scenario).
    let screen = tmux.wait_for("every node with a ready pod", |screen| {
        NODES.iter().all(|node| {
            row(screen, node).is_some_and(|line| {
                line.contains(" yes ") && line.contains("r1 old") && line.contains("Ready")
            })
        })
    });
    assert!(screen.contains("kube-system/node-agent"), "{screen}");
    assert!(screen.contains("OnDelete"), "{screen}");
    assert!(kubeconfig.exists());

    // A NoExecute taint nobody tolerates: the node is not eligible, with the reason.
    kubectl(
        &kubeconfig,
        &cache,
        &["taint", "node", "general-02", "maintenance=now:NoExecute"],
    );
    tmux.wait_for("general-02 not eligible with its reason", |screen| {
        row(screen, "general-02")
            .is_some_and(|line| line.contains(" no ") && line.contains("taint maintenance=now"))
    });

    // Delete general-01's pod: OnDelete recreates it from the current template.
    // The pod name comes from the screen (the POD column, third on a 200-column terminal).
    let screen = tmux.capture();
    let pod = row(&screen, "general-01")
        .and_then(|line| line.split_whitespace().nth(2))
        .unwrap_or_default()
        .to_owned();
    assert!(
        pod.starts_with("node-agent-"),
        "no node-agent pod on general-01: {pod:?}\n{screen}"
    );
    kubectl(
        &kubeconfig,
        &cache,
        &["delete", "pod", "-n", "kube-system", &pod, "--wait=false"],
    );
    tmux.wait_for(
        "a new pod on general-01, on the current revision",
        |screen| {
            row(screen, "general-01").is_some_and(|line| {
                !line.contains(&pod) && line.contains('✓') && line.contains("Ready")
            })
        },
    );

    // q quits and gives the terminal back.
    tmux.send("q");
    let start = Instant::now();
    while tmux
        .command()
        .args(["has-session", "-t", "console"])
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(start.elapsed() < DEADLINE, "the console did not quit on q");
        std::thread::sleep(Duration::from_millis(200));
    }
}
