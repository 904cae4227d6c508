//! End to end: text from the cluster, snapshots and scenario files never
//! reaches the terminal raw. Hostile values (OSC 52 clipboard writes, OSC 0
//! window titles, CSI clear-screen and colors, 8-bit CSI, bidi overrides) are
//! put where each headless command prints them; the bytes the real binary
//! prints must hold none of them, while `-o json` keeps the exact strings.
//! A malformed `rollcall.dev/*` annotation is reported, not fatal.

mod common;
mod ops_support;

use std::process::Output;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use kube::api::{Api, ListParams, Patch, PatchParams};
use ops_support::{small, text};
use serde_json::{Value, json};

const DS: &str = "kube-system/node-agent";

/// Writes the clipboard (OSC 52).
const CLIPBOARD: &str = "\u{1b}]52;c;ZWNobyBwd25lZA==\u{07}";
/// Sets the window title (OSC 0).
const TITLE: &str = "\u{1b}]0;pwned\u{07}";
/// Clears the screen, then colors (CSI).
const CLEAR: &str = "\u{1b}[2J\u{1b}[31m";
/// Reverses what follows (bidi override) and an 8-bit CSI.
const BIDI: &str = "\u{202e}\u{9b}2J";

/// Panics if `bytes` hold anything a terminal would act on: ESC, BEL, C1
/// controls, bidi formatting characters.
fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let bad: Vec<(usize, char)> = text
        .char_indices()
        .filter(|(_, c)| {
            (c.is_control() && !matches!(c, '\n' | '\t'))
                || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    assert!(bad.is_empty(), "{what}: raw {bad:?} in:\n{text}");
}

fn assert_clean_output(what: &str, output: &Output) {
    assert_clean(&format!("{what} (stdout)"), &output.stdout);
    assert_clean(&format!("{what} (stderr)"), &output.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_text_is_sanitised_in_status_and_history_and_exact_in_json() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let paused_by = format!("ana{CLIPBOARD}@box");
    let reason = format!("node edge-01:{CLEAR} CrashLoopBackOff{BIDI}");
    let daemonsets: Api<DaemonSet> = Api::namespaced(env.client.clone(), "kube-system");
    daemonsets
        .patch(
            "node-agent",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {
                "rollcall.dev/paused-by": paused_by,
                "rollcall.dev/pause-reason": reason,
                "rollcall.dev/canary-selector": "zone in (a",
            }}})),
        )
        .await
        .expect("annotate the DaemonSet");
    let cause = format!("{TITLE}deploy {CLEAR}agent");
    let revisions: Api<ControllerRevision> = Api::namespaced(env.client.clone(), "kube-system");
    for revision in revisions
        .list(&ListParams::default())
        .await
        .expect("list revisions")
    {
        let name = revision.metadata.name.clone().unwrap_or_default();
        if name.starts_with("node-agent-") {
            revisions
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"annotations": {
                        "kubernetes.io/change-cause": cause,
                    }}})),
                )
                .await
                .expect("annotate the revision");
        }
    }

    // status: the table is clean, the malformed selector is a warning, not exit 2.
    let status = env.rollcall(&["status", DS]).await;
    assert!(status.status.success(), "{}", text(&status));
    assert_clean_output("status", &status);
    let table = String::from_utf8_lossy(&status.stdout);
    assert!(table.contains("by ana@box"), "{table}");
    assert!(
        table.contains("warning: ignored annotation rollcall.dev/canary-selector=\"zone in (a\""),
        "{table}"
    );

    // status -o json: exact strings, escaped.
    let json_status = env.rollcall(&["status", DS, "-o", "json"]).await;
    assert!(json_status.status.success(), "{}", text(&json_status));
    assert_clean_output("status -o json", &json_status);
    let report: Value = serde_json::from_slice(&json_status.stdout).expect("status JSON");
    assert_eq!(report["rollout"]["pause"]["by"], paused_by.as_str());
    assert_eq!(report["rollout"]["pause"]["reason"], reason.as_str());
    assert_eq!(report["warnings"].as_array().map(Vec::len), Some(1));

    // history: change-cause sanitised.
    let history = env.rollcall(&["history", DS]).await;
    assert!(history.status.success(), "{}", text(&history));
    assert_clean_output("history", &history);
    assert!(
        String::from_utf8_lossy(&history.stdout).contains("deploy agent"),
        "{}",
        text(&history)
    );

    // An error that echoes what the user typed or the server said.
    let missing = env
        .rollcall(&["status", &format!("kube-system/nope{TITLE}{BIDI}")])
        .await;
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert_clean_output("status error", &missing);
    assert!(
        String::from_utf8_lossy(&missing.stderr).starts_with("error: "),
        "{}",
        text(&missing)
    );
}

