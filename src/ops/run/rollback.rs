//! How a rollback starts, the same from `rollcall rollback` and the console's
//! `r`: the template patch (as `kubectl rollout undo`), then on OnDelete a run
//! that moves the nodes back, most recently updated first; on RollingUpdate
//! the controller moves them and only the rollback's record is written.

use std::time::Duration;

use crate::engine::rollout::rollback_order;
use crate::ops::auto::AutoPolicy;
use crate::ops::error::OpsError;
use crate::ops::rollback::state_request;
use crate::ops::run::fit::rollback_fit;
use crate::ops::run::settings::{RunSettings, StartRefusal};
use crate::ops::run::{Run, Started};
use crate::ops::snapshot::Snapshot;
use crate::ops::write::WriteRequest;

/// A rollback about to be written.
#[derive(Clone, Debug, PartialEq)]
pub struct RollbackStart {
    /// The template patch, written first.
    pub patch: WriteRequest,
    /// Then the run's start (OnDelete) or the rollback's record (RollingUpdate).
    pub then: WriteRequest,
    /// On OnDelete, the run that moves the nodes back once the patch is seen.
    pub run: Option<Run>,
    /// The nodes the run moves back, in order (empty on RollingUpdate).
    pub order: Vec<String>,
    /// The revision rolled back to.
    pub to: i64,
}

/// What a rollback run is given besides the revision.
#[derive(Clone, Debug)]
pub struct RollbackOptions {
    /// How long each node may take to become Ready again.
    pub timeout: Duration,
    /// Also move back cordoned nodes.
    pub include_cordoned: bool,
    /// Move a node back although its replacement will not fit.
    pub despite_fit: bool,
    /// The fleet run this rollback is a member's part of (see
    /// [`RunSettings::fleet_run`]).
    pub fleet_run: Option<crate::ops::run::fleet_run::FleetRunName>,
}

/// Starts a rollback to revision `to` with `patch` (the plan's template
/// patch), decided on `snapshot` (before the patch).
pub fn start_rollback(
    snapshot: &Snapshot<'_>,
    patch: WriteRequest,
    to: i64,
    options: RollbackOptions,
    actor: &str,
    now: jiff::Timestamp,
) -> Result<RollbackStart, OpsError> {
    let state = snapshot.state()?;
    if state.saved_strategy.is_some() {
        return Err(OpsError::Invalid(format!(
            "{} is paused with its RollingUpdate strategy frozen; resume it first",
            snapshot.target()
        )));
    }
    if let Some(running) = state.run_in_progress(now) {
        return Err(OpsError::Invalid(running));
    }
    if !snapshot.update_strategy().is_on_delete() {
        // Recorded so that a GitOps self-heal putting the template back is noticed.
        let record = state_request(snapshot, to, actor, now)?;
        return Ok(RollbackStart {
            patch,
            then: record,
            run: None,
            order: Vec::new(),
            to,
        });
    }
    let order = rollback_nodes(snapshot);
    if !options.despite_fit
        && let Some(refusal) = unfit_nodes(snapshot, &order, to)
    {
        return Err(OpsError::Invalid(format!(
            "rollback to revision {to} refused, nothing changed: {refusal} (--despite-fit)"
        )));
    }
    let settings = RunSettings {
        policy: AutoPolicy {
            batch: 1,
            soak: Duration::ZERO,
            timeout: options.timeout,
        },
        canary_selector: None,
        rollback: Some((order.clone(), to)),
        despite_failing: true,
        despite_fit: options.despite_fit,
        include_cordoned: options.include_cordoned,
        fleet_run: options.fleet_run,
    };
    let (run, Started { write, .. }) =
        Run::start(snapshot, settings, actor, now).map_err(|refusal| match refusal {
            StartRefusal::Invalid(err) => err,
            failing @ StartRefusal::Failing(_) => OpsError::Invalid(failing.to_string()),
        })?;
    Ok(RollbackStart {
        patch,
        then: write,
        run: Some(run),
        order,
        to,
    })
}

/// The nodes a rollback to `to` moves back where the revision's pod would
/// not fit, in words (`None`: every one fits, or fit is unknown). Judged
/// before the template is patched: the run would otherwise stop at such a
/// node with its pod already deleted.
pub fn unfit_nodes(snapshot: &Snapshot<'_>, order: &[String], to: i64) -> Option<String> {
    let index = snapshot.index();
    let revision = index.by_number(to)?;
    let rows = snapshot.rows(&index, crate::clock::now());
    let nodes: Vec<&str> = order.iter().map(String::as_str).collect();
    rollback_fit(snapshot, &rows, &nodes, &revision.template).refusal()
}

/// The rollback order for OnDelete: nodes running the revision being left,
/// most recently updated first.
pub fn rollback_nodes(snapshot: &Snapshot<'_>) -> Vec<String> {
    let index = snapshot.index();
    let Some(current) = index.current() else {
        return Vec::new();
    };
    let rows = snapshot.rows(&index, crate::clock::now());
    rollback_order(&rows, &current.hash)
}
