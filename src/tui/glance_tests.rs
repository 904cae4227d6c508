//! Issue 33, "on call at a glance": every row says its state. A cordoned
//! node's WHY says the plan skips it; a pod on a node where none should be
//! placed (`keep`, counted misscheduled) is marked `!`; a crash loop is
//! marked `!` between its restarts too, and its WHY is the cause
//! (`exit 1: exec format error`), not the kubelet's back-off text. Rendered
//! at 80×24 and 200×60.

use kube::runtime::watcher;

use super::fixtures::{self, now};
use super::tests::{app_on, draw};
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::engine::fixtures::pod;

/// The mid-rollout fixture with node-03's crash loop between two restarts
/// (running again, not Ready, exit 1 last time) and a pod left on the
/// tainted gpu-01 (`keep`: misscheduled by the DaemonSet's count).
fn glance() -> Cache {
    let mut cache = fixtures::mid_rollout();
    let running_again = pod("agent-n3new", "node-03", "h2")
        .created(3200)
        .running_not_ready(3500)
        .running_again(4)
        .last_terminated(1, "Error", "exec format error")
        .build();
    let kept = pod("agent-g1old", "gpu-01", "h1")
        .created(60)
        .ready_since(70)
        .build();
    for p in [running_again, kept] {
        cache.apply(WatchUpdate::Pod(watcher::Event::Apply(p)), now());
    }
    cache
}

/// The grid line of `node`.
fn line_of(screen: &str, node: &str) -> String {
    screen
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == node))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn every_row_says_its_state() {
    for size in [(80, 24), (200, 60)] {
        let mut cache = glance();
        let app = app_on(&mut cache, size);
        let terminal = draw(&app, &cache);
        let screen = super::layout_tests::text(terminal.backend().buffer());
        let crash = line_of(&screen, "node-03");
        assert!(crash.starts_with(" !"), "{size:?}: {crash}");
        assert!(crash.contains("CrashLoopBackOff"), "{size:?}: {crash}");
        assert!(
            crash.contains("exit 1: exec format error"),
            "{size:?}: {crash}"
        );
        assert!(!crash.contains("Back-off"), "{size:?}: {crash}");
        let kept = line_of(&screen, "gpu-01");
        assert!(kept.starts_with(" !"), "misscheduled: {size:?}: {kept}");
        assert!(kept.contains("keep"), "{size:?}: {kept}");
        let cordoned = line_of(&screen, "node-04");
        assert!(
            cordoned.contains("plan skips: cordoned"),
            "{size:?}: {cordoned}"
        );
        insta::assert_snapshot!(
            format!("rows_say_their_state_{}x{}", size.0, size.1),
            terminal.backend()
        );
    }
}
