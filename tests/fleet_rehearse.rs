//! `rollcall fleet rehearse` end to end with the real binary: three dumps of
//! the small scenario's cluster (each taken from an embedded cluster at
//! steady state, as `kubectl get -o json` / `-o yaml` would print it), one
//! per context, rehearsed in-process on the simulated clock. A two-wave
//! plan completes with every node moved in wave order and the bake kept in
//! simulated time; the scenario's crash-looping image stops the plan before
//! wave 2 naming the cluster, node and reason; a context without a dump is
//! refused by name (exit 2). Waves and clusters are said on stderr as they
//! start and end; a batch the budget cut is said in the report.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use rollcall::sim::embedded::{EmbeddedOptions, Simulation, dump};
use serde_json::Value;

/// Three contexts' dumps and a plan in a temporary directory.
struct Fleet {
    dir: tempfile::TempDir,
}

impl Fleet {
    /// `sim-a.json`, `sim-b.yaml`, `sim-c.json`: the small scenario's cluster
    /// (node-agent OnDelete, revision 2 waiting) after a minute of simulated time.
    fn dumped() -> Fleet {
        let dir = tempfile::tempdir().expect("temp dir");
        let snapshots = dir.path().join("snapshots");
        std::fs::create_dir(&snapshots).expect("snapshot dir");
        let list = small_cluster_dump();
        let json = serde_json::to_string(&list).expect("json");
        let yaml = serde_norway::to_string(&list).expect("yaml");
        for (name, text) in [
            ("sim-a.json", &json),
            ("sim-b.yaml", &yaml),
            ("sim-c.json", &json),
        ] {
            std::fs::write(snapshots.join(name), text).expect("dump written");
        }
        std::fs::write(dir.path().join("healthy.yaml"), healthy_scenario()).expect("scenario");
        Fleet { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn rehearse(&self, plan: &str, extra: &[&str]) -> Output {
        let plan_path = self.path("fleet.yaml");
        std::fs::write(&plan_path, plan).expect("plan written");
        let mut command = std::process::Command::new(common::rollcall_bin());
        command
            .args(["fleet", "rehearse", "-f"])
            .arg(&plan_path)
            .arg("--snapshots")
            .arg(self.path("snapshots"))
            .args(extra)
            .env("HOME", self.dir.path())
            .env_remove("KUBECONFIG");
        command.output().expect("rollcall runs")
    }
}

fn small_cluster_dump() -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let simulation = Simulation::start(&EmbeddedOptions {
            scenario: Some("small".to_owned()),
            ..EmbeddedOptions::default()
        })
        .expect("small scenario starts");
        tokio::time::sleep(Duration::from_secs(60)).await;
        let list = dump::kubectl_list(&simulation.store);
        simulation.shutdown().await;
        list
    })
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

const TWO_WAVES: &str = "daemonset: kube-system/node-agent
clusters: [\"sim-*\"]
waves:
  - name: first
    clusters: [sim-a]
    batch: 2
    soak: 30s
    bake: 10m
  - name: second
    clusters: [\"sim-*\"]
    batch: 3
    soak: 20s
    parallel: 2
";

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("rehearse -o json prints JSON ({e}): {}", text(output)))
}

fn clusters(wave: &Value) -> Vec<Value> {
    wave["clusters"].as_array().cloned().unwrap_or_default()
}

fn seconds(value: &Value) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("seconds: {value}"))
}

