//! Durable rollout state: what must outlive one console (paused, who and when,
//! the auto-pause reason, canaries, batch and soak settings, the saved update
//! strategy) kept as `rollcall.dev/...` annotations on the DaemonSet itself.
//!
//! Pure: converts between [`RolloutState`] and annotations, and builds the merge
//! patch that writes them. Never touches the pod template (a template change would
//! create a new revision).

pub mod annotations;

pub use annotations::{ANNOTATION_PREFIX, state_patch};

use std::collections::BTreeSet;
use std::time::Duration;

use serde::Serialize;

/// What the rollout is doing, as every console and `rollcall status` show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Nothing in progress.
    #[default]
    Idle,
    /// Nodes are being advanced by hand.
    Advancing,
    /// Auto-advance is running batches.
    Auto,
    /// A rollback moves nodes back.
    RollingBack,
}

impl Mode {
    /// The annotation value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Advancing => "advancing",
            Self::Auto => "auto",
            Self::RollingBack => "rolling-back",
        }
    }

    /// Parses the annotation value.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Idle, Self::Advancing, Self::Auto, Self::RollingBack]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

/// Why and by whom the rollout is paused.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pause {
    /// Who paused (`user@host`, or `rollcall auto` for an automatic pause).
    pub by: String,
    /// When.
    pub at: Option<jiff::Timestamp>,
    /// For an automatic pause: which node failed and why.
    pub reason: Option<String>,
}

/// The rollout state stored on the DaemonSet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutState {
    /// What is in progress.
    pub mode: Mode,
    /// Set while paused.
    pub pause: Option<Pause>,
    /// The exact `spec.updateStrategy` (JSON) that pause replaced with OnDelete
    /// on a RollingUpdate DaemonSet; resume writes it back.
    pub saved_strategy: Option<serde_json::Value>,
    /// Nodes marked as canaries by hand.
    pub canaries: BTreeSet<String>,
    /// Canary nodes chosen by a label selector (kubectl syntax).
    pub canary_selector: Option<String>,
    /// Auto-advance batch size.
    pub batch: Option<u32>,
    /// Auto-advance soak time.
    #[serde(serialize_with = "annotations::serialize_duration")]
    pub soak: Option<Duration>,
    /// Auto-advance per-batch Ready timeout.
    #[serde(serialize_with = "annotations::serialize_duration")]
    pub timeout: Option<Duration>,
    /// The nodes of the batch in flight.
    pub batch_nodes: Vec<String>,
    /// The revision a rollback is moving nodes to.
    pub rollback_to: Option<i64>,
    /// Who last changed the state.
    pub updated_by: Option<String>,
    /// When the state last changed.
    pub updated_at: Option<jiff::Timestamp>,
    /// The lease of a running auto-advance or rollback: its driver renews this
    /// every [`LEASE_RENEW`]; past [`LEASE_EXPIRY`] the run is taken to be gone.
    pub heartbeat: Option<jiff::Timestamp>,
    /// The fleet run that last drove this rollout (`plan DIGEST wave NAME`,
    /// written by `rollcall fleet auto` before its run here starts), so a
    /// console or `status` on a member shows that a fleet run owns it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet_run: Option<String>,
}

/// How often a running auto-advance or rollback renews its heartbeat.
///
/// The lease is an annotation beside the rest of the state rather than a
/// `coordination.k8s.io` Lease: every console already watches the DaemonSet, so
/// the owner and its liveness arrive with the state they qualify, need no second
/// watch or RBAC grant, and are written in the same patch as the mode.
pub const LEASE_RENEW: std::time::Duration = std::time::Duration::from_secs(5);

/// A heartbeat older than this means the run's driver stopped responding.
pub const LEASE_EXPIRY: std::time::Duration = std::time::Duration::from_secs(20);

