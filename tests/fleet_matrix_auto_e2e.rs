//! The fleet matrix's `A` end to end: the real binary serves a 3-cluster
//! embedded fleet (`rollcall sim --clusters 3`, every member with revision 2
//! waiting), `rollcall fleet DS --all-contexts` runs in tmux at 80×24; `/`
//! narrows the matrix to one member, `A` opens the auto-advance form, its
//! settings are changed and `y` starts the run; the status line follows it
//! to `done`, and kubectl sees every node of that member on the new
//! revision and the other members untouched.

mod common;

use std::path::Path;

use common::sim::{SimProcess, spawn_sim};
use common::tmux::Tmux;
use serde_json::Value;

const DS: &str = "kube-system/node-agent";

/// The small scenario without its crash-looping rule: every node can move.
fn healthy_scenario() -> String {
    let small = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenarios/small.yaml"),
    )
    .expect("small scenario");
    let rules = small.find("images:").expect("the scenario has image rules");
    small[..rules].to_owned()
}

/// The member's DaemonSet status, as kubectl reads it.
fn status(kubeconfig: &Path, cache: &Path, member: usize) -> Value {
    let context = format!("rollcall-sim-{member}");
    let text = common::kubectl(
        kubeconfig,
        cache,
        &[
            "--context",
            &context,
            "-n",
            "kube-system",
            "get",
            "daemonset",
            "node-agent",
            "-o",
            "json",
        ],
    );
    let ds: Value = serde_json::from_str(&text).expect("kubectl prints JSON");
    ds["status"].clone()
}

/// The member's DaemonSet annotations, as kubectl reads them.
fn annotations(kubeconfig: &Path, cache: &Path, member: usize) -> Value {
    let context = format!("rollcall-sim-{member}");
    let text = common::kubectl(
        kubeconfig,
        cache,
        &[
            "--context",
            &context,
            "-n",
            "kube-system",
            "get",
            "daemonset",
            "node-agent",
            "-o",
            "json",
        ],
    );
    let ds: Value = serde_json::from_str(&text).expect("kubectl prints JSON");
    ds["metadata"]["annotations"].clone()
}

/// Leaving with `q` twice while the run soaks would end it unattended: the
/// run is halted and leaving waits for it to pause the member it touched.
#[test]
fn q_twice_during_a_run_leaves_the_touched_cluster_paused() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("healthy.yaml");
    std::fs::write(&scenario, healthy_scenario()).expect("scenario written");
    let kubeconfig = dir.path().join("kubeconfig");
    let cache = dir.path().join("kubectl-cache");
    let (child, _banner) = spawn_sim(&[
        "sim",
        "--clusters",
        "3",
        "--scenario",
        scenario.to_str().expect("utf-8 path"),
        // Every request to member 2 waits 300 ms: halting and pausing it
        // takes longer than the two key presses.
        "--fault",
        "latency:300ms=1h",
        "--fault-cluster",
        "2",
        "--kubeconfig-out",
        kubeconfig.to_str().expect("utf-8 path"),
    ]);
    let _sim = SimProcess(child);
    let command = format!(
        "env KUBECONFIG={} HOME={} {} fleet {DS} --all-contexts --journal {} --log-file {}",
        kubeconfig.display(),
        dir.path().display(),
        common::rollcall_bin().display(),
        dir.path().join("journal.jsonl").display(),
        dir.path().join("rollcall.log").display(),
    );
    let tmux = Tmux::start("fleet-auto-quit", 80, 24, &command);
    tmux.wait_for("three live rows", |screen| {
        (1..=3).all(|k| {
            screen
                .lines()
                .any(|l| l.starts_with(&format!("rollcall-sim-{k} ")) && l.contains(" live "))
        })
    });
    for key in ["/", "s", "i", "m", "-", "2", "Enter", "A"] {
        tmux.send(key);
    }
    tmux.wait_for("the auto-advance form", |screen| {
        screen.contains("auto-advance these clusters")
    });
    // The form's defaults: one node, then a 30 s soak: the run is mid-way.
    tmux.send("y");
    tmux.wait_for("the run soaking its first node", |screen| {
        screen.contains("rollcall-sim-2 node") && screen.contains("soaking")
    });
    tmux.send("q");
    tmux.send("q");
    common::tmux::wait_until("the fleet console to exit", || !tmux.running());
    let touched = annotations(&kubeconfig, &cache, 2);
    assert!(
        touched["rollcall.dev/paused-by"].is_string(),
        "the touched member is paused: {touched}"
    );
    let reason = touched["rollcall.dev/pause-reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("fleet matrix"), "{reason}");
    for member in [1, 3] {
        let untouched = annotations(&kubeconfig, &cache, member);
        assert!(
            untouched["rollcall.dev/paused-by"].is_null(),
            "member {member}: {untouched}"
        );
    }
}

