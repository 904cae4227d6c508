//! End to end: the operations' safety promises an on-call engineer relies on —
//! a typo'd canary deletes nothing, an interrupt leaves the rollout paused and
//! says so (exit 130), failing updated pods stop new work, a rollback that
//! cannot move a cordoned node ends incomplete — with the real binary and the
//! real kubectl as the independent observer.

mod common;
mod ops_support;

use std::path::Path;
use std::time::Duration;

use ops_support::{NEW_IMAGE, OLD_IMAGE, default_scenario, placements, pods_in, small, text};

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

/// Starts `rollcall auto` on `ds` over the small scenario's general pool (30 s
/// soak, so the run is always still going when the signal comes), with its
/// own journal.
fn spawn_auto(env: &ops_support::Env, ds: &str, journal: &Path) -> std::process::Child {
    let target = format!("kube-system/{ds}");
    spawn_rollcall(
        env,
        journal,
        &[
            "auto",
            &target,
            "--canary",
            "node-pool=general",
            "--batch",
            "1",
            "--soak",
            "30s",
            "--timeout",
            "60s",
            "--yes",
        ],
    )
}

/// Starts `rollcall ARGS` on `env`'s cluster with its own journal, output piped.
fn spawn_rollcall(env: &ops_support::Env, journal: &Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(common::rollcall_bin())
        .args(args)
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .arg("--journal")
        .arg(journal)
        .env("XDG_STATE_HOME", env.dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rollcall starts")
}

/// Copies of node-agent (own selector, OnDelete, revision 2 waiting), so
/// several runs can be interrupted side by side: applied at revision 1, Ready
/// everywhere, then moved to 2. Their revision 2 is healthy on every node, so
/// each copy takes five interrupted runs that delete before it is done (the
/// original's crash-loops on the edge pool and ends its series sooner).
async fn node_agent_copies(env: &ops_support::Env, names: &[&str]) {
    let manifest = |name: &str, image: &str| {
        serde_json::json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "updateStrategy": {"type": "OnDelete"},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "node-agent", "image": image}]}}}})
    };
    let healthy = format!("{OLD_IMAGE}-next");
    for image in [OLD_IMAGE, healthy.as_str()] {
        let file = env.dir.path().join(format!("copies-{}.json", image.len()));
        let list = serde_json::json!({
            "apiVersion": "v1", "kind": "List",
            "items": names.iter().map(|n| manifest(n, image)).collect::<Vec<_>>()});
        std::fs::write(&file, list.to_string()).expect("manifest written");
        env.kubectl(&[
            "apply",
            "--validate=false",
            "-f",
            file.to_str().expect("utf-8 path"),
        ])
        .await;
        if image == OLD_IMAGE {
            for name in names {
                env.wait_pods(name, "a Ready copy on every node", |pods| {
                    pods.len() == 5 && ops_support::all_ready(pods)
                })
                .await;
            }
        }
    }
}

/// One interrupted run: which DaemonSet, when the signal came, what it said.
struct Point {
    name: &'static str,
    delay_ms: u64,
    output: std::process::Output,
    /// The run still ignored SIGINT when it was sent: it was started with
    /// SIGINT ignored (as a shell starts a background job's commands) and
    /// its handler was not installed yet, so the signal never reached it.
    sigint_ignored: bool,
}

/// Whether process `pid` ignores SIGINT now (its `SigIgn` mask).
fn ignores_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

/// How many of the DaemonSet's pods still run the old image.
fn old_left(pods: &[serde_json::Value]) -> usize {
    placements(pods)
        .iter()
        .filter(|(_, image, _)| image == OLD_IMAGE)
        .count()
}

/// How an interrupted run ended.
enum Ended {
    /// Exit 130, paused "interrupted by".
    Interrupted,
    /// Refused before writing (an updated pod crash-loops), or nothing left
    /// to move: no more runs.
    Refused,
    /// Killed before its handler, or stopped by its own gate first.
    Other,
}

