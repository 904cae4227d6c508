//! End to end: `rollcall audit` (the real binary) against the embedded
//! cluster, changed under it with the real kubectl; and the console's
//! `--roster` flag rejecting a bad roster before it takes the terminal.
//!
//! Every child process is waited with a deadline (and killed past it), and the
//! cluster and its runtime are shut down with bounded waits, panics included.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rollcall::sim::embedded::{EmbeddedCluster, EmbeddedOptions, start};
use serde_json::Value;

const DS: &str = "kube-system/node-agent";
/// Longest any one child process may run.
const PROCESS_DEADLINE: Duration = Duration::from_secs(20);
/// Longest the cluster may take to reach a state the test waits for.
const STATE_DEADLINE: Duration = Duration::from_secs(20);

/// The embedded cluster on its own runtime; dropping it shuts both down with
/// bounded waits, so a failing assertion cannot leave the test hanging.
struct Sim {
    runtime: Option<tokio::runtime::Runtime>,
    cluster: Option<EmbeddedCluster>,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Sim {
    /// Starts the `small` scenario (general-01..03, edge-01..02; node-agent
    /// ready on revision 1 everywhere) with kubelets four times faster.
    fn small() -> Sim {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let options = EmbeddedOptions {
            scenario: Some("small".to_owned()),
            speed: 4.0,
            ..EmbeddedOptions::default()
        };
        let cluster = runtime
            .block_on(start(options))
            .expect("embedded cluster starts");
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = dir.path().join("kubeconfig");
        cluster
            .server
            .write_kubeconfig(&kubeconfig)
            .expect("kubeconfig written");
        Sim {
            runtime: Some(runtime),
            cluster: Some(cluster),
            dir,
            kubeconfig,
        }
    }

    fn rollcall(&self, args: &[&str]) -> Output {
        let mut command = Command::new(common::rollcall_bin());
        command
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env("XDG_STATE_HOME", self.dir.path());
        run(command)
    }

    /// kubectl with its own cache dir and HOME; panics when it fails.
    fn kubectl(&self, args: &[&str], cache: &str) {
        let mut command = Command::new("kubectl");
        command
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join(cache))
            .env("HOME", self.dir.path());
        let output = run(command);
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            text(&output)
        );
    }

    /// Runs the audit until `done(exit code, report)` holds; returns the last report.
    fn audit_until(&self, roster: &Path, what: &str, done: impl Fn(i32, &Value) -> bool) -> Value {
        let deadline = Instant::now() + STATE_DEADLINE;
        let roster = roster.to_str().expect("utf-8 path");
        loop {
            let output =
                self.rollcall(&["audit", "--daemonset", DS, "--roster", roster, "-o", "json"]);
            let code = output.status.code().unwrap_or(-1);
            let report: Value = serde_json::from_slice(&output.stdout)
                .unwrap_or_else(|_| panic!("audit prints json (exit {code}): {}", text(&output)));
            if done(code, &report) {
                return report;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; last audit exit {code}: {report:#}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let (Some(runtime), Some(cluster)) = (self.runtime.take(), self.cluster.take()) else {
            return;
        };
        let stopped = runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(5), cluster.shutdown()).await
        });
        if stopped.is_err() {
            eprintln!("embedded cluster did not stop within 5 s; abandoning it");
        }
        runtime.shutdown_timeout(Duration::from_secs(2));
    }
}

/// Runs a child with its output captured; kills it past [`PROCESS_DEADLINE`].
fn run(mut command: Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("process starts");
    // Read the pipes on their own threads so a chatty child cannot block on a full pipe.
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let deadline = Instant::now() + PROCESS_DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("process wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} still running after {PROCESS_DEADLINE:?}; killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

fn read_all(pipe: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buffer = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buffer);
        }
        buffer
    })
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn list(report: &Value, name: &str) -> Vec<String> {
    report["issues"][name]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn audit_sees_a_node_lose_its_pod_to_an_untolerated_noexecute_taint() {
    if !common::tool_available("kubectl") {
        return;
    }
    let sim = Sim::small();
    let roster = sim.dir.path().join("roster.json");
    let roster_arg = roster.to_str().expect("utf-8 path");

    // A first roster from every node of the two pools (never the DaemonSet's selector).
    let written = sim.rollcall(&[
        "audit",
        "--write-roster",
        roster_arg,
        "--nodes-selector",
        "node-pool in (general,edge)",
    ]);
    assert!(written.status.success(), "{}", text(&written));
    let names: Value =
        serde_json::from_str(&std::fs::read_to_string(&roster).expect("roster written"))
            .expect("roster is json");
    let mut names: Vec<&String> = names.as_object().expect("roster object").keys().collect();
    names.sort();
    let expected = [
        "edge-01",
        "edge-02",
        "general-01",
        "general-02",
        "general-03",
    ];
    assert_eq!(names, expected);

    // Healthy: one ready node-agent pod on every roster node, exit 0.
    let healthy = sim.audit_until(&roster, "a clean audit", |code, _| code == 0);
    assert_eq!(
        (healthy["ok"].as_bool(), healthy["problems"].as_u64()),
        (Some(true), Some(0))
    );

    // node-agent tolerates no such taint: the controller must take its pod away
    // (upstream daemon controller: a NoExecute taint the pod does not tolerate
    // means "should not continue running").
    sim.kubectl(
        &["taint", "node", "general-02", "audit-test=evict:NoExecute"],
        "kubectl-taint",
    );
    let broken = sim.audit_until(&roster, "general-02 missing and not eligible", |code, r| {
        code == 1 && r["explanations"]["general-02"]["cause"] == "not_eligible"
    });
    assert_eq!(list(&broken, "missing_ready"), ["general-02"], "{broken:#}");
    assert_eq!(broken["ok"].as_bool(), Some(false));
    let explanation = &broken["explanations"]["general-02"];
    let message = explanation["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("audit-test=evict:NoExecute"),
        "the engine's reason names the taint: {explanation:#}"
    );
    let reasons = explanation["reasons"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        reasons
            .iter()
            .any(|r| r["code"] == "UntoleratedTaint" && r["evicts"] == true),
        "the engine's reason is an evicting untolerated taint: {explanation:#}"
    );
    for other in [
        "node_identity_mismatch",
        "node_not_ready",
        "unexpected_owned_nodes",
    ] {
        assert!(list(&broken, other).is_empty(), "{other}: {broken:#}");
    }
}

#[test]
fn console_rejects_a_bad_roster_with_exit_2_before_taking_the_terminal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let not_an_object = dir.path().join("list.json");
    std::fs::write(&not_an_object, "[\"node-a\"]").expect("write");
    let missing = dir.path().join("missing.json");
    for roster in [&not_an_object, &missing] {
        let mut command = Command::new(common::rollcall_bin());
        command
            .arg("--roster")
            .arg(roster)
            .arg("--kubeconfig")
            .arg(dir.path().join("no-kubeconfig"))
            .env("XDG_STATE_HOME", dir.path());
        let output = run(command);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        let name = roster
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert!(stderr.contains(name), "the error names the file: {stderr}");
        assert!(output.stdout.is_empty(), "nothing drawn: {}", text(&output));
    }
}