#[test]
fn a_two_wave_plan_moves_every_node_in_wave_order_and_keeps_the_bake() {
    let fleet = Fleet::dumped();
    let scenario = fleet.path("healthy.yaml");
    let scenario = scenario.to_str().expect("utf-8 path");
    let output = fleet.rehearse(TWO_WAVES, &["--scenario", scenario, "-o", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report = json(&output);
    assert_eq!(report["result"], "done", "{report:#}");
    assert_eq!(report["notReached"], 0, "{report:#}");
    let waves = report["waves"].as_array().expect("waves");
    assert_eq!(waves.len(), 2);
    let contexts: Vec<Vec<String>> = waves
        .iter()
        .map(|w| {
            clusters(w)
                .iter()
                .map(|c| c["context"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .collect();
    assert_eq!(contexts, [vec!["sim-a"], vec!["sim-b", "sim-c"]]);
    // Every node of every cluster moved, each once, and its new pod became Ready.
    for wave in waves {
        assert_eq!(wave["result"], "passed");
        for cluster in clusters(wave) {
            let moved = cluster["moved"].as_array().expect("moved");
            assert_eq!(moved.len(), 5, "{cluster:#}");
            assert!(cluster["notReached"].as_array().is_some_and(Vec::is_empty));
            let mut nodes: Vec<&str> = moved.iter().filter_map(|n| n["node"].as_str()).collect();
            nodes.sort_unstable();
            nodes.dedup();
            assert_eq!(nodes.len(), 5, "a node moved twice: {cluster:#}");
            // Ready times are whole seconds (as Kubernetes writes them).
            for node in moved {
                assert!(
                    seconds(&node["ready"]) >= seconds(&node["deleted"]) - 1.0,
                    "{node}"
                );
            }
        }
    }
    // Wave 2 moved nothing before wave 1 passed and baked its 10 minutes.
    let first = &waves[0];
    assert_eq!(first["bakeSeconds"], 600);
    let first_ready = clusters(first)
        .iter()
        .flat_map(|c| c["moved"].as_array().cloned().unwrap_or_default())
        .map(|n| seconds(&n["ready"]))
        .fold(0.0, f64::max);
    let first_end = seconds(&first["end"]);
    assert!(first_end >= first_ready, "{first:#}");
    let second_deletes: Vec<f64> = clusters(&waves[1])
        .iter()
        .flat_map(|c| c["moved"].as_array().cloned().unwrap_or_default())
        .map(|n| seconds(&n["deleted"]))
        .collect();
    let second_first = second_deletes.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        second_first >= first_end + 600.0,
        "wave 2 started at {second_first}s, wave 1 ended at {first_end}s: {report:#}"
    );
    // Batches of 2 with 30s soaks: the simulated wall time covers them and the bake.
    assert!(seconds(&report["expectedWallTime"]["seconds"]) >= 600.0 + 2.0 * 30.0);
    // No budget is a budget of no failed node: one node at risk at once,
    // so each wave's batch was cut to 1, and the report says so.
    assert_eq!(first["batch"], 1, "{first:#}");
    assert_eq!(first["budgetCut"], "batch 1 (cut from 2 by the budget)");
    assert_eq!(waves[1]["budgetCut"], "batch 1 (cut from 3 by the budget)");
    // Progress went to stderr as the run went, never into the JSON.
    let stderr = String::from_utf8_lossy(&output.stderr);
    for words in [
        "wave first started",
        "cluster sim-a started",
        "cluster sim-a ended: ",
        "wave first passed",
        "cluster sim-c ended: ",
        "wave second passed",
    ] {
        assert!(stderr.contains(words), "{words:?} in {stderr}");
    }
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("rehearsal +"),
        "progress in the JSON"
    );
    // The table says the same in 80 columns.
    let table = fleet.rehearse(TWO_WAVES, &["--scenario", scenario]);
    assert_eq!(table.status.code(), Some(0), "{}", text(&table));
    let table_text = String::from_utf8_lossy(&table.stdout);
    eprintln!("{table_text}");
    assert!(
        table_text.lines().all(|l| l.chars().count() <= 80),
        "{table_text}"
    );
    assert!(table_text.contains("bake 10m"), "{table_text}");
    assert!(
        table_text.contains("batch 1 (cut from 2 by the budget)"),
        "{table_text}"
    );
    assert!(table_text.contains("expected wall time"), "{table_text}");
}

#[test]
fn a_crash_looping_image_stops_the_plan_before_wave_two_naming_cluster_node_and_reason() {
    let fleet = Fleet::dumped();
    // The small scenario crash-loops node-agent 1.5.0 on the edge pool.
    let output = fleet.rehearse(TWO_WAVES, &["--scenario", "small", "-o", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let report = json(&output);
    assert_eq!(report["result"], "stopped", "{report:#}");
    let stop = &report["stop"];
    assert_eq!(stop["wave"], "first", "{report:#}");
    assert_eq!(stop["context"], "sim-a", "{report:#}");
    let node = stop["node"].as_str().expect("the failing node");
    assert!(node.contains("edge"), "{report:#}");
    let reason = stop["reason"].as_str().expect("reason");
    assert!(reason.contains("CrashLoopBackOff"), "{reason}");
    assert!(reason.contains(node), "{reason}");
    let waves = report["waves"].as_array().expect("waves");
    assert_eq!(waves[0]["result"], "stopped");
    assert_eq!(waves[1]["result"], "not reached");
    for cluster in clusters(&waves[1]) {
        assert!(cluster["moved"].as_array().is_some_and(Vec::is_empty));
        assert_eq!(cluster["notReached"].as_array().map(Vec::len), Some(5));
    }
    assert!(
        report["notReached"].as_u64().is_some_and(|n| n >= 10),
        "{report:#}"
    );
    // The table names them too.
    let table = fleet.rehearse(TWO_WAVES, &["--scenario", "small"]);
    assert_eq!(table.status.code(), Some(1));
    let table_text = String::from_utf8_lossy(&table.stdout);
    eprintln!("{table_text}");
    assert!(
        table_text.contains("stopped sim-a in wave first") && table_text.contains(node),
        "{table_text}"
    );
}

#[test]
fn a_context_without_a_snapshot_is_refused_by_name() {
    let fleet = Fleet::dumped();
    let plan = "daemonset: kube-system/node-agent
clusters: [sim-a, sim-d, \"sim-*\"]
waves:
  - name: only
    clusters: [sim-a, sim-d, \"sim-*\"]
";
    let output = fleet.rehearse(plan, &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("sim-d"), "{stderr}");
    assert!(!stderr.contains("sim-a,"), "{stderr}");
    assert!(output.stdout.is_empty());
}

/// The dumps load in parallel: one that cannot be read still stops the
/// rehearsal before anything runs, naming its context and file.
#[test]
fn a_malformed_snapshot_is_refused_by_its_context() {
    let fleet = Fleet::dumped();
    std::fs::write(
        fleet.path("snapshots").join("sim-b.yaml"),
        "kind: List\nitems: [unclosed",
    )
    .expect("dump overwritten");
    let plan = "daemonset: kube-system/node-agent
clusters: [\"sim-*\"]
waves:
  - name: only
    clusters: [\"sim-*\"]
";
    let output = fleet.rehearse(plan, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(stderr.contains("sim-b.yaml"), "{stderr}");
    assert!(output.stdout.is_empty(), "{}", text(&output));
    assert!(!stderr.contains("panicked"), "{stderr}");
}
