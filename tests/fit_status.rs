//! Preflight fit through the real binary on the embedded cluster: workload
//! pods placed with the real kubectl, the DaemonSet's template raised with
//! kubectl, and `rollcall status -o json` must name exactly the nodes where
//! the new pod will not fit and those where it preempts (upstream's
//! NodeResourcesFit on allocatable minus the requests of every pod bound to
//! the node; DefaultPreemption removes only lower-priority pods).

mod common;
mod ops_support;

use ops_support::{Env, small, text};
use serde_json::Value;

const DS: &str = "kube-system/node-agent";

/// A pod bound to `node` requesting a whole CPU, at `priority` (with the
/// built-in class of that value, as upstream's Priority admission wants).
fn hog(name: &str, node: &str, critical: bool) -> String {
    let class = if critical {
        "  priorityClassName: system-node-critical\n  priority: 2000001000\n"
    } else {
        ""
    };
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  nodeName: {node}\n{class}  containers:\n  - name: hog\n    image: registry.example.com/hog:1\n    resources:\n      requests:\n        cpu: \"1\"\n"
    )
}

async fn create(env: &Env, name: &str, manifest: &str) {
    let file = env.dir.path().join(format!("{name}.yaml"));
    std::fs::write(&file, manifest).expect("manifest written");
    env.kubectl(&["create", "-f", &file.display().to_string()])
        .await;
}

async fn status(env: &Env, args: &[&str]) -> std::process::Output {
    let mut all = vec!["status", DS];
    all.extend_from_slice(args);
    env.rollcall(&all).await
}

