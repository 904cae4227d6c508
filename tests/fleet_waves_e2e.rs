//! `rollcall fleet plan|auto` end to end: the real binary rolls a DaemonSet
//! across an embedded fleet (`rollcall sim --clusters N`) in waves, and the
//! real kubectl checks each member: a two-wave plan completes with wave 2
//! started only after wave 1's bake; a crash-looping member of wave 1 stops
//! the fleet before wave 2, naming its node and reason, with every touched
//! member paused; Ctrl-C mid-wave leaves every touched member paused and a
//! second run finishes without deleting any node's pod twice; `fleet
//! rollback` moves every node back, the waves in reverse (with
//! `--include-cordoned`, cordoned nodes too); one node class failing in two
//! clusters stops the fleet, naming the class.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::sim::{SimProcess, spawn_sim};
use serde_json::Value;

/// A fleet served by `rollcall sim --clusters`, with its kubeconfig, plan and journal.
struct Fleet {
    _sim: SimProcess,
    dir: tempfile::TempDir,
}

impl Fleet {
    /// `count` members on the small scenario, or on it without its
    /// crash-looping rule (`healthy`).
    fn start(count: usize, healthy: bool) -> Fleet {
        let dir = tempfile::tempdir().expect("temp dir");
        let scenario = if healthy {
            let path = dir.path().join("healthy.yaml");
            std::fs::write(&path, healthy_scenario()).expect("scenario written");
            path.to_str().expect("utf-8 path").to_owned()
        } else {
            "small".to_owned()
        };
        let kubeconfig = dir.path().join("kubeconfig");
        let count = count.to_string();
        let (child, _banner) = spawn_sim(&[
            "sim",
            "--clusters",
            &count,
            "--scenario",
            &scenario,
            "--kubeconfig-out",
            kubeconfig.to_str().expect("utf-8 path"),
        ]);
        Fleet {
            _sim: SimProcess(child),
            dir,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn plan(&self, text: &str) -> PathBuf {
        let path = self.path("fleet.yaml");
        std::fs::write(&path, text).expect("plan written");
        path
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(common::rollcall_bin());
        command
            .args(args)
            .arg("--journal")
            .arg(self.path("journal.jsonl"))
            .env("KUBECONFIG", self.path("kubeconfig"))
            .env("HOME", self.dir.path());
        command
    }

    fn rollcall(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("rollcall runs")
    }

    /// The member's DaemonSet as kubectl reads it.
    fn daemonset(&self, member: usize) -> Value {
        let cache = self.path("kubectl-cache");
        let context = format!("rollcall-sim-{member}");
        let text = common::kubectl(
            &self.path("kubeconfig"),
            &cache,
            &[
                "--context",
                &context,
                "-n",
                "kube-system",
                "get",
                "daemonset",
                "node-agent",
                "-o",
                "json",
            ],
        );
        serde_json::from_str(&text).expect("kubectl prints JSON")
    }

    /// The journal's pod deletes: `(context, node, time)`.
    fn deletes(&self) -> Vec<(String, String, String)> {
        let text = std::fs::read_to_string(self.path("journal.jsonl")).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|entry| entry["pod"].is_string() && entry["result"] == "ok")
            .map(|entry| {
                let field = |key: &str| entry[key].as_str().unwrap_or_default().to_owned();
                (field("context"), field("node"), field("time"))
            })
            .collect()
    }

    /// The journal's lines of `action` for `context`, their times.
    fn journal_times(&self, context: &str, action: &str) -> Vec<jiff::Timestamp> {
        let text = std::fs::read_to_string(self.path("journal.jsonl")).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|entry| entry["context"] == context && entry["action"] == action)
            .filter_map(|entry| entry["time"].as_str()?.parse().ok())
            .collect()
    }
}

