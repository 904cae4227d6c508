//! Rollback as `kubectl rollout undo` does it: pick the previous (or a chosen)
//! revision, show the template diff, then strategic-merge-patch the DaemonSet
//! with that ControllerRevision's `data` verbatim. For OnDelete the nodes then
//! move back through the advance machinery, most recently updated first
//! ([`crate::engine::rollout::rollback_order`]).
//!
//! Pure: chooses and describes; the executor sends the patch.

use similar::TextDiff;

use crate::engine::revision::{RevisionIndex, RevisionInfo};
use crate::ops::error::OpsError;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::{Mode, RolloutState};
use crate::ops::write::{Record, Write, WriteRequest};

/// The revision to go back to: `to` if given, else the one before the current
/// (kubectl's default). Errors use kubectl's words.
pub fn choose_revision(index: &RevisionIndex, to: Option<i64>) -> Result<RevisionInfo, OpsError> {
    match to {
        Some(number) => index.by_number(number).cloned().ok_or_else(|| {
            OpsError::Invalid(format!(
                "unable to find specified revision {number} in history"
            ))
        }),
        None => index
            .previous()
            .cloned()
            .ok_or_else(|| OpsError::Invalid("no last revision to roll back to".to_owned())),
    }
}

/// A unified diff between two templates rendered as YAML (`-` current, `+` target).
pub fn template_diff(current: &serde_json::Value, target: &serde_json::Value) -> String {
    let old = to_yaml(current);
    let new = to_yaml(target);
    TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header("current", "target")
        .to_string()
}

/// The YAML text of a template (for history and diffs).
pub fn to_yaml(value: &serde_json::Value) -> String {
    serde_norway::to_string(value).unwrap_or_else(|e| format!("# cannot render: {e}\n"))
}

