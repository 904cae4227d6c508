//! The embedded cluster's scheduler seen through the real kubectl (small
//! scenario, slowed down so that a preemption can be watched): `describe
//! node` lists a workload and the allocated resources, `describe pod` shows
//! the `FailedScheduling` event of a pod that fits nowhere, and `get pods -o
//! wide` the `NOMINATED NODE` of a pod that preempted another.

mod common;

use std::process::Output;
use std::time::Duration;

use rollcall::model::Pod;
use rollcall::sim::resources::ResourceKind;

/// A tenth of the small scenario's speed: a preempted pod takes about 2 s
/// to terminate, long enough to see its preemptor nominated.
const SPEED: f64 = 0.1;

type Sim = common::sim::InProcess;

impl Sim {
    async fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut command = self.kubectl_command(args);
        let input = stdin.map(str::to_owned);
        tokio::task::spawn_blocking(move || {
            use std::io::Write;
            use std::process::Stdio;
            command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = command.spawn().expect("kubectl runs");
            if let Some(mut pipe) = child.stdin.take() {
                let _ = pipe.write_all(input.unwrap_or_default().as_bytes());
            }
            child.wait_with_output().expect("kubectl output")
        })
        .await
        .expect("joined")
    }

    async fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let output = self.run(args, stdin).await;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "kubectl {args:?} failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    fn pod(&self, namespace: &str, name: &str) -> Option<Pod> {
        self.cluster
            .simulation
            .store
            .get_as::<Pod>(ResourceKind::Pod, namespace, name)
            .ok()
            .flatten()
    }

    /// Polls `done` on real time for up to 60 s.
    async fn wait(&self, what: &str, mut done: impl FnMut(&Sim) -> bool) {
        for _ in 0..600 {
            if done(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("timed out waiting for {what}");
    }
}

/// A pod pinned to `node` by nodeSelector, requesting `cpu`.
fn pod_yaml(name: &str, node: &str, cpu: &str, priority_class: Option<&str>) -> String {
    let class = priority_class.map_or_else(String::new, |c| format!("  priorityClassName: {c}\n"));
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n{class}  \
         nodeSelector:\n    kubernetes.io/hostname: {node}\n  containers:\n  - name: main\n    \
         image: example.com/{name}:1\n    resources:\n      requests:\n        cpu: \"{cpu}\"\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn describe_shows_allocation_and_failed_scheduling_and_get_shows_the_nominated_node() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.ok(
        &["create", "-f", "-"],
        Some(&pod_yaml("batch", "general-01", "3", None)),
    )
    .await;
    sim.wait("batch bound", |s| {
        s.pod("default", "batch")
            .is_some_and(|p| p.node_name() == Some("general-01"))
    })
    .await;
    let node = sim.ok(&["describe", "node", "general-01"], None).await;
    assert!(node.contains("Allocated resources:"), "{node}");
    let batch_row = node
        .lines()
        .find(|l| l.contains(" batch "))
        .unwrap_or_else(|| panic!("batch among the node's pods: {node}"));
    assert!(
        batch_row.contains("3 (76%)"),
        "its request against 3910m: {batch_row}"
    );

    // No room for 2 CPUs next to batch, and nothing it may preempt.
    sim.ok(
        &["create", "-f", "-"],
        Some(&pod_yaml("equal", "general-01", "2", None)),
    )
    .await;
    sim.wait("equal marked unschedulable", |s| {
        s.pod("default", "equal")
            .is_some_and(|p| p.unscheduled_condition().is_some())
    })
    .await;
    let described = sim
        .ok(&["describe", "pod", "equal", "-n", "default"], None)
        .await;
    assert!(described.contains("FailedScheduling"), "{described}");
    assert!(described.contains("default-scheduler"), "{described}");
    assert!(
        described.contains("0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't match Pod's node affinity/selector."),
        "{described}"
    );
    sim.ok(
        &["delete", "pod", "equal", "-n", "default", "--wait=false"],
        None,
    )
    .await;

    preempt_and_show_the_nomination(&sim).await;
    sim.cluster.shutdown().await;
}

/// A critical pod preempts batch and is nominated while batch terminates.
async fn preempt_and_show_the_nomination(sim: &Sim) {
    sim.ok(
        &["create", "-f", "-"],
        Some(&pod_yaml(
            "urgent",
            "general-01",
            "2",
            Some("system-cluster-critical"),
        )),
    )
    .await;
    let mut seen = String::new();
    for _ in 0..100 {
        seen = sim
            .ok(&["get", "pods", "-n", "default", "-o", "wide"], None)
            .await;
        if seen
            .lines()
            .any(|l| l.starts_with("urgent ") && l.contains("general-01") && l.contains("Pending"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let header = seen.lines().next().unwrap_or_default();
    assert!(header.contains("NOMINATED NODE"), "{seen}");
    let urgent = seen
        .lines()
        .find(|l| l.starts_with("urgent "))
        .unwrap_or_else(|| panic!("urgent listed: {seen}"));
    assert!(
        urgent.contains("Pending") && urgent.contains("general-01"),
        "nominated: {seen}"
    );
    sim.wait("urgent bound where batch was", |s| {
        s.pod("default", "urgent")
            .is_some_and(|p| p.node_name() == Some("general-01"))
    })
    .await;
    let events = sim
        .ok(
            &[
                "get",
                "events",
                "-n",
                "default",
                "--field-selector",
                "reason=Preempted",
            ],
            None,
        )
        .await;
    assert!(events.contains("Preempted by pod"), "{events}");
}
