//! End to end with the real binary and the real kubectl: kubectl's
//! `--user`, `--cluster`, `--as` and `--as-group` flags pick the kubeconfig
//! entry or the identity the same way for both clients. Acting as the
//! namespace viewer (`--as` with its group, or its kubeconfig user by
//! `--user`) gives the limited view; `--as` without the group may not even
//! read the DaemonSet; the admin's own view is full.

mod common;
mod ops_support;

use ops_support::{small, text};

const DS: &str = "kube-system/node-agent";
const VIEWER: &str = "rollcall-sim-viewer";
const VIEWERS_GROUP: &str = "rollcall:viewers";
const LIMITED: &str = "view limited: cannot list nodes (forbidden)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_cluster_and_impersonation_flags_pick_what_kubectl_picks() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;

    let admin = env.rollcall(&["status", DS]).await;
    assert!(admin.status.success(), "{}", text(&admin));
    assert!(!text(&admin).contains(LIMITED), "{}", text(&admin));

    // As the viewer without its group: not even the DaemonSet may be read,
    // and both clients say so.
    let bare = ["--as", VIEWER];
    let ds = env
        .kubectl_output(&[&bare[..], &["get", "ds", "-n", "kube-system"]].concat())
        .await;
    assert!(!ds.status.success(), "{}", text(&ds));
    let status = env
        .rollcall(&[&["status", DS][..], &bare[..]].concat())
        .await;
    assert_eq!(status.status.code(), Some(2), "{}", text(&status));
    assert!(
        text(&status).contains(&format!("User \"{VIEWER}\" cannot get")),
        "{}",
        text(&status)
    );

    for flags in [
        vec!["--as", VIEWER, "--as-group", VIEWERS_GROUP],
        vec!["--user", VIEWER],
    ] {
        let nodes = env
            .kubectl_output(&[&flags[..], &["get", "nodes"]].concat())
            .await;
        assert!(
            !nodes.status.success(),
            "kubectl {flags:?}: {}",
            text(&nodes)
        );
        assert!(
            text(&nodes).contains(&format!("User \"{VIEWER}\" cannot list")),
            "kubectl {flags:?}: {}",
            text(&nodes)
        );
        let status = env
            .rollcall(&[&["status", DS][..], &flags[..]].concat())
            .await;
        assert!(status.status.success(), "{flags:?}: {}", text(&status));
        assert!(
            text(&status).contains(LIMITED),
            "{flags:?}: {}",
            text(&status)
        );
    }

    // --cluster: the entry that names the server by tls-server-name works;
    // one that does not exist is an error naming it.
    let other = env
        .rollcall(&["status", DS, "--cluster", "rollcall-sim-tls-name"])
        .await;
    assert!(other.status.success(), "{}", text(&other));
    let missing = env
        .rollcall(&["status", DS, "--cluster", "no-such-cluster"])
        .await;
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(
        text(&missing).contains("no-such-cluster"),
        "{}",
        text(&missing)
    );
}
