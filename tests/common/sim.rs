//! `rollcall sim` as a child process of a test: spawned, its banner read.

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
