//! End to end: SIGHUP (a closed SSH session or terminal tab), SIGTERM and
//! SIGQUIT end the console like `q` does and give the terminal back. The real
//! binary runs `demo --scenario small` in a tmux pane under a shell that stays
//! after it exits (tmux forgets the cursor state of a dead pane); tmux's own
//! view of the pane says whether the alternate screen, mouse reporting and the
//! hidden cursor were undone.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::tmux::{DEADLINE, Tmux, wait_until};

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
    for signal in ["HUP", "TERM", "QUIT"] {
        let command = format!(
            "sh -c '{} demo --scenario small --kubeconfig-out {} --log-file {} kube-system/node-agent; \
             echo rollcall exited $?; sleep 120'",
            common::rollcall_bin().display(),
            dir.path().join(format!("{signal}.kubeconfig")).display(),
            dir.path().join(format!("{signal}.log")).display(),
        );
        let tmux = Tmux::start(&format!("signals-{signal}"), 160, 40, &command);
        wait_until("the console to draw the grid", || {
            tmux.capture().contains("edge-01")
        });
        let before = tmux.display(TERMINAL_STATE);
        assert!(
            before.starts_with("1 0 ") && before.contains('1'),
            "while running: alternate screen on, cursor hidden, mouse reporting on; got {before:?}"
        );
        let shell: u32 = tmux.display("#{pane_pid}").parse().expect("pane pid");
        let pid = child_of(shell).expect("rollcall runs under the pane's shell");
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success(), "kill -{signal} {pid}");
        let start = Instant::now();
        wait_until(&format!("rollcall to exit on SIG{signal}"), || {
            tmux.capture().contains("rollcall exited")
        });
        let after = tmux.display(TERMINAL_STATE);
        let screen = tmux.capture();
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
