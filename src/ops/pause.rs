//! Pause and resume as writes. Pausing always records who, when and why on
//! the DaemonSet; on a RollingUpdate DaemonSet it also freezes the controller's
//! own rollout by switching `spec.updateStrategy` to OnDelete (with
//! `rollingUpdate: null`), saving the exact previous strategy in an annotation
//! that resume writes back. The template is never touched, so no revision is
//! created. Both strategy writes carry the resourceVersion they were decided on.
//!
//! Pure: builds [`Write`] values from a snapshot; never sends them.

use serde_json::{Value, json};

use crate::ops::error::OpsError;
use crate::ops::journal_action::JournalAction;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::{Mode, Pause, RolloutState};
use crate::ops::write::{Record, Write, WriteRequest};

/// Who paused and why (an automatic pause names the failing node).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PauseRequest {
    /// `user@host`, or `rollcall auto (user@host)`.
    pub by: String,
    /// For an automatic pause: `node X: reason`.
    pub reason: Option<String>,
    /// The node that failed, for the journal.
    pub node: Option<String>,
    /// Written by a run that stopped (journalled `auto-pause`), not by hand.
    pub automatic: bool,
}

/// The write that pauses the rollout.
pub fn pause(
    snapshot: &Snapshot<'_>,
    request: &PauseRequest,
    now: jiff::Timestamp,
) -> Result<WriteRequest, OpsError> {
    let before = snapshot.state()?;
    if let Some(pause) = &before.pause {
        return Err(OpsError::Invalid(format!(
            "already paused by {}{}",
            pause.by,
            since(pause.at)
        )));
    }
    // A pause ends any run: nobody drives the rollout until someone resumes
    // and starts again, so no mode, batch or heartbeat is left to go stale.
    let mut after = RolloutState {
        pause: Some(Pause {
            by: request.by.clone(),
            at: Some(now),
            reason: request.reason.clone(),
        }),
        mode: crate::ops::state::Mode::Idle,
        batch_nodes: Vec::new(),
        heartbeat: None,
        // The run's canary selector ends with the run.
        canary_selector: None,
        ..before.clone()
    }
    .touched(&request.by, now);
    let target = snapshot.target();
    let write = if matches!(
        snapshot.update_strategy(),
        crate::engine::rolling::UpdateStrategy::RollingUpdate { .. }
    ) {
        after.saved_strategy = Some(current_strategy(snapshot));
        Write::PatchStrategy {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            strategy: json!({ "type": "OnDelete", "rollingUpdate": null }),
            before,
            after,
            resource_version: resource_version(snapshot)?,
        }
    } else {
        Write::PatchState {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            before,
            after,
            resource_version: None,
        }
    };
    let action = if request.automatic {
        JournalAction::AutoPause
    } else {
        JournalAction::Pause
    };
    Ok(WriteRequest {
        write,
        record: record(
            snapshot,
            action,
            request.node.clone(),
            request.reason.clone(),
        ),
    })
}

/// The write that resumes: clears the pause and, if pause switched a
/// RollingUpdate DaemonSet to OnDelete, restores the saved strategy exactly.
/// If someone changed the strategy meanwhile (it is no longer OnDelete), their
/// choice stands and only the pause is cleared. Resume also clears the record
/// of a rollback (`rollback-to`), and without a pause that is all it does: the
/// way to acknowledge a reported "rollback reverted".
pub fn resume(
    snapshot: &Snapshot<'_>,
    by: &str,
    now: jiff::Timestamp,
) -> Result<WriteRequest, OpsError> {
    let before = snapshot.state()?;
    let rollback_record = before.mode == Mode::Idle && before.rollback_to.is_some();
    if before.pause.is_none() && !rollback_record {
        return Err(OpsError::Invalid("not paused".to_owned()));
    }
    let after = RolloutState {
        pause: None,
        saved_strategy: None,
        // A paused run has ended; resuming never restarts it by itself.
        mode: Mode::Idle,
        batch_nodes: Vec::new(),
        rollback_to: None,
        ..before.clone()
    }
    .touched(by, now);
    let target = snapshot.target();
    let restore = before
        .saved_strategy
        .clone()
        .filter(|_| snapshot.update_strategy().is_on_delete());
    let write = match restore {
        Some(strategy) => Write::PatchStrategy {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            strategy: restorable(strategy),
            before,
            after,
            resource_version: resource_version(snapshot)?,
        },
        None => Write::PatchState {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            before,
            after,
            resource_version: None,
        },
    };
    Ok(WriteRequest {
        write,
        record: record(snapshot, JournalAction::Resume, None, None),
    })
}

/// The DaemonSet's `spec.updateStrategy` as JSON, exactly as stored.
pub(crate) fn current_strategy(snapshot: &Snapshot<'_>) -> Value {
    snapshot
        .ds
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| serde_json::to_value(u).ok())
        .unwrap_or_else(|| json!({ "type": "RollingUpdate" }))
}

/// A merge patch replaces maps key by key: a saved strategy without a
/// `rollingUpdate` key must say `null` explicitly to match exactly.
pub(crate) fn restorable(mut strategy: Value) -> Value {
    if let Value::Object(map) = &mut strategy {
        map.entry("rollingUpdate").or_insert(Value::Null);
    }
    strategy
}

pub(crate) fn resource_version(snapshot: &Snapshot<'_>) -> Result<String, OpsError> {
    snapshot
        .resource_version()
        .map(str::to_owned)
        .ok_or_else(|| {
            OpsError::Invalid(
                "the DaemonSet has no resourceVersion; cannot write safely".to_owned(),
            )
        })
}