/// The DaemonSet's live template as JSON.
pub fn live_template(snapshot: &Snapshot<'_>) -> serde_json::Value {
    snapshot
        .ds
        .spec
        .as_ref()
        .and_then(|s| serde_json::to_value(&s.template).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// A stored template in the same shape as a live one (decoded and re-encoded
/// through the typed template, so `creationTimestamp: null` and empty fields
/// do not show up as differences).
pub fn normalized_template(template: &serde_json::Value) -> serde_json::Value {
    serde_json::from_value::<k8s_openapi::api::core::v1::PodTemplateSpec>(template.clone())
        .ok()
        .and_then(|t| serde_json::to_value(t).ok())
        .unwrap_or_else(|| template.clone())
}

/// A rollback ready to confirm.
#[derive(Clone, Debug, PartialEq)]
pub struct RollbackPlan {
    /// The current revision number, if known.
    pub from: Option<i64>,
    /// The revision rolled back to.
    pub to: RevisionInfo,
    /// The template diff (empty when nothing changes).
    pub diff: String,
    /// The patch to send; `None` when the template already matches (kubectl's
    /// "skipped rollback").
    pub request: Option<WriteRequest>,
}

/// Plans a rollback of `snapshot` to `to` (or the previous revision).
pub fn plan(snapshot: &Snapshot<'_>, to: Option<i64>) -> Result<RollbackPlan, OpsError> {
    let index = snapshot.index();
    let target_rev = choose_revision(&index, to)?;
    let from = index.current().map(|c| c.number);
    let revision = snapshot
        .revisions
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(target_rev.name.as_str()))
        .ok_or_else(|| OpsError::Invalid(format!("revision {} disappeared", target_rev.number)))?;
    let data =
        revision.data.as_ref().map(|d| d.0.clone()).ok_or_else(|| {
            OpsError::Invalid(format!("revision {} has no data", target_rev.number))
        })?;
    let diff = template_diff(
        &live_template(snapshot),
        &normalized_template(&target_rev.template),
    );
    let already = index.current_matches_template() && from == Some(target_rev.number);
    let target = snapshot.target();
    let request = (!already).then(|| WriteRequest {
        write: Write::PatchTemplate {
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            data,
        },
        record: Record {
            revision_from: from,
            revision_to: Some(target_rev.number),
            ..Record::new(
                crate::ops::journal_action::JournalAction::Rollback,
                target.clone(),
            )
        },
    });
    Ok(RollbackPlan {
        from,
        to: target_rev,
        diff,
        request,
    })
}

/// The stored state once a rollback to revision `to` is under way. On
/// OnDelete a rollback run moves the nodes back (mode `rolling-back`, with a
/// heartbeat its driver renews). On RollingUpdate the controller moves them
/// and nothing drives the run, so the mode stays idle and the state only
/// records the revision rolled back to and when (`rollback-to`, `updated-at`):
/// a later write of `spec.template` by another field manager (a GitOps
/// self-heal, or someone else's rollout) is then reported as the rollback
/// reverted ([`crate::ops::owner_guard::reverted`]). The record lasts until
/// rollcall next starts a run on the DaemonSet (auto-advance, another
/// rollback) or `resume` clears it. A rollback supersedes a pause of the
/// rollout it undoes.
pub fn rolled_back_state(
    before: &RolloutState,
    to: i64,
    on_delete: bool,
    actor: &str,
    now: jiff::Timestamp,
) -> RolloutState {
    RolloutState {
        mode: if on_delete {
            Mode::RollingBack
        } else {
            Mode::Idle
        },
        rollback_to: Some(to),
        pause: None,
        batch_nodes: Vec::new(),
        heartbeat: on_delete.then_some(now),
        ..before.clone()
    }
    .touched(actor, now)
}

/// The state write that goes with a rollback's template patch
/// ([`rolled_back_state`], journalled as `rollback-state`).
pub fn state_request(
    snapshot: &Snapshot<'_>,
    to: i64,
    actor: &str,
    now: jiff::Timestamp,
) -> Result<WriteRequest, OpsError> {
    let before = snapshot.state()?;
    let on_delete = snapshot.update_strategy().is_on_delete();
    let after = rolled_back_state(&before, to, on_delete, actor, now);
    let mut request = WriteRequest::state(
        snapshot,
        before,
        after,
        crate::ops::journal_action::JournalAction::RollbackState,
        None,
    );
    request.record.revision_to = Some(to);
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::{all_old, ds, snapshot};

    const NODES: [&str; 2] = ["n1", "n2"];

    #[test]
    fn previous_revision_patch_is_the_revision_data_verbatim() {
        let snap = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        let plan = plan(&snap, None).unwrap();
        assert_eq!((plan.from, plan.to.number), (Some(2), 1));
        let request = plan.request.unwrap();
        let Write::PatchTemplate { data, .. } = &request.write else {
            panic!("{request:?}")
        };
        let stored = snap.revisions.iter().find(|r| r.revision == 1).unwrap();
        assert_eq!(Some(data), stored.data.as_ref().map(|d| &d.0));
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        assert!(plan.diff.contains("-  - image: v2"), "{}", plan.diff);
        assert!(plan.diff.contains("+  - image: v1"), "{}", plan.diff);
        assert_eq!(
            (request.record.revision_from, request.record.revision_to),
            (Some(2), Some(1))
        );
    }

    #[test]
    fn the_state_after_a_rollback_depends_on_who_moves_the_nodes() {
        use crate::ops::testing::t;
        for (rolling, mode, heartbeat) in [
            (true, Mode::Idle, None),
            (false, Mode::RollingBack, Some(t(7))),
        ] {
            let snap = snapshot(
                ds(rolling, &[("rollcall.dev/batch-nodes", "n1")]),
                &NODES,
                all_old(&NODES),
            );
            let request = state_request(&snap, 1, "ana", t(7)).unwrap();
            let Write::PatchState { after, .. } = &request.write else {
                panic!("{request:?}")
            };
            assert_eq!(after.mode, mode, "rolling {rolling}");
            assert_eq!(after.heartbeat, heartbeat, "rolling {rolling}");
            assert_eq!(after.rollback_to, Some(1));
            assert_eq!(after.updated_at, Some(t(7)));
            assert!(after.batch_nodes.is_empty());
            assert_eq!(
                request.record.action,
                crate::ops::journal_action::JournalAction::RollbackState
            );
        }
    }

    #[test]
    fn kubectl_words_for_bad_revisions_and_skip_when_current() {
        let snap = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        let err = plan(&snap, Some(9)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unable to find specified revision 9 in history"
        );
        let same = plan(&snap, Some(2)).unwrap();
        assert!(same.request.is_none());
        assert!(same.diff.is_empty(), "{}", same.diff);
    }
}
