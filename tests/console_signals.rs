//! End to end: SIGHUP (a closed SSH session or terminal tab), SIGTERM and
//! SIGQUIT end the console like `q` does and give the terminal back. The real
//! binary runs `demo --scenario small` in a tmux pane under a shell that stays
//! after it exits (tmux forgets the cursor state of a dead pane); tmux's own
//! view of the pane says whether the alternate screen, mouse reporting and the
//! hidden cursor were undone.

mod common;

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

    /// A tmux format (`#{alternate_on}`, ...) evaluated for the pane.
    fn display(&self, session: &str, format: &str) -> String {
        let output = self
            .command()
            .args(["display-message", "-p", "-t", session, format])
            .output()
            .expect("tmux display-message runs");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    fn capture(&self, session: &str) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-t", session])
            .output()
            .expect("tmux capture-pane runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

/// Polls `check` until it holds; panics after the deadline.
fn wait_for(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
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

/// alternate screen, cursor visible, any mouse reporting — as tmux sees the pane.
const TERMINAL_STATE: &str = "#{alternate_on} #{cursor_flag} #{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}#{mouse_sgr_flag}";

#[cfg(target_os = "linux")]
/// The first process whose parent is `parent` (from `/proc/*/stat`).
fn child_of(parent: u32) -> Option<u32> {
    let start = Instant::now();
    while start.elapsed() < DEADLINE {
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let Ok(fields) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
            let Some((head, rest)) = fields.rsplit_once(')') else {
                continue;
            };
            let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok());
            if ppid == Some(parent) {
                return head.split_whitespace().next()?.parse().ok();
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[cfg(target_os = "linux")]
#[test]
fn hangup_terminate_and_quit_restore_the_terminal() {
    if !common::tool_available("tmux") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = Tmux {
        socket: format!("rollcall-signals-{}", std::process::id()),
    };
    for signal in ["HUP", "TERM", "QUIT"] {
        let session = format!("console-{signal}");
        let command = format!(
            "sh -c '{} demo --scenario small --kubeconfig-out {} --log-file {} kube-system/node-agent; \
             echo rollcall exited $?; sleep 120'",
            common::rollcall_bin().display(),
            dir.path().join(format!("{signal}.kubeconfig")).display(),
            dir.path().join(format!("{signal}.log")).display(),
        );
        let status = tmux
            .command()
            .args([
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                "160",
                "-y",
                "40",
                &command,
            ])
            .env("TERM", "xterm-256color")
            .status()
            .expect("tmux starts");
        assert!(status.success(), "tmux new-session");
        wait_for("the console to draw the grid", || {
            tmux.capture(&session).contains("edge-01")
        });
        let before = tmux.display(&session, TERMINAL_STATE);
        assert!(
            before.starts_with("1 0 ") && before.contains('1'),
            "while running: alternate screen on, cursor hidden, mouse reporting on; got {before:?}"
        );
        let shell: u32 = tmux
            .display(&session, "#{pane_pid}")
            .parse()
            .expect("pane pid");
        let pid = child_of(shell).expect("rollcall runs under the pane's shell");
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success(), "kill -{signal} {pid}");
        let start = Instant::now();
        wait_for(&format!("rollcall to exit on SIG{signal}"), || {
            tmux.capture(&session).contains("rollcall exited")
        });
        let after = tmux.display(&session, TERMINAL_STATE);
        let screen = tmux.capture(&session);
        let exit_line = screen
            .lines()
            .find(|l| l.contains("rollcall exited"))
            .unwrap_or_default();
        eprintln!(
            "SIG{signal}: {exit_line} after {:?}; terminal state {after:?}",
            start.elapsed()
        );
        assert_eq!(
            after, "0 1 0000",
            "after SIG{signal}: main screen, cursor visible, no mouse reporting"
        );
        // Design: exit 130 "interrupted" for every command, the console included.
        assert_eq!(exit_line.trim(), "rollcall exited 130", "after SIG{signal}");
    }
}
