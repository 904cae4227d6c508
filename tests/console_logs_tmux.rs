//! End to end: why a container fails, read in the console. `rollcall demo
//! --scenario small` in tmux; kubectl deletes edge-01's old pod, so the
//! DaemonSet controller recreates it at node-agent 1.5.0, which crash-loops
//! on the edge pool; the grid shows CrashLoopBackOff, the detail pane the
//! exit code and message, and `l` opens the previous container's log, fetched
//! from the embedded cluster's log endpoint, with the simulated failure line.
//! Esc closes it; q quits. Every wait is bounded.

mod common;

use common::kubectl;
use common::tmux::{row, start_demo, wait_until};

/// The small scenario's crash message for node-agent 1.5.0 on the edge pool.
const FAILURE: &str = "exec /usr/bin/node-agent: exec format error";

#[test]
fn l_shows_the_crash_loop_failure_from_the_pod_log() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("kube-cache");
    let (tmux, kubeconfig) = start_demo("logs-test", dir.path(), 200, 50);

    tmux.wait_for("edge-01 with a ready pod", |screen| {
        row(screen, "edge-01").is_some_and(|line| line.contains("r1 old") && line.contains("Ready"))
    });
    // Move edge-01 to revision 2 the way advance does: delete its old pod.
    let pod = kubectl(
        &kubeconfig,
        &cache,
        &[
            "get",
            "pods",
            "-n",
            "kube-system",
            "--field-selector",
            "spec.nodeName=edge-01",
            "-o",
            "name",
        ],
    );
    let pod = pod
        .lines()
        .find(|l| l.contains("node-agent-"))
        .unwrap_or_default()
        .to_owned();
    assert!(!pod.is_empty(), "no node-agent pod on edge-01");
    kubectl(
        &kubeconfig,
        &cache,
        &["delete", "-n", "kube-system", &pod, "--wait=false"],
    );
    tmux.wait_for("edge-01 crash-looping on the current revision", |screen| {
        row(screen, "edge-01").is_some_and(|line| line.contains("CrashLoopBackOff"))
    });

    // The first row by name is edge-01: select it, open the detail pane.
    tmux.send("g");
    tmux.send("Enter");
    tmux.wait_for("the detail pane's failure section", |screen| {
        screen.contains("Why it fails")
            && screen.contains("exit code 1 (Error)")
            && screen.contains(FAILURE)
    });

    // l: the previous container's log, with the failure line at the end.
    tmux.send("l");
    let screen = tmux.wait_for("the log with the failure line", |screen| {
        screen.contains(&format!("level=error msg=\"{FAILURE}\""))
    });
    assert!(screen.contains("previous container"), "{screen}");
    assert!(screen.contains("Esc closes"), "{screen}");
    assert!(
        screen.contains("msg=\"starting node-agent\" version=1.5.0 node=edge-01"),
        "{screen}"
    );

    // Esc closes the overlay; the detail pane is back.
    tmux.send("Escape");
    tmux.wait_for("the overlay closed", |screen| {
        !screen.contains("Esc closes") && screen.contains("Why it fails")
    });

    tmux.send("q");
    wait_until("the console to quit on q", || !tmux.running());
}