/// The audit fixture with its first node renamed to `name` (and its pod moved
/// along) and that node listed twice, so the loader warns about it.
fn hostile_snapshot(name: &str) -> Value {
    let path = common::fixture_path("audit/healthy.json");
    let mut list: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let items = list["items"].as_array_mut().expect("items");
    let old = "ip-10-0-1-11";
    for item in items.iter_mut() {
        if item["kind"] == "Node" && item["metadata"]["name"] == old {
            item["metadata"]["name"] = json!(name);
        }
        if item["kind"] == "Pod" && item["spec"]["nodeName"] == old {
            item["spec"]["nodeName"] = json!(name);
        }
    }
    // A second, different copy of the node: a conflicting duplicate is a
    // warning that names the (hostile) node.
    let mut node = items
        .iter()
        .find(|i| i["metadata"]["name"] == name)
        .cloned()
        .expect("renamed node");
    node["metadata"]["labels"]["copy"] = json!("second");
    items.push(node);
    list
}

#[test]
fn snapshot_text_is_sanitised_in_explain_and_audit_and_exact_in_json() {
    let name = format!("ip-10-0-1-11{CLIPBOARD}{BIDI}");
    let dir = tempfile::tempdir().expect("tempdir");
    let snapshot = dir.path().join("snapshot.json");
    std::fs::write(&snapshot, hostile_snapshot(&name).to_string()).expect("write snapshot");
    let snapshot = snapshot.display().to_string();

    let explain = common::run_rollcall(&["explain", "-f", &snapshot]);
    assert!(explain.status.success(), "{}", text(&explain));
    assert_clean_output("explain", &explain);
    assert!(
        String::from_utf8_lossy(&explain.stderr).contains("warning: "),
        "the duplicate node is warned about: {}",
        text(&explain)
    );

    let explain_json = common::run_rollcall(&["explain", "-f", &snapshot, "-o", "json"]);
    assert!(explain_json.status.success(), "{}", text(&explain_json));
    assert_clean_output("explain -o json", &explain_json);
    let report: Value = serde_json::from_slice(&explain_json.stdout).expect("explain JSON");
    let names: Vec<&str> = report["daemonsets"][0]["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert!(names.contains(&name.as_str()), "{names:?}");

    let roster = dir.path().join("roster.json");
    std::fs::write(
        &roster,
        json!({ name.as_str(): "another-uid", "ip-10-0-1-12": "3f2a6c1e-1111-4a5b-9c8d-000000000012" })
            .to_string(),
    )
    .expect("write roster");
    let roster = roster.display().to_string();
    let audit_args = [
        "audit",
        "--daemonset",
        DS,
        "--roster",
        &roster,
        "-f",
        &snapshot,
    ];
    let audit = common::run_rollcall(&audit_args);
    // The duplicate node makes the audit refuse the snapshot: an error naming it.
    assert_eq!(audit.status.code(), Some(2), "{}", text(&audit));
    assert_clean_output("audit error", &audit);

    // Without the duplicate, the identity mismatch is reported in a table.
    let mut single = hostile_snapshot(&name);
    single["items"].as_array_mut().expect("items").pop();
    std::fs::write(&snapshot, single.to_string()).expect("rewrite snapshot");
    let audit = common::run_rollcall(&audit_args);
    assert_eq!(audit.status.code(), Some(1), "{}", text(&audit));
    assert_clean_output("audit", &audit);
    let audit_json = common::run_rollcall(&[&audit_args[..], &["-o", "json"]].concat());
    assert_eq!(audit_json.status.code(), Some(1), "{}", text(&audit_json));
    assert_clean_output("audit -o json", &audit_json);
    let report: Value = serde_json::from_slice(&audit_json.stdout).expect("audit JSON");
    assert_eq!(
        report["issues"]["node_identity_mismatch"][0],
        name.as_str(),
        "{report}"
    );
}

#[test]
fn scenario_and_roster_errors_are_sanitised_and_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("hostile.yaml");
    let arch = format!("{CLIPBOARD}{}", "x".repeat(3 << 20 >> 2));
    std::fs::write(
        &scenario,
        format!("name: t\npools:\n  - name: \"g{TITLE}\"\n    count: 2\n    arch: \"{arch}\"\n")
            .replace('\u{1b}', "\\e")
            .replace('\u{07}', "\\a"),
    )
    .expect("write scenario");
    let sim = common::run_rollcall(&[
        "sim",
        "--scenario",
        &scenario.display().to_string(),
        "--kubeconfig-out",
        &dir.path().join("kc").display().to_string(),
    ]);
    assert_eq!(sim.status.code(), Some(2), "{}", text(&sim));
    assert_clean_output("scenario error", &sim);
    assert!(
        sim.stderr.len() < 4096,
        "a {} byte error for a big value",
        sim.stderr.len()
    );

    let roster = common::run_rollcall(&[
        "audit",
        "--daemonset",
        DS,
        "--roster",
        "/dev/zero",
        "-f",
        &common::fixture_path("audit/healthy.json"),
    ]);
    assert_eq!(roster.status.code(), Some(2), "{}", text(&roster));
    assert_eq!(
        String::from_utf8_lossy(&roster.stderr).trim(),
        "error: roster /dev/zero: is a character device, not a regular file"
    );
    let bad_roster = dir.path().join(format!("r{CLEAR}.json"));
    std::fs::write(&bad_roster, format!("{{\"n{BIDI}\": 1}}")).expect("write roster");
    let roster = common::run_rollcall(&[
        "audit",
        "--daemonset",
        DS,
        "--roster",
        &bad_roster.display().to_string(),
        "-f",
        &common::fixture_path("audit/healthy.json"),
    ]);
    assert_eq!(roster.status.code(), Some(2), "{}", text(&roster));
    assert_clean_output("roster error", &roster);
}

