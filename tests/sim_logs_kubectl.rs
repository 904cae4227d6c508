//! Why a container fails, end to end on the embedded cluster (small
//! scenario, where node-agent 1.5.0 crash-loops on the edge pool): `rollcall
//! advance --wait` on an edge node stops and prints the container's own
//! failure, and the real kubectl reads the crash-looping pod's log and its
//! previous container's log (`kubectl logs`, `kubectl logs --previous`)
//! from the simulated kubelet, while a healthy pod logs its start-up and
//! refuses `--previous` with kubelet's words.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use rollcall::model::Pod;
use rollcall::sim::resources::ResourceKind;

const FAILURE: &str = "exec /usr/bin/node-agent: exec format error";

/// The small scenario at twice its speed.
const SPEED: f64 = 2.0;

type Sim = common::sim::InProcess;

impl Sim {
    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    async fn output(mut command: Command) -> Output {
        tokio::task::spawn_blocking(move || command.output().expect("command runs"))
            .await
            .expect("joined")
    }

    async fn kubectl(&self, args: &[&str]) -> Output {
        let cache: PathBuf = self.dir.path().join("kube-cache");
        let mut command = Command::new("kubectl");
        command
            .arg(format!("--kubeconfig={}", self.kubeconfig().display()))
            .arg(format!("--cache-dir={}", cache.display()))
            .args(args)
            .env("HOME", self.dir.path())
            .env_remove("KUBECONFIG");
        Sim::output(command).await
    }

    fn agent_on(&self, node: &str) -> Option<Pod> {
        let (pods, _) = self
            .cluster
            .simulation
            .store
            .list_as::<Pod>(ResourceKind::Pod, Some("kube-system"))
            .expect("pods decode");
        pods.into_iter().find(|p| {
            p.name().starts_with("node-agent-")
                && p.node_name() == Some(node)
                && !p.is_terminating()
        })
    }

    /// Polls `done` (real time; the cluster runs at 2x speed) for up to 30 s.
    async fn wait(&self, what: &str, mut done: impl FnMut(&Sim) -> bool) {
        for _ in 0..300 {
            if done(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("timed out waiting for {what}");
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn advance_stops_on_the_crash_and_kubectl_reads_its_logs() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::start("small", SPEED).await;
    sim.wait("node-agent ready on edge-01", |s| {
        s.agent_on("edge-01").is_some_and(|p| p.is_ready())
    })
    .await;
    let healthy = sim.agent_on("general-01").expect("agent on general-01");
    sim.wait("node-agent ready on general-01", |s| {
        s.agent_on("general-01").is_some_and(|p| p.is_ready())
    })
    .await;

    // A healthy agent: its start-up lines; no previous container.
    let logs = sim
        .kubectl(&["logs", "-n", "kube-system", healthy.name()])
        .await;
    assert!(logs.status.success(), "{}", text(&logs));
    assert!(
        text(&logs).contains("msg=\"starting node-agent\" version=1.4.2 node=general-01"),
        "{}",
        text(&logs)
    );
    let previous = sim
        .kubectl(&["logs", "--previous", "-n", "kube-system", healthy.name()])
        .await;
    assert!(!previous.status.success());
    assert!(
        text(&previous).contains(&format!(
            "Error from server (BadRequest): previous terminated container \"node-agent\" in pod \"{}\" not found",
            healthy.name()
        )),
        "{}",
        text(&previous)
    );

    // Advance the edge node: the 1.5.0 pod crash-loops; --wait stops and says why.
    let journal = sim.dir.path().join("journal.jsonl");
    let mut advance = Command::new(common::rollcall_bin());
    advance
        .args(["advance", "kube-system/node-agent", "--node", "edge-01"])
        .arg("--kubeconfig")
        .arg(sim.kubeconfig())
        .args(["--wait", "--yes", "--timeout", "40s", "--journal"])
        .arg(&journal)
        .arg("--log-file")
        .arg(sim.dir.path().join("rollcall.log"))
        .env_remove("KUBECONFIG");
    let advanced = Sim::output(advance).await;
    assert_eq!(advanced.status.code(), Some(1), "{}", text(&advanced));
    assert!(
        text(&advanced).contains(FAILURE),
        "advance --wait prints the container's failure: {}",
        text(&advanced)
    );

    let crashing = sim.agent_on("edge-01").expect("replacement on edge-01");
    let name = crashing.name().to_owned();
    let previous = sim
        .kubectl(&["logs", "--previous", "-n", "kube-system", &name])
        .await;
    assert!(previous.status.success(), "{}", text(&previous));
    assert!(
        text(&previous).contains(&format!("level=error msg=\"{FAILURE}\"")),
        "{}",
        text(&previous)
    );
    // The current container logs the failure too while it waits in
    // CrashLoopBackOff (between two runs it has only started: retry).
    let mut current = String::new();
    for _ in 0..50 {
        let logs = sim
            .kubectl(&[
                "logs",
                "-n",
                "kube-system",
                &name,
                "--tail=2",
                "--timestamps",
            ])
            .await;
        current = text(&logs);
        if logs.status.success() && current.contains(FAILURE) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(current.contains(FAILURE), "{current}");
    assert_eq!(current.lines().count(), 2, "--tail=2: {current}");
    assert!(
        current.lines().all(|l| l.starts_with("20")),
        "--timestamps: {current}"
    );
    sim.cluster.shutdown().await;
}
