//! The embedded cluster for a test: `rollcall sim` as a child process
//! (spawned, its banner read), or in the test's own process ([`InProcess`]).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::rollcall_bin;

/// Spawns `rollcall sim ARGS` and waits for its banner; returns the child and
/// the banner's lines.
pub fn spawn_sim(args: &[&str]) -> (Child, Vec<String>) {
    let mut child = Command::new(rollcall_bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rollcall sim starts");
    let stdout = child.stdout.take().expect("rollcall sim starts");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let done = line.contains("stop with Ctrl-C");
            let _ = tx.send(line);
            if done {
                return;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                let done = line.contains("stop with Ctrl-C");
                lines.push(line);
                if done {
                    return (child, lines);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("rollcall sim did not start: {lines:?}");
}

/// A spawned `rollcall sim`, killed when dropped.
pub struct SimProcess(pub Child);

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An embedded cluster in the test's own process on a built-in scenario, with
/// a kubeconfig written for kubectl in a temporary directory.
pub struct InProcess {
    /// The cluster (API server, controller, kubelets, scheduler).
    pub cluster: rollcall::sim::embedded::EmbeddedCluster,
    /// Holds `kubeconfig`.
    pub dir: tempfile::TempDir,
}

impl InProcess {
    /// Starts `scenario` at `speed` (kubelet delays divided by it).
    pub async fn start(scenario: &str, speed: f64) -> InProcess {
        let options = rollcall::sim::embedded::EmbeddedOptions {
            scenario: Some(scenario.to_owned()),
            speed,
            ..rollcall::sim::embedded::EmbeddedOptions::default()
        };
        let cluster = rollcall::sim::embedded::start(options)
            .await
            .expect("embedded cluster starts");
        let dir = tempfile::tempdir().expect("temp dir");
        cluster
            .server
            .write_kubeconfig(&dir.path().join("kubeconfig"))
            .expect("kubeconfig written");
        InProcess { cluster, dir }
    }
}

#[allow(dead_code, reason = "not every test binary runs kubectl")]
impl InProcess {
    /// Runs the real kubectl on this cluster's kubeconfig with a fresh
    /// discovery cache (as a first-time user would) and `HOME` in the
    /// cluster's directory, off the async runtime's threads.
    pub async fn kubectl_output(&self, args: &[&str]) -> std::process::Output {
        let mut command = self.kubectl_command(args);
        tokio::task::spawn_blocking(move || command.output().expect("kubectl runs"))
            .await
            .expect("joined")
    }

    /// The real kubectl on this cluster's kubeconfig, with a fresh discovery
    /// cache and `HOME` in the cluster's directory, not yet run.
    pub fn kubectl_command(&self, args: &[&str]) -> Command {
        let cache = tempfile::tempdir().expect("cache dir").keep();
        let mut command = Command::new("kubectl");
        command
            .arg(format!(
                "--kubeconfig={}",
                self.dir.path().join("kubeconfig").display()
            ))
            .arg(format!("--cache-dir={}", cache.display()))
            .args(args)
            .env("KUBECACHEDIR", &cache)
            .env("HOME", self.dir.path())
            .env_remove("KUBECONFIG");
        command
    }

    /// [`InProcess::kubectl_output`] that must succeed: its stdout.
    pub async fn kubectl_stdout(&self, args: &[&str]) -> String {
        let output = self.kubectl_output(args).await;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "kubectl {args:?} failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }
}
