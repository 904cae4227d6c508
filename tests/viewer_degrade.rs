//! End to end with the real binary, the real kubectl and tmux: a user with
//! namespace rights only (`rollcall-sim-viewer`: read pods, daemonsets,
//! controllerrevisions and events in kube-system; no nodes, no writes) gets a
//! limited view that says so, not an error: `status` exits 0 and names the
//! limitation, the console builds its grid from the pods, and the rollout keys
//! refuse with the reason and delete nothing. kubectl agrees on the rights.

mod common;
mod ops_support;

use std::collections::BTreeSet;

use common::tmux::Tmux;
use ops_support::{Env, placements, small, text};
use serde_json::Value;

const VIEWER: &str = "rollcall-sim-viewer";
const DS: &str = "kube-system/node-agent";
const NODES_LIMITED: &str = "cannot list nodes (forbidden)";
const USAGE_LIMITED: &str = "cannot list pods in all namespaces (forbidden) — fit unknown";

/// Blocking work (tmux polling, sleeps) off the runtime's worker threads'
/// duties, so the embedded cluster keeps serving meanwhile.
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(work)
}

/// The nodes node-agent's pods run on and their UIDs, as the admin's kubectl sees them.
async fn pods_by_node(env: &Env) -> Vec<(String, String)> {
    placements(&env.pods_of("node-agent").await)
        .into_iter()
        .map(|(node, _, uid)| (node, uid))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_viewer_gets_a_limited_view_and_no_rollout_keys() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;

    // kubectl, a client we did not write, agrees on what the viewer may do.
    let nodes = env
        .kubectl_output(&["--context", VIEWER, "get", "nodes"])
        .await;
    assert!(!nodes.status.success());
    assert!(
        text(&nodes).contains("nodes is forbidden: User \"rollcall-sim-viewer\" cannot list"),
        "{}",
        text(&nodes)
    );
    let can = env
        .kubectl_output(&[
            "--context",
            VIEWER,
            "auth",
            "can-i",
            "delete",
            "pods",
            "-n",
            "kube-system",
        ])
        .await;
    assert_eq!(String::from_utf8_lossy(&can.stdout).trim(), "no");

    // `status` degrades: exit 0, the limitation stated, one row per node that
    // runs a pod, eligibility unknown.
    let placed = pods_by_node(&env).await;
    let expected: BTreeSet<&str> = placed.iter().map(|(node, _)| node.as_str()).collect();
    let table = env.rollcall(&["status", DS, "--context", VIEWER]).await;
    assert!(table.status.success(), "{}", text(&table));
    let said = text(&table);
    assert!(
        said.contains(&format!("view limited: {NODES_LIMITED}")),
        "{said}"
    );
    for node in &expected {
        assert!(
            said.lines()
                .any(|l| l.starts_with(node) && l.contains("unknown")),
            "{node} in {said}"
        );
    }
    let json = env
        .rollcall(&["status", DS, "--context", VIEWER, "-o", "json"])
        .await;
    assert!(json.status.success(), "{}", text(&json));
    let report: Value = serde_json::from_slice(&json.stdout).expect("status json");
    let limitations = report["limitations"].as_array().expect("limitations");
    assert!(
        limitations
            .iter()
            .any(|l| l.as_str().is_some_and(|l| l.starts_with(NODES_LIMITED))),
        "{limitations:?}"
    );
    let rows = report["nodes"].as_array().expect("nodes");
    let listed: BTreeSet<&str> = rows.iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(listed, expected);
    assert!(
        rows.iter().all(|n| n["eligibility"] == "unknown"),
        "{rows:?}"
    );
    assert_eq!(report["summary"]["unknown"], expected.len());
    // Pods in all namespaces cannot be listed either: fit is unknown on
    // every node, said once, and nothing else is held back by it.
    assert!(
        limitations
            .iter()
            .filter(|l| l.as_str().is_some_and(|l| l.starts_with(USAGE_LIMITED)))
            .count()
            == 1,
        "{limitations:?}"
    );
    assert!(rows.iter().all(|n| n["fit"].is_null()), "{rows:?}");
    assert!(
        said.contains(&format!("view limited: {USAGE_LIMITED}")),
        "{said}"
    );

    if !common::tool_available("tmux") {
        return;
    }
    console_refuses_to_act(&env, &placed).await;
    console_lists_the_context_namespace(&env);
}

