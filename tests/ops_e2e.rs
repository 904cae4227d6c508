//! End to end: the headless rollout commands against the embedded cluster,
//! with the real kubectl as the independent observer.

mod common;
mod ops_support;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams};
use ops_support::{NEW_IMAGE, OLD_IMAGE, all_ready, placements, small, text};
use rollcall::engine::coverage::NodeCoverage;
use rollcall::ops::follow::Follower;
use serde_json::Value;

const DS: &str = "kube-system/node-agent";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advancing_one_node_moves_exactly_one_pod() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = placements(&env.pods_of("node-agent").await);
    assert!(
        before.iter().all(|(_, image, _)| image == OLD_IMAGE),
        "{before:?}"
    );

    let output = env
        .rollcall(&[
            "advance",
            DS,
            "--node",
            "general-01",
            "--wait",
            "--timeout",
            "60s",
            "--yes",
        ])
        .await;
    assert!(output.status.success(), "{}", text(&output));

    let after = env
        .wait_pods("node-agent", "one pod per node, all Ready", |pods| {
            pods.len() == 5 && all_ready(pods)
        })
        .await;
    let after = placements(&after);
    let moved: Vec<_> = after.iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(moved.len(), 1, "exactly one pod replaced: {after:?}");
    assert_eq!(
        (moved[0].0.as_str(), moved[0].1.as_str()),
        ("general-01", NEW_IMAGE)
    );

    let journal = env.journal_lines();
    let deletes: Vec<&Value> = journal
        .iter()
        .filter(|l| l["action"] == "advance")
        .collect();
    assert_eq!(deletes.len(), 1, "{journal:?}");
    let old_uid = &before
        .iter()
        .find(|p| p.0 == "general-01")
        .expect("old pod")
        .2;
    assert_eq!(deletes[0]["podUid"], old_uid.as_str());
    assert_eq!(
        (deletes[0]["result"].as_str(), deletes[0]["node"].as_str()),
        (Some("ok"), Some("general-01"))
    );
    assert_eq!(
        (
            deletes[0]["revisionFrom"].as_i64(),
            deletes[0]["revisionTo"].as_i64()
        ),
        (Some(1), Some(2))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_advance_pauses_at_the_failing_pool_and_status_sees_it() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    // Canary the general pool first; the edge pool's new image crash-loops.
    let output = env
        .rollcall(&[
            "auto",
            DS,
            "--canary",
            "node-pool=general",
            "--batch",
            "2",
            "--soak",
            "1s",
            "--timeout",
            "60s",
            "--yes",
        ])
        .await;
    let said = text(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "paused by a failed gate: {said}"
    );
    assert!(said.contains("node edge-0"), "names the node: {said}");
    assert!(
        said.contains("CrashLoopBackOff") || said.contains("restarted"),
        "says why: {said}"
    );

    // A second process sees the paused state on the DaemonSet.
    let status = env.rollcall(&["status", DS, "-o", "json"]).await;
    assert!(status.status.success(), "{}", text(&status));
    let report: Value = serde_json::from_slice(&status.stdout).expect("status json");
    assert_eq!(report["state"], "paused");
    let reason = report["rollout"]["pause"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.starts_with("node edge-0"), "{report}");
    let general_updated = report["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter(|n| {
            n["name"]
                .as_str()
                .is_some_and(|name| name.starts_with("general"))
                && n["updated"] == true
        })
        .count();
    assert_eq!(general_updated, 3, "the canary pool passed first: {report}");
    let pods = env.pods_of("node-agent").await;
    let edge_new = placements(&pods)
        .into_iter()
        .filter(|(node, image, _)| node.starts_with("edge") && image == NEW_IMAGE)
        .count();
    assert!(
        edge_new <= 2,
        "never more than one batch on the failing pool"
    );

    // A paused rollout refuses to advance until resumed.
    let refused = env.rollcall(&["advance", DS, "--next", "1", "--yes"]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("paused"), "{}", text(&refused));

    // Rolling back supersedes the pause and brings every node back.
    let rollback = env
        .rollcall(&["rollback", DS, "--timeout", "60s", "--yes"])
        .await;
    assert!(rollback.status.success(), "{}", text(&rollback));
    env.wait_pods("node-agent", "every node back on the old image", |pods| {
        pods.len() == 5
            && all_ready(pods)
            && placements(pods)
                .iter()
                .all(|(_, image, _)| image == OLD_IMAGE)
    })
    .await;
    let status = env.rollcall(&["status", DS, "-o", "json"]).await;
    let report: Value = serde_json::from_slice(&status.stdout).expect("status json");
    assert_eq!(report["state"], "idle", "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_returns_every_node_to_the_old_revision() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let output = env
        .rollcall(&[
            "advance",
            DS,
            "--node",
            "general-01",
            "--node",
            "general-02",
            "--wait",
            "--timeout",
            "60s",
            "--yes",
        ])
        .await;
    assert!(output.status.success(), "{}", text(&output));

    let rollback = env
        .rollcall(&["rollback", DS, "--timeout", "60s", "--yes"])
        .await;
    let said = text(&rollback);
    assert!(rollback.status.success(), "{said}");
    assert!(
        said.contains("+  - image: registry.example.com/platform/node-agent:1.4.2")
            || said.contains(OLD_IMAGE),
        "shows the diff: {said}"
    );

    let pods = env
        .wait_pods("node-agent", "every node back on the old image", |pods| {
            pods.len() == 5
                && all_ready(pods)
                && placements(pods)
                    .iter()
                    .all(|(_, image, _)| image == OLD_IMAGE)
        })
        .await;
    assert_eq!(pods.len(), 5);
    let ds = env.daemonset("node-agent").await;
    assert_eq!(
        ds["spec"]["template"]["spec"]["containers"][0]["image"],
        OLD_IMAGE
    );
    let history = env
        .kubectl(&[
            "rollout",
            "history",
            "daemonset/node-agent",
            "-n",
            "kube-system",
        ])
        .await;
    assert!(
        history.contains('3'),
        "kubectl sees the renumbered revision: {history}"
    );
    let actions: Vec<String> = env
        .journal_lines()
        .iter()
        .filter_map(|l| l["action"].as_str().map(str::to_owned))
        .collect();
    assert!(actions.contains(&"rollback".to_owned()), "{actions:?}");
    let moved_back = env
        .journal_lines()
        .iter()
        .filter(|l| l["action"] == "rollback" && l["pod"].is_string())
        .count();
    assert_eq!(
        moved_back, 2,
        "only the two updated nodes moved back: {actions:?}"
    );
}

