//! A tmux server of a test's own (its own socket, killed on drop) running one
//! session `console`, driven as a person would: send keys, read the screen.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Bound on every wait for the screen.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The test's tmux server.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `shell_command` in a `width`×`height` session named `console`
    /// on a server of its own (socket named after `tag` and the process).
    pub fn start(tag: &str, width: u16, height: u16, shell_command: &str) -> Self {
        let tmux = Self {
            socket: format!("rollcall-{tag}-{}", std::process::id()),
        };
        let status = tmux
            .command()
            .args(["new-session", "-d", "-s", "console", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .arg(shell_command)
            .env("TERM", "xterm-256color")
            .status()
            .expect("tmux starts");
        assert!(status.success(), "tmux new-session");
        tmux
    }

    /// A `tmux` command on this server.
    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket]);
        command
    }

    /// The screen as text.
    pub fn capture(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-t", "console"])
            .output()
            .expect("tmux capture-pane runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Sends keys (tmux key names or text).
    pub fn send(&self, keys: &str) {
        let status = self
            .command()
            .args(["send-keys", "-t", "console", keys])
            .status()
            .expect("tmux send-keys runs");
        assert!(status.success(), "send-keys {keys}");
    }

    /// A tmux format (`#{alternate_on}`, `#{pane_pid}`, ...) evaluated for the pane.
    pub fn display(&self, format: &str) -> String {
        let output = self
            .command()
            .args(["display-message", "-p", "-t", "console", format])
            .output()
            .expect("tmux display-message runs");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Whether the session still runs (its command has not exited).
    pub fn running(&self) -> bool {
        self.command()
            .args(["has-session", "-t", "console"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Presses `key` until `check` holds on the screen (at most `presses`
    /// times), then waits for it as [`Tmux::wait_for`] does.
    pub fn scroll_until(
        &self,
        key: &str,
        presses: usize,
        what: &str,
        check: impl Fn(&str) -> bool,
    ) {
        for _ in 0..presses {
            if check(&self.capture()) {
                return;
            }
            self.send(key);
            std::thread::sleep(Duration::from_millis(150));
        }
        self.wait_for(what, check);
    }

    /// Polls the screen until `check` holds; panics with the last screen after [`DEADLINE`].
    pub fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        self.wait_until(what, Instant::now() + DEADLINE, check)
    }

    /// Polls the screen until `check` holds; panics with the last screen at `deadline`.
    pub fn wait_until(
        &self,
        what: &str,
        deadline: Instant,
        check: impl Fn(&str) -> bool,
    ) -> String {
        loop {
            let screen = self.capture();
            if check(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// Starts `rollcall demo --scenario small` on kube-system/node-agent in a
/// `width`×`height` session; its kubeconfig (returned) and log go into `dir`.
pub fn start_demo(tag: &str, dir: &Path, width: u16, height: u16) -> (Tmux, PathBuf) {
    let kubeconfig = dir.join("kubeconfig");
    let command = format!(
        "{} demo --scenario small --kubeconfig-out {} --log-file {} kube-system/node-agent",
        super::rollcall_bin().display(),
        kubeconfig.display(),
        dir.join("rollcall.log").display()
    );
    (Tmux::start(tag, width, height, &command), kubeconfig)
}

/// The screen line of a node's grid row (after the marks column: canary, problem).
pub fn row<'a>(screen: &'a str, node: &str) -> Option<&'a str> {
    screen.lines().find(|line| {
        line.trim_start_matches([' ', '◆', '!', '×'])
            .starts_with(&format!("{node} "))
    })
}

/// Polls `check` until it holds; panics after [`DEADLINE`].
pub fn wait_until(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The session is usually gone already (q quit it); tmux then complains on stderr.
        let _ = self
            .command()
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .status();
    }
}
