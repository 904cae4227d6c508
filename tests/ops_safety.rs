//! End to end: the safety properties of the rollout operations against the
//! embedded cluster — pause freezes a RollingUpdate DaemonSet and resume
//! restores it exactly; a concurrent `kubectl delete pod` never causes a
//! double delete; a stale UID precondition is a 409 that deletes nothing.

mod common;
mod ops_support;

use std::time::Duration;

use ops_support::{all_ready, observed, placements, small, small_at, text};
use rollcall::ops::error::OpsError;
use rollcall::ops::write::{Write, execute};
use rollcall::sim::auth::Authorizer;
use rollcall::sim::embedded::{EmbeddedCluster, EmbeddedOptions, Simulation};
use rollcall::sim::server::{ServeOptions, serve};
use serde_json::Value;

const NEW_SHIPPER: &str = "cr.fluentbit.io/fluent/fluent-bit:3.3.0";

fn updated(pods: &[Value]) -> usize {
    pods.iter()
        .filter(|p| p["spec"]["containers"][0]["image"] == NEW_SHIPPER)
        .count()
}

async fn revision_count(env: &ops_support::Env) -> usize {
    env.kubectl(&[
        "get",
        "controllerrevisions",
        "-n",
        "kube-system",
        "-o",
        "name",
    ])
    .await
    .lines()
    .count()
}

