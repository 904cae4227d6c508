//! One member cluster of a fleet run, reached: connected through the run's
//! connector (an unreachable cluster is waited for, or skipped), its
//! DaemonSet followed live, its one writer journalling with the context;
//! and paused with the fleet's reason when the run stops.

use std::sync::Arc;
use std::time::Duration;

use super::outcome::Outcome;
use super::report::Happening;
use super::shared::Shared;
use crate::cluster::connect::Connection;
use crate::model::Target;
use crate::ops::drive::{Progress, write_with_retries};
use crate::ops::follow::Follower;
use crate::ops::interrupt::Interrupt;
use crate::ops::pause::{PauseRequest, pause};
use crate::ops::write::Executor;

/// How long a held wave waits before trying an unreachable cluster again.
const HOLD_RETRY: Duration = Duration::from_secs(5);

/// A member connected: its DaemonSet, its one writer, its live view.
pub(super) struct Member {
    /// The connection.
    pub connection: Connection,
    /// The DaemonSet there.
    pub target: Target,
    /// The one writer (a dry run's records instead of sending).
    pub executor: Executor,
    /// The DaemonSet, followed live.
    pub follower: Follower,
}

/// Connects to `context` and follows its DaemonSet until a first view
/// arrives within the patience: waits while it is unreachable (the wave
/// holds), or gives up at once when told to skip; `Err` is the outcome.
/// (Connecting alone proves nothing: a kubeconfig is read without asking
/// the server.)
pub(super) async fn connect(shared: &Shared, context: &str) -> Result<Member, Outcome> {
    let mut said = false;
    loop {
        let why = match reach(shared, context, &shared.interrupt).await {
            Ok(reached) => return Ok(reached),
            Err(why) => why,
        };
        if shared.interrupt.requested() {
            return Err(Outcome::Stopped("stopped while unreachable".to_owned()));
        }
        if shared.settings.skip_unreachable {
            return Err(Outcome::Skipped(format!("unreachable: {why}")));
        }
        if !said {
            let text = format!(
                "unreachable, the wave holds (retrying every {}s; --unreachable skip goes on \
                 without it): {why}",
                HOLD_RETRY.as_secs(),
            );
            shared.say(context, Happening::Held, Progress::new("hold", None, text));
            said = true;
        }
        tokio::select! {
            () = tokio::time::sleep(HOLD_RETRY) => {}
            () = shared.interrupt.wait() => {}
        }
    }
}

/// One try of [`connect`]: the member with a first view, or why not.
async fn reach(shared: &Shared, context: &str, stop: &Interrupt) -> Result<Member, String> {
    let connection = shared.connector.connect(context).await?;
    let target = shared
        .daemonset
        .resolve(shared.settings.namespace.as_deref(), &connection.namespace)
        .map_err(|err| err.to_string())?;
    let actor = crate::ops::journal::actor(&connection).await;
    // Writes go without kube's retry layer: a delete is never resent; a lost
    // reply is resolved by reading the pod back.
    let executor = Executor::new(
        connection.watch_client.clone(),
        shared.settings.journal.clone(),
        false,
        connection.context.clone(),
        actor,
    )
    .with_gate(shared.gate.clone());
    let executor = if shared.dry_run() {
        executor.into_dry_run()
    } else {
        executor
    };
    let report = Arc::clone(&shared.report);
    let owned = context.to_owned();
    let follower = Follower::start(connection.watch_client.clone(), &target).with_notices(
        Arc::new(move |text: &str| {
            let notice = Progress::new("notice", None, text);
            report.event(super::report::Event::member(
                &owned,
                Happening::Notice,
                notice,
            ));
        }),
    );
    let patience = shared.settings.patience;
    tokio::select! {
        first = tokio::time::timeout(patience, follower.snapshot()) => match first {
            Ok(Ok(_)) => Ok(Member { connection, target, executor, follower }),
            Ok(Err(err)) => Err(err.to_string()),
            Err(_) => Err(format!(
                "no view of the DaemonSet within {}s (--request-timeout)",
                patience.as_secs_f64()
            )),
        },
        () = stop.wait() => Err("interrupted".to_owned()),
    }
}

/// Sanitised words of an error that keeps a member from starting.
pub(super) fn blocked(err: &dyn std::fmt::Display) -> Outcome {
    Outcome::Blocked(crate::sanitize::sanitize(&err.to_string()).into_owned())
}

/// Pauses a member this run touched and left idle (it passed before the
/// fleet stopped), with the fleet's reason, so every touched cluster is
/// paused; an error is said, not raised.
pub(super) async fn pause_member(shared: &Shared, context: &str, reason: &str) {
    let result = async {
        // After the stop: one try, which the stop itself must not cut short.
        let member = reach(shared, context, &Interrupt::never()).await?;
        let request = PauseRequest {
            by: format!("{} ({})", shared.settings.by, member.executor.actor()),
            reason: Some(reason.to_owned()),
            node: None,
            automatic: true,
        };
        let now = crate::clock::now();
        write_with_retries(
            &member.follower,
            |s| {
                if s.state()?.pause.is_some() {
                    return Ok(None);
                }
                pause(s, &request, now).map(Some)
            },
            &member.executor,
        )
        .await
        .map_err(|e| e.to_string())
    }
    .await;
    let text = match result {
        Ok(()) => format!("paused: {reason}"),
        Err(err) => format!("could not pause it: {err}"),
    };
    shared.say(
        context,
        Happening::Paused,
        Progress::new("pause", None, text),
    );
}