/// Issue 33: the viewer's console without `-n` or a DaemonSet lists the
/// DaemonSets of its context's namespace (kube-system), not an empty screen
/// saying it may not list them everywhere; a namespace it may not read says
/// to name one with `-n`.
fn console_lists_the_context_namespace(env: &Env) {
    let start = |tag: &str, extra: &str| {
        let command = format!(
            "{} --kubeconfig {} --context {VIEWER} {extra}",
            common::rollcall_bin().display(),
            env.kubeconfig.display(),
        );
        Tmux::start(tag, 80, 24, &command)
    };
    blocking(|| {
        let tmux = start("viewer-list", "");
        tmux.wait_for("the context's daemonsets", |screen| {
            screen.contains("kube-system      node-agent") && screen.contains("daemonsets (")
        });
        tmux.send("q");
        common::tmux::wait_until("the console to quit", || !tmux.running());
        let tmux = start("viewer-forbidden", "-n monitoring");
        let screen = tmux.wait_for("the forbidden list says -n", |screen| {
            screen.contains("cannot list daemonsets here (forbidden)")
        });
        let flowing: String = screen.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flowing.contains("name a namespace you may read with -n NAMESPACE"),
            "{screen}"
        );
        tmux.send("q");
        common::tmux::wait_until("the console to quit", || !tmux.running());
    });
}

/// The console as the viewer: grid from pods, the limitation in the header,
/// `a`/`n` refused with the reason; nothing deleted; the forbidden watches
/// are given up once, not retried in a loop.
async fn console_refuses_to_act(env: &Env, placed: &[(String, String)]) {
    let log = env.dir.path().join("console.log");
    let command = format!(
        "{} --kubeconfig {} --context {VIEWER} --log-file {} {DS}",
        common::rollcall_bin().display(),
        env.kubeconfig.display(),
        log.display()
    );
    let node_lists = || {
        env.cluster
            .server
            .requests()
            .iter()
            .filter(|r| r.user == VIEWER && r.path == "/api/v1/nodes")
            .count()
    };
    let before = node_lists();
    let tmux = Tmux::start("viewer", 160, 30, &command);
    blocking(|| {
        tmux.wait_for("the grid from pods with the limitation", |screen| {
            screen.contains(&format!("view limited: {NODES_LIMITED}"))
                && placed.iter().all(|(node, _)| {
                    screen
                        .lines()
                        .any(|l| l.contains(&format!("{node} ")) && l.contains(" unknown "))
                })
                && screen.contains("not allowed")
        });
        tmux.send("a");
        tmux.wait_for("advance refused with the reason", |screen| {
            screen.contains("advance disabled: not allowed to delete pods in namespace kube-system")
        });
        // Nothing to confirm: a `y` must not act either.
        tmux.send("y");
        tmux.send("n");
        tmux.wait_for("next refused with the reason", |screen| {
            screen.contains("advance disabled: not allowed to delete pods")
        });
        // Evidence that the console has handled every refusal (nodes, node
        // events, node usage) before the log is judged: each one's give-up line.
        common::tmux::wait_until("every forbidden stream given up in the log", || {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .matches("not retrying this stream")
                .count()
                >= 3
        });
        tmux.send("q");
        common::tmux::wait_until("the console to quit", || !tmux.running());
    });
    assert_eq!(pods_by_node(env).await, placed, "no pod was deleted");
    // The server's side of it: the console asked for the nodes once.
    assert_eq!(
        node_lists() - before,
        1,
        "{:#?}",
        env.cluster.server.requests()
    );

    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    // The message, not the timestamp: microseconds can read "…403Z".
    let refusals: Vec<&str> = logged
        .lines()
        .map(|l| l.split_once(' ').map_or(l, |(_, message)| message))
        .filter(|message| message.contains("403"))
        .collect();
    // Nodes, node events and node usage: each given up once, never retried.
    assert_eq!(
        refusals
            .iter()
            .filter(|l| l.contains("not retrying this stream"))
            .count(),
        3,
        "{logged}"
    );
    assert!(
        refusals
            .iter()
            .all(|l| l.contains("not retrying this stream")),
        "{logged}"
    );
}
