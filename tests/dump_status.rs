//! A dump's recorded status against what its nodes and pods give, visible
//! everywhere: `explain -f` and `audit -f` warn and say it in `-o json`; a
//! rehearsal (`sim -f`) records it on the DaemonSet and `rollcall status`
//! names the difference (table and JSON). A dump at steady state: nothing.
//! The disagreeing dump is the steady one without node ip-10-0-1-12, whose
//! pods stay: each DaemonSet's status counts one node more than the dump holds.

mod common;
mod dump_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use dump_support as dump;
use rollcall::sim::embedded::{self, EmbeddedOptions};

const GONE: &str = "ip-10-0-1-12";

/// The steady dump, or (`disagree`) the same without node [`GONE`].
fn write_dump(dir: &Path, disagree: bool) -> PathBuf {
    let mut list = dump::kubectl_list(true);
    if disagree && let Some(items) = list["items"].as_array_mut() {
        items.retain(|i| !(i["kind"] == "Node" && i["metadata"]["name"] == GONE));
    }
    let path = dir.join(if disagree { "odd.json" } else { "steady.json" });
    std::fs::write(&path, dump::pretty(&list)).expect("write dump");
    path
}

fn run(args: &[&str]) -> Output {
    Command::new(common::rollcall_bin())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("rollcall runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&output.stdout), text(&output.stderr)))
}

const AGENT_WARNING: &str = "warning: DaemonSet kube-system/node-agent: the dump's status records desired 2, ready 2; its nodes and pods give desired 1, ready 1: pods on 1 node absent from the dump (ip-10-0-1-12)";

#[test]
fn explain_names_a_dump_whose_status_disagrees_with_its_pods() {
    let dir = tempfile::tempdir().expect("tempdir");
    let odd = write_dump(dir.path(), true);
    let odd = odd.to_str().expect("utf-8");
    let table = run(&["explain", "-f", odd]);
    assert!(table.status.success(), "{}", text(&table.stderr));
    let stderr = text(&table.stderr);
    assert!(stderr.contains(AGENT_WARNING), "{stderr}");
    assert!(
        stderr
            .contains("warning: DaemonSet logging/log-agent: the dump's status records desired 3"),
        "{stderr}"
    );
    // `-o json` keeps explain's contract exact: the difference is on stderr.
    let json_run = run(&["explain", "-f", odd, "-o", "json"]);
    assert!(
        text(&json_run.stderr).contains(
            "warning: DaemonSet kube-system/node-agent: the dump's status records desired 2"
        ),
        "{}",
        text(&json_run.stderr)
    );
    let report = json(&json_run);
    for ds in report["daemonsets"].as_array().expect("daemonsets") {
        assert!(ds.get("recordedStatus").is_none(), "{ds}");
    }

    let steady = write_dump(dir.path(), false);
    let steady = steady.to_str().expect("utf-8");
    let table = run(&["explain", "-f", steady]);
    assert!(
        !text(&table.stderr).contains("status records"),
        "{}",
        text(&table.stderr)
    );
    let report = json(&run(&["explain", "-f", steady, "-o", "json"]));
    for ds in report["daemonsets"].as_array().expect("daemonsets") {
        assert!(ds.get("recordedStatus").is_none(), "{ds}");
    }
}

#[test]
fn audit_names_it_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let odd = write_dump(dir.path(), true);
    let roster = dir.path().join("roster.json");
    std::fs::write(
        &roster,
        r#"{"ip-10-0-1-11": "4a0d7f2e-1111-4c1e-9d55-0f6b2c1a0001"}"#,
    )
    .expect("roster");
    let args = |output: &'static str| {
        run(&[
            "audit",
            "kube-system/node-agent",
            "--roster",
            roster.to_str().expect("utf-8"),
            "-f",
            odd.to_str().expect("utf-8"),
            "-o",
            output,
        ])
    };
    let table = args("table");
    assert!(
        text(&table.stderr).contains(AGENT_WARNING),
        "{}",
        text(&table.stderr)
    );
    let report = json(&args("json"));
    assert_eq!(
        report["recordedStatus"]["reasons"][0]["code"], "podOnAbsentNode",
        "{report}"
    );
    assert_eq!(report["ok"], false, "the pod outside the roster: {report}");
}

/// `rollcall status` against a rehearsal of the dump, and what the
/// rehearsal said at load.
async fn status_of(dump: &Path, output: &str) -> (Output, Vec<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = EmbeddedOptions {
        snapshot: vec![dump.to_path_buf()],
        ..EmbeddedOptions::default()
    };
    let cluster = embedded::start(options).await.expect("rehearsal starts");
    let kubeconfig = dir.path().join("kubeconfig");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("kubeconfig written");
    let mut command = Command::new(common::rollcall_bin());
    command
        .args([
            "status",
            "kube-system/node-agent",
            "-o",
            output,
            "--kubeconfig",
        ])
        .arg(&kubeconfig)
        .env("XDG_STATE_HOME", dir.path())
        .stdin(std::process::Stdio::null());
    let result = tokio::task::spawn_blocking(move || command.output().expect("rollcall runs"))
        .await
        .expect("joined");
    let said = cluster.simulation.load_report.clone();
    cluster.shutdown().await;
    (result, said)
}

#[tokio::test(flavor = "current_thread")]
async fn status_in_a_rehearsal_says_how_it_differs_from_the_dump() {
    let dir = tempfile::tempdir().expect("tempdir");
    let odd = write_dump(dir.path(), true);
    let (table, said) = status_of(&odd, "table").await;
    assert!(table.status.success(), "{}", text(&table.stderr));
    assert!(
        said.iter().any(|l| l == AGENT_WARNING),
        "the rehearsal names it at load: {said:?}"
    );
    let stdout = text(&table.stdout);
    assert!(
        stdout.contains("\ndump  the dump recorded desired 2, ready 2; rehearsal has desired 1, ready 1: pods on 1 node absent from the dump (ip-10-0-1-12)\n"),
        "{stdout}"
    );
    let report = json(&status_of(&odd, "json").await.0);
    assert_eq!(report["recordedStatus"]["recorded"]["ready"], 2, "{report}");
    assert_eq!(report["recordedStatus"]["actual"]["ready"], 1, "{report}");

    let steady = write_dump(dir.path(), false);
    let (table, said) = status_of(&steady, "table").await;
    assert!(table.status.success(), "{}", text(&table.stderr));
    assert!(
        said.iter().all(|l| !l.contains("status records")),
        "{said:?}"
    );
    assert!(
        !text(&table.stdout).contains("dump "),
        "{}",
        text(&table.stdout)
    );
    let report = json(&status_of(&steady, "json").await.0);
    assert!(report.get("recordedStatus").is_none(), "{report}");
}
