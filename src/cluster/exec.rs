//! Exec credential plugins, bounded. kube-rs runs a kubeconfig's `exec`
//! plugin synchronously and waits for it for good; a plugin that hangs
//! (a browser login nobody completes, a dead SSO endpoint) would hold every
//! command and the console, and stay behind when rollcall is killed.
//!
//! So every plugin runs under `rollcall exec-guard` ([`guard`]): the guard
//! puts itself and the plugin out of the terminal's process group, kills the
//! plugin's whole process group after a timeout (saying so, naming it) or as
//! soon as rollcall itself is gone, and passes the plugin's output through.
//! [`preflight`] runs the plugin once, through the guard, before the first
//! request, so a missing, hanging or garbage-printing plugin is a clear error
//! up front rather than an opaque client failure.

use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use kube::config::ExecConfig;

/// The guard's exit code when the plugin timed out (as `timeout(1)`).
pub const TIMED_OUT: u8 = 124;
/// The guard's exit code when the plugin could not be started (as a shell).
pub const NOT_FOUND: u8 = 127;
/// The guard's exit code when rollcall went away first.
pub const ORPHANED: u8 = 125;

/// Why a plugin gave no credential.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The command does not exist or cannot be run.
    #[error(
        "exec credential plugin `{plugin}` could not be started: {detail} (is it installed and on PATH?)"
    )]
    Missing {
        /// The plugin's command.
        plugin: String,
        /// The OS's answer.
        detail: String,
    },
    /// The plugin did not finish in time and was killed.
    #[error("exec credential plugin `{plugin}` did not answer within {}s and was killed (a login waiting for input? run it by hand to see)", after.as_secs_f64())]
    Timeout {
        /// The plugin's command.
        plugin: String,
        /// The timeout.
        after: Duration,
    },
    /// The plugin failed.
    #[error("exec credential plugin `{plugin}` failed ({status}): {stderr}")]
    Failed {
        /// The plugin's command.
        plugin: String,
        /// How it ended.
        status: String,
        /// What it said on stderr (first lines).
        stderr: String,
    },
    /// The plugin printed something that is not an ExecCredential.
    #[error("exec credential plugin `{plugin}` printed no usable ExecCredential: {detail}")]
    Garbage {
        /// The plugin's command.
        plugin: String,
        /// What was wrong.
        detail: String,
    },
}

/// Runs `program args` (inheriting stdio) until it exits, `timeout` passes
/// or the parent process is gone; returns the exit code for the guard.
/// This is the body of `rollcall exec-guard`.
pub fn guard(program: &str, args: &[String], timeout: Duration) -> u8 {
    #[cfg(unix)]
    let parent = std::os::unix::process::parent_id();
    let mut command = Command::new(program);
    command.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            report(&format!(
                "exec credential plugin `{program}` could not be started: {error}"
            ));
            return NOT_FOUND;
        }
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return exit_code(status),
            Ok(None) => {}
            Err(_) => return 1,
        }
        #[cfg(unix)]
        if std::os::unix::process::parent_id() != parent {
            kill_group(&mut child);
            return ORPHANED;
        }
        if started.elapsed() >= timeout {
            kill_group(&mut child);
            report(&format!(
                "exec credential plugin `{program}` did not answer within {}s and was killed",
                timeout.as_secs_f64()
            ));
            return TIMED_OUT;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Moves this process (the guard) out of the terminal's foreground process
/// group: a Ctrl-C that kills rollcall must leave the guard alive to clean up
/// after the plugin. Only `rollcall exec-guard` calls this.
pub fn leave_terminal_group() {
    #[cfg(unix)]
    let _ = nix::unistd::setpgid(nix::unistd::Pid::from_raw(0), nix::unistd::Pid::from_raw(0));
}

/// Whether `pid` is a live process (not gone, not a zombie).
pub fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

fn exit_code(status: ExitStatus) -> u8 {
    status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(1)
}

/// Kills the plugin and everything it started (its process group).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Rewrites `exec` so the plugin runs under `binary exec-guard --timeout T`.
pub fn wrap(exec: &mut ExecConfig, binary: &std::path::Path, timeout: Duration) {
    let Some(program) = exec.command.take() else {
        return;
    };
    let mut args = vec![
        "exec-guard".to_owned(),
        "--timeout".to_owned(),
        format!("{}ms", timeout.as_millis()),
        "--".to_owned(),
        program,
    ];
    args.extend(exec.args.take().unwrap_or_default());
    exec.command = Some(binary.to_string_lossy().into_owned());
    exec.args = Some(args);
}

/// The plugin's own command (before or after [`wrap`]), for messages.
pub fn plugin_name(exec: &ExecConfig) -> String {
    let args = exec.args.as_deref().unwrap_or_default();
    if args.first().map(String::as_str) == Some("exec-guard")
        && let Some(pos) = args.iter().position(|a| a == "--")
    {
        return args.get(pos + 1).cloned().unwrap_or_default();
    }
    exec.command.clone().unwrap_or_default()
}

/// Runs the (wrapped) plugin once and checks that it prints an ExecCredential.
pub async fn preflight(exec: &ExecConfig, timeout: Duration) -> Result<(), ExecError> {
    let plugin = plugin_name(exec);
    let Some(program) = exec.command.clone() else {
        return Err(ExecError::Missing {
            plugin,
            detail: "the kubeconfig's exec section names no command".to_owned(),
        });
    };
    let mut command = Command::new(&program);
    command
        .args(exec.args.clone().unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            command.env(name, value);
        }
    }
    for name in exec.drop_env.iter().flatten() {
        command.env_remove(name);
    }
    let info = serde_json::json!({"apiVersion": exec.api_version.clone()
        .unwrap_or_else(|| "client.authentication.k8s.io/v1".to_owned()),
        "kind": "ExecCredential", "spec": {"interactive": false}});
    command.env("KUBERNETES_EXEC_INFO", info.to_string());
    let started = Instant::now();
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .map_err(|e| ExecError::Missing {
            plugin: plugin.clone(),
            detail: e.to_string(),
        })?
        .map_err(|e| ExecError::Missing {
            plugin: plugin.clone(),
            detail: e.to_string(),
        })?;
    let stderr = first_lines(&output.stderr);
    match output.status.code().and_then(|c| u8::try_from(c).ok()) {
        Some(0) => check_credential(&plugin, &output.stdout),
        Some(TIMED_OUT) if started.elapsed() >= timeout => Err(ExecError::Timeout {
            plugin,
            after: timeout,
        }),
        Some(NOT_FOUND) => Err(ExecError::Missing {
            plugin,
            detail: stderr,
        }),
        _ => Err(ExecError::Failed {
            plugin,
            status: output.status.to_string(),
            stderr,
        }),
    }
}

