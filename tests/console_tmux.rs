//! End to end: the real binary in tmux. `rollcall demo --scenario small`
//! starts the embedded cluster and the console; the test reads the screen with
//! `tmux capture-pane`, checks every node of the scenario with its eligibility,
//! revision and readiness, then changes the cluster with the real kubectl (a
//! NoExecute taint, a pod delete) and waits for the screen to show it. Every
//! wait is bounded; timings never decide pass/fail beyond that bound.

mod common;

use common::kubectl;
use common::tmux::{row, start_demo, wait_until};

/// Nodes of `assets/scenarios/small.yaml`.
const NODES: [&str; 5] = [
    "edge-01",
    "edge-02",
    "general-01",
    "general-02",
    "general-03",
];

#[test]
fn demo_shows_every_node_and_follows_kubectl() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("kube-cache");
    let (tmux, kubeconfig) = start_demo("test", dir.path(), 200, 50);

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
    wait_until("the console to quit on q", || !tmux.running());
}

/// At 80×24 the status line follows a node advanced by hand to its end, as
/// `rollcall advance --wait` does, instead of stopping at the delete: `n`
/// advances edge-01, where the small scenario's revision 2 crash-loops (the
/// line says so); `a` on general-01 ends on revision 2, Ready and available.
#[test]
fn a_hand_advance_is_followed_to_its_end() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (tmux, _kubeconfig) = start_demo("advance", dir.path(), 80, 24);
    tmux.wait_for("every node with a ready pod", |screen| {
        NODES
            .iter()
            .all(|node| row(screen, node).is_some_and(|line| line.contains("Ready")))
    });
    tmux.send("n");
    tmux.wait_for("the advance confirmation", |screen| {
        screen.contains("advance node edge-01?") && screen.contains("y: yes")
    });
    tmux.send("y");
    tmux.wait_for("the failed advance in the status line", |screen| {
        screen.contains("advance: node edge-01 failed, rollout not paused: replacement pod")
    });

    tmux.send("j");
    tmux.send("j");
    tmux.wait_for("general-01 selected", |screen| screen.contains("node 3/5"));
    tmux.send("a");
    tmux.wait_for("the advance confirmation", |screen| {
        screen.contains("advance node general-01?")
    });
    tmux.send("y");
    let screen = tmux.wait_for("the advance's end in the status line", |screen| {
        screen.contains("advance: node general-01 on revision 2, Ready and available")
    });
    assert!(
        row(&screen, "general-01").is_some_and(|r| r.contains("r2") && r.contains("Ready")),
        "{screen}"
    );
    tmux.send("q");
    wait_until("the console to quit on q", || !tmux.running());
}
