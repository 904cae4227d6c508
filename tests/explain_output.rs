//! `rollcall explain` end to end on kubectl-shaped snapshot files: the JSON
//! contract, the table, `--daemonset`, stdin and warnings.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn fixture(name: &str) -> String {
    common::fixture_path(&format!("snapshots/{name}"))
}

fn explain(args: &[&str]) -> Output {
    common::run_rollcall(&[&["explain"], args].concat())
}

fn all_fixtures() -> Vec<String> {
    ["nodes.json", "kube-system-list.json", "logging.yaml"]
        .iter()
        .flat_map(|f| ["-f".to_owned(), fixture(f)])
        .collect()
}

fn json_report(args: &[String]) -> Value {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["-o", "json"]);
    let output = explain(&args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

/// (node, shouldRun, shouldContinueRunning, reason codes)
type Expected = (&'static str, bool, bool, &'static [&'static str]);

fn verdicts(ds: &Value) -> Vec<(String, bool, bool, Vec<String>)> {
    ds["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            let codes = n["reasons"]
                .as_array()
                .expect("reasons")
                .iter()
                .map(|r| r["code"].as_str().expect("code").to_owned())
                .collect();
            (
                n["name"].as_str().expect("name").to_owned(),
                n["shouldRun"].as_bool().expect("shouldRun"),
                n["shouldContinueRunning"]
                    .as_bool()
                    .expect("shouldContinueRunning"),
                codes,
            )
        })
        .collect()
}

fn assert_verdicts(ds: &Value, expected: &[Expected]) {
    let expected: Vec<(String, bool, bool, Vec<String>)> = expected
        .iter()
        .map(|(n, r, k, c)| {
            (
                (*n).to_owned(),
                *r,
                *k,
                c.iter().map(|s| (*s).to_owned()).collect(),
            )
        })
        .collect();
    assert_eq!(verdicts(ds), expected);
}

#[test]
fn json_has_every_node_under_every_daemonset_sorted() {
    let report = json_report(&all_fixtures());
    let daemonsets = report["daemonsets"].as_array().expect("daemonsets");
    let ids: Vec<(&str, &str)> = daemonsets
        .iter()
        .map(|d| {
            (
                d["namespace"].as_str().unwrap(),
                d["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [("kube-system", "node-exporter"), ("logging", "fluent-bit")]
    );
    // node-exporter: hostNetwork, tolerates every NoSchedule; the defaults cover
    // unreachable NoExecute; only edge-1's dedicated NoExecute taint stops it.
    assert_verdicts(
        &daemonsets[0],
        &[
            ("edge-1", false, false, &["UntoleratedTaint"]),
            ("gpu-1", true, true, &[]),
            ("worker-a1", true, true, &[]),
            ("worker-b2", true, true, &[]),
            ("worker-c3", true, true, &[]),
            ("worker-d4", true, true, &[]),
        ],
    );
    // fluent-bit: nodeSelector disktype=ssd, affinity pool NotIn [gpu,edge],
    // tolerates unreachable NoSchedule itself (its NoExecute twin is a default).
    assert_verdicts(
        &daemonsets[1],
        &[
            (
                "edge-1",
                false,
                false,
                &["NodeAffinityMismatch", "UntoleratedTaint"],
            ),
            (
                "gpu-1",
                false,
                false,
                &["NodeAffinityMismatch", "UntoleratedTaint"],
            ),
            ("worker-a1", true, true, &[]),
            ("worker-b2", false, false, &["NodeSelectorMismatch"]),
            ("worker-c3", true, true, &[]),
            ("worker-d4", true, true, &[]),
        ],
    );
}

#[test]
fn json_has_exactly_the_contract_fields() {
    let report = json_report(&all_fixtures());
    let keys =
        |v: &Value| -> Vec<String> { v.as_object().expect("object").keys().cloned().collect() };
    assert_eq!(keys(&report), ["daemonsets"]);
    let ds = &report["daemonsets"][1];
    // The fixtures' statuses count pods the files do not hold: that is said on
    // stderr, never added to the contract's JSON.
    assert_eq!(keys(ds), ["name", "namespace", "nodes"]);
    let gpu = &ds["nodes"][1];
    assert_eq!(
        keys(gpu),
        [
            "fit",
            "name",
            "reasons",
            "shouldContinueRunning",
            "shouldRun"
        ]
    );
    // Not eligible: nothing to ask; an eligible node of a dump with pods
    // gets status's fit object.
    assert!(gpu["fit"].is_null());
    let worker = ds["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["shouldRun"] == true)
        .expect("an eligible node");
    assert_eq!(keys(&worker["fit"]), ["fits", "preempts", "reasons"]);
    let reason = &gpu["reasons"][0];
    assert_eq!(reason["code"], "NodeAffinityMismatch");
    assert_eq!(reason["message"], "affinity term 1: pool NotIn [gpu,edge]");
    assert_eq!(
        gpu["reasons"][1]["message"],
        "taint nvidia.com/gpu=present:NoSchedule not tolerated"
    );
    assert_eq!(
        ds["nodes"][3]["reasons"][0]["message"],
        "nodeSelector disktype=ssd: label is hdd"
    );
}

#[test]
fn daemonset_flag_selects_one() {
    let mut args = all_fixtures();
    args.extend(["--daemonset".to_owned(), "logging/fluent-bit".to_owned()]);
    let report = json_report(&args);
    let daemonsets = report["daemonsets"].as_array().unwrap();
    assert_eq!(daemonsets.len(), 1);
    assert_eq!(daemonsets[0]["name"], "fluent-bit");
}

#[test]
fn table_lists_every_node_with_reasons_and_counts() {
    let mut args = all_fixtures();
    args.extend(["--daemonset".to_owned(), "logging/fluent-bit".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = explain(&args);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let expected = "\
DaemonSet logging/fluent-bit
NODE       ELIG  FIT  REASON
edge-1     no    -    affinity term 1: pool NotIn [gpu,edge]; taint dedicated=edge:NoExecute not tolerated
gpu-1      no    -    affinity term 1: pool NotIn [gpu,edge]; taint nvidia.com/gpu=present:NoSchedule not tolerated
worker-a1  yes   yes
worker-b2  no    -    nodeSelector disktype=ssd: label is hdd
worker-c3  yes   yes
worker-d4  yes   yes
6 nodes: 3 should run, 3 excluded
";
    assert_eq!(stdout, expected);
    assert!(
        !stdout.contains('\u{1b}'),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn table_counts_nodes_that_may_keep_a_running_pod() {
    let nodes = fixture("nodes.json");
    let yaml = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: plain, namespace: default}\nspec:\n  selector: {}\n  template: {spec: {containers: [{name: c, image: i}]}}\n";
    let mut child = Command::new(common::rollcall_bin())
        .args(["explain", "-f", &nodes, "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(yaml.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with("DaemonSet default/plain\n"), "{stdout}");
    assert!(
        stdout.contains(
            "gpu-1      no    ?    taint nvidia.com/gpu=present:NoSchedule not tolerated\n"
        ),
        "{stdout}"
    );
    // The unreachable node's NoSchedule twin is not among the default tolerations.
    assert!(
        stdout.contains(
            "worker-d4  no    ?    taint node.kubernetes.io/unreachable:NoSchedule not tolerated\n"
        ),
        "{stdout}"
    );
    // The count speaks the table's words: the two NoSchedule nodes have no
    // pod, so ELIG says `no` and nothing is counted as kept (issue 33).
    assert!(
        stdout.ends_with("6 nodes: 3 should run, 3 excluded\n"),
        "{stdout}"
    );
}

#[test]
fn unknown_kinds_are_skipped_with_a_warning_on_stderr() {
    let output = explain(&["-f", &fixture("kube-system-list.json"), "-o", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).unwrap();
    // One summary line per kind, not a warning per object.
    assert!(
        stderr.contains("skipped 1 ConfigMap (kinds rollcall does not read)"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("skipped ConfigMap kube-system/node-exporter-textfiles"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["daemonsets"][0]["nodes"],
        Value::Array(vec![]),
        "no nodes in that file"
    );
}

#[test]
fn duplicate_objects_across_files_merge_when_identical_and_warn_when_not() {
    let nodes = fixture("nodes.json");
    let logging = fixture("logging.yaml");
    let output = explain(&["-f", &nodes, "-f", &nodes, "-f", &logging, "-o", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains("appears more than once"), "{stderr}");
    assert!(stderr.contains("6 identical duplicates merged"), "{stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["daemonsets"][0]["nodes"].as_array().unwrap().len(),
        6
    );
    let dir = tempfile::tempdir().unwrap();
    let mut changed: Value = serde_json::from_slice(&std::fs::read(&nodes).unwrap()).unwrap();
    changed["items"][0]["metadata"]["labels"]["later"] = Value::from("yes");
    let changed_path = dir.path().join("later.json");
    std::fs::write(&changed_path, changed.to_string()).unwrap();
    let output = explain(&[
        "-f",
        &nodes,
        "-f",
        changed_path.to_str().unwrap(),
        "-f",
        &logging,
        "-o",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr
            .matches("appears more than once, differently (also in ")
            .count(),
        1,
        "{stderr}"
    );
}
