//! End-to-end runs of `rollcall audit` on snapshot fixtures shaped like real
//! `kubectl get ... -o json|yaml` output (tests/fixtures/audit/): exit codes,
//! the JSON shape, the table, roster rejections and `--write-roster`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const DS: &str = "kube-system/node-agent";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audit")
        .join(name)
}

fn rollcall(args: &[&str]) -> Output {
    Command::new(common::rollcall_bin())
        .args(args)
        .env("NO_COLOR", "1")
        // Keep any developer kubeconfig out of snapshot runs.
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .expect("run rollcall")
}

fn audit_incident(extra: &[&str]) -> Output {
    let roster = fixture("incident-roster.json");
    let nodes = fixture("incident-nodes-ds.json");
    let pods = fixture("incident-pods.yaml");
    let mut args = vec![
        "audit",
        "--daemonset",
        DS,
        "--roster",
        roster.to_str().expect("utf-8 path"),
        "-f",
        nodes.to_str().expect("utf-8 path"),
        "-f",
        pods.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    rollcall(&args)
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn incident_snapshot_reports_every_list_and_exits_1() {
    let output = audit_incident(&["-o", "json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = stdout_json(&output);
    assert_eq!(
        report["issues"],
        json!({
            "node_identity_mismatch": ["ip-10-0-1-13", "ip-10-0-4-41"],
            "node_not_ready": ["ip-10-0-2-22"],
            "missing_ready": ["ip-10-0-1-12", "ip-10-0-2-21", "ip-10-0-2-22", "ip-10-0-3-31", "ip-10-0-4-41"],
            "unexpected_owned_nodes": ["ip-10-0-9-99"],
            "multiple_pods": ["ip-10-0-1-11"],
            "unassigned": ["9a8b7c6d-0000-4000-8000-0000000000b0"],
            "unready_pods": [
                "9a8b7c6d-0000-4000-8000-000000000012",
                "9a8b7c6d-0000-4000-8000-000000000022",
                "9a8b7c6d-0000-4000-8000-0000000000a1",
                "9a8b7c6d-0000-4000-8000-0000000000b0"
            ]
        })
    );
    assert_eq!(report["ok"], json!(false));
    assert_eq!(report["problems"], json!(15));
    assert_eq!(
        report["daemonset"],
        json!({"namespace": "kube-system", "name": "node-agent", "uid": "6b1f3c2e-8d4a-4c9b-9f0e-2a7d5c1e4b90"})
    );
    assert_eq!(report["roster"].as_object().unwrap().len(), 7);
}

#[test]
fn explanations_come_from_the_engine_and_pod_state() {
    let report = stdout_json(&audit_incident(&["-o", "json"]));
    let explanations = report["explanations"].as_object().unwrap();
    let keys: Vec<&str> = explanations.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        report["issues"]["missing_ready"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect::<Vec<_>>()
    );
    let cause = |node: &str| explanations[node]["cause"].as_str().unwrap().to_owned();
    assert_eq!(cause("ip-10-0-4-41"), "node_absent");
    assert_eq!(cause("ip-10-0-2-21"), "not_eligible");
    assert_eq!(cause("ip-10-0-3-31"), "no_pod");
    assert_eq!(cause("ip-10-0-1-12"), "pod_not_ready");
    let gpu = &explanations["ip-10-0-2-21"];
    assert_eq!(gpu["reasons"][0]["code"], json!("UntoleratedTaint"));
    assert!(
        gpu["message"]
            .as_str()
            .unwrap()
            .contains("nvidia.com/gpu=present:NoSchedule"),
        "{gpu}"
    );
    let pull = explanations["ip-10-0-1-12"]["message"].as_str().unwrap();
    assert!(
        pull.contains("ImagePullBackOff") && pull.contains("Pending"),
        "{pull}"
    );
    // The pod left by an earlier DaemonSet of the same name is named, not counted.
    let orphan = explanations["ip-10-0-3-31"]["message"].as_str().unwrap();
    assert!(orphan.contains("node-agent-old-k3j8d"), "{orphan}");
}

#[test]
fn json_lists_owned_pods_only_with_their_fields() {
    let report = stdout_json(&audit_incident(&["-o", "json"]));
    let pods = report["pods"].as_array().unwrap();
    let names: Vec<&str> = pods.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"coredns-5d78c9869d-xk2lp"), "{names:?}");
    assert!(!names.contains(&"node-agent-old-k3j8d"), "{names:?}");
    assert_eq!(pods.len(), 7);
    let terminating = pods
        .iter()
        .find(|p| p["name"] == "node-agent-zz8rt")
        .unwrap();
    assert_eq!(terminating["terminating"], json!(true));
    assert_eq!(terminating["ready"], json!(false));
    assert_eq!(terminating["node"], json!("ip-10-0-1-11"));
    assert_eq!(terminating["phase"], json!("Running"));
    assert_eq!(terminating["revision_hash"], json!("5f6d8b7c9"));
    assert!(terminating["uid"].is_string());
}

#[test]
fn table_is_the_default_with_the_verdict_first() {
    let output = audit_incident(&[]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "15 problems for kube-system/node-agent (roster: 7 nodes, owned pods: 7)"
    );
    assert!(!text.contains('\x1b'), "no color when not a terminal");
    assert!(
        text.contains("Roster nodes without a ready pod (5):"),
        "{text}"
    );
    assert!(
        text.contains("  ip-10-0-2-21  not eligible because taint nvidia.com/gpu=present:NoSchedule not tolerated"),
        "{text}"
    );
}

#[test]
fn healthy_snapshot_exits_0() {
    let roster = fixture("healthy-roster.json");
    let snapshot = fixture("healthy.json");
    let args = [
        "audit",
        "--daemonset",
        DS,
        "--roster",
        roster.to_str().unwrap(),
        "-f",
        snapshot.to_str().unwrap(),
    ];
    let output = rollcall(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        text,
        "OK: kube-system/node-agent has a ready pod on every roster node (3 nodes) and none outside it\n"
    );
    let json_args = [&args[..], &["-o", "json"]].concat();
    let report = stdout_json(&rollcall(&json_args));
    assert_eq!(report["ok"], json!(true));
    assert!(report["explanations"].as_object().unwrap().is_empty());
    for (name, list) in report["issues"].as_object().unwrap() {
        assert_eq!(list, &json!([]), "{name}");
    }
}

#[test]
fn bad_roster_files_exit_2_naming_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = fixture("healthy.json");
    let cases = [
        ("array", r#"["ip-10-0-1-11"]"#, "must be a JSON object"),
        ("empty", "{}", "is empty"),
        (
            "empty-name",
            r#"{"": "u"}"#,
            "node name is the empty string",
        ),
        (
            "number-uid",
            r#"{"n": 7}"#,
            "UID must be a non-empty string, found a number",
        ),
        ("empty-uid", r#"{"n": ""}"#, "found an empty string"),
        (
            "duplicate",
            r#"{"n": "u1", "m": "u2", "n": "u1"}"#,
            r#"node "n" is listed more than once"#,
        ),
        ("broken", r#"{"n": "u1""#, "not valid JSON"),
    ];
    for (name, text, problem) in cases {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        let output = rollcall(&[
            "audit",
            "--daemonset",
            DS,
            "--roster",
            path.to_str().unwrap(),
            "-f",
            snapshot.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(2), "{name}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(path.to_str().unwrap()), "{name}: {stderr}");
        assert!(stderr.contains(problem), "{name}: {stderr}");
        assert!(output.stdout.is_empty(), "{name}: no report on error");
    }
    let missing = dir.path().join("missing.json");
    let output = rollcall(&[
        "audit",
        "--daemonset",
        DS,
        "--roster",
        missing.to_str().unwrap(),
        "-f",
        snapshot.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("missing.json"));
}

#[test]
fn other_errors_exit_2() {
    let roster = fixture("healthy-roster.json");
    let snapshot = fixture("healthy.json");
    let (roster, snapshot) = (roster.to_str().unwrap(), snapshot.to_str().unwrap());
    let unknown = rollcall(&[
        "audit",
        "--daemonset",
        "kube-system/nope",
        "--roster",
        roster,
        "-f",
        snapshot,
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("kube-system/nope") && stderr.contains("kube-system/node-agent"),
        "{stderr}"
    );
    let no_roster = rollcall(&["audit", "--daemonset", DS, "-f", snapshot]);
    assert_eq!(no_roster.status.code(), Some(2), "usage error");
    // The same snapshot twice holds identical copies: merged, not an error.
    let same = rollcall(&[
        "audit",
        "--daemonset",
        DS,
        "--roster",
        roster,
        "-f",
        snapshot,
        "-f",
        snapshot,
    ]);
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    // The same node in two states (snapshots taken at different times) mixes them.
    let dir = tempfile::tempdir().unwrap();
    let mut later: serde_json::Value =
        serde_json::from_slice(&std::fs::read(snapshot).unwrap()).unwrap();
    let items = later["items"].as_array_mut().unwrap();
    let node = items.iter_mut().find(|i| i["kind"] == "Node").unwrap();
    node["metadata"]["labels"]["changed"] = serde_json::json!("later");
    let later_path = dir.path().join("later.json");
    std::fs::write(&later_path, later.to_string()).unwrap();
    let twice = rollcall(&[
        "audit",
        "--daemonset",
        DS,
        "--roster",
        roster,
        "-f",
        snapshot,
        "-f",
        later_path.to_str().unwrap(),
    ]);
    assert_eq!(twice.status.code(), Some(2), "{twice:?}");
    assert!(String::from_utf8_lossy(&twice.stderr).contains("appears more than once"));
}

#[test]
fn duplicate_pod_uids_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut list: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("healthy.json")).unwrap()).unwrap();
    let items = list["items"].as_array_mut().unwrap();
    let mut copy = items
        .iter()
        .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == "node-agent-4xk9p")
        .unwrap()
        .clone();
    copy["metadata"]["name"] = json!("node-agent-copy");
    items.push(copy);
    let path = dir.path().join("dup.json");
    std::fs::write(&path, serde_json::to_string(&list).unwrap()).unwrap();
    let roster = fixture("healthy-roster.json");
    let output = rollcall(&[
        "audit",
        "--daemonset",
        DS,
        "--roster",
        roster.to_str().unwrap(),
        "-f",
        path.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("9a8b7c6d-0000-4000-8000-000000000011"),
        "{stderr}"
    );
}

#[test]
fn write_roster_from_a_node_selector() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("roster.json");
    let nodes = fixture("incident-nodes-ds.json");
    let args = [
        "audit",
        "--write-roster",
        out.to_str().unwrap(),
        "--nodes-selector",
        "pool in (general,gpu),topology.kubernetes.io/zone!=eu-west-1c",
        "-f",
        nodes.to_str().unwrap(),
    ];
    let output = rollcall(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "ip-10-0-1-11": "3f2a6c1e-1111-4a5b-9c8d-000000000011",
            "ip-10-0-1-12": "3f2a6c1e-1111-4a5b-9c8d-000000000012",
            "ip-10-0-2-21": "3f2a6c1e-1111-4a5b-9c8d-000000000021",
            "ip-10-0-2-22": "3f2a6c1e-1111-4a5b-9c8d-000000000022"
        })
    );
    let again = rollcall(&args);
    assert_eq!(again.status.code(), Some(2), "refuses to overwrite");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    let forced = rollcall(&[&args[..], &["--force"]].concat());
    assert_eq!(forced.status.code(), Some(0), "{forced:?}");

    // The written roster is immediately usable by the audit.
    let pods = fixture("incident-pods.yaml");
    let audit = rollcall(&[
        "audit",
        "--daemonset",
        DS,
        "--roster",
        out.to_str().unwrap(),
        "-f",
        nodes.to_str().unwrap(),
        "-f",
        pods.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(audit.status.code(), Some(1));
    assert_eq!(
        stdout_json(&audit)["issues"]["node_identity_mismatch"],
        json!([])
    );
}

#[test]
fn write_roster_rejects_a_selector_matching_nothing_or_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("roster.json");
    let nodes = fixture("incident-nodes-ds.json");
    for selector in ["pool=tpu", "pool in (", "=x"] {
        let output = rollcall(&[
            "audit",
            "--write-roster",
            out.to_str().unwrap(),
            "--nodes-selector",
            selector,
            "-f",
            nodes.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(2), "{selector}: {output:?}");
        assert!(!out.exists(), "{selector}: nothing written");
    }
}

#[test]
fn events_in_the_snapshot_add_the_latest_warning() {
    let events = fixture("incident-events.json");
    let with_events = stdout_json(&audit_incident(&[
        "-f",
        events.to_str().expect("utf-8 path"),
        "-o",
        "json",
    ]));
    let pull = &with_events["explanations"]["ip-10-0-1-12"];
    let event = pull["event"].as_str().unwrap();
    assert!(event.starts_with("Failed: Failed to pull image"), "{event}");
    assert!(event.ends_with("(x14)"), "{event}");
    assert!(
        pull["message"]
            .as_str()
            .unwrap()
            .contains("; last event: Failed:")
    );
    // Events explain; they never change the lists.
    let without = stdout_json(&audit_incident(&["-o", "json"]));
    assert_eq!(with_events["issues"], without["issues"]);
    assert!(
        without["explanations"]["ip-10-0-1-12"]
            .get("event")
            .is_none()
    );
}
