//! The whole embedded cluster (API server, DaemonSet controller, kubelets) on
//! the small scenario, driven by the real kubectl: get and describe; label
//! and taint a node and see daemon pods come and go; cordon and uncordon;
//! delete an OnDelete pod and see it replaced at the new revision; rollout
//! history, set image + rollout status, undo; and `get pods -w` streaming.
//! Each kubectl run gets its own cache dir and the written kubeconfig.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use rollcall::model::Pod;
use rollcall::sim::resources::ResourceKind;

/// The small scenario at twice its speed.
const SPEED: f64 = 2.0;

type Sim = common::sim::InProcess;

impl Sim {
    fn pods(&self, prefix: &str) -> Vec<Pod> {
        let (pods, _) = self
            .cluster
            .simulation
            .store
            .list_as::<Pod>(ResourceKind::Pod, Some("kube-system"))
            .expect("pods decode");
        pods.into_iter()
            .filter(|p| p.name().starts_with(prefix))
            .collect()
    }

    fn pod_on(&self, prefix: &str, node: &str) -> Option<Pod> {
        self.pods(prefix)
            .into_iter()
            .find(|p| p.node_name() == Some(node) && !p.is_terminating())
    }

    /// Polls `done` (on real time; the cluster runs at 2x speed) for up to 30 s.
    async fn wait(&self, what: &str, mut done: impl FnMut(&Sim) -> bool) {
        for _ in 0..300 {
            if done(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("timed out waiting for {what}");
    }

    async fn ready(&self) {
        self.wait("node-agent ready on all five nodes", |s| {
            s.pods("node-agent-")
                .iter()
                .filter(|p| p.is_ready())
                .count()
                == 5
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn get_and_describe_nodes_pods_and_daemonsets() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ready().await;
    let nodes = sim.kubectl_stdout(&["get", "nodes"]).await;
    assert_eq!(
        nodes.lines().filter(|l| l.contains(" Ready ")).count(),
        5,
        "{nodes}"
    );
    let ds = sim.kubectl_stdout(&["get", "ds", "-A"]).await;
    let agent = ds
        .lines()
        .find(|l| l.contains("node-agent"))
        .expect("node-agent row");
    let cells: Vec<&str> = agent.split_whitespace().collect();
    // NAMESPACE NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE ...
    assert_eq!(&cells[2..7], ["5", "5", "5", "0", "5"], "{ds}");
    let proxy = ds
        .lines()
        .find(|l| l.contains("edge-proxy"))
        .expect("edge-proxy row");
    assert!(proxy.contains("example.com/proxy=true"), "{proxy}");
    let pods = sim
        .kubectl_stdout(&["get", "pods", "-n", "kube-system", "-o", "wide"])
        .await;
    assert!(
        pods.contains("Running") && pods.contains("general-01"),
        "{pods}"
    );
    let describe = sim
        .kubectl_stdout(&["describe", "ds", "log-shipper", "-n", "kube-system"])
        .await;
    assert!(
        describe.contains("Pods Status:")
            && describe.contains("cr.fluentbit.io/fluent/fluent-bit:3.2.2"),
        "{describe}"
    );
    let node = sim.kubectl_stdout(&["describe", "node", "edge-01"]).await;
    assert!(
        node.contains("kubernetes.io/arch=arm64") && node.contains("node-agent-"),
        "{node}"
    );
    sim.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn labels_and_taints_add_and_remove_daemon_pods() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ready().await;
    assert!(sim.pod_on("edge-proxy-", "general-02").is_none());
    sim.kubectl_stdout(&["label", "node", "general-02", "example.com/proxy=true"])
        .await;
    sim.wait("edge-proxy pod on general-02", |s| {
        s.pod_on("edge-proxy-", "general-02")
            .is_some_and(|p| p.is_ready())
    })
    .await;
    sim.kubectl_stdout(&["label", "node", "general-02", "example.com/proxy-"])
        .await;
    sim.wait("edge-proxy pod gone", |s| s.pods("edge-proxy-").is_empty())
        .await;
    // A NoExecute taint the daemon pods do not tolerate evicts them.
    sim.kubectl_stdout(&["taint", "node", "general-03", "maintenance=now:NoExecute"])
        .await;
    sim.wait("node-agent gone from general-03", |s| {
        s.pods("node-agent-")
            .iter()
            .all(|p| p.node_name() != Some("general-03"))
    })
    .await;
    sim.kubectl_stdout(&["taint", "node", "general-03", "maintenance=now:NoExecute-"])
        .await;
    sim.wait("node-agent back on general-03", |s| {
        s.pod_on("node-agent-", "general-03").is_some()
    })
    .await;
    sim.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cordon_keeps_daemon_pods_and_shows_scheduling_disabled() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ready().await;
    let before = sim
        .pod_on("node-agent-", "general-01")
        .expect("agent on general-01");
    sim.kubectl_stdout(&["cordon", "general-01"]).await;
    sim.wait("unschedulable taint", |s| {
        s.cluster
            .simulation
            .store
            .get(ResourceKind::Node, "", "general-01")
            .is_some_and(|n| n.to_string().contains("node.kubernetes.io/unschedulable"))
    })
    .await;
    let nodes = sim.kubectl_stdout(&["get", "node", "general-01"]).await;
    assert!(nodes.contains("Ready,SchedulingDisabled"), "{nodes}");
    // Daemon pods tolerate the unschedulable taint: the pod stays. Evidence
    // that the DaemonSet controller has synced node-agent since the taint: a
    // pod deleted after it is replaced, and the status that sync writes
    // (after its deletes) counts the replacement, the first on revision 2.
    let other = sim
        .pod_on("node-agent-", "general-02")
        .expect("agent on general-02");
    sim.cluster
        .simulation
        .store
        .delete(
            ResourceKind::Pod,
            "kube-system",
            other.name(),
            &rollcall::sim::store::Preconditions::default(),
        )
        .expect("delete");
    sim.wait("a sync of node-agent after the taint", |s| {
        s.cluster
            .simulation
            .store
            .get(ResourceKind::DaemonSet, "kube-system", "node-agent")
            .is_some_and(|ds| ds["status"]["updatedNumberScheduled"] == 1)
    })
    .await;
    assert_eq!(
        sim.pod_on("node-agent-", "general-01")
            .map(|p| p.uid().to_owned()),
        Some(before.uid().to_owned())
    );
    sim.kubectl_stdout(&["uncordon", "general-01"]).await;
    sim.wait("taint removed", |s| {
        s.cluster
            .simulation
            .store
            .get(ResourceKind::Node, "", "general-01")
            .is_some_and(|n| !n.to_string().contains("node.kubernetes.io/unschedulable"))
    })
    .await;
    sim.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_an_on_delete_pod_replaces_it_at_the_new_revision() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ready().await;
    let old = sim
        .pod_on("node-agent-", "general-01")
        .expect("agent on general-01");
    let history = sim
        .kubectl_stdout(&["rollout", "history", "ds/node-agent", "-n", "kube-system"])
        .await;
    assert!(
        history.contains("\n1 ") && history.contains("\n2 "),
        "{history}"
    );
    sim.kubectl_stdout(&["delete", "pod", old.name(), "-n", "kube-system"])
        .await;
    sim.wait("replacement ready", |s| {
        s.pod_on("node-agent-", "general-01")
            .is_some_and(|p| p.uid() != old.uid() && p.is_ready())
    })
    .await;
    let new = sim
        .pod_on("node-agent-", "general-01")
        .expect("replacement");
    assert_ne!(new.revision_hash(), old.revision_hash());
    let image = sim
        .kubectl_stdout(&[
            "get",
            "pod",
            new.name(),
            "-n",
            "kube-system",
            "-o",
            "jsonpath={.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(image, "registry.example.com/platform/node-agent:1.5.0");
    let ds = sim
        .kubectl_stdout(&[
            "get",
            "ds",
            "node-agent",
            "-n",
            "kube-system",
            "-o",
            "jsonpath={.status.updatedNumberScheduled}",
        ])
        .await;
    assert_eq!(ds, "1");
    sim.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn set_image_rollout_status_history_and_undo() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ready().await;
    let ns = ["-n", "kube-system"];
    sim.kubectl_stdout(
        &[
            &[
                "set",
                "image",
                "ds/log-shipper",
                "fluent-bit=cr.fluentbit.io/fluent/fluent-bit:3.3.0",
            ][..],
            &ns,
        ]
        .concat(),
    )
    .await;
    let status = sim
        .kubectl_stdout(
            &[
                &["rollout", "status", "ds/log-shipper", "--timeout=60s"][..],
                &ns,
            ]
            .concat(),
        )
        .await;
    assert!(status.contains("successfully rolled out"), "{status}");
    let history = sim
        .kubectl_stdout(&[&["rollout", "history", "ds/log-shipper"][..], &ns].concat())
        .await;
    let numbers: Vec<&str> = history
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<u32>().is_ok())
        .collect();
    assert_eq!(numbers, ["1", "2", "3"], "{history}");
    let undo = sim
        .kubectl_stdout(&[&["rollout", "undo", "ds/log-shipper"][..], &ns].concat())
        .await;
    assert!(undo.contains("rolled back"), "{undo}");
    let status = sim
        .kubectl_stdout(
            &[
                &["rollout", "status", "ds/log-shipper", "--timeout=60s"][..],
                &ns,
            ]
            .concat(),
        )
        .await;
    assert!(status.contains("successfully rolled out"), "{status}");
    // upstream constructHistory: revision 2 came back and is renumbered to 4.
    let history = sim
        .kubectl_stdout(&[&["rollout", "history", "ds/log-shipper"][..], &ns].concat())
        .await;
    let numbers: Vec<&str> = history
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<u32>().is_ok())
        .collect();
    assert_eq!(numbers, ["1", "3", "4"], "{history}");
    assert!(
        sim.pods("log-shipper-")
            .iter()
            .all(|p| p.spec.containers[0].image.as_deref()
                == Some("cr.fluentbit.io/fluent/fluent-bit:3.2.2"))
    );
    let on_delete = sim
        .kubectl_output(&[&["rollout", "status", "ds/node-agent"][..], &ns].concat())
        .await;
    assert!(
        String::from_utf8_lossy(&on_delete.stderr).contains("only available for RollingUpdate")
    );
    sim.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn get_pods_watch_streams_the_replacement() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ready().await;
    let mut watch = sim
        .kubectl_command(&[
            "get",
            "pods",
            "-n",
            "kube-system",
            "-w",
            "--output-watch-events",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w starts");
    let stdout = watch.stdout.take().expect("stdout");
    let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    // The initial list arrives first.
    let first = tokio::time::timeout(Duration::from_secs(20), lines.recv())
        .await
        .expect("first line")
        .expect("a line");
    assert!(first.contains("NAME"), "{first}");
    let old = sim
        .pod_on("log-shipper-", "general-02")
        .expect("log-shipper on general-02");
    sim.kubectl_stdout(&[
        "delete",
        "pod",
        old.name(),
        "-n",
        "kube-system",
        "--wait=false",
    ])
    .await;
    sim.wait("replacement", |s| {
        s.pod_on("log-shipper-", "general-02")
            .is_some_and(|p| p.uid() != old.uid())
    })
    .await;
    let new = sim
        .pod_on("log-shipper-", "general-02")
        .expect("replacement")
        .name()
        .to_owned();
    let mut saw_delete = false;
    let mut saw_added = false;
    while !(saw_delete && saw_added) {
        let line = tokio::time::timeout(Duration::from_secs(20), lines.recv())
            .await
            .expect("watch line in time")
            .expect("watch open");
        saw_delete |= line.starts_with("DELETED") && line.contains(old.name());
        saw_added |= line.starts_with("ADDED") && line.contains(&new);
    }
    let _ = watch.kill();
    let _ = watch.wait();
    sim.cluster.shutdown().await;
}

/// `kubectl annotate` sets memory pressure on a running sim: the kubelet
/// reports `MemoryPressure` True and taint-by-condition adds the
/// `memory-pressure` NoSchedule taint; removing the annotation clears both.
#[tokio::test(flavor = "multi_thread")]
async fn annotated_memory_pressure_shows_in_describe_node() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ready().await;
    let annotation = "sim.rollcall.dev/memory-pressure";
    sim.kubectl_stdout(&[
        "annotate",
        "node",
        "general-02",
        &format!("{annotation}=true"),
    ])
    .await;
    let mut describe = String::new();
    for _ in 0..100 {
        describe = sim
            .kubectl_stdout(&["describe", "node", "general-02"])
            .await;
        if describe.contains("node.kubernetes.io/memory-pressure:NoSchedule") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let condition = describe
        .lines()
        .find(|l| l.trim_start().starts_with("MemoryPressure"))
        .unwrap_or_default();
    assert!(
        condition.contains("True") && condition.contains("KubeletHasInsufficientMemory"),
        "{describe}"
    );
    assert!(
        describe.contains("node.kubernetes.io/memory-pressure:NoSchedule"),
        "{describe}"
    );
    sim.kubectl_stdout(&["annotate", "node", "general-02", &format!("{annotation}-")])
        .await;
    sim.wait("memory-pressure taint gone", |s| {
        let node = s
            .cluster
            .simulation
            .store
            .get(ResourceKind::Node, "", "general-02")
            .unwrap_or_default();
        node["spec"]["taints"].as_array().is_none_or(|taints| {
            !taints
                .iter()
                .any(|t| t["key"] == "node.kubernetes.io/memory-pressure")
        })
    })
    .await;
    sim.cluster.shutdown().await;
}
