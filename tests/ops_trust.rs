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

/// Starts `rollcall auto` on the small scenario's general pool (30 s soak,
/// so the run is always still going when the signal comes).
fn spawn_auto(env: &ops_support::Env) -> std::process::Child {
    std::process::Command::new(common::rollcall_bin())
        .args([
            "auto",
            DS,
            "--canary",
            "node-pool=general",
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
        .expect("rollcall auto starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_at_any_point_of_auto_pauses_with_interrupted_and_exits_130() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    // Points from "before the first write" to "mid-soak"; the rollout is
    // resumed between runs, so each run starts where the last one stopped.
    for delay_ms in [30_u64, 250, 600, 1_200, 1_800, 2_500] {
        let child = spawn_auto(&env);
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
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
        let ds = env.daemonset("node-agent").await;
        let reason = annotation(&ds, "rollcall.dev/pause-reason").unwrap_or_default();
        assert_eq!(
            annotation(&ds, "rollcall.dev/mode"),
            None,
            "no dangling run at {delay_ms} ms: {ds}"
        );
        match output.status.code() {
            Some(130) => {
                assert!(said.contains("interrupted"), "at {delay_ms} ms: {said}");
                assert!(reason.contains("interrupted by"), "at {delay_ms} ms: {ds}");
            }
            // Once an edge node crash-loops on the new revision, a new run is
            // refused before it writes anything: no more points to try.
            Some(1) if said.contains("refused") => break,
            // The run reached the crash-looping edge pool first: its own pause.
            Some(1) => assert!(reason.contains("edge-"), "at {delay_ms} ms: {said}"),
            // Killed by the signal before the handler was installed (still
            // connecting): nothing was written.
            None => assert!(
                env.journal_lines()
                    .iter()
                    .all(|l| l["action"] != "auto-start")
            ),
            other => panic!("at {delay_ms} ms: exit {other:?}: {said}"),
        }
        let deletes = env
            .journal_lines()
            .iter()
            .filter(|l| l["pod"].is_string())
            .count();
        let replaced = placements(&env.pods_of("node-agent").await)
            .iter()
            .filter(|(_, image, _)| image != OLD_IMAGE)
            .count();
        assert_eq!(
            deletes, replaced,
            "at {delay_ms} ms: one journal line per delete"
        );
        if annotation(&ds, "rollcall.dev/paused-by").is_some() {
            let resumed = env.rollcall(&["resume", DS, "--yes"]).await;
            assert!(resumed.status.success(), "{}", text(&resumed));
        }
    }
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
