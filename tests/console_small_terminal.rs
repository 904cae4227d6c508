//! End to end at 80×24, the size many on-call laptops and jump hosts give:
//! the real binary in tmux on `rollcall demo --scenario small`. A pause with a
//! long reason is recorded on the DaemonSet with the real kubectl (the
//! annotations the rollout operations write); the test then reads the pause
//! in the header (summary and counts kept), the whole reason on `m`, scrolls the `?` help down to the rollout keys
//! and the connection's kubeconfig, and scrolls a node's detail down to its
//! recent events — all without a wider terminal. The title line says
//! SIMULATED (the demo's cluster is the embedded one). Every wait is bounded.

mod common;

use common::kubectl;
use common::tmux::start_demo;

/// The recorded pause reason: longer than one 80-column line.
const REASON: &str = "auto-advance stopped: node general-02 CrashLoopBackOff (container agent restarted 4 times during the 30s soak of batch 2)";

/// The screen's lines joined with the box borders and line breaks removed,
/// so wrapped text reads as one line.
fn flowing(screen: &str) -> String {
    screen
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_tour_fits_in_80_by_24() {
    if !common::tool_available("tmux") || !common::tool_available("kubectl") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("kube-cache");
    let (tmux, kubeconfig) = start_demo("80x24", dir.path(), 80, 24);
    let screen = tmux.wait_for("the grid", |s| {
        s.contains("general-01") && s.contains("? help")
    });
    // The embedded cluster is never mistaken for a real one: its title says so.
    let title = screen.lines().next().unwrap_or_default();
    assert!(
        title.starts_with("rollcall SIMULATED "),
        "the title line says SIMULATED: {screen}"
    );

    // The pause, as the rollout operations record it on the DaemonSet.
    kubectl(
        &kubeconfig,
        &cache,
        &[
            "annotate",
            "daemonset",
            "-n",
            "kube-system",
            "node-agent",
            "rollcall.dev/paused-by=ana@jumphost",
            &format!("rollcall.dev/pause-reason={REASON}"),
        ],
    );
    // The header keeps the summary and the counts: the reason is cut to
    // its line, `m` shows it whole (issue 33).
    let screen = tmux.wait_for("the pause in the header", |s| {
        s.contains("rollout: paused by ana@jumphost: auto-advance stopped")
    });
    assert!(
        screen.lines().any(|l| l.starts_with("desired ")),
        "the counts stay: {screen}"
    );
    let footer = screen
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or_default();
    assert!(footer.trim_end().ends_with("? help"), "{screen}");
    assert!(
        footer.starts_with("a advance  n next  c canary  A auto  p pause"),
        "the rollout keys lead the footer: {screen}"
    );
    tmux.send("m");
    tmux.wait_for("the whole pause reason on m", |s| {
        flowing(s).contains(&format!("paused by ana@jumphost: {REASON}"))
    });
    tmux.send("Escape");
    tmux.wait_for("the full view closed", |s| !s.contains("┌ in full"));

    // A cordoned node says so in WHY, as the plan says it (issue 33).
    kubectl(&kubeconfig, &cache, &["cordon", "general-01"]);
    tmux.wait_for("the cordoned row's WHY", |s| {
        s.lines()
            .any(|l| l.contains("general-01") && l.contains("plan skips: cordoned"))
    });

    // p on the paused rollout resumes; p again asks why first.
    tmux.send("p");
    tmux.wait_for("the resume dialog", |s| s.contains("resume the rollout?"));
    tmux.send("y");
    tmux.wait_for("resumed", |s| !s.contains("rollout: paused"));
    tmux.send("p");
    tmux.wait_for("the reason field", |s| {
        s.contains("pause the rollout: why?")
    });
    tmux.send("canary-bad");
    tmux.wait_for("the reason typed", |s| s.contains("reason: canary-bad"));
    tmux.send("Enter");
    tmux.wait_for("the confirmation with the reason", |s| {
        s.contains("pause the rollout?") && s.contains("reason: canary-bad")
    });
    tmux.send("y");
    tmux.wait_for("paused with the reason, by the cluster identity", |s| {
        s.contains("rollout: paused by rollcall-sim-admin") && s.contains(": canary-bad")
    });

    // The help scrolls down to the rollout keys and the kubeconfig path.
    tmux.send("?");
    tmux.wait_for("the help", |s| s.contains("keys · ? or Esc closes"));
    tmux.scroll_until("j", 80, "the rollout keys in the help", |s| {
        s.contains("advance the selected node") && s.contains("roll back: pick a revision")
    });
    tmux.scroll_until("G", 2, "the end of the help", |s| {
        s.contains("blocks the rollout")
    });
    tmux.send("g");
    tmux.wait_for("the kubeconfig in the help", |s| {
        flowing(s).contains(&kubeconfig.display().to_string())
    });
    tmux.send("Escape");
    tmux.wait_for("the help closed", |s| !s.contains("keys · ? or Esc closes"));

    // The detail pane of a node scrolls down to its recent events.
    tmux.send("Enter");
    tmux.wait_for("the node detail", |s| s.contains("Eligibility"));
    // The events close the pane: the marker at the bottom border says the
    // end is reached (no ↓ left).
    tmux.scroll_until("Down", 60, "the recent events in the detail", |s| {
        s.contains("Recent events") && s.lines().any(|l| l.starts_with('└') && l.contains(" ↑ "))
    });
    tmux.send("Escape");
    tmux.send("q");
}
