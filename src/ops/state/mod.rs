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
}

/// The header's words for the stored state (`paused by ana@box: node n2: ...`,
/// `auto`, `rolling-back to 3`), or `None` when idle and not paused (the
/// console then derives the state from the counts). Malformed annotations are
/// ignored and named (`… · ignored annotation rollcall.dev/batch="x": …`).
pub fn headline(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> Option<String> {
    let (state, warnings) = RolloutState::read(annotations);
    let words = state_words(&state);
    match (words, warnings.first()) {
        (words, None) => words,
        (None, Some(first)) => Some(first.clone()),
        (Some(words), Some(first)) => Some(format!("{words} · {first}")),
    }
}

fn state_words(state: &RolloutState) -> Option<String> {
    if let Some(pause) = &state.pause {
        let mut text = format!("paused by {}", pause.by);
        if let Some(reason) = &pause.reason {
            text.push_str(": ");
            text.push_str(reason);
        }
        return Some(text);
    }
    match state.mode {
        Mode::Idle => None,
        Mode::RollingBack => Some(match state.rollback_to {
            Some(to) => format!("rolling back to revision {to}"),
            None => "rolling back".to_owned(),
        }),
        Mode::Auto if !state.batch_nodes.is_empty() => {
            Some(format!("auto · batch {}", state.batch_nodes.join(",")))
        }
        mode => Some(mode.as_str().to_owned()),
    }
}

impl RolloutState {
    /// Whether the rollout is paused.
    pub fn is_paused(&self) -> bool {
        self.pause.is_some()
    }

    /// The one-word state for headers and `status`: `paused` wins over the mode.
    pub fn label(&self) -> &'static str {
        if self.is_paused() {
            "paused"
        } else {
            self.mode.as_str()
        }
    }

    /// Whether an auto-advance or rollback run is going on somewhere (another
    /// console or process): the mode says so and it is not paused. A second
    /// run would race the first, so starting one is refused.
    pub fn run_in_progress(&self) -> Option<String> {
        if self.is_paused() || !matches!(self.mode, Mode::Auto | Mode::RollingBack) {
            return None;
        }
        let by = self.updated_by.as_deref().unwrap_or("someone");
        let at = self
            .updated_at
            .map(|t| format!(" at {t}"))
            .unwrap_or_default();
        Some(format!(
            "{} is already running (started by {by}{at}); if that run is gone, pause and resume to clear it",
            self.mode.as_str()
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
