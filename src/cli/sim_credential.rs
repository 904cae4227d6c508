//! `rollcall sim-credential` (hidden): the exec credential plugin of the
//! embedded cluster's `rollcall-sim-exec` context. Prints an
//! `ExecCredential` with a token signed by the server's key that expires
//! after `--ttl`, so clients (kubectl, kube-rs) must refresh it as they would
//! with `aws eks get-token` or `kubelogin`.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::cli::act_args::parse_duration;
use crate::sim::authn::mint_exec_token;

/// Arguments of `rollcall sim-credential`.
#[derive(Clone, Debug, Args)]
pub struct SimCredentialArgs {
    /// The server's signing key (written into the kubeconfig by `rollcall sim`).
    #[arg(long, value_name = "KEY")]
    pub key: String,
    /// How long the token is valid.
    #[arg(long, value_name = "D", default_value = "2m", value_parser = parse_duration)]
    pub ttl: Duration,
}

/// The ExecCredential JSON for a token valid from `now` (unix seconds) for `ttl`.
pub fn credential(key: &str, now: u64, ttl: Duration) -> serde_json::Value {
    let expiry = now.saturating_add(ttl.as_secs().max(1));
    let expires = i64::try_from(expiry)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .unwrap_or(jiff::Timestamp::MAX);
    serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {
            "token": mint_exec_token(key, expiry),
            "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        }
    })
}

/// Runs `rollcall sim-credential`.
pub fn run(args: &SimCredentialArgs) -> anyhow::Result<ExitCode> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", credential(&args.key, now, args.ttl))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_a_token_expiring_after_the_ttl() {
        let value = credential("k", 1_000, Duration::from_secs(90));
        assert_eq!(value["kind"], "ExecCredential");
        assert_eq!(
            value["status"]["expirationTimestamp"],
            "1970-01-01T00:18:10Z"
        );
        assert_eq!(value["status"]["token"], mint_exec_token("k", 1_090));
    }
}