#[test]
fn a_node_count_past_the_limit_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = std::time::Instant::now();
    let sim = common::run_rollcall(&[
        "sim",
        "--nodes",
        "1000000000",
        "--kubeconfig-out",
        &dir.path().join("kc").display().to_string(),
    ]);
    assert_eq!(sim.status.code(), Some(2), "{}", text(&sim));
    assert!(
        String::from_utf8_lossy(&sim.stderr)
            .contains("--nodes: 1000000000 nodes is more than the limit of 100000"),
        "{}",
        text(&sim)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// kube reads a kubeconfig whole and unbounded: a device or a huge file is
/// refused before it is opened, with an error naming the file and the limit.
#[test]
fn a_kubeconfig_that_is_a_device_or_too_large_is_refused_at_once() {
    let device = common::run_rollcall(&["--kubeconfig", "/dev/zero", "status", DS]);
    assert_eq!(device.status.code(), Some(2), "{}", text(&device));
    assert!(
        String::from_utf8_lossy(&device.stderr)
            .contains("cannot read /dev/zero: it is a character device, not a regular file"),
        "{}",
        text(&device)
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let huge = dir.path().join("huge.kubeconfig");
    let file = std::fs::File::create(&huge).expect("create");
    file.set_len(rollcall::input::limits::MAX_KUBECONFIG_BYTES + 1)
        .expect("sparse file");
    let big = common::run_rollcall(&["--kubeconfig", &huge.display().to_string(), "status", DS]);
    assert_eq!(big.status.code(), Some(2), "{}", text(&big));
    assert!(
        String::from_utf8_lossy(&big.stderr)
            .contains("is larger than the 16 MiB limit for a kubeconfig"),
        "{}",
        text(&big)
    );

    // The same through KUBECONFIG.
    let env = std::process::Command::new(common::rollcall_bin())
        .args(["status", DS])
        .env("KUBECONFIG", "/dev/zero")
        .output()
        .expect("run rollcall");
    assert_eq!(env.status.code(), Some(2), "{}", text(&env));
    assert!(
        String::from_utf8_lossy(&env.stderr).contains("character device"),
        "{}",
        text(&env)
    );
}