/// Starts a log-shipper update with kubectl, pauses it once the first pod
/// moved, checks the freeze, and returns how many pods were updated when it settled.
async fn pause_mid_rollout(env: &ops_support::Env) -> usize {
    let revisions_before = revision_count(env).await;
    let image = format!("fluent-bit={NEW_SHIPPER}");
    env.kubectl(&[
        "set",
        "image",
        "daemonset/log-shipper",
        &image,
        "-n",
        "kube-system",
    ])
    .await;
    env.wait_pods("log-shipper", "the rollout to start", |pods| {
        updated(pods) >= 1
    })
    .await;
    let paused = env
        .rollcall(&["pause", "kube-system/log-shipper", "--yes"])
        .await;
    assert!(paused.status.success(), "{}", text(&paused));

    let frozen = env.daemonset("log-shipper").await;
    assert_eq!(
        frozen["spec"]["updateStrategy"],
        serde_json::json!({"type": "OnDelete"})
    );
    let template_image = &frozen["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(
        template_image, NEW_SHIPPER,
        "pause leaves the template alone"
    );
    assert_eq!(
        revision_count(env).await,
        revisions_before + 1,
        "only set image made a revision"
    );
    // Let the pod that was in flight settle, then nothing more may move.
    let settled = env
        .wait_pods("log-shipper", "in-flight pod settled", |pods| {
            pods.len() == 5 && all_ready(pods)
        })
        .await;
    let count = updated(&settled);
    assert!(
        count < 5,
        "the rollout stopped mid-way ({count} of 5 updated)"
    );
    // Evidence that the DaemonSet controller has acted on both the pause and
    // the settled pods: a status written by a sync that saw the OnDelete spec
    // (observedGeneration) and all five pods Ready. That sync deletes before
    // it writes status, so a delete it decided on shows below at once.
    env.wait_daemonset(
        "log-shipper",
        "the controller to sync the paused, settled rollout",
        |ds| {
            observed(ds)
                && ds["status"]["numberReady"] == 5
                && ds["status"]["updatedNumberScheduled"] == count
        },
    )
    .await;
    assert_eq!(
        placements(&env.pods_of("log-shipper").await),
        placements(&settled),
        "no pod moved while paused"
    );
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_freezes_a_rolling_update_and_resume_completes_it() {
    if !common::tool_available("kubectl") {
        return;
    }
    // Slower kubelets, so the pause lands while the controller is mid-rollout.
    let env = small_at(0.4).await;
    env.wait_pods("log-shipper", "log-shipper settled", |pods| {
        pods.len() == 5 && all_ready(pods)
    })
    .await;
    let original = env.daemonset("log-shipper").await;
    pause_mid_rollout(&env).await;

    let status = env
        .rollcall(&["status", "kube-system/log-shipper", "-o", "json"])
        .await;
    let report: Value = serde_json::from_slice(&status.stdout).expect("status json");
    assert_eq!(report["state"], "paused", "{report}");

    let resumed = env
        .rollcall(&["resume", "kube-system/log-shipper", "--yes"])
        .await;
    assert!(resumed.status.success(), "{}", text(&resumed));
    let restored = env.daemonset("log-shipper").await;
    assert_eq!(
        restored["spec"]["updateStrategy"], original["spec"]["updateStrategy"],
        "the exact previous strategy"
    );
    env.wait_pods("log-shipper", "the rollout to complete", |pods| {
        pods.len() == 5 && all_ready(pods) && updated(pods) == 5
    })
    .await;
    let annotations = restored["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(
        !annotations.contains_key("rollcall.dev/paused-by"),
        "{annotations:?}"
    );
    let journal: Vec<String> = env
        .journal_lines()
        .iter()
        .filter(|l| l["result"] == "ok")
        .filter_map(|l| l["action"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(journal, ["pause", "resume"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_uid_precondition_is_a_conflict_that_deletes_nothing() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = placements(&env.pods_of("node-agent").await);
    let (node, _, _) = &before[0];
    let pods = env.pods_of("node-agent").await;
    let pod = pods
        .iter()
        .find(|p| p["spec"]["nodeName"] == node.as_str())
        .expect("pod");
    let write = Write::DeletePod {
        namespace: "kube-system".into(),
        name: pod["metadata"]["name"].as_str().expect("name").to_owned(),
        uid: "00000000-stale".into(),
    };
    let err = execute(&env.client, &write)
        .await
        .expect_err("precondition fails");
    assert!(matches!(err, OpsError::Conflict { .. }), "{err:?}");
    assert!(err.to_string().contains("nothing was changed"), "{err}");
    assert_eq!(
        placements(&env.pods_of("node-agent").await),
        before,
        "no pod deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_kubectl_delete_never_leads_to_a_double_delete() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = placements(&env.pods_of("node-agent").await);
    let auto = env.rollcall(&[
        "auto",
        "kube-system/node-agent",
        "--canary",
        "node-pool=general",
        "--batch",
        "1",
        "--soak",
        "1s",
        "--timeout",
        "60s",
        "--yes",
    ]);
    let meddle = async {
        // While auto-advance runs, someone deletes general-03's old pod by hand.
        let victim = before
            .iter()
            .find(|p| p.0 == "general-03")
            .expect("general-03 pod");
        let pods = env.pods_of("node-agent").await;
        let name = pods
            .iter()
            .find(|p| p["metadata"]["uid"] == victim.2.as_str())
            .and_then(|p| p["metadata"]["name"].as_str())
            .map(str::to_owned);
        if let Some(name) = name {
            tokio::time::sleep(Duration::from_millis(700)).await;
            let _ = env
                .kubectl_output(&["delete", "pod", &name, "-n", "kube-system", "--wait=false"])
                .await;
        }
    };
    let (output, ()) = tokio::join!(auto, meddle);
    let said = text(&output);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{said}");

    let journal = env.journal_lines();
    let ours: Vec<&Value> = journal
        .iter()
        .filter(|l| l["action"] == "auto-advance" && l["result"] == "ok")
        .collect();
    let original: Vec<&str> = before.iter().map(|p| p.2.as_str()).collect();
    for line in &ours {
        let uid = line["podUid"].as_str().unwrap_or_default();
        assert!(
            original.contains(&uid),
            "we only ever deleted an original old pod, never a replacement: {line}"
        );
    }
    let mut nodes: Vec<&str> = ours.iter().filter_map(|l| l["node"].as_str()).collect();
    let total = nodes.len();
    nodes.dedup();
    assert_eq!(
        nodes.len(),
        total,
        "at most one delete per node: {journal:?}"
    );
    let after = env
        .wait_pods("node-agent", "one pod per node", |pods| pods.len() == 5)
        .await;
    assert_eq!(after.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_delete_is_caught_by_the_rbac_check_and_mapped_when_tried() {
    if !common::tool_available("kubectl") {
        return;
    }
    let options = EmbeddedOptions {
        scenario: Some("small".to_owned()),
        ..EmbeddedOptions::default()
    };
    let simulation = Simulation::start(&options).expect("simulation starts");
    let authorizer = Authorizer::allow_all().deny("delete", "pods", Some("kube-system"));
    let server = serve(
        simulation.store.clone(),
        ServeOptions {
            authorizer,
            ..ServeOptions::default()
        },
    )
    .await
    .expect("server starts");
    let env = ops_support::env(EmbeddedCluster { server, simulation }).await;
    let before = placements(&env.pods_of("node-agent").await);

    let can_i = env
        .kubectl_output(&["auth", "can-i", "delete", "pods", "-n", "kube-system"])
        .await;
    let answer = String::from_utf8_lossy(&can_i.stdout).trim().to_owned();
    assert!(
        answer.starts_with("no"),
        "kubectl agrees the user may not delete pods: {answer}"
    );

    let refused = env
        .rollcall(&[
            "advance",
            "kube-system/node-agent",
            "--node",
            "general-01",
            "--yes",
        ])
        .await;
    let said = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("not allowed to delete pods in namespace kube-system"),
        "{said}"
    );
    // Pausing needs only `patch daemonsets`, which stays allowed.
    let paused = env
        .rollcall(&["pause", "kube-system/node-agent", "--yes"])
        .await;
    assert!(paused.status.success(), "{}", text(&paused));

    // The server stays the authority: a delete sent anyway is a 403, mapped to a message that says what to ask for.
    let pods = env.pods_of("node-agent").await;
    let pod = &pods[0];
    let write = Write::DeletePod {
        namespace: "kube-system".into(),
        name: pod["metadata"]["name"].as_str().expect("name").to_owned(),
        uid: pod["metadata"]["uid"].as_str().expect("uid").to_owned(),
    };
    let err = execute(&env.client, &write).await.expect_err("forbidden");
    assert!(matches!(err, OpsError::Forbidden { .. }), "{err:?}");
    assert!(
        err.to_string().contains("ask for `delete` on pods"),
        "{err}"
    );
    assert_eq!(
        placements(&env.pods_of("node-agent").await),
        before,
        "nothing was deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_and_missing_confirmation_change_nothing() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = placements(&env.pods_of("node-agent").await);
    let ds_before = env.daemonset("node-agent").await;

    let read_only = env
        .rollcall(&[
            "advance",
            "kube-system/node-agent",
            "--node",
            "general-01",
            "--yes",
            "--read-only",
        ])
        .await;
    // --read-only is a dry run: it prints the delete it would send, exits 0, sends nothing.
    assert_eq!(read_only.status.code(), Some(0), "{}", text(&read_only));
    assert!(
        text(&read_only).contains("dry run (--read-only): nothing was changed")
            && text(&read_only).contains("DELETE /api/v1/namespaces/kube-system/pods/"),
        "{}",
        text(&read_only)
    );

    // No --yes and no terminal to ask on: refuse.
    let unconfirmed = env.rollcall(&["pause", "kube-system/node-agent"]).await;
    assert_eq!(unconfirmed.status.code(), Some(2), "{}", text(&unconfirmed));
    assert!(
        text(&unconfirmed).contains("refusing without --yes"),
        "{}",
        text(&unconfirmed)
    );

    assert_eq!(placements(&env.pods_of("node-agent").await), before);
    let ds_after = env.daemonset("node-agent").await;
    assert_eq!(
        ds_after["metadata"]["annotations"],
        ds_before["metadata"]["annotations"]
    );
    assert!(
        env.journal_lines().is_empty(),
        "nothing happened, nothing journaled"
    );
}