fn record(
    snapshot: &Snapshot<'_>,
    action: JournalAction,
    node: Option<String>,
    journal_note: Option<String>,
) -> Record {
    Record {
        node,
        note: journal_note,
        ..Record::new(action, snapshot.target())
    }
}

fn since(at: Option<jiff::Timestamp>) -> String {
    at.map(|t| format!(" at {t}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::{all_old, ds, snapshot, t};

    const NODES: [&str; 2] = ["n1", "n2"];

    fn by(who: &str) -> PauseRequest {
        PauseRequest {
            by: who.into(),
            reason: None,
            node: None,
            automatic: false,
        }
    }

    /// Applies a write's merge patch to the DaemonSet, as the API server would.
    fn applied(ds: &crate::model::DaemonSet, write: &Write) -> crate::model::DaemonSet {
        let mut doc = serde_json::to_value(ds).unwrap();
        json_patch::merge(&mut doc, &write.body());
        serde_json::from_value(doc).unwrap()
    }

    #[test]
    fn pause_then_resume_restores_the_exact_rolling_strategy() {
        let original = ds(true, &[]);
        let paused_write = pause(
            &snapshot(original.clone(), &NODES, all_old(&NODES)),
            &by("ana@box"),
            t(5),
        )
        .unwrap();
        let Write::PatchStrategy {
            strategy,
            resource_version,
            ..
        } = &paused_write.write
        else {
            panic!("expected a strategy patch, got {paused_write:?}");
        };
        assert_eq!(strategy, &json!({"type":"OnDelete","rollingUpdate":null}));
        assert_eq!(resource_version, "100");
        assert!(paused_write.write.body()["spec"].get("template").is_none());
        let paused = applied(&original, &paused_write.write);
        let frozen = paused
            .spec
            .as_ref()
            .unwrap()
            .update_strategy
            .clone()
            .unwrap();
        assert_eq!(frozen.type_.as_deref(), Some("OnDelete"));
        assert!(frozen.rolling_update.is_none());
        let paused_snap = snapshot(paused.clone(), &NODES, all_old(&NODES));
        assert_eq!(paused_snap.state().unwrap().pause.unwrap().by, "ana@box");

        let resumed_write = resume(&paused_snap, "bo@box", t(9)).unwrap();
        let resumed = applied(&paused, &resumed_write.write);
        assert_eq!(
            resumed.spec.as_ref().unwrap().update_strategy,
            original.spec.as_ref().unwrap().update_strategy
        );
        assert_eq!(
            resumed.spec.as_ref().unwrap().template,
            original.spec.as_ref().unwrap().template
        );
        let state = RolloutState::from_annotations(resumed.metadata.annotations.as_ref()).unwrap();
        assert!(
            state.pause.is_none() && state.saved_strategy.is_none(),
            "{state:?}"
        );
    }

    #[test]
    fn pause_on_delete_only_records_state() {
        let request = pause(
            &snapshot(ds(false, &[]), &NODES, all_old(&NODES)),
            &by("ana"),
            t(1),
        )
        .unwrap();
        assert!(
            matches!(request.write, Write::PatchState { .. }),
            "{request:?}"
        );
        assert!(request.write.body().get("spec").is_none());
        assert_eq!(request.record.action, JournalAction::Pause);
    }

    #[test]
    fn auto_pause_records_reason_and_node() {
        let request = PauseRequest {
            by: "rollcall auto".into(),
            reason: Some("node n2: CrashLoopBackOff".into()),
            node: Some("n2".into()),
            automatic: true,
        };
        let write = pause(
            &snapshot(ds(false, &[]), &NODES, all_old(&NODES)),
            &request,
            t(1),
        )
        .unwrap();
        assert_eq!(write.record.action, JournalAction::AutoPause);
        assert_eq!(write.record.node.as_deref(), Some("n2"));
        assert_eq!(
            write.write.body()["metadata"]["annotations"]["rollcall.dev/pause-reason"],
            "node n2: CrashLoopBackOff"
        );
    }

    #[test]
    fn double_pause_and_resume_without_pause_are_refused() {
        let paused = ds(false, &[("rollcall.dev/paused-by", "ana")]);
        let err = pause(&snapshot(paused, &NODES, all_old(&NODES)), &by("bo"), t(1)).unwrap_err();
        assert_eq!(err.to_string(), "already paused by ana");
        let err = resume(
            &snapshot(ds(false, &[]), &NODES, all_old(&NODES)),
            "bo",
            t(1),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "not paused");
    }

    #[test]
    fn resume_keeps_a_strategy_someone_else_changed() {
        let saved = r#"{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":3}}"#;
        let changed = ds(
            true,
            &[
                ("rollcall.dev/paused-by", "ana"),
                ("rollcall.dev/saved-update-strategy", saved),
            ],
        );
        let request = resume(&snapshot(changed, &NODES, all_old(&NODES)), "bo", t(1)).unwrap();
        assert!(
            matches!(request.write, Write::PatchState { .. }),
            "{request:?}"
        );
    }

    #[test]
    fn resume_clears_a_rollback_record_but_not_a_running_rollback() {
        let snap =
            |annotations: &[(&str, &str)]| snapshot(ds(true, annotations), &NODES, all_old(&NODES));
        let recorded = resume(&snap(&[("rollcall.dev/rollback-to", "1")]), "bo", t(1)).unwrap();
        let Write::PatchState { after, .. } = &recorded.write else {
            panic!("{recorded:?}")
        };
        assert_eq!(after.rollback_to, None);
        let running = snap(&[
            ("rollcall.dev/rollback-to", "1"),
            ("rollcall.dev/mode", "rolling-back"),
        ]);
        assert_eq!(
            resume(&running, "bo", t(1)).unwrap_err().to_string(),
            "not paused"
        );
    }
}
