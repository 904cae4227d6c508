//! A fleet member misbehaving while the fleet is read and rolled out: the
//! real binary serves a 3-cluster embedded fleet (`rollcall sim --clusters
//! 3`, the small scenario without its crash loop) with member 2 faulted
//! (`--fault-cluster 2 --fault …`: 429, 503, 410 Gone on watches, stalled
//! watches, dropped watches); `fleet status -o json` reads the others live
//! and says a word for member 2; a one-wave `fleet auto` plan over the fleet
//! deletes each node's pod at most once (the journal, and kubectl: one
//! daemon pod per node after), finishes the healthy members, and leaves
//! no member in auto with nobody driving it (done, or paused with a reason).
//! The same run while member 2 restarts with new state mid-wave (`--fault
//! restart`: connections refused, held versions 410, one node's pods
//! replaced) ends done or stopped naming member 2; with every member's
//! exec credential expiring mid-wave (`--exec-auth --exec-token-ttl 2s`) it
//! completes on fresh tokens. With the small scenario's crash loop and
//! member 2 answering 503 and 429 in turns, a budget of 1 failed node is
//! spent exactly: 2 failing nodes started, none started after them.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::sim::{SimProcess, spawn_sim};
use serde_json::Value;

const DS: &str = "kube-system/node-agent";

/// A faulted fleet: its sim, its kubeconfig, journal and plan.
struct Fleet {
    _sim: SimProcess,
    dir: tempfile::TempDir,
}

impl Fleet {
    /// Three healthy members, member 2 under `fault`.
    fn start(fault: &str) -> Fleet {
        Fleet::start_with(
            &healthy_scenario(),
            &["--fault-cluster", "2", "--fault", fault],
        )
    }