/// A follower's rows, by node name.
fn rows_of(snapshot: &rollcall::ops::snapshot::Snapshot<'_>) -> Vec<NodeCoverage> {
    let index = snapshot.index();
    let mut rows: Vec<NodeCoverage> = snapshot
        .rows(&index, jiff::Timestamp::now())
        .iter()
        .cloned()
        .collect();
    rows.sort_by(|a, b| a.node.cmp(&b.node));
    rows
}

/// The name of the pod a row shows on `node`.
fn pod_on(rows: &[NodeCoverage], node: &str) -> Option<String> {
    rows.iter()
        .find(|row| row.node == node)
        .and_then(|row| row.pods.first().map(|p| p.name.to_string()))
}

/// Waits until the rows `Follower::decide` hands out show `shown` and equal
/// those of a snapshot computed from scratch over the same watch cache.
async fn settle(
    follower: &Follower,
    what: &str,
    shown: impl Fn(&[NodeCoverage]) -> bool,
) -> Vec<NodeCoverage> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let live = follower.decide(|s| Ok(rows_of(s))).await.expect("decide");
        let rebuilt = follower
            .try_snapshot()
            .expect("snapshot")
            .map(|s| rows_of(&s));
        if shown(&live) && Some(&live) == rebuilt.as_ref() {
            return live;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: the follower's rows {live:#?} never matched a full rebuild {rebuilt:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The headless commands decide from the console's row cache, refreshed
/// change by change (`Follower::decide`), not from rows recomputed for the
/// whole cluster on every change: after each change (a pod replaced, a node
/// removed) its rows are those of a snapshot computed from scratch over the
/// same watch cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_followers_rows_follow_each_change_as_a_full_rebuild() {
    let env = small().await;
    let target = rollcall::ops::snapshot::Target::from_key(DS).expect("target");
    let follower = Follower::start(env.client.clone(), &target);
    let before = settle(&follower, "start", |rows| rows.len() == 5).await;
    let old_pod = pod_on(&before, "general-01").expect("a pod on general-01");

    Api::<Pod>::namespaced(env.client.clone(), "kube-system")
        .delete(&old_pod, &DeleteParams::default())
        .await
        .expect("pod deleted");
    settle(&follower, "pod replaced", |rows| {
        pod_on(rows, "general-01").is_some_and(|pod| pod != old_pod)
    })
    .await;

    Api::<Node>::all(env.client.clone())
        .delete("edge-02", &DeleteParams::default())
        .await
        .expect("node deleted");
    settle(&follower, "node removed", |rows| {
        rows.len() == 4 && rows.iter().all(|row| row.node != "edge-02")
    })
    .await;
}

/// Preflight fit before a delete: with the template raised to 64 cpu (the
/// small scenario's nodes allocate under 4), `advance` refuses the node,
/// exit 1, naming it and upstream's reason, and deletes nothing (kubectl
/// still sees the pod); `--despite-fit` deletes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advance_refuses_a_node_the_new_pod_will_not_fit_unless_despite_fit() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let uid_on = |pods: &[Value]| {
        placements(pods)
            .into_iter()
            .find(|(node, _, _)| node == "general-01")
            .map(|(_, _, uid)| uid)
    };
    let before = uid_on(&env.pods_of("node-agent").await).expect("a pod on general-01");
    let raise = common::NODE_AGENT_TO_64_CPU;
    env.kubectl(&[
        "patch",
        "ds",
        "node-agent",
        "-n",
        "kube-system",
        "--type=json",
        "-p",
        raise,
    ])
    .await;
    let advance = ["advance", DS, "--node", "general-01", "--yes"];
    // The controller records the raised template as a revision first.
    let mut refused = env.rollcall(&advance).await;
    for _ in 0..50 {
        if !text(&refused).contains("not yet recorded") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        refused = env.rollcall(&advance).await;
    }
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        text(&refused).contains("general-01: won't fit: Insufficient cpu: needs 64,"),
        "{}",
        text(&refused)
    );
    let still = uid_on(&env.pods_of("node-agent").await);
    assert_eq!(still.as_deref(), Some(before.as_str()), "nothing deleted");

    let mut despite = advance.to_vec();
    despite.push("--despite-fit");
    let moved = env.rollcall(&despite).await;
    assert!(moved.status.success(), "{}", text(&moved));
    assert!(text(&moved).contains("despite fit"), "{}", text(&moved));
    let after = env
        .wait_pods("node-agent", "the old pod on general-01 gone", |pods| {
            uid_on(pods).is_none_or(|uid| uid != before)
        })
        .await;
    assert_ne!(uid_on(&after), Some(before), "deleted despite fit");
}
