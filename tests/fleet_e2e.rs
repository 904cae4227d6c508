//! `rollcall fleet status` end to end: the real binary serves an embedded
//! fleet (`rollcall sim --clusters N`), the real kubectl reaches each member
//! by its context, and the fleet report agrees with `rollcall --context C
//! status` cluster by cluster; a drifted member is flagged with the field;
//! a stalled member and a dead one are `unreachable` within the request
//! timeout while the others are `live`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::sim::{SimProcess, spawn_sim};
use serde_json::Value;

const DS: &str = "kube-system/node-agent";

/// A fleet served by `rollcall sim --clusters`, its kubeconfig in a temporary directory.
struct Fleet {
    _sim: SimProcess,
    dir: tempfile::TempDir,
}

impl Fleet {
    fn start(extra: &[&str]) -> Fleet {
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = dir.path().join("kubeconfig");
        let mut args = vec![
            "sim",
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

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    /// `rollcall ARGS` with `KUBECONFIG` set to `kubeconfigs` (merged as kubectl does).
    fn rollcall(&self, kubeconfigs: &[&Path], args: &[&str]) -> Output {
        let joined = std::env::join_paths(kubeconfigs).expect("paths join");
        std::process::Command::new(common::rollcall_bin())
            .args(args)
            .env("KUBECONFIG", joined)
            .env("HOME", self.dir.path())
            .output()
            .expect("rollcall runs")
    }

    fn json(&self, kubeconfigs: &[&Path], args: &[&str]) -> (Value, Option<i32>) {
        let output = self.rollcall(kubeconfigs, args);
        let text = String::from_utf8_lossy(&output.stdout);
        let value = serde_json::from_str(&text).unwrap_or_else(|err| {
            panic!(
                "rollcall {args:?}: {err}: {text}{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        (value, output.status.code())
    }

    /// `rollcall fleet status DS ARGS -o json` on the fleet's kubeconfig.
    fn fleet_json(&self, args: &[&str]) -> (Value, Option<i32>) {
        let mut all = vec!["fleet", "status", DS];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        self.json(&[&self.kubeconfig()], &all)
    }

    /// `rollcall --context CONTEXT status DS -o json`, without `nodes`.
    fn status(&self, context: &str) -> Value {
        let kubeconfig = self.kubeconfig();
        let (mut status, code) = self.json(
            &[&kubeconfig],
            &["--context", context, "status", DS, "-o", "json"],
        );
        assert_eq!(code, Some(0), "{status}");
        status.as_object_mut().expect("an object").remove("nodes");
        status
    }
}

#[test]
fn a_fleet_status_agrees_with_each_cluster_and_flags_the_drifted_one() {
    if !common::tool_available("kubectl") {
        return;
    }
    let fleet = Fleet::start(&["--clusters", "3", "--speed", "4"]);
    let images = member_images(&fleet);
    assert_eq!(images[0], images[1]);
    assert_ne!(images[0], images[2], "member 3's template drifted");
    each_cluster_agrees(&fleet, &images);
    drift_is_flagged(&fleet, &images);
    the_reference_can_be_named(&fleet);
    where_answers_across_the_fleet(&fleet);
    // A context the kubeconfig does not have is a usage error.
    let output = fleet.rollcall(
        &[&fleet.kubeconfig()],
        &["fleet", "status", DS, "--contexts", "rollcall-sim-9"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("rollcall-sim-9"));
}

/// The node-agent image of each member, as the real kubectl reads it by context.
fn member_images(fleet: &Fleet) -> Vec<String> {
    let cache = tempfile::tempdir().expect("cache dir");
    (1..=3)
        .map(|k| {
            common::kubectl(
                &fleet.kubeconfig(),
                cache.path(),
                &[
                    "--context",
                    &format!("rollcall-sim-{k}"),
                    "get",
                    "ds",
                    "-n",
                    "kube-system",
                    "node-agent",
                    "-o",
                    "jsonpath={.spec.template.spec.containers[0].image}",
                ],
            )
        })
        .collect()
}

fn fleet_status(fleet: &Fleet) -> Value {
    let (report, code) = fleet.fleet_json(&["--all-contexts"]);
    assert_eq!(code, Some(1), "drift is a problem: {report}");
    report
}

/// Each cluster's entry is its own `status`: read before and after the
/// fleet's, and compared when the cluster stood still in between (its
/// kubelets may still be starting pods).
fn each_cluster_agrees(fleet: &Fleet, images: &[String]) {
    for (index, context) in ["rollcall-sim-1", "rollcall-sim-2", "rollcall-sim-3"]
        .into_iter()
        .enumerate()
    {
        let mut agreed = false;
        for _ in 0..20 {
            let before = fleet.status(context);
            let report = fleet_status(fleet);
            let after = fleet.status(context);
            if before != after {
                std::thread::sleep(Duration::from_millis(300));
                continue;
            }
            let entry = &report["clusters"][index];
            assert_eq!(entry["context"], context);
            assert_eq!(entry["connection"], "live");
            assert_eq!(entry["message"], "");
            assert_eq!(
                entry["status"], before,
                "{context}: the fleet's status is `rollcall status`'s"
            );
            assert_eq!(entry["template"]["images"][0], images[index].as_str());
            agreed = true;
            break;
        }
        assert!(agreed, "{context} never stood still long enough to compare");
    }
}

fn drift_is_flagged(fleet: &Fleet, images: &[String]) {
    let report = fleet_status(fleet);
    let clusters = report["clusters"].as_array().expect("clusters");
    assert_eq!(clusters.len(), 3);
    let digest = |i: usize| {
        clusters[i]["template"]["digest"]
            .as_str()
            .expect("a digest")
            .to_owned()
    };
    assert_eq!(
        digest(0),
        digest(1),
        "the same template is one identity in two clusters"
    );
    assert_ne!(digest(0), digest(2));
    assert_eq!(report["totals"]["reference"], digest(0).as_str());
    assert_eq!(report["totals"]["drifted"], 1);
    assert_eq!(clusters[0]["drift"], serde_json::json!([]));
    let drift = &clusters[2]["drift"];
    assert_eq!(drift[0]["field"], "image", "{drift}");
    assert_eq!(
        drift[0]["message"],
        format!("node-agent: {} vs {}", images[2], images[0]).as_str()
    );
    assert!(
        clusters[0]["status"].get("nodes").is_none(),
        "nodes only with --all"
    );
}

/// With --reference, the drifted member is the reference and the other drifts.
fn the_reference_can_be_named(fleet: &Fleet) {
    let (report, _) = fleet.fleet_json(&[
        "--contexts",
        "rollcall-sim-3,rollcall-sim-1",
        "--reference",
        "rollcall-sim-3",
        "--all",
    ]);
    assert_eq!(report["clusters"][0]["context"], "rollcall-sim-3");
    assert_eq!(report["clusters"][0]["drift"], serde_json::json!([]));
    assert_eq!(report["clusters"][1]["drift"][0]["field"], "image");
    assert!(
        report["clusters"][1]["status"]["nodes"]
            .as_array()
            .is_some_and(|n| !n.is_empty())
    );
}

/// `--where digest!=D` with member 2's digest (every pod there runs it):
/// members 1 and 3 still run the old template everywhere, member 2 never appears.
fn where_answers_across_the_fleet(fleet: &Fleet) {
    let report = fleet_status(fleet);
    let rolled = report["clusters"][1]["template"]["digest"]
        .as_str()
        .expect("a digest")
        .to_owned();
    let query = format!("digest!={}", &rolled[..6]);
    let (report, code) = fleet.fleet_json(&["--all-contexts", "--where", &query]);
    assert_eq!(code, Some(1), "nodes match: {report}");
    let answer = &report["where"];
    assert_eq!(answer["query"], query.as_str());
    let groups = answer["groups"].as_array().expect("groups");
    let mut contexts = std::collections::BTreeSet::new();
    let mut counted = 0;
    for group in groups {
        let reason = group["reason"].as_str().expect("a reason");
        assert!(
            reason.starts_with("runs ") || reason == "no pod",
            "{reason}"
        );
        assert!(!reason.contains(&rolled), "{reason}");
        for node in group["nodes"].as_array().expect("nodes") {
            contexts.insert(node["context"].as_str().expect("a context").to_owned());
            counted += 1;
        }
    }
    assert_eq!(answer["nodes"], counted);
    assert!(contexts.contains("rollcall-sim-1") && contexts.contains("rollcall-sim-3"));
    assert!(!contexts.contains("rollcall-sim-2"), "{contexts:?}");
    // A question rollcall does not know is a usage error.
    let output = fleet.rollcall(
        &[&fleet.kubeconfig()],
        &[
            "fleet",
            "status",
            DS,
            "--all-contexts",
            "--where",
            "healthy",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn stalled_and_dead_members_are_unreachable_within_the_timeout_and_the_others_live() {
    // Member 2 accepts connections and never answers.
    let fleet = Fleet::start(&[
        "--clusters",
        "2",
        "--scenario",
        "small",
        "--fault-cluster",
        "2",
        "--fault",
        "freeze=10m",
    ]);
    let kubeconfig = fleet.kubeconfig();
    // `dead` refuses connections; `noauth`'s exec plugin fails.
    let dead = fleet.dir.path().join("dead.yaml");
    std::fs::write(
        &dead,
        "apiVersion: v1\nkind: Config\n\
         clusters: [{name: dead, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: dead, user: {token: x}}, {name: noauth, user: {exec: \
         {apiVersion: client.authentication.k8s.io/v1, command: false, interactiveMode: Never}}}]\n\
         contexts: [{name: dead, context: {cluster: dead, user: dead}}, \
         {name: noauth, context: {cluster: dead, user: noauth}}]\n",
    )
    .expect("write the dead cluster's kubeconfig");
    let started = Instant::now();
    let (report, code) = fleet.json(
        &[&kubeconfig, &dead],
        &[
            "fleet",
            "status",
            DS,
            "--context-regex",
            "rollcall-sim-.*|dead|noauth",
            "--request-timeout",
            "2s",
            "-o",
            "json",
        ],
    );
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}");
    assert_eq!(code, Some(1));
    let words: Vec<(&str, &str)> = report["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .map(|c| {
            (
                c["context"].as_str().unwrap_or(""),
                c["connection"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        words,
        [
            ("rollcall-sim-1", "live"),
            ("rollcall-sim-2", "unreachable"),
            ("dead", "unreachable"),
            ("noauth", "auth")
        ]
    );
    let message = |i: usize| {
        report["clusters"][i]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert!(
        message(1).contains("did not answer within 2s"),
        "{}",
        message(1)
    );
    assert!(
        message(2).to_lowercase().contains("refused"),
        "{}",
        message(2)
    );
    assert_eq!(report["totals"]["connections"]["live"], 1);
    assert_eq!(report["totals"]["connections"]["unreachable"], 2);
    assert_eq!(report["totals"]["connections"]["auth"], 1);
    assert!(
        message(3).contains("exec credential plugin"),
        "{}",
        message(3)
    );

    // A DaemonSet absent from a cluster is `notFound` there, not an error.
    let (report, code) = fleet.json(
        &[&kubeconfig],
        &[
            "fleet",
            "status",
            "kube-system/nope",
            "--contexts",
            "rollcall-sim-1",
            "-o",
            "json",
        ],
    );
    assert_eq!(code, Some(1));
    assert_eq!(report["clusters"][0]["connection"], "notFound");
}

/// `fleet preflight`: member 4's newest revision crash-loops everywhere, so
/// its pods already on it block a rollout there; member 1 is clear.
#[test]
fn preflight_blocks_where_pods_already_fail_on_the_new_revision() {
    let fleet = Fleet::start(&["--clusters", "4", "--speed", "4"]);
    let kubeconfig = fleet.kubeconfig();
    let args = ["fleet", "preflight", DS, "--all-contexts", "-o", "json"];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (report, code) = fleet.json(&[&kubeconfig], &args);
        let findings = |i: usize| {
            report["clusters"][i]["findings"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        let blocks = |i: usize| -> Vec<String> {
            findings(i)
                .iter()
                .filter(|f| f["severity"] == "blocks")
                .map(|f| f["message"].as_str().unwrap_or("").to_owned())
                .collect()
        };
        let failing = blocks(3)
            .iter()
            .any(|m| m.starts_with("failing on the new revision"));
        if failing || Instant::now() > deadline {
            assert!(failing, "member 4 is not blocked: {report}");
            assert_eq!(code, Some(1));
            assert!(blocks(0).is_empty(), "{report}");
            assert!(
                findings(0).iter().any(|f| f["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("server v"))),
                "{report}"
            );
            assert_eq!(report["clusters"][3]["connection"], "live");
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A context name is text from a file: the table prints it without its
/// escape sequences, and an unreachable cluster alone is still a report (exit 1).
#[test]
fn hostile_context_names_reach_the_terminal_sanitised() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\n\
         clusters: [{name: dead, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: dead, user: {token: x}}]\n\
         contexts: [{name: \"evil\\e]0;pwned\\a\\e[31m\", context: {cluster: dead, user: dead}}]\n",
    )
    .expect("write the kubeconfig");
    let output = std::process::Command::new(common::rollcall_bin())
        .args(["--kubeconfig", kubeconfig.to_str().expect("utf-8 path")])
        .args([
            "fleet",
            "status",
            DS,
            "--all-contexts",
            "--request-timeout",
            "2s",
        ])
        .env("HOME", dir.path())
        .output()
        .expect("rollcall runs");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("evil"), "{stdout}");
    assert!(stdout.contains("unreachable"), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
}

#[test]
fn bare_fleet_prints_its_subcommands_and_exits_2() {
    let output = std::process::Command::new(common::rollcall_bin())
        .arg("fleet")
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run rollcall");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains("Usage:"), "{said}");
    for subcommand in ["status", "preflight", "plan", "auto", "rollback"] {
        assert!(said.contains(subcommand), "{subcommand}: {said}");
    }
    assert!(
        !said.contains("required arguments were not provided"),
        "{said}"
    );
}