/// Who drives a run (auto-advance or rollback), as seen at some time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOwner {
    /// No run in progress (idle, advancing by hand, or paused).
    Nobody,
    /// A run whose driver renewed its lease recently.
    Live {
        /// `auto` or `rolling-back`.
        mode: Mode,
        /// Who started it.
        by: String,
        /// When it last renewed (or changed the state).
        seen: Option<jiff::Timestamp>,
    },
    /// A run whose driver stopped renewing: it may be taken over or stopped.
    Expired {
        /// `auto` or `rolling-back`.
        mode: Mode,
        /// Who started it.
        by: String,
        /// Its last sign of life.
        seen: jiff::Timestamp,
    },
}

impl RunOwner {
    /// For an expired run: "auto-advance by X stopped responding at T".
    pub fn expired_text(&self) -> Option<String> {
        match self {
            Self::Expired { mode, by, seen } => Some(format!(
                "{} by {by} stopped responding at {}",
                run_name(*mode),
                seen.round(jiff::Unit::Second).unwrap_or(*seen)
            )),
            _ => None,
        }
    }
}

/// The one state word every console and `rollcall status` show: `paused`,
/// the running mode (`auto`, `rolling-back`, `advancing`; `stalled` when its
/// driver stopped responding), else what the rollout itself is doing
/// (`idle`, `waiting` for an operator, `rolling`, `stuck`).
pub fn state_word(
    state: &RolloutState,
    blocker: &crate::engine::blockers::Blocker,
    now: jiff::Timestamp,
) -> &'static str {
    use crate::engine::blockers::BlockerCode;
    if state.is_paused() {
        return "paused";
    }
    if matches!(state.run_owner(now), RunOwner::Expired { .. }) {
        return "stalled";
    }
    if state.mode != Mode::Idle {
        return state.mode.as_str();
    }
    match blocker.code {
        BlockerCode::NothingToDo => "idle",
        BlockerCode::WaitingForOperator => "waiting",
        BlockerCode::Progressing | BlockerCode::WaitingForMinReadySeconds => "rolling",
        BlockerCode::MaxUnavailableSpent
        | BlockerCode::MaxSurgeSpent
        | BlockerCode::StuckTerminating => "stuck",
        BlockerCode::Paused => "paused",
    }
}

/// The engine's blocker, with the stored state taking precedence: a paused
/// rollout is held by whoever paused it, whatever the budgets say; an OnDelete
/// rollout driven by an auto-advance or rollback is not waiting for an operator.
pub fn blocker_with_pause(
    state: &RolloutState,
    blocker: crate::engine::blockers::Blocker,
) -> crate::engine::blockers::Blocker {
    match &state.pause {
        Some(pause) => crate::engine::blockers::Blocker {
            code: crate::engine::blockers::BlockerCode::Paused,
            message: match &pause.reason {
                Some(reason) => format!("paused by {}: {reason}", pause.by),
                None => format!("paused by {}", pause.by),
            },
            nodes: blocker.nodes,
        },
        None if matches!(state.mode, Mode::Auto | Mode::RollingBack)
            && blocker.code == crate::engine::blockers::BlockerCode::WaitingForOperator =>
        {
            crate::engine::blockers::Blocker {
                code: crate::engine::blockers::BlockerCode::Progressing,
                message: format!(
                    "{} is moving the nodes on old revisions",
                    run_name(state.mode)
                ),
                nodes: blocker.nodes,
            }
        }
        None => blocker,
    }
}

/// The words for a run's mode.
pub fn run_name(mode: Mode) -> &'static str {
    match mode {
        Mode::RollingBack => "rollback",
        _ => "auto-advance",
    }
}

/// The header's words for the stored state (`paused by ana@box: node n2: ...`,
/// `auto`, `rolling-back to 3`), or `None` when idle and not paused (the
/// console then derives the state from the counts). Malformed annotations are
/// ignored and named (`… · ignored annotation rollcall.dev/batch="x": …`).
pub fn headline(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
    now: jiff::Timestamp,
) -> Option<String> {
    let (state, warnings) = RolloutState::read(annotations);
    let words = state_words(&state, now);
    match (words, warnings.first()) {
        (words, None) => words,
        (None, Some(first)) => Some(first.clone()),
        (Some(words), Some(first)) => Some(format!("{words} · {first}")),
    }
}

