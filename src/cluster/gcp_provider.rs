//! The `gcp` auth-provider's command (`cmd-path`, as old GKE kubeconfigs
//! name `gcloud config config-helper`), bounded like exec plugins. kube-rs
//! runs that command itself, synchronously, each time it builds a client and
//! when the token expires, and waits for it for good: a `gcloud` waiting for
//! a login would hang every command. So the command is rewritten to run under
//! `rollcall exec-guard` (killed with everything it started after the
//! timeout, or when rollcall is gone), and run once up front so a hang or a
//! failure is a clear error rather than a stuck or opaque client.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kube::config::AuthProviderConfig;

use crate::cluster::exec::{ExecError, NOT_FOUND, TIMED_OUT, first_lines};

/// kube-rs splits `cmd-args` on single spaces; so does the rewrite.
const SEPARATOR: char = ' ';

/// Whether kube-rs will run the provider's command: a `gcp` provider with a
/// `cmd-path`, and neither an `id-token` nor an access token valid for more
/// than another minute (kube-rs's own test, `token_from_gcp_provider`).
pub fn runs_command(provider: &AuthProviderConfig, now: jiff::Timestamp) -> bool {
    let config = &provider.config;
    if provider.name != "gcp" || !config.contains_key("cmd-path") || config.contains_key("id-token")
    {
        return false;
    }
    let fresh = config.get("access-token").is_some()
        && config
            .get("expiry")
            .and_then(|e| e.parse::<jiff::Timestamp>().ok())
            .is_some_and(|expiry| expiry > now + jiff::SignedDuration::from_secs(60));
    !fresh
}

/// Rewrites the provider so kube-rs runs `binary exec-guard --timeout T --
/// CMD ARGS`. A `cmd-path` with a space cannot be passed through kube-rs's
/// splitting of `cmd-args` and is left as it is (false).
pub fn wrap(provider: &mut AuthProviderConfig, binary: &Path, timeout: Duration) -> bool {
    let config = &mut provider.config;
    let Some(program) = config.get("cmd-path").cloned() else {
        return false;
    };
    if program.contains(char::is_whitespace) || program.is_empty() {
        return false;
    }
    let mut args = format!(
        "exec-guard --timeout {}ms -- {program}",
        timeout.as_millis()
    );
    let original = config.get("cmd-args").map(|a| a.trim().to_owned());
    if let Some(original) = original.filter(|a| !a.is_empty()) {
        args.push(SEPARATOR);
        args.push_str(&original);
    }
    config.insert("cmd-path".to_owned(), binary.to_string_lossy().into_owned());
    config.insert("cmd-args".to_owned(), args);
    true
}

/// The provider's own command, before or after [`wrap`], for messages.
pub fn command_name(provider: &AuthProviderConfig) -> String {
    let config = &provider.config;
    let args = config
        .get("cmd-args")
        .map(String::as_str)
        .unwrap_or_default();
    let program = match args.split_once(" -- ") {
        Some((guard, rest)) if guard.starts_with("exec-guard") => {
            rest.split(SEPARATOR).next().unwrap_or_default().to_owned()
        }
        _ => config.get("cmd-path").cloned().unwrap_or_default(),
    };
    format!("{program} (auth-provider gcp cmd-path)")
}

/// Runs the (wrapped) command once as kube-rs would, waiting at most for the
/// guard: a timeout, a missing command or a failure is the error.
pub async fn preflight(provider: &AuthProviderConfig, timeout: Duration) -> Result<(), ExecError> {
    let plugin = command_name(provider);
    let config = &provider.config;
    let program = config.get("cmd-path").cloned().unwrap_or_default();
    let args = config.get("cmd-args").cloned().unwrap_or_default();
    let mut command = Command::new(&program);
    command
        .args(args.trim().split(SEPARATOR).filter(|a| !a.is_empty()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let missing = |detail: String| ExecError::Missing {
        plugin: plugin.clone(),
        detail,
    };
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .map_err(|e| missing(e.to_string()))?
        .map_err(|e| missing(e.to_string()))?;
    match output.status.code().and_then(|c| u8::try_from(c).ok()) {
        Some(0) => Ok(()),
        Some(TIMED_OUT) if started.elapsed() >= timeout => Err(ExecError::Timeout {
            plugin,
            after: timeout,
        }),
        Some(NOT_FOUND) => Err(missing(first_lines(&output.stderr))),
        _ => Err(ExecError::Failed {
            plugin,
            status: output.status.to_string(),
            stderr: first_lines(&output.stderr),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(pairs: &[(&str, &str)]) -> AuthProviderConfig {
        AuthProviderConfig {
            name: "gcp".to_owned(),
            config: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..AuthProviderConfig::default()
        }
    }

    #[test]
    fn the_command_runs_only_when_kube_would_run_it() {
        let now: jiff::Timestamp = "2025-06-01T10:00:00Z".parse().unwrap();
        let cmd = ("cmd-path", "gcloud");
        let cases = [
            ("command, no token", provider(&[cmd]), true),
            ("id-token", provider(&[cmd, ("id-token", "t")]), false),
            (
                "fresh access token",
                provider(&[
                    cmd,
                    ("access-token", "t"),
                    ("expiry", "2025-06-01T11:00:00Z"),
                ]),
                false,
            ),
            (
                "expiring access token",
                provider(&[
                    cmd,
                    ("access-token", "t"),
                    ("expiry", "2025-06-01T10:00:30Z"),
                ]),
                true,
            ),
            ("no command", provider(&[]), false),
        ];
        for (name, provider, expected) in cases {
            assert_eq!(runs_command(&provider, now), expected, "{name}");
        }
    }

    #[test]
    fn the_command_is_wrapped_in_the_guard_with_its_arguments() {
        let binary = Path::new("/usr/bin/rollcall");
        let mut gcloud = provider(&[
            ("cmd-path", "/opt/sdk/bin/gcloud"),
            ("cmd-args", "config config-helper --format=json"),
        ]);
        assert!(wrap(&mut gcloud, binary, Duration::from_secs(30)));
        assert_eq!(gcloud.config["cmd-path"], "/usr/bin/rollcall");
        assert_eq!(
            gcloud.config["cmd-args"],
            "exec-guard --timeout 30000ms -- /opt/sdk/bin/gcloud config config-helper --format=json"
        );
        assert_eq!(
            command_name(&gcloud),
            "/opt/sdk/bin/gcloud (auth-provider gcp cmd-path)"
        );
        let mut bare = provider(&[("cmd-path", "gcloud")]);
        assert!(wrap(&mut bare, binary, Duration::from_millis(1500)));
        assert_eq!(
            bare.config["cmd-args"],
            "exec-guard --timeout 1500ms -- gcloud"
        );
        let mut spaced = provider(&[("cmd-path", "/Applications/Google Cloud SDK/gcloud")]);
        assert!(!wrap(&mut spaced, binary, Duration::from_secs(1)));
        assert_eq!(
            spaced.config["cmd-path"],
            "/Applications/Google Cloud SDK/gcloud"
        );
    }
}