/// The small scenario without its crash-looping rule: every node can move.
fn healthy_scenario() -> String {
    let small = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/small.yaml"),
    )
    .expect("small scenario");
    let rules = small.find("images:").expect("the scenario has image rules");
    format!(
        "{}images:\n  - image: registry.example.com/platform/node-agent:9.9.9\n    failure: ImagePullBackOff\n",
        &small[..rules]
    )
}

/// Every node that should run the pod runs the current template.
fn all_updated(ds: &Value) -> bool {
    let status = &ds["status"];
    status["desiredNumberScheduled"].as_i64().is_some()
        && status["updatedNumberScheduled"] == status["desiredNumberScheduled"]
}

fn paused_reason(ds: &Value) -> Option<String> {
    ds["metadata"]["annotations"]["rollcall.dev/pause-reason"]
        .as_str()
        .map(str::to_owned)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Each node's pod deleted at most once per cluster.
fn each_node_once(deletes: &[(String, String, String)]) {
    let mut seen = BTreeSet::new();
    for (context, node, _) in deletes {
        assert!(
            seen.insert((context.clone(), node.clone())),
            "{context} {node} deleted twice: {deletes:?}"
        );
    }
}

#[test]
fn a_plan_that_leaves_a_context_out_or_names_a_missing_canary_is_refused() {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start(2, true);
    let cases = [
        (
            "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: one\n    clusters: [rollcall-sim-1]\n",
            "rollcall-sim-2 match clusters",
        ),
        (
            "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: one\n    clusters: [\"rollcall-sim-*\"]\n    canary: node-pool=gpu\n",
            "node-pool=gpu",
        ),
        (
            "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: one\n    clusters: [\"rollcall-sim-*\"]\n    bake: 1s\n    soakk: 1s\n",
            "soakk",
        ),
    ];
    for (plan, words) in cases {
        let path = fleet.plan(plan);
        let file = path.to_str().unwrap();
        let commands: [&[&str]; 2] = [
            &["fleet", "plan", "-f", file],
            &["fleet", "auto", "-f", file, "--yes"],
        ];
        for command in commands {
            let output = fleet.rollcall(command);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{command:?}: {}",
                text(&output)
            );
            assert!(
                text(&output).contains(words),
                "{command:?}: {}",
                text(&output)
            );
        }
    }
    assert!(fleet.deletes().is_empty(), "nothing was written");
    // A dry run shows each cluster's first batch; its every line says `would`.
    let path = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: one\n    clusters: [\"rollcall-sim-*\"]\n",
    );
    let output = fleet.rollcall(&["fleet", "auto", "-f", path.to_str().unwrap(), "--dry-run"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let said = text(&output);
    assert!(said.contains("would delete pod"), "{said}");
    for line in said.lines() {
        assert!(line.contains("would"), "{line}");
    }
    assert!(fleet.deletes().is_empty(), "a dry run deletes nothing");
    // A good plan lists every node of every cluster, in order.
    let path = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: one\n    clusters: [rollcall-sim-1]\n    canary: node-pool=edge\n  - name: two\n    clusters: [\"rollcall-sim-*\"]\n",
    );
    let output = fleet.rollcall(&["fleet", "plan", "-f", path.to_str().unwrap(), "-o", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let plan: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(plan["waves"][0]["clusters"][0]["context"], "rollcall-sim-1");
    assert_eq!(
        plan["waves"][0]["clusters"][0]["nodes"][0], "edge-01",
        "canaries first"
    );
    assert_eq!(plan["waves"][1]["clusters"][0]["context"], "rollcall-sim-2");
    assert_eq!(plan["total"], 10);
}

#[test]
fn a_two_wave_plan_completes_and_wave_two_waits_for_the_bake() {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start(3, true);
    let plan = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nbudget: {nodes: 1}\nwaves:\n  - name: first\n    clusters: [rollcall-sim-1]\n    batch: 2\n    soak: 1s\n    timeout: 30s\n    bake: 2s\n  - name: rest\n    clusters: [\"rollcall-sim-*\"]\n    batch: 2\n    soak: 1s\n    timeout: 30s\n    parallel: 2\n",
    );
    let output = fleet.rollcall(&[
        "fleet",
        "auto",
        "-f",
        plan.to_str().unwrap(),
        "--yes",
        "-o",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON lines"))
        .collect();
    assert!(
        lines
            .iter()
            .filter(|l| l["event"] == "delete")
            .all(|l| l["context"]
                .as_str()
                .is_some_and(|c| c.starts_with("rollcall-sim-"))),
        "every delete line names its context"
    );
    for member in 1..=3 {
        let ds = fleet.daemonset(member);
        assert!(all_updated(&ds), "member {member}: {}", ds["status"]);
        assert_eq!(paused_reason(&ds), None);
        // The run's identity lives on each member: plan digest and wave.
        let identity = ds["metadata"]["annotations"]["rollcall.dev/fleet-run"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let wave = if member == 1 { "first" } else { "rest" };
        assert!(
            identity.starts_with("plan ") && identity.ends_with(&format!("wave {wave}")),
            "member {member}: {identity:?}"
        );
    }
    let deletes = fleet.deletes();
    assert_eq!(deletes.len(), 15, "{deletes:?}");
    each_node_once(&deletes);
    // Wave 2's first delete comes after wave 1's end plus its bake.
    let first_done = fleet.journal_times("rollcall-sim-1", "auto-done");
    let wave_one_done = *first_done.first().expect("wave 1 ended");
    let wave_two_start = deletes
        .iter()
        .filter(|(context, _, _)| context != "rollcall-sim-1")
        .filter_map(|(_, _, time)| time.parse::<jiff::Timestamp>().ok())
        .min()
        .expect("wave 2 deleted");
    assert!(
        wave_two_start >= wave_one_done + jiff::SignedDuration::from_secs(2),
        "wave 2 started at {wave_two_start}, wave 1 ended at {wave_one_done}"
    );
    rolls_back_in_reverse(&fleet, &plan);
}

/// `fleet rollback` walks the waves in reverse: every node moves back once,
/// wave 1's cluster last.
fn rolls_back_in_reverse(fleet: &Fleet, plan: &Path) {
    let forward = fleet.deletes().len();
    let output = fleet.rollcall(&[
        "fleet",
        "rollback",
        "-f",
        plan.to_str().expect("utf-8 path"),
        "--yes",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let back: Vec<_> = fleet.deletes().split_off(forward);
    assert_eq!(back.len(), 15, "{back:?}");
    each_node_once(&back);
    let last_cluster: Vec<&str> = back
        .iter()
        .rev()
        .take(5)
        .map(|(c, _, _)| c.as_str())
        .collect();
    assert_eq!(
        last_cluster, ["rollcall-sim-1"; 5],
        "wave 1 goes back last: {back:?}"
    );
    for member in 1..=3 {
        let ds = fleet.daemonset(member);
        assert!(all_updated(&ds), "member {member}: {}", ds["status"]);
        let image = ds["spec"]["template"]["spec"]["containers"][0]["image"].as_str();
        assert_eq!(
            image,
            Some("registry.example.com/platform/node-agent:1.4.2")
        );
    }
}

#[test]
fn a_crash_looping_member_stops_the_fleet_before_the_next_wave() {
    if !common::tool_available("kubectl") {
        return;
    }
    // The small scenario's new revision crash-loops on the edge pool.
    let fleet = Fleet::start(3, false);
    let plan = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: first\n    clusters: [rollcall-sim-1, rollcall-sim-2]\n    canary: node-pool=edge\n    soak: 1s\n    timeout: 30s\n    parallel: 2\n  - name: rest\n    clusters: [rollcall-sim-3]\n    soak: 1s\n",
    );
    let output = fleet.rollcall(&["fleet", "auto", "-f", plan.to_str().unwrap(), "--yes"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let said = text(&output);
    let end = said.lines().last().unwrap_or_default();
    assert!(end.starts_with("stopped: rollcall-sim-"), "{end}");
    assert!(
        end.contains("node edge-0") && end.contains("CrashLoopBackOff"),
        "{end}"
    );
    assert!(end.contains("not reached: rollcall-sim-3"), "{end}");
    // Every touched member is paused: the failing one by its gate, the other by the fleet.
    for member in 1..=2 {
        let reason = paused_reason(&fleet.daemonset(member));
        assert!(reason.is_some(), "member {member} is not paused");
    }
    assert_eq!(paused_reason(&fleet.daemonset(3)), None);
    let deletes = fleet.deletes();
    assert_eq!(
        deletes.len(),
        1,
        "the budget of 0 lets one node be at risk: {deletes:?}"
    );
    assert!(
        deletes
            .iter()
            .all(|(context, _, _)| context != "rollcall-sim-3")
    );
}

#[test]
fn ctrl_c_mid_wave_pauses_every_touched_member_and_a_rerun_finishes() {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start(2, true);
    let plan = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nbudget: {nodes: 1}\nwaves:\n  - name: all\n    clusters: [\"rollcall-sim-*\"]\n    soak: 2s\n    timeout: 30s\n    parallel: 2\n",
    );
    let path = plan.to_str().unwrap();
    let mut child = fleet
        .command(&["fleet", "auto", "-f", path, "--yes", "-o", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rollcall runs");
    let stdout = child.stdout.take().expect("stdout");
    let mut deletes_seen = 0;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("a line");
        if line.contains("\"event\":\"delete\"") {
            deletes_seen += 1;
            if deletes_seen == 1 {
                // Mid-run, `status` on the member names the fleet run that drives it.
                let event: Value = serde_json::from_str(&line).expect("a JSON step");
                let context = event["context"].as_str().expect("the step's context");
                let ds = "kube-system/node-agent";
                let output = fleet.rollcall(&["--context", context, "status", ds]);
                let state = text(&output);
                let state = state
                    .lines()
                    .find(|l| l.starts_with("state "))
                    .unwrap_or("");
                assert!(
                    state.starts_with("state auto") && state.contains("fleet run plan "),
                    "{}",
                    text(&output)
                );
            }
            if deletes_seen == 2 {
                let pid = child.id().to_string();
                let sent = Command::new("kill").args(["-INT", &pid]).status();
                assert!(sent.is_ok_and(|s| s.success()), "SIGINT sent");
            }
        }
    }
    let status = child.wait().expect("rollcall ends");
    assert_eq!(status.code(), Some(130));
    for member in 1..=2 {
        let reason = paused_reason(&fleet.daemonset(member)).unwrap_or_default();
        assert!(
            reason.starts_with("fleet run "),
            "member {member}: {reason:?}"
        );
    }
    let before = fleet.deletes().len();
    assert!(
        (2..10).contains(&before),
        "{before} deletes before the rerun"
    );
    let output = fleet.rollcall(&["fleet", "auto", "-f", path, "--yes"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let deletes = fleet.deletes();
    assert_eq!(deletes.len(), 10, "{deletes:?}");
    each_node_once(&deletes);
    for member in 1..=2 {
        let ds = fleet.daemonset(member);
        assert!(all_updated(&ds), "member {member}: {}", ds["status"]);
        assert_eq!(paused_reason(&ds), None);
    }
}

/// A budget that never has room (another cluster holds it all).
struct Full;

impl rollcall::ops::shared_budget::SharedBudget for Full {
    fn try_reserve(&self, _nodes: usize) -> bool {
        false
    }

    fn settled(&self) {}

    fn unreserve(&self, _nodes: usize) {}
}

/// The hooks a fleet run gives `ops::drive`: a batch without room in the
/// shared budget sends no delete while it waits, and a halt ends the run
/// paused with the halt's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_waits_for_room_in_the_shared_budget_and_a_halt_pauses_it() {
    use rollcall::ops::auto::AutoPolicy;
    use rollcall::ops::drive::{Progress, RunContext, run as execute};
    use rollcall::ops::follow::Follower;
    use rollcall::ops::interrupt::Interrupt;
    use rollcall::ops::journal::Journal;
    use rollcall::ops::run::settings::RunSettings;
    use rollcall::ops::run::{Run, RunEnd};
    use rollcall::ops::write::Executor;

    if !common::tool_available("kubectl") {
        return;
    }
    let sim = common::sim::InProcess::start("small", 4.0).await;
    let mut config = sim.cluster.server.kube_config();
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("client");
    let journal = sim.dir.path().join("journal.jsonl");
    let executor = Executor::new(
        client.clone(),
        Journal::new(journal.clone()),
        false,
        "rollcall-sim-1".into(),
        "test".into(),
    );
    let target = rollcall::model::Target {
        namespace: "kube-system".into(),
        name: "node-agent".into(),
    };
    let follower = Follower::start(client, &target);
    let settings = RunSettings::auto(AutoPolicy {
        batch: 2,
        soak: std::time::Duration::from_secs(1),
        timeout: std::time::Duration::from_secs(30),
    });
    let (run, started) = {
        let snapshot = follower.snapshot().await.expect("snapshot");
        Run::start(&snapshot, settings, "test", jiff::Timestamp::now()).expect("starts")
    };
    let interrupt = Interrupt::never();
    let said = std::sync::Mutex::new(Vec::<String>::new());
    let progress = |step: Progress| said.lock().expect("said").push(step.message);
    let ctx = RunContext {
        executor: &executor,
        follower: &follower,
        interrupt: &interrupt,
        progress: &progress,
        budget: Some(&Full),
    };
    let halt = async {
        // Halted once the batch is seen waiting for room.
        while !said
            .lock()
            .expect("said")
            .iter()
            .any(|m| m.contains("shared budget"))
        {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        interrupt.halt("fleet run test: stopped: rollcall-sim-2: node n1: CrashLoopBackOff".into());
    };
    let (end, ()) = tokio::join!(execute(&ctx, run, started), halt);
    let reason = "fleet run test: stopped: rollcall-sim-2: node n1: CrashLoopBackOff";
    assert_eq!(
        end.expect("ends"),
        RunEnd::Halted {
            reason: reason.into()
        }
    );
    let journal = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        !journal.contains("\"pod\""),
        "no delete was sent: {journal}"
    );
    let ds = sim
        .kubectl_stdout(&["-n", "kube-system", "get", "ds", "node-agent", "-o", "json"])
        .await;
    let ds: Value = serde_json::from_str(&ds).expect("JSON");
    assert_eq!(paused_reason(&ds).as_deref(), Some(reason));
    sim.cluster.shutdown().await;
}

/// A vetoed member is skipped with its reason, and an unreachable one with
/// `--unreachable skip`; the others roll; the run ends incomplete (exit 1)
/// naming both.
#[test]
fn a_veto_and_an_unreachable_member_are_skipped_by_name() {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start(2, true);
    common::kubectl(
        &fleet.path("kubeconfig"),
        &fleet.path("kubectl-cache"),
        &[
            "--context",
            "rollcall-sim-2",
            "-n",
            "kube-system",
            "annotate",
            "daemonset",
            "node-agent",
            "rollcall.dev/fleet-veto=change freeze until Monday",
        ],
    );
    // A member that refuses connections, in a second kubeconfig file.
    let dead = fleet.path("dead.yaml");
    std::fs::write(
        &dead,
        "apiVersion: v1\nkind: Config\n\
         clusters: [{name: dead, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: dead, user: {token: x}}]\n\
         contexts: [{name: rollcall-sim-dead, context: {cluster: dead, user: dead}}]\n",
    )
    .expect("kubeconfig written");
    let plan = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: all\n    clusters: [\"rollcall-sim-*\"]\n    soak: 1s\n    timeout: 30s\n    parallel: 3\n",
    );
    let joined = std::env::join_paths([fleet.path("kubeconfig"), dead]).expect("paths join");
    let output = fleet
        .command(&[
            "fleet",
            "auto",
            "-f",
            plan.to_str().expect("utf-8 path"),
            "--yes",
            "--unreachable",
            "skip",
            "--request-timeout",
            "2s",
        ])
        .env("KUBECONFIG", joined)
        .output()
        .expect("rollcall runs");
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let said = text(&output);
    let end = said.lines().last().unwrap_or_default();
    assert!(end.starts_with("incomplete: 5 node(s) moved"), "{end}");
    assert!(
        end.contains(
            "rollcall-sim-2 (skipped: vetoed (rollcall.dev/fleet-veto): change freeze until Monday)"
        ),
        "{end}"
    );
    assert!(
        end.contains("rollcall-sim-dead (skipped: unreachable"),
        "{end}"
    );
    assert!(all_updated(&fleet.daemonset(1)));
    let deletes = fleet.deletes();
    assert!(
        deletes
            .iter()
            .all(|(context, _, _)| context == "rollcall-sim-1"),
        "{deletes:?}"
    );
}

#[test]
fn one_node_class_failing_in_two_clusters_stops_the_fleet_naming_the_class() {
    if !common::tool_available("kubectl") {
        return;
    }
    // The small scenario's new revision crash-loops on the edge pool (arm64,
    // t4g.large), in every member alike; the budget alone would let the
    // wave pass with both failures.
    let fleet = Fleet::start(3, false);
    let plan = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nbudget: {nodes: 3, clusters: 3}\nwaves:\n  - name: first\n    clusters: [rollcall-sim-1, rollcall-sim-2]\n    canary: node-pool=edge\n    soak: 1s\n    timeout: 30s\n    parallel: 2\n  - name: rest\n    clusters: [rollcall-sim-3]\n    soak: 1s\n",
    );
    let output = fleet.rollcall(&["fleet", "auto", "-f", plan.to_str().unwrap(), "--yes"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let said = text(&output);
    let end = said.lines().last().unwrap_or_default();
    assert!(end.starts_with("stopped: node class ["), "{end}");
    assert!(
        end.contains("arch arm64") && end.contains("instance type t4g.large"),
        "{end}"
    );
    assert!(
        end.contains("rollcall-sim-1 node edge-") && end.contains("rollcall-sim-2 node edge-"),
        "{end}"
    );
    assert!(end.contains("not reached: rollcall-sim-3"), "{end}");
    assert!(
        fleet
            .deletes()
            .iter()
            .all(|(context, _, _)| context != "rollcall-sim-3")
    );
}

#[test]
fn a_fleet_rollback_with_include_cordoned_moves_cordoned_nodes_back_too() {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start(1, true);
    let plan = fleet.plan(
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nwaves:\n  - name: all\n    clusters: [\"rollcall-sim-*\"]\n    batch: 2\n    soak: 1s\n    timeout: 30s\n",
    );
    let path = plan.to_str().unwrap();
    let output = fleet.rollcall(&["fleet", "auto", "-f", path, "--yes"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let forward = fleet.deletes().len();
    common::kubectl(
        &fleet.path("kubeconfig"),
        &fleet.path("kubectl-cache"),
        &["--context", "rollcall-sim-1", "cordon", "general-01"],
    );
    // Without --include-cordoned the cordoned node would be left, the rollback incomplete (exit 1).
    let output = fleet.rollcall(&[
        "fleet",
        "rollback",
        "-f",
        path,
        "--yes",
        "--include-cordoned",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let back = fleet.deletes().split_off(forward);
    assert_eq!(back.len(), 5, "{back:?}");
    assert!(
        back.iter().any(|(_, node, _)| node == "general-01"),
        "the cordoned node moved back: {back:?}"
    );
    let ds = fleet.daemonset(1);
    assert!(all_updated(&ds), "{}", ds["status"]);
}
