//! End to end: rollout operations under the embedded cluster's injected faults
//! (`sim --fault`). A delete whose reply was lost is journalled as deleted
//! (read back, never resent); a burst of 500s rides through `auto` without a
//! dangling run; deletes and journal lines match one for one.

mod common;
mod ops_support;

use std::time::Duration;

use ops_support::{Env, OLD_IMAGE, placements, text};
use rollcall::sim::embedded::{EmbeddedOptions, start};
use rollcall::sim::fault::{Fault, FaultKind, Faults};

const DS: &str = "kube-system/node-agent";

async fn small_with_faults() -> (Env, Faults) {
    let faults = Faults::none();
    let options = EmbeddedOptions {
        scenario: Some("small".to_owned()),
        faults: faults.clone(),
        ..EmbeddedOptions::default()
    };
    let env = ops_support::env(start(options).await.expect("embedded cluster starts")).await;
    (env, faults)
}

fn window(kind: FaultKind, start_ms: u64, length_ms: u64) -> Fault {
    Fault {
        kind,
        start: Duration::from_millis(start_ms),
        length: Duration::from_millis(length_ms),
    }
}

fn deletes(env: &Env) -> Vec<serde_json::Value> {
    env.journal_lines()
        .into_iter()
        .filter(|l| l["pod"].is_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_whose_reply_was_lost_is_journalled_as_deleted() {
    if !common::tool_available("kubectl") {
        return;
    }
    let (env, faults) = small_with_faults().await;
    faults.install(vec![window(FaultKind::LoseReplies, 0, 60_000)]);
    let output = env
        .rollcall(&["advance", DS, "--node", "general-01", "--yes"])
        .await;
    faults.clear();
    let said = text(&output);
    assert!(output.status.success(), "the pod was deleted: {said}");
    let journal = deletes(&env);
    assert_eq!(journal.len(), 1, "{journal:?}");
    assert_eq!(journal[0]["result"], "ok", "{journal:?}");
    assert_eq!(journal[0]["message"], "deleted (reply lost)", "{journal:?}");
    env.wait_pods("node-agent", "general-01 replaced", |pods| {
        pods.len() == 5
            && placements(pods)
                .iter()
                .any(|(node, image, _)| node == "general-01" && image != OLD_IMAGE)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_rides_out_a_burst_of_500s_and_leaves_no_dangling_run() {
    if !common::tool_available("kubectl") {
        return;
    }
    let (env, faults) = small_with_faults().await;
    // 500s for 2 s, starting once the command has connected and checked its rights.
    faults.install(vec![window(FaultKind::ServerError(500), 800, 2_000)]);
    let output = env
        .rollcall(&[
            "auto",
            DS,
            "--canary",
            "node-pool=general",
            "--batch",
            "3",
            "--soak",
            "0s",
            "--timeout",
            "30s",
            "--yes",
        ])
        .await;
    faults.clear();
    let said = text(&output);
    // The general canaries pass; the edge pool crash-loops and pauses the run.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "rode out the burst: {said}"
    );
    let ds = env.daemonset("node-agent").await;
    let annotations = &ds["metadata"]["annotations"];
    assert!(
        annotations["rollcall.dev/mode"].is_null(),
        "no dangling run: {ds}"
    );
    assert!(annotations["rollcall.dev/heartbeat"].is_null(), "{ds}");
    let still_old = placements(&env.pods_of("node-agent").await)
        .iter()
        .filter(|(_, image, _)| image == OLD_IMAGE)
        .count();
    assert_eq!(
        deletes(&env).len(),
        5 - still_old,
        "one journal line per delete: {said}"
    );
}
