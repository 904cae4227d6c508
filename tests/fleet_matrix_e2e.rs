//! The live fleet matrix end to end: the real binary serves a 3-cluster
//! embedded fleet (`rollcall sim --clusters 3`, members varied: member 3's
//! template drifted), `rollcall fleet DS --all-contexts` runs in tmux at
//! 80×24; the matrix shows three live rows and the drift; member 2 freezes
//! (`--fault-cluster 2 --fault freeze=…`, a TCP freeze: the member is as
//! good as dead) and its row turns stale while the others stay live;
//! `Enter` opens the single-cluster console on a member and `Esc` comes back.

mod common;

use std::time::{Duration, Instant};

use common::sim::{SimProcess, spawn_sim};
use common::tmux::Tmux;

const DS: &str = "kube-system/node-agent";

/// When member 2 freezes, counted from the fleet's start: time enough for
/// the matrix to come up live first.
const FREEZE_AFTER: Duration = Duration::from_secs(20);

/// The matrix row of `context` (rows start with the context name).
fn row<'a>(screen: &'a str, context: &str) -> Option<&'a str> {
    screen
        .lines()
        .find(|line| line.starts_with(&format!("{context} ")))
}

fn row_says(screen: &str, context: &str, word: &str) -> bool {
    row(screen, context).is_some_and(|line| line.contains(word))
}

#[test]
fn the_matrix_is_live_marks_a_frozen_member_stale_and_opens_a_members_console() {
    if !common::tool_available("tmux") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    let freeze = format!("freeze={}s+10m", FREEZE_AFTER.as_secs());
    let started = Instant::now();
    let (child, _banner) = spawn_sim(&[
        "sim",
        "--clusters",
        "3",
        "--nodes",
        "12",
        "--speed",
        "4",
        "--kubeconfig-out",
        kubeconfig.to_str().expect("utf-8 path"),
        "--fault-cluster",
        "2",
        "--fault",
        &freeze,
    ]);
    let _sim = SimProcess(child);
    let command = format!(
        "env KUBECONFIG={} HOME={} {} fleet {DS} --all-contexts --log-file {}",
        kubeconfig.display(),
        dir.path().display(),
        common::rollcall_bin().display(),
        dir.path().join("rollcall.log").display(),
    );
    let tmux = Tmux::start("fleet-matrix", 80, 24, &command);

    // Three live rows, member 3 drifted (≠ beside its digest), before the freeze.
    let screen = tmux.wait_until("three live rows", started + FREEZE_AFTER, |screen| {
        (1..=3).all(|k| row_says(screen, &format!("rollcall-sim-{k}"), " live "))
    });
    assert!(screen.contains("rollcall fleet"), "{screen}");
    // Not `demo --fleet`: the servers said they are the embedded cluster.
    assert!(screen.contains("SIMULATED"), "{screen}");
    assert!(
        row_says(&screen, "rollcall-sim-3", "≠"),
        "member 3's template drifted:\n{screen}"
    );
    assert!(screen.contains("drift 1"), "{screen}");

    // The frozen member goes stale within 15 s of its last bookmark; the others stay live.
    let frozen_at = started + FREEZE_AFTER;
    let screen = tmux.wait_until(
        "member 2 stale",
        frozen_at + Duration::from_secs(40),
        |screen| row_says(screen, "rollcall-sim-2", "stale"),
    );
    eprintln!(
        "member 2 marked stale {:.1}s after it froze",
        Instant::now()
            .saturating_duration_since(frozen_at)
            .as_secs_f64()
    );
    for live in ["rollcall-sim-1", "rollcall-sim-3"] {
        assert!(row_says(&screen, live, " live "), "{live}:\n{screen}");
    }

    // Enter opens member 1's own console (its grid of nodes) in this terminal…
    tmux.send("Enter");
    let console = tmux.wait_for("member 1's console", |screen| {
        screen.contains("rollcall-sim-1")
            && !screen.contains("rollcall fleet")
            && screen.contains("node")
    });
    assert!(console.contains("SIMULATED"), "{console}");
    // …and Esc on its bare grid comes back to the matrix.
    tmux.send("Escape");
    let screen = tmux.wait_for("the matrix again", |screen| {
        screen.contains("rollcall fleet") && row_says(screen, "rollcall-sim-1", " live ")
    });
    assert!(row_says(&screen, "rollcall-sim-2", "stale"), "{screen}");

    tmux.send("q");
    common::tmux::wait_until("the fleet console to exit", || !tmux.running());
}
