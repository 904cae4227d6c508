//! End to end in tmux: `rollcall demo` writes a kubeconfig for kubectl into the
//! temp directory and removes it when it exits; one asked for with
//! `--kubeconfig-out` is kept.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Bound on every wait.
const DEADLINE: Duration = Duration::from_secs(60);

/// A tmux server of our own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket]);
        command
    }

    fn running(&self) -> bool {
        self.command()
            .args(["has-session", "-t", "demo"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .command()
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .status();
    }
}

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

fn wait(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs the demo in tmux at 80×24 with `TMPDIR=tmp`, waits for `written` to
/// appear, quits with `q` and waits for the process to end.
fn run_demo(tmp: &Path, extra: &str, written: impl Fn() -> bool, name: &str) {
    let tmux = Tmux {
        socket: format!("rollcall-demo-test-{}-{name}", std::process::id()),
    };
    let command = format!(
        "env TMPDIR={} {} demo --scenario small --log-file {} {extra}",
        tmp.display(),
        common::rollcall_bin().display(),
        tmp.join("rollcall.log").display(),
    );
    let status = tmux
        .command()
        .args([
            "new-session",
            "-d",
            "-s",
            "demo",
            "-x",
            "80",
            "-y",
            "24",
            &command,
        ])
        .env("TERM", "xterm-256color")
        .status()
        .expect("tmux starts");
    assert!(status.success(), "tmux new-session");
    wait("the demo's kubeconfig", &written);
    // Give the console a moment to take the terminal, then quit.
    std::thread::sleep(Duration::from_millis(500));
    let sent = tmux
        .command()
        .args(["send-keys", "-t", "demo", "q"])
        .status()
        .expect("send-keys");
    assert!(sent.success());
    wait("the demo to exit on q", || !tmux.running());
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
