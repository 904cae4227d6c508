//! A member's run that panics (a bug in rollcall) must not end the fleet
//! run with that member in `auto` and nobody driving it: the panic is
//! caught at the member, the fleet halts as for a failure (every touched
//! cluster paused), and the member itself is paused with the panic's words.
//! A process that dies outright (SIGKILL, out of memory) cannot do this; its
//! members' heartbeats expire instead (`status`: stalled), and a later run
//! of the same plan takes over.

use std::panic::AssertUnwindSafe;

use futures::FutureExt as _;

use super::member::pause_member;
use super::outcome::Outcome;
use super::shared::Shared;

/// Runs a member's part (`run`: its outcome and whether it was touched);
/// a panic in it halts the fleet and pauses the member.
pub(super) async fn caught(
    shared: &Shared,
    context: &str,
    run: impl std::future::Future<Output = (Outcome, bool)>,
) -> (Outcome, bool) {
    let panic = match AssertUnwindSafe(run).catch_unwind().await {
        Ok(done) => return done,
        Err(panic) => panic,
    };
    let cause = format!(
        "{context}: rollcall failed inside this cluster's run ({}): a bug, please report it",
        words(panic.as_ref())
    );
    shared.halt(&cause);
    let reason = shared
        .interrupt
        .halt_reason()
        .unwrap_or_else(|| format!("{}: stopped: {cause}", shared.mark()));
    // The pause is one more try through the same code: it may panic too.
    if AssertUnwindSafe(pause_member(shared, context, &reason))
        .catch_unwind()
        .await
        .is_err()
    {
        tracing::error!(
            context,
            "could not pause the cluster after its run panicked"
        );
    }
    (Outcome::Stopped(cause), true)
}

/// What a panic said (its `&str` or `String` payload).
fn words(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .map_or_else(
            || "a panic".to_owned(),
            |s| crate::sanitize::sanitize(&s).into_owned(),
        )
}