    /// Three members on the scenario `scenario` (YAML), with `extra` flags.
    fn start_with(scenario: &str, extra: &[&str]) -> Fleet {
        let dir = tempfile::tempdir().expect("temp dir");
        let scenario_path = dir.path().join("scenario.yaml");
        std::fs::write(&scenario_path, scenario).expect("scenario written");
        let kubeconfig = dir.path().join("kubeconfig");
        let mut args = vec![
            "sim",
            "--clusters",
            "3",
            "--scenario",
            scenario_path.to_str().expect("utf-8 path"),
            "--speed",
            "8",
            "--kubeconfig-out",
            kubeconfig.to_str().expect("utf-8 path"),
        ];
        args.extend_from_slice(extra);
        let (child, _banner) = spawn_sim(&args);
        Fleet {
            _sim: SimProcess(child),
            dir,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn rollcall(&self, args: &[&str]) -> Output {
        Command::new(common::rollcall_bin())
            .args(args)
            .arg("--journal")
            .arg(self.path("journal.jsonl"))
            .env("KUBECONFIG", self.path("kubeconfig"))
            .env("HOME", self.dir.path())
            .output()
            .expect("rollcall runs")
    }

    fn kubectl_json(&self, member: usize, args: &[&str]) -> Value {
        let context = format!("rollcall-sim-{member}");
        let mut all = vec!["--context", &context, "-n", "kube-system"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let text = common::kubectl(&self.path("kubeconfig"), &self.path("kubectl-cache"), &all);
        serde_json::from_str(&text).expect("kubectl prints JSON")
    }

    /// Every journal line.
    fn journal(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.path("journal.jsonl")).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .collect()
    }

    /// The journal's pod deletes that went through: `(context, node)`.
    fn deletes(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(self.path("journal.jsonl")).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|entry| entry["pod"].is_string() && entry["result"] == "ok")
            .map(|entry| {
                let field = |key: &str| entry[key].as_str().unwrap_or_default().to_owned();
                (field("context"), field("node"))
            })
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

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `fleet status -o json`: members 1 and 3 live, member 2 a known word.
fn status_reads_the_others_live(fleet: &Fleet) {
    let output = fleet.rollcall(&[
        "fleet",
        "status",
        DS,
        "--all-contexts",
        "-o",
        "json",
        "--request-timeout",
        "5s",
    ]);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        text(&output)
    );
    let report: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output)));
    let connection = |member: usize| {
        report["clusters"]
            .as_array()
            .and_then(|clusters| {
                clusters
                    .iter()
                    .find(|c| c["context"] == format!("rollcall-sim-{member}"))
            })
            .and_then(|c| c["connection"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(connection(1), "live", "{report}");
    assert_eq!(connection(3), "live", "{report}");
    assert!(
        ["live", "stale", "unreachable"].contains(&connection(2).as_str()),
        "{report}"
    );
}

/// The one-wave plan of these tests: every member, 5 nodes a batch (the
/// budget cuts it to 2), 1 s of soak.
const ONE_WAVE: &str = "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nbudget: {nodes: 1}\nwaves:\n  - name: all\n    clusters: [\"rollcall-sim-*\"]\n    batch: 5\n    soak: 1s\n    timeout: 15s\n    parallel: 3\n";

/// `fleet auto --yes` over `plan`.
fn run_auto(fleet: &Fleet, plan: &str) -> Output {
    let path = fleet.path("fleet.yaml");
    std::fs::write(&path, plan).expect("plan written");
    fleet.rollcall(&[
        "fleet",
        "auto",
        "-f",
        path.to_str().expect("utf-8 path"),
        "--yes",
        "--request-timeout",
        "5s",
    ])
}

/// A one-wave plan over the fleet, then what kubectl and the journal say.
fn auto_deletes_each_node_once_and_leaves_nobody_in_auto(fleet: &Fleet) {
    let output = run_auto(fleet, ONE_WAVE);
    each_node_once_and_nobody_in_auto(fleet, &output);
}

/// After a run that ended `output`: each node's pod deleted at most once
/// (journal), one daemon pod per node (kubectl), the healthy members done,
/// member 2 done or paused, nobody left in auto.
fn each_node_once_and_nobody_in_auto(fleet: &Fleet, output: &Output) {
    let said = text(output);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{said}");
    let deletes = fleet.deletes();
    let mut seen = BTreeSet::new();
    for delete in &deletes {
        assert!(seen.insert(delete.clone()), "deleted twice: {deletes:?}");
    }
    for member in 1..=3 {
        // One kubectl call: the DaemonSet and every pod of the namespace.
        let listed = fleet.kubectl_json(member, &["get", "daemonsets,pods"]);
        let items = listed["items"].as_array().cloned().unwrap_or_default();
        let ds = items
            .iter()
            .find(|item| item["kind"] == "DaemonSet" && item["metadata"]["name"] == "node-agent")
            .cloned()
            .unwrap_or_else(|| panic!("member {member}: no node-agent: {listed}"));
        let annotations = &ds["metadata"]["annotations"];
        let status = &ds["status"];
        let done = status["updatedNumberScheduled"] == status["desiredNumberScheduled"];
        let paused = annotations["rollcall.dev/pause-reason"].is_string()
            || annotations["rollcall.dev/paused-by"].is_string();
        assert!(
            done || paused,
            "member {member} neither done nor paused: {annotations} {status}\n{said}"
        );
        assert!(
            annotations["rollcall.dev/mode"] != "auto" || paused,
            "member {member} left in auto: {annotations}\n{said}"
        );
        if member != 2 {
            assert!(done, "healthy member {member}: {status}\n{said}");
        }
        // One daemon pod per node: no node lost two pods to the run.
        let mut per_node: BTreeMap<String, usize> = BTreeMap::new();
        for pod in items.iter().filter(|item| item["kind"] == "Pod") {
            let owned = pod["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|owners| owners.iter().any(|o| o["name"] == "node-agent"));
            if owned && pod["metadata"]["deletionTimestamp"].is_null() {
                let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
                *per_node.entry(node.to_owned()).or_default() += 1;
            }
        }
        assert!(
            per_node.values().all(|&count| count == 1),
            "member {member}: {per_node:?}"
        );
        let moved = deletes
            .iter()
            .filter(|(context, _)| context == &format!("rollcall-sim-{member}"))
            .count();
        assert!(moved <= per_node.len(), "member {member}: {deletes:?}");
    }
}

fn under(fault: &str) {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start(fault);
    status_reads_the_others_live(&fleet);
    auto_deletes_each_node_once_and_leaves_nobody_in_auto(&fleet);
}

#[test]
fn a_member_answering_429() {
    under("throttle:1=0s+2s");
}

#[test]
fn a_member_answering_503() {
    under("5xx:503=0s+2s");
}

#[test]
fn a_member_whose_watches_get_410_gone() {
    under("gone=0s+3s");
}

#[test]
fn a_member_whose_watches_stall() {
    under("stall-watches=1s+3s");
}

#[test]
fn a_member_dropping_its_watches() {
    under("drop-watches=1s+3s");
}

/// The last line of a run: what it ended with.
fn last_line(output: &Output) -> String {
    text(output).lines().last().unwrap_or_default().to_owned()
}

#[test]
fn a_member_restarting_with_new_state_mid_wave() {
    if !common::tool_available("kubectl") {
        return;
    }
    // Member 2's API server goes down 2 s after the start and is back 2 s
    // later, its watch cache new and one node's daemon pods replaced
    // meanwhile (`sim::embedded::restart`); the run (~5 s) spans it.
    let fleet = Fleet::start("restart=2s+2s");
    // The version a list answered before (kubectl's `get -o json` prints a
    // client-side List without one: the raw list has it).
    let raw = |path: &str| {
        common::kubectl(
            &fleet.path("kubeconfig"),
            &fleet.path("kubectl-cache"),
            &["--context", "rollcall-sim-2", "get", "--raw", path],
        )
    };
    let before: Value =
        serde_json::from_str(&raw("/api/v1/namespaces/kube-system/pods")).expect("a list");
    let held = before["metadata"]["resourceVersion"]
        .as_str()
        .expect("a list's resourceVersion")
        .to_owned();
    let output = run_auto(&fleet, ONE_WAVE);
    each_node_once_and_nobody_in_auto(&fleet, &output);
    // A truthful end: done, or stopped naming the restarted member.
    let end = last_line(&output);
    match output.status.code() {
        Some(0) => {}
        _ => assert!(end.contains("rollcall-sim-2"), "{end}"),
    }
    // The restart happened: a watch from a version held before it is 410.
    let watch = raw(&format!(
        "/api/v1/namespaces/kube-system/pods?watch=1&resourceVersion={held}&timeoutSeconds=1"
    ));
    assert!(watch.contains("\"code\":410"), "{watch}");
}

#[test]
fn exec_credentials_expiring_mid_wave_are_refreshed() {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start_with(
        &healthy_scenario(),
        &["--exec-auth", "--exec-token-ttl", "2s"],
    );
    // Every member's user runs the plugin through a wrapper that keeps
    // each credential it hands out.
    let issued = fleet.path("issued.jsonl");
    let wrapper = fleet.path("credential.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nout=$('{}' \"$@\") || exit $?\nprintf '%s\\n' \"$3 $out\" >> '{}'\nprintf '%s\\n' \"$out\"\n",
            common::rollcall_bin().display(),
            issued.display()
        ),
    )
    .expect("wrapper written");
    make_executable(&wrapper);
    let kubeconfig = std::fs::read_to_string(fleet.path("kubeconfig")).expect("kubeconfig");
    assert_eq!(kubeconfig.matches("exec:").count(), 3, "{kubeconfig}");
    let rewritten: Vec<String> = kubeconfig
        .lines()
        .map(|line| match line.split_once("command: ") {
            Some((indent, _)) => format!("{indent}command: \"{}\"", wrapper.display()),
            None => line.to_owned(),
        })
        .collect();
    std::fs::write(fleet.path("kubeconfig"), rewritten.join("\n") + "\n").expect("kubeconfig");

    let output = run_auto(&fleet, ONE_WAVE);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    // Per member (its signing key): the tokens it was handed, by expiry.
    let mut expiries: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in std::fs::read_to_string(&issued).unwrap_or_default().lines() {
        let (key, credential) = line.split_once(' ').unwrap_or_default();
        let credential: Value = serde_json::from_str(credential).unwrap_or_default();
        if let Some(expiry) = credential["status"]["expirationTimestamp"].as_str() {
            expiries
                .entry(key.to_owned())
                .or_default()
                .insert(expiry.to_owned());
        }
    }
    assert_eq!(expiries.len(), 3, "{expiries:?}");
    for tokens in expiries.values() {
        // A token handed out after an earlier one had expired (2 s TTL).
        let first: jiff::Timestamp = tokens
            .first()
            .and_then(|t| t.parse().ok())
            .expect("a token");
        let last: jiff::Timestamp = tokens.last().and_then(|t| t.parse().ok()).expect("a token");
        assert!(
            last.duration_since(first) > jiff::SignedDuration::from_secs(2),
            "no token outlived: {tokens:?}"
        );
    }
    each_node_once_and_nobody_in_auto(&fleet, &output);
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn the_budget_is_exact_while_a_member_answers_503_and_429() {
    if !common::tool_available("kubectl") {
        return;
    }
    // The small scenario as written: its new revision crash-loops on the
    // edge pool (two nodes of every member); member 2 answers 503 and 429
    // in turns for 8 s. Budget 1 node: the second failed node stops the run
    // (the budget, or the node class failing in two clusters: both count
    // the same nodes), and once two failing nodes are started no node is
    // started anywhere (issue 36: with a budget of N, no (N+2)th).
    let small = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/small.yaml"),
    )
    .expect("small scenario");
    let bursts: Vec<String> = (0..8)
        .map(|second| {
            let fault = if second % 2 == 0 {
                "5xx:503"
            } else {
                "throttle:1"
            };
            format!("{fault}={second}s+600ms")
        })
        .collect();
    let faults_over = std::time::Instant::now() + std::time::Duration::from_secs(8);
    let fleet = Fleet::start_with(
        &small,
        &["--fault-cluster", "2", "--fault", &bursts.join(",")],
    );
    let output = run_auto(
        &fleet,
        "daemonset: kube-system/node-agent\nclusters: [\"rollcall-sim-*\"]\nbudget: {nodes: 1, clusters: 3}\nwaves:\n  - name: all\n    clusters: [\"rollcall-sim-*\"]\n    batch: 1\n    soak: 1s\n    timeout: 10s\n    parallel: 3\n",
    );
    let said = text(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let end = last_line(&output);
    assert!(end.starts_with("stopped: "), "{end}");
    let deletes = fleet.deletes();
    let mut seen = BTreeSet::new();
    for delete in &deletes {
        assert!(seen.insert(delete.clone()), "deleted twice: {deletes:?}");
    }
    let failing = the_budget_was_spent_exactly(&fleet.journal(), 1, &said);
    // kubectl does not retry a 503: read member 2 once its bursts are over.
    std::thread::sleep(faults_over.saturating_duration_since(std::time::Instant::now()));
    // kubectl agrees: the failing nodes moved are the only edge nodes on
    // the new revision, and no member is left in auto.
    let mut on_new_revision = 0;
    for member in 1..=3 {
        let listed = fleet.kubectl_json(member, &["get", "daemonsets,pods"]);
        for item in listed["items"].as_array().into_iter().flatten() {
            if item["kind"] == "DaemonSet" && item["metadata"]["name"] == "node-agent" {
                let annotations = &item["metadata"]["annotations"];
                assert!(
                    annotations["rollcall.dev/mode"] != "auto"
                        || annotations["rollcall.dev/pause-reason"].is_string(),
                    "member {member} left in auto: {annotations}\n{said}"
                );
            }
            let node = item["spec"]["nodeName"].as_str().unwrap_or_default();
            let image = item["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap_or_default();
            if node.starts_with("edge-") && image.ends_with("node-agent:1.5.0") {
                on_new_revision += 1;
            }
        }
    }
    assert_eq!(on_new_revision, failing, "{deletes:?}");
}

/// The journal's deletes against a budget of `budget` failed nodes, where
/// every edge node moved fails: exactly `budget + 1` of them were started
/// (the budget spent, not exceeded), and no delete anywhere came after the
/// last of them — from then on every node the budget allows is at risk.
/// Returns how many failing nodes were started.
fn the_budget_was_spent_exactly(journal: &[Value], budget: usize, said: &str) -> usize {
    let mut deletes: Vec<(jiff::Timestamp, String, String)> = journal
        .iter()
        .filter(|entry| entry["pod"].is_string() && entry["result"] == "ok")
        .map(|entry| {
            let field = |key: &str| entry[key].as_str().unwrap_or_default().to_owned();
            let time = field("time").parse().expect("an RFC 3339 time");
            (time, field("context"), field("node"))
        })
        .collect();
    deletes.sort();
    let failing: Vec<_> = deletes
        .iter()
        .filter(|(_, _, node)| node.starts_with("edge-"))
        .collect();
    assert_eq!(failing.len(), budget + 1, "{deletes:?}\n{said}");
    let spent = failing[budget].0;
    assert!(
        deletes.iter().all(|(time, _, _)| *time <= spent),
        "a node started after the budget was spent: {deletes:?}"
    );
    failing.len()
}
