//! GitOps-owned DaemonSets: the one decision, shared by the console's
//! dialogs and the headless commands, about a spec-changing action (pause of
//! a RollingUpdate DaemonSet, resume that restores its strategy, rollback's
//! template patch) on a DaemonSet whose spec a tool owns — proceed, warn, or
//! refuse without an explicit override — and the words that say why and what
//! to do instead; and noticing that such a tool has reverted what rollcall
//! set (a paused strategy, a rolled-back template).
//!
//! Pure: DaemonSet and durable state in, values out.

use crate::engine::rolling::update_strategy;
use serde::Serialize;

use crate::engine::owner::{FieldWriter, SpecOwner, Tool, last_writer, spec_owner};
use crate::model::DaemonSet;
use crate::ops::state::RolloutState;
use crate::ops::write::{FIELD_MANAGER, Record};

/// A spec-changing action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecAction {
    /// Pause of a RollingUpdate DaemonSet (strategy → OnDelete).
    Pause,
    /// Resume that writes the saved strategy back.
    Resume,
    /// Rollback's template patch.
    Rollback,
}

impl SpecAction {
    fn verb(self) -> &'static str {
        match self {
            SpecAction::Pause => "pause",
            SpecAction::Resume => "resume",
            SpecAction::Rollback => "rollback",
        }
    }

    fn change(self) -> &'static str {
        match self {
            SpecAction::Pause => {
                "switches spec.updateStrategy to OnDelete, and once that is reverted the rollout resumes by itself"
            }
            SpecAction::Resume => "writes the saved spec.updateStrategy back",
            SpecAction::Rollback => {
                "patches spec.template, and once that is reverted the nodes roll forward again"
            }
        }
    }
}

/// What to do about an action on an owned spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// No owner (or no spec change): go ahead.
    Proceed,
    /// Go ahead, but show this warning first (in the confirm dialog).
    Warn(String),
    /// Refuse (exit 2 headless) unless overridden; the text says why and how.
    Refuse(String),
}

/// Decides on `action` for `ds`: a continuously reconciling owner (Argo CD,
/// Flux, Fleet) is refused unless `despite_owner`, then warned about; a
/// Helm release or `kubectl apply` is warned about.
pub fn decide(ds: &DaemonSet, action: SpecAction, despite_owner: bool) -> Decision {
    let Some(owner) = spec_owner(&ds.metadata) else {
        return Decision::Proceed;
    };
    let text = warning(&owner, action);
    if owner.tool.reconciles() && !despite_owner {
        Decision::Refuse(format!(
            "{text}\nrefusing to {} without --despite-owner",
            action.verb()
        ))
    } else {
        Decision::Warn(text)
    }
}

/// The warning: who owns the spec, that the change will likely be reverted,
/// and the alternative.
pub fn warning(owner: &SpecOwner, action: SpecAction) -> String {
    let who = owner.describe();
    let evidence = owner
        .evidence
        .first()
        .map_or(String::new(), |e| format!(" ({e})"));
    let likely = if owner.tool.reconciles() {
        "will likely revert this change"
    } else {
        "will overwrite this change on its next run"
    };
    format!(
        "the spec is managed by {who}{evidence}, which {likely}: {} {}.\ninstead: {}",
        action.verb(),
        action.change(),
        alternative(owner, action)
    )
}

fn alternative(owner: &SpecOwner, action: SpecAction) -> String {
    let pause = if action == SpecAction::Pause {
        "pause by advancing node by node (advance deletes pods and never touches the spec); or "
    } else {
        ""
    };
    let name = owner.name.as_deref().unwrap_or("<name>");
    let through_tool = match owner.tool {
        Tool::ArgoCd => format!(
            "disable self-heal on the Argo CD app ({name}) first, or sync the change through Git"
        ),
        Tool::Flux => format!("suspend it (flux suspend … {name}) first, or change it in Git"),
        Tool::Fleet => format!("pause the Fleet bundle ({name}) first, or change it in Git"),
        Tool::Helm => format!("change the chart values and run helm upgrade ({name})"),
        Tool::KubectlApply => "change the applied manifest".to_owned(),
    };
    format!("{pause}{through_tool}")
}