#[test]
fn a_in_the_matrix_rolls_the_clusters_shown_and_kubectl_sees_them_moved() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("healthy.yaml");
    std::fs::write(&scenario, healthy_scenario()).expect("scenario written");
    let kubeconfig = dir.path().join("kubeconfig");
    let cache = dir.path().join("kubectl-cache");
    let (child, _banner) = spawn_sim(&[
        "sim",
        "--clusters",
        "3",
        "--scenario",
        scenario.to_str().expect("utf-8 path"),
        "--kubeconfig-out",
        kubeconfig.to_str().expect("utf-8 path"),
    ]);
    let _sim = SimProcess(child);
    let before: Vec<Value> = (1..=3).map(|m| status(&kubeconfig, &cache, m)).collect();
    for (member, status) in before.iter().enumerate() {
        assert_eq!(status["updatedNumberScheduled"], 0, "member {}", member + 1);
    }
    let command = format!(
        "env KUBECONFIG={} HOME={} {} fleet {DS} --all-contexts --journal {} --log-file {}",
        kubeconfig.display(),
        dir.path().display(),
        common::rollcall_bin().display(),
        dir.path().join("journal.jsonl").display(),
        dir.path().join("rollcall.log").display(),
    );
    let tmux = Tmux::start("fleet-auto", 80, 24, &command);
    tmux.wait_for("three live rows", |screen| {
        (1..=3).all(|k| {
            screen
                .lines()
                .any(|l| l.starts_with(&format!("rollcall-sim-{k} ")) && l.contains(" live "))
        })
    });

    // Only member 2 is shown; A offers the form for it.
    for key in ["/", "s", "i", "m", "-", "2", "Enter", "A"] {
        tmux.send(key);
    }
    let form = tmux.wait_for("the auto-advance form", |screen| {
        screen.contains("auto-advance these clusters")
    });
    assert!(
        form.contains("one wave over the 1 cluster(s) shown, all at once: rollcall-sim-2"),
        "{form}"
    );
    // Batch 5, no soak: the whole member in one gated batch.
    for key in [
        "Right", "Right", "Right", "Right", "Down", "Left", "Left", "Left",
    ] {
        tmux.send(key);
    }
    let form = tmux.wait_for("the settings changed", |screen| {
        screen.contains("batch size      5") && screen.contains("soak            0s")
    });
    assert!(form.contains("▶ soak"), "{form}");
    tmux.send("y");
    let screen = tmux.wait_for("the run to end", |screen| {
        screen.contains("fleet run ended:")
    });
    assert!(
        screen.contains("fleet run ended: done: 5 node(s) moved in 1 cluster(s)"),
        "{screen}"
    );

    let moved = status(&kubeconfig, &cache, 2);
    assert_eq!(
        moved["updatedNumberScheduled"], moved["desiredNumberScheduled"],
        "{moved}"
    );
    for member in [1, 3] {
        let untouched = status(&kubeconfig, &cache, member);
        assert_eq!(
            untouched["updatedNumberScheduled"], 0,
            "member {member}: {untouched}"
        );
    }

    tmux.send("q");
    common::tmux::wait_until("the fleet console to exit", || !tmux.running());
}
