//! `rollcall explain` failures: malformed snapshots, missing files, unknown
//! DaemonSets — each an error on stderr naming what to fix, and exit code 2.

mod common;

use std::process::Output;

fn fixture(name: &str) -> String {
    common::fixture_path(&format!("snapshots/{name}"))
}

fn explain(args: &[&str]) -> Output {
    common::run_rollcall(&[&["explain"], args].concat())
}

fn failure(args: &[&str]) -> String {
    let output = explain(args);
    assert_eq!(
        output.status.code(),
        Some(2),
        "stdout: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(output.stdout.is_empty(), "nothing on stdout on error");
    String::from_utf8(output.stderr).expect("stderr is UTF-8")
}

#[test]
fn truncated_json_names_the_file_and_line() {
    let stderr = failure(&[
        "-f",
        &fixture("nodes.json"),
        "-f",
        &fixture("truncated.json"),
    ]);
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr.contains("truncated.json: line 15, column 0: invalid JSON"),
        "{stderr}"
    );
}

#[test]
fn bad_yaml_indentation_names_the_file_and_line() {
    let stderr = failure(&["-f", &fixture("bad-indent.yaml")]);
    assert!(
        stderr.contains("bad-indent.yaml: line 7, column 4: invalid YAML"),
        "{stderr}"
    );
}

#[test]
fn a_missing_file_is_named() {
    let stderr = failure(&["-f", "no-such-snapshot.json"]);
    assert!(
        stderr.contains("cannot read no-such-snapshot.json"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_daemonset_lists_the_ones_present() {
    let stderr = failure(&[
        "-f",
        &fixture("kube-system-list.json"),
        "-f",
        &fixture("logging.yaml"),
        "--daemonset",
        "kube-system/fluent-bit",
    ]);
    assert!(
        stderr.contains("daemonset kube-system/fluent-bit is not in the snapshot; DaemonSets present: kube-system/node-exporter, logging/fluent-bit"),
        "{stderr}"
    );
}

#[test]
fn a_snapshot_without_daemonsets_says_so_for_an_unknown_name() {
    let stderr = failure(&["-f", &fixture("nodes.json"), "--daemonset", "a/b"]);
    assert!(
        stderr.contains("no DaemonSets found in") && stderr.contains("of kind Node"),
        "{stderr}"
    );
}

#[test]
fn an_object_of_the_wrong_shape_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape.yaml");
    std::fs::write(
        &path,
        "kind: Node\nmetadata:\n  name: n1\nspec:\n  taints: everywhere\n",
    )
    .unwrap();
    let stderr = failure(&["-f", path.to_str().unwrap()]);
    assert!(
        stderr.contains("shape.yaml: Node \"n1\": invalid type"),
        "{stderr}"
    );
}
