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

/// The member's DaemonSet, as kubectl reads it.
fn daemonset(kubeconfig: &Path, cache: &Path, member: usize) -> Value {
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
    serde_json::from_str(&text).expect("kubectl prints JSON")
}

/// A 3-cluster embedded fleet (healthy scenario, `sim_faults` added to its
/// flags) and `rollcall fleet` on it in tmux at 80×24, every row live, then
/// narrowed to member 2 with `A`'s form open on it.
struct Fleet {
    dir: tempfile::TempDir,
    _sim: SimProcess,
    tmux: Tmux,
}

impl Fleet {
    fn start(session: &str, sim_faults: &[&str]) -> Fleet {
        let dir = tempfile::tempdir().expect("temp dir");
        let scenario = dir.path().join("healthy.yaml");
        std::fs::write(&scenario, healthy_scenario()).expect("scenario written");
        let kubeconfig = dir.path().join("kubeconfig");
        let mut args = vec![
            "sim",
            "--clusters",
            "3",
            "--scenario",
            scenario.to_str().expect("utf-8 path"),
            "--kubeconfig-out",
            kubeconfig.to_str().expect("utf-8 path"),
        ];
        args.extend_from_slice(sim_faults);
        let (child, _banner) = spawn_sim(&args);
        let sim = SimProcess(child);
        let command = format!(
            "env KUBECONFIG={} HOME={} {} fleet {DS} --all-contexts --journal {} --log-file {}",
            kubeconfig.display(),
            dir.path().display(),
            common::rollcall_bin().display(),
            dir.path().join("journal.jsonl").display(),
            dir.path().join("rollcall.log").display(),
        );
        let tmux = Tmux::start(session, 80, 24, &command);
        tmux.wait_for("three live rows", |screen| {
            (1..=3).all(|k| {
                screen
                    .lines()
                    .any(|l| l.starts_with(&format!("rollcall-sim-{k} ")) && l.contains(" live "))
            })
        });
        Fleet {
            dir,
            _sim: sim,
            tmux,
        }
    }

    /// Member `member`'s DaemonSet, as kubectl reads it.
    fn daemonset(&self, member: usize) -> Value {
        daemonset(
            &self.dir.path().join("kubeconfig"),
            &self.dir.path().join("kubectl-cache"),
            member,
        )
    }

    /// Shows member 2 only and opens `A`'s form; the form's text.
    fn form_on_member_2(&self) -> String {
        for key in ["/", "s", "i", "m", "-", "2", "Enter", "A"] {
            self.tmux.send(key);
        }
        self.tmux.wait_for("the auto-advance form", |screen| {
            screen.contains("auto-advance these clusters")
        })
    }
}

/// Leaving with `q` twice while the run soaks would end it unattended: the
/// run is halted and leaving waits for it to pause the member it touched.
#[test]
fn q_twice_during_a_run_leaves_the_touched_cluster_paused() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    // Every request to member 2 waits 300 ms: halting and pausing it takes
    // longer than the two key presses.
    let fleet = Fleet::start(
        "fleet-auto-quit",
        &["--fault", "latency:300ms=1h", "--fault-cluster", "2"],
    );
    fleet.form_on_member_2();
    // The form's defaults: one node, then a 30 s soak: the run is mid-way.
    fleet.tmux.send("y");
    fleet
        .tmux
        .wait_for("the run soaking its first node", |screen| {
            screen.contains("rollcall-sim-2 node") && screen.contains("soaking")
        });
    fleet.tmux.send("q");
    fleet.tmux.send("q");
    common::tmux::wait_until("the fleet console to exit", || !fleet.tmux.running());
    let touched = &fleet.daemonset(2)["metadata"]["annotations"];
    assert!(
        touched["rollcall.dev/paused-by"].is_string(),
        "the touched member is paused: {touched}"
    );
    let reason = touched["rollcall.dev/pause-reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("fleet matrix"), "{reason}");
    for member in [1, 3] {
        let untouched = &fleet.daemonset(member)["metadata"]["annotations"];
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
    let fleet = Fleet::start("fleet-auto", &[]);
    for member in 1..=3 {
        let status = &fleet.daemonset(member)["status"];
        assert_eq!(status["updatedNumberScheduled"], 0, "member {member}");
    }
    // Only member 2 is shown; A offers the form for it.
    let form = fleet.form_on_member_2();
    assert!(
        form.contains("one wave over the 1 cluster(s) shown, all at once: rollcall-sim-2"),
        "{form}"
    );
    // Batch 5, no soak: the whole member in one gated batch.
    for key in [
        "Right", "Right", "Right", "Right", "Down", "Left", "Left", "Left",
    ] {
        fleet.tmux.send(key);
    }
    let form = fleet.tmux.wait_for("the settings changed", |screen| {
        screen.contains("batch size      5") && screen.contains("soak            0s")
    });
    assert!(form.contains("▶ soak"), "{form}");
    fleet.tmux.send("y");
    let screen = fleet.tmux.wait_for("the run to end", |screen| {
        screen.contains("fleet run ended:")
    });
    assert!(
        screen.contains("fleet run ended: done: 5 node(s) moved in 1 cluster(s)"),
        "{screen}"
    );

    let moved = &fleet.daemonset(2)["status"];
    assert_eq!(
        moved["updatedNumberScheduled"], moved["desiredNumberScheduled"],
        "{moved}"
    );
    for member in [1, 3] {
        let untouched = &fleet.daemonset(member)["status"];
        assert_eq!(
            untouched["updatedNumberScheduled"], 0,
            "member {member}: {untouched}"
        );
    }

    fleet.tmux.send("q");
    common::tmux::wait_until("the fleet console to exit", || !fleet.tmux.running());
}