/// Which spec change a pause (`resuming: false`) or resume would make on
/// `ds`: pausing a RollingUpdate DaemonSet switches its strategy, resuming
/// writes a saved strategy back onto an OnDelete one; otherwise only the
/// `rollcall.dev/*` annotations change and no owner minds.
pub fn pause_spec_action(
    ds: &DaemonSet,
    state: &RolloutState,
    resuming: bool,
) -> Option<SpecAction> {
    let on_delete = update_strategy(ds).is_on_delete();
    match resuming {
        false if !on_delete && state.pause.is_none() => Some(SpecAction::Pause),
        true if on_delete && state.saved_strategy.is_some() => Some(SpecAction::Resume),
        _ => None,
    }
}

/// The lines a console confirm dialog shows first for `action` on `ds`:
/// the owner warning (confirming is the console's override), or for a
/// state-only action nothing.
pub fn dialog_lines(ds: &DaemonSet, action: Option<SpecAction>) -> Vec<String> {
    match action.map(|a| decide(ds, a, true)) {
        Some(Decision::Warn(text) | Decision::Refuse(text)) => {
            text.lines().map(|l| format!("⚠ {l}")).collect()
        }
        _ => Vec::new(),
    }
}

/// For node-by-node advancing on an owned DaemonSet: that it is safe under
/// the owner (`None` when no tool owns the spec).
pub fn advance_note(ds: &DaemonSet) -> Option<String> {
    spec_owner(&ds.metadata).map(|owner| {
        format!(
            "the spec is managed by {}; advancing deletes pods only, the spec is untouched (nothing for {} to revert)",
            owner.describe(),
            owner.tool.label()
        )
    })
}

/// What was reverted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Reverted {
    /// The strategy pause set is back to what it was.
    Pause,
    /// The template a rollback patched was changed again.
    Rollback,
}

/// A revert of what rollcall set, by another field manager.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Revert {
    /// What.
    pub what: Reverted,
    /// By which field manager (`None` when managedFields do not say).
    pub by: Option<String>,
    /// When, per its managedFields entry.
    pub at: Option<jiff::Timestamp>,
}

impl Revert {
    /// `pause reverted by argocd-controller at 2026-…`.
    pub fn describe(&self) -> String {
        let what = match self.what {
            Reverted::Pause => "pause",
            Reverted::Rollback => "rollback",
        };
        let by = self.by.as_deref().unwrap_or("another field manager");
        let at = self.at.map(|t| format!(" at {t}")).unwrap_or_default();
        format!("{what} reverted by {by}{at}")
    }

    /// The state label that replaces `paused` / `rolling-back`.
    pub fn label(&self) -> &'static str {
        match self.what {
            Reverted::Pause => "pause-reverted",
            Reverted::Rollback => "rollback-reverted",
        }
    }
}

/// The journal line for a noticed revert (`revert-noticed`, with the words).
pub fn revert_record(daemonset: &crate::model::Target, revert: &Revert) -> Record {
    Record {
        note: Some(revert.describe()),
        ..Record::new(
            crate::ops::journal_action::JournalAction::RevertNoticed,
            daemonset.clone(),
        )
    }
}