/// The names of the nodes whose `fit` satisfies `wanted`.
fn nodes_where(report: &Value, wanted: impl Fn(&Value) -> bool) -> Vec<String> {
    report["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter(|n| !n["fit"].is_null() && wanted(&n["fit"]))
        .filter_map(|n| n["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_predicts_the_nodes_a_raised_template_will_not_fit() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    // Every node: 3910m allocatable; the log-shipper takes 50m and the
    // node-agent's old pod 50m (gone before its replacement: OnDelete).
    create(&env, "hog-low", &hog("hog-low", "general-01", false)).await;
    create(&env, "hog-high", &hog("hog-high", "general-02", true)).await;
    env.kubectl(&[
        "patch",
        "daemonset",
        "node-agent",
        "-n",
        "kube-system",
        "--type",
        "json",
        "-p",
        r#"[{"op":"add","path":"/spec/template/spec/containers/0/resources/requests/cpu","value":"3"}]"#,
    ])
    .await;

    let output = status(&env, &["-o", "json"]).await;
    assert!(output.status.success(), "{}", text(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("status json");
    // 3910 - 50 - 1000 = 2860m free on both hogged nodes: the system-node-
    // critical agent preempts the priority-0 pod, not the critical one.
    assert_eq!(nodes_where(&report, |f| f["fits"] == false), ["general-02"]);
    assert_eq!(
        nodes_where(&report, |f| f["preempts"]
            .as_array()
            .is_some_and(|v| !v.is_empty())),
        ["general-01"]
    );
    let nodes = report["nodes"].as_array().expect("nodes");
    let on = |name: &str| {
        nodes
            .iter()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {nodes:?}"))
    };
    assert_eq!(
        on("general-01")["fit"]["preempts"],
        serde_json::json!([{"namespace": "default", "name": "hog-low", "priority": 0}])
    );
    let codes: Vec<&str> = on("general-02")["fit"]["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter_map(|r| r["code"].as_str())
        .collect();
    assert_eq!(codes.first(), Some(&"insufficientCpu"), "{codes:?}");
    assert!(
        nodes_where(&report, |f| f["fits"] == true).len() == 4,
        "every other node fits: {nodes:?}"
    );

    let table = status(&env, &[]).await;
    let said = text(&table);
    assert!(said.contains("won't fit  1 node(s): general-02"), "{said}");
    assert!(
        said.contains("preempts  1 pod(s) on 1 node(s): general-01"),
        "{said}"
    );

    explain_agrees_offline(&env, &report).await;
    the_scheduler_agrees_after_the_deletes(&env, &report).await;
}

/// The node a daemon pod is for: bound, or pinned by the controller's
/// `matchFields metadata.name` affinity while Pending (upstream GetTargetNodeName).
fn target_node(pod: &Value) -> String {
    pod["spec"]["nodeName"]
        .as_str()
        .or_else(|| {
            pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
                .as_str()
        })
        .unwrap_or_default()
        .to_owned()
}

fn unschedulable(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "PodScheduled" && c["reason"] == "Unschedulable")
        })
}

/// Every node advanced anyway (`advance --next N --despite-fit`): the replacement stays Pending
/// as unschedulable exactly where `status` predicted it would not fit, the
/// predicted victim is preempted, and everywhere else the replacement binds.
async fn the_scheduler_agrees_after_the_deletes(env: &Env, report: &Value) {
    let predicted = nodes_where(report, |f| f["fits"] == false);
    let nodes = report["nodes"].as_array().expect("nodes").len();
    let every = nodes.to_string();
    let advance = env
        .rollcall(&["advance", DS, "--next", &every, "--despite-fit", "--yes"])
        .await;
    assert!(advance.status.success(), "{}", text(&advance));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    loop {
        let pods = env.pods_of("node-agent").await;
        // A preemptor is Unschedulable too until its victims are gone: it is
        // settled once bound; an unschedulable pod with no nomination is final.
        let settled = pods.len() == nodes
            && pods.iter().all(|p| {
                p["spec"]["nodeName"].is_string()
                    || (unschedulable(p) && p["status"]["nominatedNodeName"].is_null())
            });
        let hog_gone = !env
            .kubectl_output(&["get", "pod", "hog-low", "-n", "default"])
            .await
            .status
            .success();
        if settled && hog_gone {
            let mut pending: Vec<String> = pods
                .iter()
                .filter(|p| unschedulable(p))
                .map(target_node)
                .collect();
            pending.sort();
            assert_eq!(
                pending, predicted,
                "the prediction was the scheduler's answer"
            );
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "replacements never settled (hog-low gone: {hog_gone}): {pods:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
}

/// `explain -f` on a kubectl dump of the same cluster gives every node the
/// same `fit` object as `status` (one function, live and offline).
async fn explain_agrees_offline(env: &Env, report: &Value) {
    let dump = env
        .kubectl(&[
            "get",
            "nodes,pods,ds,controllerrevisions",
            "-A",
            "-o",
            "json",
        ])
        .await;
    let file = env.dir.path().join("dump.json");
    std::fs::write(&file, dump).expect("dump written");
    let output = env
        .rollcall(&[
            "explain",
            "-f",
            &file.display().to_string(),
            DS,
            "-o",
            "json",
        ])
        .await;
    assert!(output.status.success(), "{}", text(&output));
    let offline: Value = serde_json::from_slice(&output.stdout).expect("explain json");
    let fits = |nodes: &Value| -> Vec<(String, Value)> {
        let mut fits: Vec<(String, Value)> = nodes
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| {
                (
                    n["name"].as_str().unwrap_or_default().to_owned(),
                    n["fit"].clone(),
                )
            })
            .collect();
        fits.sort_by(|a, b| a.0.cmp(&b.0));
        fits
    };
    assert_eq!(
        fits(&offline["daemonsets"][0]["nodes"]),
        fits(&report["nodes"])
    );
}

const SANDBOX_FAILS_ON_ONE_NODE: &str = r#"
name: sandbox-fails
seed: 5
timing: {schedule: 50ms, pullStart: 50ms, pull: 50ms, create: 50ms, start: 50ms, ready: 50ms, terminate: 100ms, jitter: 0.1}
pools:
  - {name: general, count: 3}
daemonSets:
  - name: node-agent
    updateStrategy: OnDelete
    revisions: [{image: "registry.example.com/platform/node-agent:2.0.0"}]
images:
  - image: registry.example.com/platform/node-agent:2.0.0
    failure: FailedCreatePodSandBox
    nodes: [general-02]
"#;

/// Only events say that the kubelet cannot create a pod's sandbox (the pod
/// itself stays Pending in ContainerCreating, as upstream's kubelet leaves
/// it): the one-shot `status` lists them too, so it names the problem as the
/// console does, not as a pod still starting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_status_names_a_sandbox_failure_from_its_events() {
    let env = ops_support::scenario_text(SANDBOX_FAILS_ON_ONE_NODE).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let node = loop {
        let output = status(&env, &["-o", "json", "--all"]).await;
        let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        let failing = report["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|n| n["name"] == "general-02" && n["problem"]["code"] == "sandboxFailed")
            .cloned();
        if let Some(node) = failing {
            break node;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "general-02's sandbox failure never named: {}",
            text(&output)
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(
        node["problem"]["reason"], "FailedCreatePodSandBox",
        "{node}"
    );
    let table = text(&status(&env, &["--all"]).await);
    assert!(table.contains("FailedCreatePodSandBox"), "{table}");
}
