//! `explain -f` on dumps as they arrive: a must-gather tree and its tar.xz, a
//! Sonobuoy tarball, a support-bundle tree (with `creationTimestamp: "null"`),
//! a `cluster-info dump` stream on stdin and as a file, and a zip — each gives
//! the same report as the equivalent `kubectl get -o json` List. Plus the
//! summary on stderr, and the exit-2 error for input with nothing to read.

mod common;
mod dump_support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use dump_support as dump;

fn explain_json(inputs: &[&str]) -> (Value, String) {
    let mut args = vec!["explain", "-o", "json"];
    for input in inputs {
        args.extend(["-f", input]);
    }
    let output = common::run_rollcall(&args);
    parse(&output, inputs)
}

fn parse(output: &Output, inputs: &[&str]) -> (Value, String) {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{inputs:?}: {stderr}");
    let report = serde_json::from_slice(&output.stdout).expect("json report");
    (report, stderr)
}

fn reference(dir: &Path, with_revisions: bool) -> Value {
    let path = dir.join("kubectl-get.json");
    std::fs::write(&path, dump::pretty(&dump::kubectl_list(with_revisions))).expect("write");
    let (report, _) = explain_json(&[&path.display().to_string()]);
    assert_eq!(
        report["daemonsets"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
    assert_eq!(
        report["daemonsets"][0]["nodes"].as_array().map(Vec::len),
        Some(3)
    );
    report
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn must_gather_tree_and_its_tar_xz_explain_like_the_kubectl_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let expected = reference(dir.path(), true);
    let tree = dir.path().join("mg");
    dump::must_gather(&tree);
    let (report, stderr) = explain_json(&[&path_str(&tree)]);
    assert_eq!(report, expected, "{stderr}");
    assert!(
        stderr.contains("loaded 3 Nodes, 2 DaemonSets, 5 Pods, 0 ControllerRevisions, 0 Events"),
        "{stderr}"
    );
    assert!(stderr.contains("identical duplicates merged"), "{stderr}");
    assert!(
        stderr.contains("skipped 2 ConfigMap (kinds rollcall does not read)"),
        "{stderr}"
    );
    assert!(stderr.contains("not .json, .yaml or .yml"), "{stderr}");
    assert!(!stderr.contains("appears more than once"), "{stderr}");
    let archive = dir.path().join("must-gather.tar.xz");
    std::fs::write(&archive, dump::xz(&dump::tar_of(&tree))).expect("write");
    let (report, stderr) = explain_json(&[&path_str(&archive)]);
    assert_eq!(report, expected, "{stderr}");
}

#[test]
fn sonobuoy_tarball_of_bare_arrays_explains_like_the_kubectl_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let expected = reference(dir.path(), true);
    let tree = dir.path().join("sonobuoy");
    dump::sonobuoy(&tree);
    let archive = dir.path().join("202506020900_sonobuoy_d3f1.tar.gz");
    std::fs::write(&archive, dump::gzip(&dump::tar_of(&tree))).expect("write");
    let (report, stderr) = explain_json(&[&path_str(&archive)]);
    assert_eq!(report, expected, "{stderr}");
    assert!(stderr.contains("2 ControllerRevisions"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(
        stderr.contains("1 document that is not an API object"),
        "{stderr}"
    );
    let zipped = dir.path().join("sonobuoy.zip");
    std::fs::write(&zipped, dump::zip_of(&tree)).expect("write");
    let (report, stderr) = explain_json(&[&path_str(&zipped)]);
    assert_eq!(report, expected, "{stderr}");
}

#[test]
fn support_bundle_with_null_string_timestamps_explains_like_the_kubectl_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let expected = reference(dir.path(), true);
    let tree = dir.path().join("supportbundle");
    dump::support_bundle(&tree);
    let (report, stderr) = explain_json(&[&path_str(&tree)]);
    assert_eq!(report, expected, "{stderr}");
    assert!(
        stderr.contains(
            "DaemonSet kube-system/node-agent: ignored malformed field spec.template.metadata.creationTimestamp"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 DaemonSets, 5 Pods, 2 ControllerRevisions"),
        "{stderr}"
    );
}

#[test]
fn cluster_info_dump_on_stdin_and_as_a_file_explains_like_the_kubectl_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let expected = reference(dir.path(), false);
    let text = dump::cluster_info_dump();
    let file = dir.path().join("cluster-info.dump");
    std::fs::write(&file, &text).expect("write");
    let (report, stderr) = explain_json(&[&path_str(&file)]);
    assert_eq!(report, expected, "{stderr}");
    assert!(
        stderr.contains("container log sections skipped: 5"),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    let mut child = Command::new(common::rollcall_bin())
        .args(["explain", "-o", "json", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write stdin");
    let output = child.wait_with_output().expect("wait");
    let (report, _) = parse(&output, &["-"]);
    assert_eq!(report, expected);
}

#[test]
fn input_with_nothing_to_read_is_an_error_saying_what_was_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    dump::write(dir.path(), "a/notes.txt", "hello");
    dump::write(
        dir.path(),
        "a/things.json",
        r#"[{"metadata":{"name":"x"}}]"#,
    );
    dump::write(
        dir.path(),
        "a/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    );
    let output = common::run_rollcall(&["explain", "-f", &path_str(&dir.path().join("a"))]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no Node, Pod, DaemonSet, ControllerRevision or Event in"),
        "{stderr}"
    );
    assert!(stderr.contains("1 object without a kind"), "{stderr}");
    assert!(
        stderr.contains("only kinds rollcall does not read (1 ConfigMap)"),
        "{stderr}"
    );
}

#[test]
fn audit_and_write_roster_work_on_a_dump_with_old_group_version_owners() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("mg");
    dump::must_gather(&tree);
    let archive = dir.path().join("must-gather.tar.gz");
    std::fs::write(&archive, dump::gzip(&dump::tar_of(&tree))).expect("write");
    let archive = path_str(&archive);
    let roster = path_str(&dir.path().join("roster.json"));
    let written = common::run_rollcall(&[
        "audit",
        "--write-roster",
        &roster,
        "--nodes-selector",
        "kubernetes.io/os=linux",
        "-f",
        &archive,
    ]);
    let stderr = String::from_utf8_lossy(&written.stderr);
    assert_eq!(written.status.code(), Some(0), "{stderr}");
    let nodes: Value =
        serde_json::from_slice(&std::fs::read(&roster).expect("roster")).expect("json");
    assert_eq!(
        nodes.as_object().map(serde_json::Map::len),
        Some(3),
        "{nodes}"
    );
    // log-agent's pods name their owner under extensions/v1beta1: still owned.
    let audit = common::run_rollcall(&[
        "audit",
        "--daemonset",
        "logging/log-agent",
        "--roster",
        &roster,
        "-f",
        &archive,
        "-o",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&audit.stderr);
    let stdout = String::from_utf8_lossy(&audit.stdout);
    assert_eq!(audit.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("loaded 3 Nodes, 2 DaemonSets, 5 Pods"),
        "{stderr}"
    );
}
