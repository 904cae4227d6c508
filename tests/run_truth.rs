//! End to end: a run says only what happened and never goes over the
//! DaemonSet's own budget — with the real binary against the embedded
//! cluster, the API read independently every 100 ms.
//!
//! - `auto` on a RollingUpdate DaemonSet whose controller is already rolling
//!   takes the rollout over (OnDelete until the run ends, the strategy written
//!   back after) and never has more nodes without a Ready pod than its
//!   `maxUnavailable`; it ends `incomplete`, exit 1, naming the cordoned and
//!   NotReady nodes it could not move;
//! - a dry run's every line says `would`;
//! - the default plan moves control-plane nodes last.

mod common;
mod ops_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use ops_support::{Env, env_of, small, text};
use rollcall::sim::embedded::{EmbeddedOptions, start};

/// The most nodes of `ds` seen at once without a Ready pod of it, sampled
/// every 100 ms until `stop`.
fn sample_unavailable(
    env: &Env,
    ds: &str,
    nodes: usize,
    stop: Arc<AtomicBool>,
) -> Arc<AtomicUsize> {
    let worst = Arc::new(AtomicUsize::new(0));
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), "kube-system");
    let ds = ds.to_owned();
    let seen = worst.clone();
    tokio::spawn(async move {
        while !stop.load(Ordering::SeqCst) {
            if let Ok(list) = pods.list(&ListParams::default()).await {
                let ready_nodes: std::collections::BTreeSet<String> = list
                    .items
                    .iter()
                    .filter(|p| {
                        p.metadata
                            .owner_references
                            .as_ref()
                            .is_some_and(|o| o.iter().any(|r| r.name == ds))
                    })
                    .filter(|p| p.metadata.deletion_timestamp.is_none())
                    .filter(|p| {
                        p.status
                            .as_ref()
                            .and_then(|s| s.conditions.as_ref())
                            .is_some_and(|cs| {
                                cs.iter().any(|c| c.type_ == "Ready" && c.status == "True")
                            })
                    })
                    .filter_map(|p| p.spec.as_ref().and_then(|s| s.node_name.clone()))
                    .collect();
                seen.fetch_max(nodes.saturating_sub(ready_nodes.len()), Ordering::SeqCst);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    worst
}

/// Reads upstream's budget the way the controller does: `maxUnavailable: 2`
/// on 14 nodes, one of them NotReady from the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_takes_a_rolling_update_over_within_max_unavailable_and_ends_incomplete() {
    if !common::tool_available("kubectl") {
        return;
    }
    // The default scenario without its timeline: a node that fails by itself
    // mid-run (general-05 at 90 s) is not rollcall's doing, and would count.
    let scenario = tempfile::NamedTempFile::new().expect("temp file");
    let yaml = include_str!("../assets/scenarios/default.yaml");
    let without_timeline = yaml.split("\ntimeline:").next().unwrap_or(yaml);
    std::fs::write(scenario.path(), without_timeline).expect("scenario written");
    let options = EmbeddedOptions {
        scenario: Some(scenario.path().display().to_string()),
        speed: 4.0,
        ..EmbeddedOptions::default()
    };
    let env = env_of(start(options).await.expect("embedded cluster starts"));
    env.wait_pods("log-shipper", "a log-shipper pod on every node", |pods| {
        pods.len() == 14
    })
    .await;
    let stop = Arc::new(AtomicBool::new(false));
    let worst = sample_unavailable(&env, "log-shipper", 14, stop.clone());
    // A new template and a budget of 2: the controller starts rolling at once.
    env.kubectl(&[
        "patch",
        "daemonset",
        "log-shipper",
        "-n",
        "kube-system",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":2}},"template":{"spec":{"containers":[{"name":"fluent-bit","image":"cr.fluentbit.io/fluent/fluent-bit:3.2.2"}]}}}}"#,
    ])
    .await;
    let output = env
        .rollcall(&[
            "auto",
            "kube-system/log-shipper",
            "--batch",
            "3",
            "--soak",
            "0s",
            "--timeout",
            "60s",
            "--yes",
        ])
        .await;
    stop.store(true, Ordering::SeqCst);
    let said = text(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("takes the rollout over"), "{said}");
    assert!(said.contains("incomplete"), "{said}");
    assert!(said.contains("general-04: cordoned"), "{said}");
    // general-06 (NotReady) is not named: the controller replaced its
    // unavailable pod first, before the takeover (upstream deletes pods on
    // unavailable nodes first), so it already runs the new revision.
    let worst = worst.load(Ordering::SeqCst);
    assert!(
        worst <= 2,
        "{worst} nodes without a Ready pod at once (maxUnavailable 2)"
    );
    let ds = env.daemonset("log-shipper").await;
    assert_eq!(
        ds["spec"]["updateStrategy"]["type"], "RollingUpdate",
        "{ds}"
    );
    assert_eq!(
        ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
        2
    );
    let annotations = &ds["metadata"]["annotations"];
    assert!(
        annotations["rollcall.dev/saved-strategy"].is_null(),
        "{annotations}"
    );
    let mode = annotations["rollcall.dev/mode"].as_str().unwrap_or("idle");
    assert_eq!(mode, "idle", "{annotations}");
}

/// A dry run sends nothing and says so on every line: no past-tense write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_says_would_on_every_line() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = ops_support::placements(&env.pods_of("node-agent").await);
    let output = env
        .rollcall(&[
            "auto",
            "kube-system/node-agent",
            "--read-only",
            "--despite-failing",
            "--yes",
        ])
        .await;
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("would delete pod"), "{said}");
    for word in ["deleted pod", "waiting for the controller"] {
        assert!(!said.contains(word), "a dry run said {word:?}: {said}");
    }
    assert_eq!(
        ops_support::placements(&env.pods_of("node-agent").await),
        before,
        "nothing deleted"
    );
}

/// kubeadm's `node-role.kubernetes.io/control-plane` nodes go last, whatever
/// their pool's name sorts as.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_plan_moves_control_plane_nodes_last() {
    let env = ops_support::default_scenario().await;
    let output = env
        .rollcall(&["status", "kube-system/node-agent", "--all", "-o", "json"])
        .await;
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output)));
    let plan: Vec<&str> = report["plan"]
        .as_array()
        .map(|p| p.iter().filter_map(|s| s["node"].as_str()).collect())
        .unwrap_or_default();
    assert!(plan.len() > 3, "{plan:?}");
    let tail = &plan[plan.len() - 3..];
    assert!(tail.iter().all(|n| n.starts_with("cp-")), "{plan:?}");
    assert!(
        plan[..plan.len() - 3].iter().all(|n| !n.starts_with("cp-")),
        "{plan:?}"
    );
    let table = env
        .rollcall(&["status", "kube-system/node-agent", "--all"])
        .await;
    assert!(
        text(&table).contains("[control plane: last]"),
        "{}",
        text(&table)
    );
}
