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
fn an_object_of_the_wrong_shape_is_excluded_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape.yaml");
    std::fs::write(
        &path,
        "kind: Node\nmetadata:\n  name: n1\nspec:\n  taints: everywhere\n",
    )
    .unwrap();
    let stderr = failure(&["-f", path.to_str().unwrap()]);
    assert!(
        stderr.contains("shape.yaml: excluded Node n1: field spec.taints: invalid type"),
        "{stderr}"
    );
    // Beside other objects, the malformed one is excluded alone, with a warning.
    std::fs::write(
        &path,
        "kind: Node\nmetadata:\n  name: n1\nspec:\n  taints: everywhere\n---\nkind: Node\nmetadata:\n  name: n2\n---\nkind: DaemonSet\nmetadata:\n  name: ds\n  namespace: default\nspec:\n  selector: {}\n  template: {}\n",
    )
    .unwrap();
    let output = common::run_rollcall(&["explain", "-o", "json", "-f", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: ")
            && stderr.contains("shape.yaml: excluded Node n1: field spec.taints"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 excluded (a needed field is malformed or past its limit)"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["daemonsets"][0]["nodes"][0]["name"], "n2");
    assert_eq!(
        report["daemonsets"][0]["nodes"].as_array().unwrap().len(),
        1
    );
}
