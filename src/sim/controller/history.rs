//! ControllerRevision bookkeeping for one DaemonSet sync (upstream
//! `constructHistory`, `dedupCurHistories` and `cleanupHistory` in
//! `daemon/update.go`), as a plan: the revision matching the current template
//! becomes the newest (re-numbered to max+1 when an old template comes back,
//! which is how `rollout undo` shows up in history); otherwise a new revision
//! `<ds>-<hash>` is created with number max+1; old revisions no live pod uses
//! are trimmed, oldest first, down to `revisionHistoryLimit` (default 10).
//!
//! A DaemonSet loaded from a dump without ControllerRevisions gets its first
//! revision named after the hash its up-to-date pods already carry
//! ([`adoptable_hash`]) rather than one computed here: upstream's hash is
//! FNV-32a over Go's print of the template struct and cannot be recomputed,
//! and a fresh one would make every pod of the dump look out of date.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::pod::controller_ref;
use crate::engine::revision::{RevisionIndex, revision_data, template_hash};
use crate::model::{ControllerRevision, DaemonSet, Pod, REVISION_HASH_LABEL};

/// Upstream's default `spec.revisionHistoryLimit`.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

/// One write to ControllerRevisions.
#[derive(Clone, Debug, PartialEq)]
pub enum HistoryAction {
    /// Create this ControllerRevision.
    Create(Value),
    /// Give an existing revision a new number.
    Renumber {
        /// The revision's name.
        name: String,
        /// Its new number.
        revision: i64,
    },
    /// Delete an old revision.
    Delete {
        /// The revision's name.
        name: String,
        /// Its uid (the delete precondition).
        uid: String,
    },
}

/// What one sync does to the DaemonSet's history.
#[derive(Clone, Debug, PartialEq)]
pub enum HistoryPlan {
    /// Apply these writes; `current_hash` is the current revision's hash.
    Apply {
        /// The hash new pods get.
        current_hash: String,
        /// Writes, in order.
        actions: Vec<HistoryAction>,
    },
    /// The name for a new revision is taken by a different template: bump
    /// `status.collisionCount` and sync again (upstream does the same).
    Collision,
}

/// The hash to adopt as the first revision's name when the DaemonSet has no
/// revision at all: the one `controller-revision-hash` every up-to-date pod
/// carries (up to date by `pod-template-generation`, the only test left
/// without revisions). None when there are revisions, no such pods, or the
/// pods disagree (then the dump is inconsistent and a new hash is minted).
pub fn adoptable_hash(
    ds: &DaemonSet,
    revisions: &[ControllerRevision],
    pods: &[Pod],
) -> Option<String> {
    adoptable_hash_in(&RevisionIndex::new(ds, revisions), pods)
}

/// [`adoptable_hash`] with the DaemonSet's revisions already indexed (a
/// sync indexes them once for every step that reads them).
pub fn adoptable_hash_in(index: &RevisionIndex, pods: &[Pod]) -> Option<String> {
    if index.current().is_some() {
        return None;
    }
    let mut hashes = pods
        .iter()
        .filter(|p| index.is_pod_updated(p))
        .map(|p| p.revision_hash().filter(|h| !h.is_empty()));
    let first = hashes.next()??;
    hashes.all(|h| h == Some(first)).then(|| first.to_owned())
}

/// Plans the history writes for `ds`. `revisions` are all revisions in the
/// namespace (only the controlled ones count); `live_hashes` are the hashes
/// of the DaemonSet's pods that still exist; `adopt` is the hash to name the
/// first revision after (see [`adoptable_hash`]).
pub fn plan_history(
    ds: &DaemonSet,
    revisions: &[ControllerRevision],
    live_hashes: &BTreeSet<String>,
    adopt: Option<&str>,
) -> HistoryPlan {
    let index = RevisionIndex::new(ds, revisions);
    plan_history_in(ds, revisions, &index, live_hashes, adopt)
}

/// [`plan_history`] with `revisions` already indexed for `ds`.
pub fn plan_history_in(
    ds: &DaemonSet,
    revisions: &[ControllerRevision],
    index: &RevisionIndex,
    live_hashes: &BTreeSet<String>,
    adopt: Option<&str>,
) -> HistoryPlan {
    let next = index.next_number();
    let mut actions = Vec::new();
    let current = index.current().filter(|_| index.current_matches_template());
    let current_hash = if let Some(current) = current {
        if current.number < next {
            actions.push(HistoryAction::Renumber {
                name: current.name.clone(),
                revision: next,
            });
        }
        current.hash.clone()
    } else {
        let collision_count = ds.status.as_ref().and_then(|s| s.collision_count);
        let template = ds
            .spec
            .as_ref()
            .map(|s| s.template.clone())
            .unwrap_or_default();
        let ds_name = ds.metadata.name.as_deref().unwrap_or_default();
        let name_taken = |name: &str| {
            revisions
                .iter()
                .any(|r| r.metadata.name.as_deref() == Some(name))
        };
        let adopted = adopt
            .filter(|_| index.current().is_none())
            .filter(|hash| !name_taken(&format!("{ds_name}-{hash}")));
        let hash = match adopted {
            Some(hash) => hash.to_owned(),
            None => template_hash(&template, collision_count),
        };
        let name = format!("{ds_name}-{hash}");
        if adopted.is_none() && name_taken(&name) {
            return HistoryPlan::Collision;
        }
        actions.push(HistoryAction::Create(revision_object(
            ds, &name, &hash, next,
        )));
        hash
    };
    actions.extend(trim(ds, index, revisions, live_hashes));
    HistoryPlan::Apply {
        current_hash,
        actions,
    }
}

/// Deletes for old revisions beyond the history limit (the engine's
/// `to_prune`: oldest first, never current, never one a live pod runs).
fn trim(
    ds: &DaemonSet,
    index: &RevisionIndex,
    revisions: &[ControllerRevision],
    live_hashes: &BTreeSet<String>,
) -> Vec<HistoryAction> {
    let limit = ds
        .spec
        .as_ref()
        .and_then(|s| s.revision_history_limit)
        .unwrap_or(DEFAULT_REVISION_HISTORY_LIMIT);
    index
        .to_prune(limit, live_hashes)
        .into_iter()
        .map(|r| HistoryAction::Delete {
            name: r.name.clone(),
            uid: revisions
                .iter()
                .find(|cr| cr.metadata.name.as_deref() == Some(r.name.as_str()))
                .and_then(|cr| cr.metadata.uid.clone())
                .unwrap_or_default(),
        })
        .collect()
}

/// The ControllerRevision object for the DaemonSet's current template.
pub fn revision_object(ds: &DaemonSet, name: &str, hash: &str, number: i64) -> Value {
    let template = ds
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let mut labels = template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.to_owned(), hash.to_owned());
    let annotations = ds.metadata.annotations.clone().unwrap_or_default();
    json!({
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": ds.metadata.namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [controller_ref(ds)],
        },
        "data": revision_data(&template),
        "revision": number,
    })
}

#[cfg(test)]
mod tests;
