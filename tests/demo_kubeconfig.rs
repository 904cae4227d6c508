//! End to end in tmux: `rollcall demo` writes a kubeconfig for kubectl into the
//! temp directory and removes it when it exits; one asked for with
//! `--kubeconfig-out` is kept.

mod common;

use std::path::{Path, PathBuf};

use common::tmux::{Tmux, wait_until};

/// The `rollcall-demo-*.kubeconfig` files in `dir`.
fn demo_kubeconfigs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("read temp dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollcall-demo-") && n.ends_with(".kubeconfig"))
        })
        .collect()
}

/// Runs the demo in tmux at 80×24 with `TMPDIR=tmp`, waits for `written` to
/// appear, quits with `q` and waits for the process to end.
fn run_demo(tmp: &Path, extra: &str, written: impl Fn() -> bool, name: &str) {
    let command = format!(
        "env TMPDIR={} {} demo --scenario small --log-file {} {extra}",
        tmp.display(),
        common::rollcall_bin().display(),
        tmp.join("rollcall.log").display(),
    );
    let tmux = Tmux::start(&format!("demo-{name}"), 80, 24, &command);
    wait_until("the demo's kubeconfig", &written);
    // Once the console has taken the terminal (its grid is drawn), quit.
    tmux.wait_for("the console's grid", |screen| {
        screen.contains("rollcall SIMULATED embedded") && screen.contains(" NODE ")
    });
    tmux.send("q");
    wait_until("the demo to exit on q", || !tmux.running());
}

#[test]
fn demo_removes_its_kubeconfig_on_exit_unless_asked_to_keep_it() {
    if !common::tool_available("tmux") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp dir");

    run_demo(&tmp, "", || !demo_kubeconfigs(&tmp).is_empty(), "temp");
    assert_eq!(demo_kubeconfigs(&tmp), Vec::<PathBuf>::new(), "left behind");

    let kept = dir.path().join("kept.kubeconfig");
    let extra = format!("--kubeconfig-out {}", kept.display());
    run_demo(&tmp, &extra, || kept.exists(), "kept");
    assert!(kept.exists(), "--kubeconfig-out FILE is kept");
    assert!(demo_kubeconfigs(&tmp).is_empty());
}