pub(crate) fn first_lines(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .collect();
    crate::sanitize::sanitize(&lines.join(" / "))
        .chars()
        .take(400)
        .collect()
}

fn check_credential(plugin: &str, stdout: &[u8]) -> Result<(), ExecError> {
    let garbage = |detail: String| ExecError::Garbage {
        plugin: plugin.to_owned(),
        detail,
    };
    let value: serde_json::Value = serde_json::from_slice(stdout)
        .map_err(|e| garbage(format!("not JSON ({e}): {}", first_lines(stdout))))?;
    if value["kind"] != "ExecCredential" {
        return Err(garbage("the JSON's kind is not ExecCredential".to_owned()));
    }
    let status = &value["status"];
    let has_token = status["token"].as_str().is_some_and(|t| !t.is_empty());
    let has_cert =
        status["clientCertificateData"].is_string() && status["clientKeyData"].is_string();
    if !has_token && !has_cert {
        return Err(garbage(
            "status has neither a token nor a client certificate".to_owned(),
        ));
    }
    Ok(())
}

/// The rollcall binary, to run the guard with; `None` when this process is
/// not rollcall (a test or another program using the library), whose exec
/// plugins then run as kube-rs runs them, unbounded.
pub fn guard_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_string_lossy().into_owned();
    matches!(stem.as_str(), "rollcall" | "kubectl-rollcall").then_some(exe)
}

/// Writes one line to stderr (the guard's only channel to the user), sanitised:
/// the program name comes from a kubeconfig.
fn report(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{}", crate::sanitize::sanitize(text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_check_names_the_problem() {
        assert!(
            check_credential("p", br#"{"kind":"ExecCredential","status":{"token":"t"}}"#).is_ok()
        );
        let err = check_credential("aws", b"hello\x1b]52;c;x\x07").unwrap_err();
        assert!(err.to_string().contains("`aws`"), "{err}");
        assert!(!err.to_string().contains('\x1b'), "{err}");
        assert!(check_credential("p", br#"{"kind":"ExecCredential","status":{}}"#).is_err());
        assert!(check_credential("p", br#"{"kind":"Other"}"#).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn guard_kills_a_hanging_plugin_and_its_children() {
        let dir = std::env::temp_dir();
        let marker = dir.join(format!("rollcall-guard-test-{}", std::process::id()));
        let script = format!("sleep 30 & echo $! > {}; wait", marker.display());
        let started = Instant::now();
        let code = guard("sh", &["-c".to_owned(), script], Duration::from_millis(500));
        assert_eq!(code, TIMED_OUT);
        assert!(started.elapsed() < Duration::from_secs(5));
        let pid = std::fs::read_to_string(&marker).unwrap();
        let _ = std::fs::remove_file(&marker);
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !is_running(pid.trim().parse().unwrap()),
            "the plugin's child {pid} survived"
        );
        assert_eq!(
            guard("/nonexistent/plugin", &[], Duration::from_secs(1)),
            NOT_FOUND
        );
        assert_eq!(guard("true", &[], Duration::from_secs(5)), 0);
    }

    #[test]
    fn wrap_keeps_the_plugin_name() {
        let mut exec: ExecConfig = serde_json::from_value(
            serde_json::json!({"command": "aws", "args": ["eks", "get-token"]}),
        )
        .unwrap();
        wrap(
            &mut exec,
            std::path::Path::new("/bin/rollcall"),
            Duration::from_secs(3),
        );
        assert_eq!(exec.command.as_deref(), Some("/bin/rollcall"));
        assert_eq!(plugin_name(&exec), "aws");
        assert_eq!(exec.args.as_ref().unwrap().last().unwrap(), "get-token");
    }
}
