//! End to end: the operations' safety promises an on-call engineer relies on —
//! a typo'd canary deletes nothing, an interrupt leaves the rollout paused and
//! says so (exit 130), failing updated pods stop new work, a rollback that
//! cannot move a cordoned node ends incomplete — with the real binary and the
//! real kubectl as the independent observer.

mod common;
mod ops_support;

use std::time::Duration;

use ops_support::{NEW_IMAGE, OLD_IMAGE, default_scenario, placements, small, text};

const DS: &str = "kube-system/node-agent";

fn annotation(ds: &serde_json::Value, key: &str) -> Option<String> {
    ds["metadata"]["annotations"][key]
        .as_str()
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_selector_that_matches_nothing_deletes_nothing_and_exits_2() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = placements(&env.pods_of("node-agent").await);
    let output = env
        .rollcall(&[
            "auto",
            DS,
            "--canary",
            "node-pool=typo",
            "--batch",
            "2",
            "--soak",
            "1s",
            "--timeout",
            "20s",
            "--yes",
        ])
        .await;
    let said = text(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains("matches no node"), "{said}");
    let after = placements(&env.pods_of("node-agent").await);
    assert_eq!(before, after, "no pod was touched");
    assert!(env.journal_lines().is_empty(), "nothing was written");
    let ds = env.daemonset("node-agent").await;
    assert_eq!(annotation(&ds, "rollcall.dev/mode"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_refuses_while_an_updated_pod_is_failing() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    // edge-01 moves to revision 2, whose image crash-loops on the edge pool.
    let output = env
        .rollcall(&["advance", DS, "--node", "edge-01", "--yes"])
        .await;
    assert!(output.status.success(), "{}", text(&output));
    env.wait_pods("node-agent", "edge-01 failing on the new image", |pods| {
        pods.iter().any(|p| {
            p["spec"]["nodeName"] == "edge-01"
                && p["spec"]["containers"][0]["image"] == NEW_IMAGE
                && p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
                    == "CrashLoopBackOff"
        })
    })
    .await;
    let deletes_before = env.journal_lines().len();
    let output = env
        .rollcall(&[
            "auto",
            DS,
            "--batch",
            "2",
            "--soak",
            "1s",
            "--timeout",
            "20s",
            "--yes",
        ])
        .await;
    let said = text(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("edge-01"), "names the failing node: {said}");
    assert_eq!(
        env.journal_lines().len(),
        deletes_before,
        "nothing more deleted"
    );
    let output = env.rollcall(&["advance", DS, "--next", "1", "--yes"]).await;
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_during_auto_pauses_with_interrupted_and_exits_130() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let child = std::process::Command::new(common::rollcall_bin())
        .args([
            "auto",
            DS,
            "--batch",
            "1",
            "--soak",
            "30s",
            "--timeout",
            "60s",
            "--yes",
        ])
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .arg("--journal")
        .arg(&env.journal)
        .env("XDG_STATE_HOME", env.dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rollcall auto starts");
    // Interrupt once the first node is in its soak (its delete journalled).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while env.journal_lines().iter().all(|l| l["pod"].is_null()) {
        assert!(std::time::Instant::now() < deadline, "no delete within 30s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pid = child.id().to_string();
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("joined")
        .expect("waited");
    let said = text(&output);
    assert_eq!(output.status.code(), Some(130), "{said}");
    assert!(said.contains("interrupted"), "{said}");
    let ds = env.daemonset("node-agent").await;
    let reason = annotation(&ds, "rollcall.dev/pause-reason").unwrap_or_default();
    assert!(
        reason.contains("interrupted by"),
        "paused with the reason: {ds}"
    );
    let journal = env.journal_lines();
    let deletes = journal.iter().filter(|l| l["pod"].is_string()).count();
    let replaced = placements(&env.pods_of("node-agent").await)
        .iter()
        .filter(|(_, image, _)| image != OLD_IMAGE)
        .count();
    assert_eq!(
        deletes, replaced,
        "one journal line per delete: {journal:?}"
    );
    // A later run is not refused as "already running": the state is paused, not dangling.
    let status = env.rollcall(&["status", DS, "-o", "json"]).await;
    let report: serde_json::Value = serde_json::from_slice(&status.stdout).expect("status JSON");
    assert_eq!(report["state"], "paused", "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_leaving_a_cordoned_node_on_the_bad_revision_exits_1_and_names_it() {
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
    env.kubectl(&["cordon", "general-02"]).await;
    let output = env
        .rollcall(&["rollback", DS, "--timeout", "60s", "--yes"])
        .await;
    let said = text(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("incomplete"), "{said}");
    assert!(said.contains("general-02: cordoned"), "{said}");
    assert!(said.contains("moved back"), "the right verb: {said}");
    let pods = placements(&env.pods_of("node-agent").await);
    assert!(
        pods.iter()
            .any(|(node, image, _)| node == "general-02" && image == NEW_IMAGE),
        "the cordoned node was left alone: {pods:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_update_stuck_behind_a_not_ready_node_is_explained_by_name() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = default_scenario().await;
    env.wait_pods("log-shipper", "log-shipper running", |pods| {
        pods.len() >= 12
    })
    .await;
    env.kubectl(&[
        "-n",
        "kube-system",
        "set",
        "image",
        "daemonset/log-shipper",
        "fluent-bit=cr.fluentbit.io/fluent/fluent-bit:3.3.0",
    ])
    .await;
    // Upstream: the new pod on NotReady general-06 holds the only
    // maxUnavailable=1 slot, so the controller deletes no other old pod.
    let deadline = std::time::Instant::now() + Duration::from_secs(45);
    loop {
        let output = env
            .rollcall(&["status", "kube-system/log-shipper", "-o", "json"])
            .await;
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        let message = report["blocker"]["message"].as_str().unwrap_or_default();
        if report["blocker"]["code"] == "maxUnavailableSpent" && message.contains("general-06") {
            assert_eq!(report["state"], "stuck", "{report}");
            assert!(message.contains("node NotReady"), "{message}");
            let table = env.rollcall(&["status", "kube-system/log-shipper"]).await;
            assert!(
                text(&table).contains("general-06 (node NotReady)"),
                "{}",
                text(&table)
            );
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never explained: {report}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_run_is_reported_and_taken_over_by_a_second_process() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    // A run whose driver died a minute ago: mode auto, an old heartbeat.
    env.kubectl(&[
        "-n",
        "kube-system",
        "annotate",
        "daemonset/node-agent",
        "rollcall.dev/mode=auto",
        "rollcall.dev/updated-by=ghost@gone",
        "rollcall.dev/heartbeat=2026-01-01T00:00:00Z",
    ])
    .await;
    let output = env.rollcall(&["status", DS, "-o", "json"]).await;
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("status JSON");
    assert_eq!(report["state"], "stalled", "{report}");
    let table = text(&env.rollcall(&["status", DS]).await);
    assert!(
        table.contains("auto-advance by ghost@gone stopped responding"),
        "{table}"
    );
    // A fresh heartbeat is a live run: refused.
    let now = jiff::Timestamp::now().to_string();
    env.kubectl(&[
        "-n",
        "kube-system",
        "annotate",
        "--overwrite",
        "daemonset/node-agent",
        &format!("rollcall.dev/heartbeat={now}"),
    ])
    .await;
    let refused = env
        .rollcall(&[
            "auto",
            DS,
            "--batch",
            "5",
            "--soak",
            "0s",
            "--timeout",
            "30s",
            "--yes",
        ])
        .await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("already running"),
        "{}",
        text(&refused)
    );
    // Expired again: the second process takes over and finishes the healthy nodes.
    env.kubectl(&[
        "-n",
        "kube-system",
        "annotate",
        "--overwrite",
        "daemonset/node-agent",
        "rollcall.dev/heartbeat=2026-01-01T00:00:00Z",
    ])
    .await;
    let output = env
        .rollcall(&[
            "auto",
            DS,
            "--canary",
            "node-pool=general",
            "--batch",
            "5",
            "--soak",
            "0s",
            "--timeout",
            "30s",
            "--yes",
        ])
        .await;
    let said = text(&output);
    assert!(said.contains("taking over"), "{said}");
    let ds = env.daemonset("node-agent").await;
    assert_eq!(
        annotation(&ds, "rollcall.dev/mode"),
        None,
        "the run ended: {ds}"
    );
    assert_eq!(annotation(&ds, "rollcall.dev/heartbeat"), None);
}
