//! The DaemonSet summary: strategy and budgets, current revision, the status
//! counts, progress and rollout state. Pure.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{Cell, Tone};
use crate::engine::blockers::Blocker;
use crate::model::DaemonSet;
use crate::tui::rows::RowCache;

// The rollout-state keys live with the operations that write them.
#[cfg(test)]
use crate::ops::state::annotations::{
    MODE as MODE_ANNOTATION, PAUSE_REASON as PAUSE_REASON_ANNOTATION,
    PAUSED_BY as PAUSED_BY_ANNOTATION,
};

/// The header's content.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderVm {
    /// `namespace/name`.
    pub name: Cell,
    /// `OnDelete`, or `RollingUpdate maxUnavailable=1 maxSurge=0`.
    pub strategy: Cell,
    /// Current revision number and hash.
    pub revision: Cell,
    /// `(label, value, tone)` for desired, current, updated, ready, available, misscheduled.
    pub counts: Vec<(&'static str, String, Tone)>,
    /// Updated over desired, 0.0 ..= 1.0.
    pub progress: f64,
    /// `7/14 updated`.
    pub progress_label: String,
    /// Rollout state in a word or two.
    pub state: Cell,
    /// `managed by Argo CD app <name>`, when a tool owns the spec.
    pub owner: Option<Cell>,
}

/// Builds the header from the DaemonSet and its revision index.
pub fn build(ds: &DaemonSet, rows: &RowCache, blocker: Blocker, now: jiff::Timestamp) -> HeaderVm {
    let namespace = ds.metadata.namespace.as_deref().unwrap_or_default();
    let name = ds.metadata.name.as_deref().unwrap_or_default();
    let status = ds.status.clone().unwrap_or_default();
    let desired = status.desired_number_scheduled;
    let updated = status.updated_number_scheduled.unwrap_or(0);
    let revision = rows.revisions().and_then(|r| r.current()).map_or_else(
        || Cell::new("revision ?", Tone::Dim),
        |current| {
            Cell::new(
                &format!("revision {} ({})", current.number, current.hash),
                Tone::Updated,
            )
        },
    );
    let unready = status.number_ready < desired;
    let counts = vec![
        ("desired", desired.to_string(), Tone::Normal),
        (
            "current",
            status.current_number_scheduled.to_string(),
            tone_if(status.current_number_scheduled < desired, Tone::Warn),
        ),
        (
            "updated",
            updated.to_string(),
            tone_if(updated < desired, Tone::Old),
        ),
        (
            "ready",
            status.number_ready.to_string(),
            tone_if(unready, Tone::Warn),
        ),
        (
            "available",
            status.number_available.unwrap_or(0).to_string(),
            tone_if(status.number_available.unwrap_or(0) < desired, Tone::Warn),
        ),
        (
            "misscheduled",
            status.number_misscheduled.to_string(),
            tone_if(status.number_misscheduled > 0, Tone::Bad),
        ),
    ];
    let progress = if desired > 0 {
        (f64::from(updated) / f64::from(desired)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    HeaderVm {
        name: Cell::new(&format!("{namespace}/{name}"), Tone::Accent),
        strategy: Cell::new(&strategy(ds), Tone::Normal),
        revision,
        counts,
        progress,
        progress_label: format!("{updated}/{desired} updated"),
        state: rollout_state(ds, blocker, now),
        owner: crate::engine::owner::spec_owner(&ds.metadata)
            .map(|o| Cell::new(&format!("managed by {}", o.describe()), Tone::Accent)),
    }
}

fn tone_if(condition: bool, tone: Tone) -> Tone {
    if condition { tone } else { Tone::Good }
}

fn int_or_string(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

fn strategy(ds: &DaemonSet) -> String {
    let strategy = ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref());
    if strategy.and_then(|s| s.type_.as_deref()) == Some("OnDelete") {
        return "OnDelete".to_owned();
    }
    let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
    // The API server defaults maxUnavailable to 1 and maxSurge to 0.
    let max_unavailable = rolling
        .and_then(|r| r.max_unavailable.as_ref())
        .map_or_else(|| "1".to_owned(), int_or_string);
    let max_surge = rolling
        .and_then(|r| r.max_surge.as_ref())
        .map_or_else(|| "0".to_owned(), int_or_string);
    format!("RollingUpdate maxUnavailable={max_unavailable} maxSurge={max_surge}")
}

/// The state line: the one state word with the stored details (who paused,
/// why, which node; a stalled run), then why the rollout is not moving.
fn rollout_state(ds: &DaemonSet, blocker: Blocker, now: jiff::Timestamp) -> Cell {
    let state = crate::ops::state::RolloutState::from_annotations(ds.metadata.annotations.as_ref())
        .unwrap_or_default();
    // A pause or rollback a GitOps controller undid is no longer the state.
    if let Some(revert) = crate::ops::owner_guard::reverted(ds, &state) {
        return Cell::new(&revert.describe(), Tone::Bad);
    }
    let blocker = crate::ops::state::blocker_with_pause(&state, blocker);
    let word = crate::ops::state::state_word(&state, &blocker, now);
    let mut text = crate::ops::state::headline(ds.metadata.annotations.as_ref(), now)
        .unwrap_or_else(|| word.to_owned());
    if !state.is_paused() && blocker.code != crate::engine::blockers::BlockerCode::NothingToDo {
        text = format!("{text} · {}", blocker.message);
    }
    let tone = match word {
        "idle" => Tone::Good,
        "paused" | "stuck" | "stalled" => Tone::Warn,
        "waiting" => Tone::Old,
        _ => Tone::Accent,
    };
    Cell::new(&text, tone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixtures::daemonset;

    #[test]
    fn rollout_state_in_words() {
        let rolling = daemonset("a:v2").build();
        let on_delete = daemonset("a:v2").on_delete().build();
        let paused = daemonset("a:v2")
            .on_delete()
            .annotation(PAUSED_BY_ANNOTATION, "ana")
            .annotation(PAUSE_REASON_ANNOTATION, "node-3 CrashLoopBackOff")
            .annotation(MODE_ANNOTATION, "auto")
            .build();
        let auto = daemonset("a:v2")
            .on_delete()
            .annotation(MODE_ANNOTATION, "auto")
            .build();
        // Rows decide the rolling/waiting/stuck words (see engine::blockers);
        // with none, the stored state alone decides.
        let rows = RowCache::default();
        let cases = [
            ("settled", &rolling, "idle"),
            ("settled ondelete", &on_delete, "idle"),
            (
                "paused wins",
                &paused,
                "paused by ana: node-3 CrashLoopBackOff",
            ),
            ("ops mode", &auto, "auto"),
        ];
        for (name, ds, expected) in cases {
            assert_eq!(
                rollout_state(ds, rows.blocker(ds).clone(), jiff::Timestamp::UNIX_EPOCH).text,
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn strategy_shows_budgets_with_api_defaults() {
        assert_eq!(
            strategy(&daemonset("a").build()),
            "RollingUpdate maxUnavailable=1 maxSurge=0"
        );
        assert_eq!(strategy(&daemonset("a").on_delete().build()), "OnDelete");
    }
}