/// Whether what the stored state claims was undone: a pause that switched a
/// RollingUpdate DaemonSet to OnDelete while the strategy is no longer
/// OnDelete; a rollback (an OnDelete one in progress, or the record a
/// RollingUpdate one leaves, see `ops::rollback::rolled_back_state`)
/// whose template another manager wrote after rollcall's state was last
/// written.
pub fn reverted(ds: &DaemonSet, state: &RolloutState) -> Option<Revert> {
    let on_delete = update_strategy(ds).is_on_delete();
    let found = |what, writer: Option<FieldWriter>| Revert {
        what,
        by: writer.as_ref().map(|w| w.manager.clone()),
        at: writer.and_then(|w| w.at),
    };
    if state.pause.is_some() && state.saved_strategy.is_some() && !on_delete {
        let writer = last_writer(&ds.metadata, &["spec", "updateStrategy"], FIELD_MANAGER);
        return Some(found(Reverted::Pause, writer));
    }
    if state.rollback_to.is_some() && state.pause.is_none() {
        let writer = last_writer(&ds.metadata, &["spec", "template"], FIELD_MANAGER)?;
        let after_us = match (writer.at, state.updated_at) {
            (Some(at), Some(ours)) => at > ours,
            _ => false,
        };
        return after_us.then(|| found(Reverted::Rollback, Some(writer)));
    }
    None
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};
    use serde_json::json;

    use super::*;
    use crate::engine::fixtures::daemonset;
    use crate::ops::state::Pause;

    fn at(second: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    fn argo(on_delete: bool) -> DaemonSet {
        let builder = daemonset("a:v2").annotation(
            "argocd.argoproj.io/tracking-id",
            "node-agents:apps/DaemonSet:kube-system/a",
        );
        if on_delete {
            builder.on_delete().build()
        } else {
            builder.build()
        }
    }

    fn managed(mut ds: DaemonSet, entries: &[(&str, &str, i64)]) -> DaemonSet {
        ds.metadata.managed_fields = Some(
            entries
                .iter()
                .map(|(manager, field, second)| ManagedFieldsEntry {
                    manager: Some((*manager).to_owned()),
                    operation: Some("Update".to_owned()),
                    fields_v1: Some(FieldsV1(json!({"f:spec": {format!("f:{field}"): {}}}))),
                    time: Some(Time(at(*second))),
                    ..ManagedFieldsEntry::default()
                })
                .collect(),
        );
        ds
    }

    #[test]
    fn decisions() {
        let helm = daemonset("a:v2")
            .annotation("meta.helm.sh/release-name", "agent")
            .build();
        let plain = daemonset("a:v2").build();
        let cases = [
            ("no owner", &plain, false, "proceed"),
            ("argo refused", &argo(false), false, "refuse"),
            ("argo despite", &argo(false), true, "warn"),
            ("helm warned", &helm, false, "warn"),
        ];
        for (name, ds, despite, expected) in cases {
            let got = match decide(ds, SpecAction::Pause, despite) {
                Decision::Proceed => "proceed",
                Decision::Warn(_) => "warn",
                Decision::Refuse(_) => "refuse",
            };
            assert_eq!(got, expected, "{name}");
        }
        let Decision::Refuse(text) = decide(&argo(false), SpecAction::Pause, false) else {
            panic!("refused");
        };
        for needle in [
            "Argo CD app node-agents",
            "will likely revert this change",
            "advancing node by node",
            "disable self-heal",
            "--despite-owner",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let lines = dialog_lines(&argo(false), Some(SpecAction::Pause));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("⚠ the spec is managed by Argo CD"),
            "{lines:?}"
        );
        assert!(dialog_lines(&argo(false), None).is_empty());
        assert!(advance_note(&argo(true)).is_some_and(|n| n.contains("spec is untouched")));
        let Decision::Warn(text) = decide(&argo(false), SpecAction::Rollback, true) else {
            panic!("warned");
        };
        assert!(
            !text.contains("advancing"),
            "only pause suggests advancing: {text}"
        );
    }

    #[test]
    fn reverts() {
        let paused = RolloutState {
            pause: Some(Pause {
                by: "ana".to_owned(),
                at: Some(at(10)),
                reason: None,
            }),
            saved_strategy: Some(json!({"type": "RollingUpdate"})),
            updated_at: Some(at(10)),
            ..RolloutState::default()
        };
        let rolling_back = RolloutState {
            rollback_to: Some(1),
            updated_at: Some(at(10)),
            ..RolloutState::default()
        };
        let healed = managed(
            argo(false),
            &[
                ("argocd-controller", "updateStrategy", 13),
                ("rollcall", "template", 10),
            ],
        );
        let template_later = managed(argo(true), &[("argocd-controller", "template", 14)]);
        let template_before = managed(argo(true), &[("argocd-controller", "template", 5)]);
        let cases = [
            ("pause holds", argo(true), &paused, None),
            (
                "pause reverted",
                healed.clone(),
                &paused,
                Some("pause reverted by argocd-controller at 2023-11-14T22:13:33Z"),
            ),
            (
                "pause reverted, no managed fields",
                argo(false),
                &paused,
                Some("pause reverted by another field manager"),
            ),
            ("idle", healed, &RolloutState::default(), None),
            (
                "rollback reverted",
                template_later,
                &rolling_back,
                Some("rollback reverted by argocd-controller at 2023-11-14T22:13:34Z"),
            ),
            ("rollback holds", template_before, &rolling_back, None),
        ];
        for (name, ds, state, expected) in cases {
            assert_eq!(
                reverted(&ds, state).map(|r| r.describe()).as_deref(),
                expected,
                "{name}"
            );
        }
    }
}