fn state_words(state: &RolloutState, now: jiff::Timestamp) -> Option<String> {
    if let Some(text) = state.run_owner(now).expired_text() {
        return Some(text);
    }
    if let Some(pause) = &state.pause {
        let mut text = format!("paused by {}", pause.by);
        if let Some(reason) = &pause.reason {
            text.push_str(": ");
            text.push_str(reason);
        }
        return Some(text);
    }
    let words = match state.mode {
        Mode::Idle => return None,
        Mode::RollingBack => match state.rollback_to {
            Some(to) => format!("rolling back to revision {to}"),
            None => "rolling back".to_owned(),
        },
        Mode::Auto if !state.batch_nodes.is_empty() => {
            format!("auto · batch {}", state.batch_nodes.join(","))
        }
        mode => mode.as_str().to_owned(),
    };
    Some(match state.fleet_run_driving() {
        Some(fleet) => format!("{words} · {fleet}"),
        None => words,
    })
}

impl RolloutState {
    /// Whether the rollout is paused.
    pub fn is_paused(&self) -> bool {
        self.pause.is_some()
    }

    /// `fleet run plan DIGEST wave NAME` while a run that a fleet run started
    /// is in progress here (after it, the annotation only says who last drove).
    pub fn fleet_run_driving(&self) -> Option<String> {
        let running = !self.is_paused() && matches!(self.mode, Mode::Auto | Mode::RollingBack);
        let fleet = self.fleet_run.as_deref().filter(|_| running)?;
        Some(format!("fleet run {}", crate::sanitize::sanitize(fleet)))
    }

    /// Who drives the run in progress, if any, at `now`: a run is in progress
    /// when the mode says auto or rolling-back and it is not paused; it is
    /// expired when its heartbeat (or, without one, its last state change) is
    /// older than [`LEASE_EXPIRY`].
    pub fn run_owner(&self, now: jiff::Timestamp) -> RunOwner {
        if self.is_paused() || !matches!(self.mode, Mode::Auto | Mode::RollingBack) {
            return RunOwner::Nobody;
        }
        let by = self
            .updated_by
            .clone()
            .unwrap_or_else(|| "someone".to_owned());
        let seen = self.heartbeat.or(self.updated_at);
        let expiry = jiff::SignedDuration::try_from(LEASE_EXPIRY).unwrap_or_default();
        match seen {
            Some(seen) if now.duration_since(seen) > expiry => RunOwner::Expired {
                mode: self.mode,
                by,
                seen,
            },
            _ => RunOwner::Live {
                mode: self.mode,
                by,
                seen,
            },
        }
    }

    /// Why a new run must not start at `now`: another auto-advance or rollback
    /// is alive (a second run would race the first). An expired run does not
    /// block: the new run takes it over.
    pub fn run_in_progress(&self, now: jiff::Timestamp) -> Option<String> {
        let RunOwner::Live { mode, by, .. } = self.run_owner(now) else {
            return None;
        };
        let at = self
            .updated_at
            .map(|t| format!(" at {t}"))
            .unwrap_or_default();
        let fleet = self
            .fleet_run_driving()
            .map(|f| format!(", {f}"))
            .unwrap_or_default();
        Some(format!(
            "{} is already running (started by {by}{at}{fleet}); pause it to stop it",
            mode.as_str()
        ))
    }

    /// Records who changed the state and when.
    #[must_use]
    pub fn touched(mut self, by: &str, now: jiff::Timestamp) -> Self {
        self.updated_by = Some(by.to_owned());
        self.updated_at = Some(now);
        self
    }
}