impl Point {
    /// Checks what the run left, as kubectl sees the DaemonSet `ds` and its
    /// `pods` and as its `journal` says: paused with "interrupted by" (exit
    /// 130) or nothing written, never a dangling mode, and one journal line
    /// per deleted pod.
    fn check(
        &self,
        ds: &serde_json::Value,
        pods: &[serde_json::Value],
        journal: &[serde_json::Value],
    ) -> Ended {
        let at = format!("{} at {} ms", self.name, self.delay_ms);
        let said = text(&self.output);
        let reason = annotation(ds, "rollcall.dev/pause-reason").unwrap_or_default();
        assert_eq!(
            annotation(ds, "rollcall.dev/mode"),
            None,
            "no dangling run: {at}: {ds}"
        );
        let ended = match self.output.status.code() {
            Some(130) => {
                assert!(said.contains("interrupted"), "{at}: {said}");
                assert!(reason.contains("interrupted by"), "{at}: {ds}");
                Ended::Interrupted
            }
            // Once an edge node crash-loops on the new revision, a new run is
            // refused before it writes anything: no more points to try.
            Some(1) if said.contains("refused") => Ended::Refused,
            // The run reached the crash-looping edge pool first: its own pause.
            Some(1) => {
                assert!(reason.contains("edge-"), "{at}: {said}");
                Ended::Other
            }
            // The signal was ignored by the process, not lost by rollcall
            // (see `sigint_ignored`): the run went on to its own end.
            Some(0) if self.sigint_ignored => Ended::Other,
            // An earlier run that ignored its signal moved every node: this
            // one had nothing to do and ended before the signal came.
            Some(0) if said.contains("completed: 0 node(s)") && old_left(pods) == 0 => {
                Ended::Refused
            }
            // Killed by the signal before the handler was installed (still
            // connecting): nothing was written.
            None => {
                assert!(
                    journal.iter().all(|l| l["action"] != "auto-start"),
                    "{at}: {journal:?}"
                );
                Ended::Other
            }
            other => panic!("{at}: exit {other:?}: {said}"),
        };
        let deletes = journal.iter().filter(|l| l["pod"].is_string()).count();
        // A deleted pod's replacement may not exist yet: count the nodes whose
        // old pod is gone rather than the new pods.
        let still_old = old_left(pods);
        assert_eq!(
            deletes,
            5 - still_old,
            "{at}: one journal line per delete: {journal:?}"
        );
        ended
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_at_any_point_of_auto_pauses_with_interrupted_and_exits_130() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    // Four DaemonSets, one run each per round, interrupted side by side at
    // 20 points from "still connecting" to "mid-soak" (later rounds later,
    // as the rollouts progress); each rollout is resumed between rounds, so
    // each run starts where its last one stopped.
    let targets = ["node-agent", "agent-b", "agent-c", "agent-d"];
    node_agent_copies(&env, &targets[1..]).await;
    let delays_ms: [[u64; 4]; 5] = [
        [15, 60, 120, 200],
        [280, 360, 450, 550],
        [650, 760, 880, 1_000],
        [1_150, 1_300, 1_450, 1_600],
        [1_800, 2_000, 2_250, 2_500],
    ];
    let journal = |name: &str| env.dir.path().join(format!("journal-{name}.jsonl"));
    let mut done = [false; 4];
    let mut interrupted = 0;
    for round in delays_ms {
        let started = tokio::time::Instant::now();
        let mut children: Vec<_> = (0..targets.len())
            .filter(|i| !done[*i])
            .map(|i| {
                (
                    i,
                    round[i],
                    spawn_auto(&env, targets[i], &journal(targets[i])),
                )
            })
            .collect();
        children.sort_by_key(|(_, delay, _)| *delay);
        let mut ignored = [false; 4];
        for (i, delay, child) in &children {
            tokio::time::sleep_until(started + Duration::from_millis(*delay)).await;
            ignored[*i] = ignores_sigint(child.id());
            interrupt(child);
        }
        let outputs = futures::future::join_all(children.into_iter().map(|(i, delay, child)| {
            tokio::task::spawn_blocking(move || (i, delay, child.wait_with_output()))
        }))
        .await;
        // One look by kubectl at all of them.
        let daemonsets: serde_json::Value = serde_json::from_str(
            &env.kubectl(&["get", "ds", "-n", "kube-system", "-o", "json"])
                .await,
        )
        .expect("daemonset list json");
        let pods: serde_json::Value = serde_json::from_str(
            &env.kubectl(&["get", "pods", "-n", "kube-system", "-o", "json"])
                .await,
        )
        .expect("pod list json");
        let mut to_resume = Vec::new();
        for joined in outputs {
            let (i, delay, output) = joined.expect("joined");
            let point = Point {
                name: targets[i],
                delay_ms: delay,
                output: output.expect("waited"),
                sigint_ignored: ignored[i],
            };
            let ds = daemonsets["items"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|d| d["metadata"]["name"] == point.name)
                .expect("daemonset listed");
            let journal = ops_support::read_jsonl(&journal(point.name));
            match point.check(ds, &pods_in(&pods, point.name), &journal) {
                Ended::Interrupted => interrupted += 1,
                Ended::Refused => done[i] = true,
                Ended::Other => {}
            }
            if annotation(ds, "rollcall.dev/paused-by").is_some() {
                to_resume.push(format!("kube-system/{}", point.name));
            }
        }
        let resumed = futures::future::join_all(
            to_resume
                .iter()
                .map(|ds| async { env.rollcall(&["resume", ds.as_str(), "--yes"]).await }),
        )
        .await;
        for output in resumed {
            assert!(output.status.success(), "{}", text(&output));
        }
    }
    // Most points land in a run that has its handler installed (18 of 20 on
    // an idle 2-core machine; a loaded one kills more before the handler).
    assert!(interrupted >= 8, "only {interrupted} runs exited 130");
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

/// The default scenario with log-shipper (RollingUpdate, maxUnavailable=1)
/// set to a new image: its rollout cannot finish while general-06 is NotReady.
async fn log_shipper_on_a_new_image() -> ops_support::Env {
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
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_update_stuck_behind_a_not_ready_node_is_explained_by_name() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = log_shipper_on_a_new_image().await;
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

/// `rollback kube-system/log-shipper --wait --yes`, output piped, once its
/// wait has begun (its rollback and state are journalled).
async fn rollback_waiting(env: &ops_support::Env, journal: &Path) -> std::process::Child {
    let child = spawn_rollcall(
        env,
        journal,
        &[
            "rollback",
            "kube-system/log-shipper",
            "--wait",
            "--yes",
            "--timeout",
            "120s",
        ],
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !ops_support::read_jsonl(journal)
        .iter()
        .any(|line| line["action"] == "rollback-state")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "rollback never written"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    child
}

/// Sends SIGINT to `child`, as Ctrl-C does.
fn interrupt(child: &std::process::Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Ctrl-C also ends whatever reads a run's output (`rollcall … 2>&1 | tee
/// log`): the interrupt handler's own line then met a broken pipe, and
/// `eprintln!` panicked in the handler before it told the run to stop — no
/// Ctrl-C could end the run after that. Now it ends with 130 all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_that_also_ends_the_output_reader_still_ends_the_run() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = log_shipper_on_a_new_image().await;
    let journal = env.dir.path().join("rollback-wait.jsonl");
    let mut child = rollback_waiting(&env, &journal).await;
    // The reader is gone: every write from here on fails with a broken pipe.
    drop(child.stdout.take());
    drop(child.stderr.take());
    interrupt(&child);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run did not end on Ctrl-C with its output reader gone");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status.code(), Some(130));
}

/// `rollback --wait` on a RollingUpdate that cannot finish (NotReady
/// general-06 holds the maxUnavailable slot): Ctrl-C during the wait exits
/// 130 and says what stands — the rollback written, the controller going on —
/// where it used to die silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_while_a_rollback_waits_says_the_rollback_stands_and_exits_130() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = log_shipper_on_a_new_image().await;
    let journal = env.dir.path().join("rollback-wait.jsonl");
    let child = rollback_waiting(&env, &journal).await;
    interrupt(&child);
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("joined")
        .expect("waited");
    let said = text(&output);
    assert_eq!(output.status.code(), Some(130), "{said}");
    assert!(said.contains("interrupted while waiting"), "{said}");
    // The revision the patch went to (its own line), named again at the end.
    let to = said
        .split("kube-system/log-shipper rolled back to revision ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no rollback line: {said}"));
    assert!(
        said.contains(&format!(
            "kube-system/log-shipper is rolled back to revision {to} (written and journalled)"
        )),
        "{said}"
    );
    assert!(
        said.contains("rollcall status kube-system/log-shipper"),
        "{said}"
    );
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

/// Fourteen nodes, general-06 NotReady, and four DaemonSets that have
/// nothing to roll out (one revision, every pod on it): flannel- and
/// Calico-like (RollingUpdate, maxUnavailable=1), aws-node-like
/// (maxUnavailable=10%, a budget of 2 here) and an OnDelete agent.
const SETTLED_WITH_A_NOT_READY_NODE: &str = r#"
name: settled-not-ready
seed: 3
timing: {schedule: 50ms, pullStart: 50ms, pull: 100ms, create: 50ms, start: 50ms, ready: 100ms, terminate: 200ms, jitter: 0.1}
pools:
  - {name: general, count: 14, zones: [zone-a, zone-b]}
nodes:
  - {name: general-06, notReady: true}
daemonSets:
  - name: kube-flannel-ds
    updateStrategy: RollingUpdate
    maxUnavailable: 1
    tolerations: [{operator: Exists}]
    revisions: [{image: "docker.io/flannel/flannel:v0.26.1"}]
  - name: calico-node
    updateStrategy: RollingUpdate
    maxUnavailable: 1
    tolerations: [{operator: Exists}]
    revisions: [{image: "docker.io/calico/node:v3.29.1"}]
  - name: aws-node
    updateStrategy: RollingUpdate
    maxUnavailable: "10%"
    tolerations: [{operator: Exists}]
    revisions: [{image: "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.19.0"}]
  - name: node-agent
    updateStrategy: OnDelete
    tolerations: [{operator: Exists}]
    revisions: [{image: "registry.example.com/platform/node-agent:1.4.2"}]
"#;

/// Issue 30 item 3: a DaemonSet with no node on an old revision is idle,
/// whatever its strategy and budget; the NotReady node is named as a
/// problem, not made the rollout's state (`stuck` for maxUnavailable=1,
/// `rolling` for 10%, `waiting` for OnDelete, before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_out_daemonset_with_a_not_ready_node_is_idle() {
    let env = ops_support::scenario_text(SETTLED_WITH_A_NOT_READY_NODE).await;
    for name in ["kube-flannel-ds", "calico-node", "aws-node", "node-agent"] {
        let ds = format!("kube-system/{name}");
        // Evidence first: every eligible node counted on the current revision.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let report = loop {
            let output = env.rollcall(&["status", &ds, "-o", "json"]).await;
            let report: serde_json::Value =
                serde_json::from_slice(&output.stdout).unwrap_or_default();
            let totals = &report["totals"];
            if totals["desired"] == 14 && totals["updated"] == 14 {
                break report;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{ds}: never fully rolled out: {}",
                text(&output)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(report["state"], "idle", "{ds}: {report}");
        assert_eq!(report["blocker"]["code"], "nothingToDo", "{ds}: {report}");
        let message = report["blocker"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("general-06 (node NotReady)"),
            "{ds}: {message}"
        );
        assert_eq!(report["blocker"]["nodes"][0]["node"], "general-06", "{ds}");
        let table = env.rollcall(&["status", &ds]).await;
        let said = text(&table);
        assert!(table.status.success(), "{ds}: {said}");
        let state = said
            .lines()
            .find(|l| l.starts_with("state "))
            .unwrap_or_default();
        assert_eq!(state, "state idle", "{ds}: {said}");
        assert!(
            said.lines().any(|l| l.starts_with("why   nothing to do")
                && l.contains("general-06 (node NotReady)")),
            "{ds}: {said}"
        );
    }
    env.cluster.shutdown().await;
}
