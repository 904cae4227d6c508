//! What a run says, the same words in the console's status line and on the
//! headless command's stderr: waits, deletes (with `would` in a dry run), and
//! how the run ended.

use crate::engine::rollout::WaitingFor;
use crate::ops::advance::Victim;
use crate::ops::error::OpsError;

/// What a node of the batch waits for.
pub fn waiting_text(what: &WaitingFor) -> String {
    match what {
        WaitingFor::ReplacementPod => {
            "waiting for the controller to create the replacement pod".to_owned()
        }
        WaitingFor::Ready { deadline } => {
            format!("waiting for Ready (until {})", second(*deadline))
        }
        WaitingFor::Available { at } => {
            format!("waiting for minReadySeconds (until {})", second(*at))
        }
        WaitingFor::Soak { until } => format!("soaking (until {})", second(*until)),
    }
}

/// A taken-over RollingUpdate DaemonSet's `maxUnavailable` is spent.
pub fn over_budget_text(unavailable: usize) -> String {
    format!(
        "waiting: {unavailable} node(s) without an available pod spend the DaemonSet's \
         maxUnavailable; the next batch starts when nodes come back"
    )
}

/// The verb of a node move: `advancing` or `moving back`.
pub fn moving(label: &str) -> &'static str {
    if label == "rollback" {
        "moving back"
    } else {
        "advancing"
    }
}

/// The past tense of a node move: `advanced` or `moved back`.
pub fn moved(label: &str) -> &'static str {
    if label == "rollback" {
        "moved back"
    } else {
        "advanced"
    }
}

/// One delete of a batch and its answer; a dry run says what it would do
/// (nothing was deleted, and no replacement will come).
pub fn delete_text(
    label: &str,
    victim: &Victim,
    result: Result<(), &OpsError>,
    dry_run: bool,
) -> String {
    let verb = moving(label);
    match result {
        Ok(()) if dry_run => format!("{verb}: would delete pod {}", victim.pod),
        Ok(()) => format!("{verb}: deleted pod {}", victim.pod),
        Err(err) => format!("{verb}: delete of pod {} failed: {err}", victim.pod),
    }
}

fn second(at: jiff::Timestamp) -> jiff::Timestamp {
    at.round(jiff::Unit::Second).unwrap_or(at)
}
