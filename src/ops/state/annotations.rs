//! The `rollcall.dev/...` annotation keys, reading them into a [`RolloutState`]
//! and writing one back as a JSON merge patch of `metadata.annotations` only.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{Mode, Pause, RolloutState};
use crate::engine::selector::Selector;
use crate::ops::error::OpsError;

/// Every key rollcall writes starts with this.
pub const ANNOTATION_PREFIX: &str = "rollcall.dev/";

/// Annotation key (see [`RolloutState`] for the meaning).
pub const MODE: &str = "rollcall.dev/mode";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const PAUSED_BY: &str = "rollcall.dev/paused-by";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const PAUSED_AT: &str = "rollcall.dev/paused-at";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const PAUSE_REASON: &str = "rollcall.dev/pause-reason";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const SAVED_STRATEGY: &str = "rollcall.dev/saved-update-strategy";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const CANARIES: &str = "rollcall.dev/canaries";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const CANARY_SELECTOR: &str = "rollcall.dev/canary-selector";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const BATCH: &str = "rollcall.dev/batch";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const SOAK: &str = "rollcall.dev/soak";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const TIMEOUT: &str = "rollcall.dev/timeout";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const BATCH_NODES: &str = "rollcall.dev/batch-nodes";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const ROLLBACK_TO: &str = "rollcall.dev/rollback-to";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const UPDATED_BY: &str = "rollcall.dev/updated-by";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const UPDATED_AT: &str = "rollcall.dev/updated-at";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const HEARTBEAT: &str = "rollcall.dev/heartbeat";
/// Annotation key (see [`RolloutState`] for the meaning).
pub const FLEET_RUN: &str = "rollcall.dev/fleet-run";

/// All keys, so a write can clear the ones a state no longer has.
const ALL_KEYS: [&str; 16] = [
    MODE,
    PAUSED_BY,
    PAUSED_AT,
    PAUSE_REASON,
    SAVED_STRATEGY,
    CANARIES,
    CANARY_SELECTOR,
    BATCH,
    SOAK,
    TIMEOUT,
    BATCH_NODES,
    ROLLBACK_TO,
    UPDATED_BY,
    UPDATED_AT,
    HEARTBEAT,
    FLEET_RUN,
];

impl RolloutState {
    /// Reads the state from a DaemonSet's annotations. Missing keys mean the
    /// defaults (idle, not paused). Never fails: annotations are untrusted (anyone
    /// who may annotate the DaemonSet can write them), so a value rollcall cannot
    /// have written is ignored; [`RolloutState::read`] also says which.
    pub fn from_annotations(
        annotations: Option<&BTreeMap<String, String>>,
    ) -> Result<Self, OpsError> {
        Ok(Self::read(annotations).0)
    }

    /// Reads the state like [`RolloutState::from_annotations`], and returns one
    /// warning per malformed `rollcall.dev/...` value, naming the key and why it
    /// was ignored (`status` and the console show them).
    pub fn read(annotations: Option<&BTreeMap<String, String>>) -> (Self, Vec<String>) {
        let empty = BTreeMap::new();
        let map = annotations.unwrap_or(&empty);
        let mut warnings = Vec::new();
        let mut checked = |key: &'static str, check: &dyn Fn(&str) -> Result<(), String>| {
            let text = map.get(key).map(String::as_str).filter(|v| !v.is_empty())?;
            match check(text) {
                Ok(()) => Some(text),
                Err(why) => {
                    warnings.push(ignored(key, text, &why));
                    None
                }
            }
        };
        let any = |_: &str| Ok(());
        let mode = checked(MODE, &|t| {
            Mode::parse(t)
                .map(|_| ())
                .ok_or_else(|| "unknown mode".to_owned())
        })
        .and_then(Mode::parse)
        .unwrap_or_default();
        let pause = checked(PAUSED_BY, &any).map(|by| Pause {
            by: by.to_owned(),
            at: checked(PAUSED_AT, &check_time).and_then(|t| t.parse().ok()),
            reason: checked(PAUSE_REASON, &any).map(str::to_owned),
        });
        let state = Self {
            mode,
            pause,
            saved_strategy: checked(SAVED_STRATEGY, &|t| {
                serde_json::from_str::<Value>(t)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
            .and_then(|t| serde_json::from_str(t).ok()),
            canaries: checked(CANARIES, &any)
                .map(split_list)
                .unwrap_or_default()
                .into_iter()
                .collect(),
            canary_selector: checked(CANARY_SELECTOR, &|t| {
                Selector::parse(t).map(|_| ()).map_err(|e| e.to_string())
            })
            .map(str::to_owned),
            batch: checked(BATCH, &|t| {
                t.parse::<u32>()
                    .map(|_| ())
                    .map_err(|_| "not a number".to_owned())
            })
            .and_then(|t| t.parse().ok()),
            soak: checked(SOAK, &check_duration).and_then(|t| humantime::parse_duration(t).ok()),
            timeout: checked(TIMEOUT, &check_duration)
                .and_then(|t| humantime::parse_duration(t).ok()),
            batch_nodes: checked(BATCH_NODES, &any)
                .map(split_list)
                .unwrap_or_default(),
            rollback_to: checked(ROLLBACK_TO, &|t| {
                t.parse::<i64>()
                    .map(|_| ())
                    .map_err(|_| "not a revision number".to_owned())
            })
            .and_then(|t| t.parse().ok()),
            updated_by: checked(UPDATED_BY, &any).map(str::to_owned),
            updated_at: checked(UPDATED_AT, &check_time).and_then(|t| t.parse().ok()),
            heartbeat: checked(HEARTBEAT, &check_time).and_then(|t| t.parse().ok()),
            fleet_run: checked(FLEET_RUN, &any).map(str::to_owned),
        };
        (state, warnings)
    }

    /// The annotations for this state: every rollcall key, `None` for the ones to remove.
    pub fn to_annotations(&self) -> BTreeMap<&'static str, Option<String>> {
        let pause = self.pause.as_ref();
        let values: [(&'static str, Option<String>); 16] = [
            (
                MODE,
                (self.mode != Mode::Idle).then(|| self.mode.as_str().to_owned()),
            ),
            (PAUSED_BY, pause.map(|p| p.by.clone())),
            (PAUSED_AT, pause.and_then(|p| p.at).map(|t| t.to_string())),
            (PAUSE_REASON, pause.and_then(|p| p.reason.clone())),
            (
                SAVED_STRATEGY,
                self.saved_strategy.as_ref().map(Value::to_string),
            ),
            (CANARIES, join_list(self.canaries.iter())),
            (CANARY_SELECTOR, self.canary_selector.clone()),
            (BATCH, self.batch.map(|b| b.to_string())),
            (SOAK, self.soak.map(format_duration)),
            (TIMEOUT, self.timeout.map(format_duration)),
            (BATCH_NODES, join_list(self.batch_nodes.iter())),
            (ROLLBACK_TO, self.rollback_to.map(|r| r.to_string())),
            (UPDATED_BY, self.updated_by.clone()),
            (UPDATED_AT, self.updated_at.map(|t| t.to_string())),
            (HEARTBEAT, self.heartbeat.map(|t| t.to_string())),
            (FLEET_RUN, self.fleet_run.clone()),
        ];
        debug_assert_eq!(values.len(), ALL_KEYS.len());
        values.into_iter().collect()
    }
}

/// The JSON merge patch that moves the stored state from `before` to `after`:
/// only `metadata.annotations`, and only the keys that differ (`null` removes a
/// key), so a concurrent writer's other keys (say, another console's pause) are
/// never overwritten with stale values. With `resource_version`, the server
/// rejects the patch with 409 if the DaemonSet changed since it was read.
pub fn state_patch(
    before: &RolloutState,
    after: &RolloutState,
    resource_version: Option<&str>,
) -> Value {
    let old = before.to_annotations();
    let annotations: Map<String, Value> = after
        .to_annotations()
        .into_iter()
        .filter(|(key, value)| old.get(key) != Some(value))
        .map(|(key, value)| (key.to_owned(), value.map_or(Value::Null, Value::String)))
        .collect();
    let mut metadata = json!({ "annotations": annotations });
    if let Some(rv) = resource_version {
        metadata["resourceVersion"] = Value::String(rv.to_owned());
    }
    json!({ "metadata": metadata })
}

/// Serializes an optional duration as humantime text (`30s`, `5m`).
#[allow(
    clippy::ref_option,
    reason = "serde's serialize_with passes &Option<T>"
)]
pub(super) fn serialize_duration<S: serde::Serializer>(
    value: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(d) => serializer.serialize_some(&format_duration(*d)),
        None => serializer.serialize_none(),
    }
}

fn format_duration(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

fn check_duration(text: &str) -> Result<(), String> {
    humantime::parse_duration(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn check_time(text: &str) -> Result<(), String> {
    text.parse::<jiff::Timestamp>()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Longest part of a malformed value quoted in its warning.
const QUOTED_CHARS: usize = 64;

/// The warning for an ignored value: key, the value's start, why.
fn ignored(key: &str, value: &str, why: &str) -> String {
    let mut quoted: String = value.chars().take(QUOTED_CHARS).collect();
    if value.chars().nth(QUOTED_CHARS).is_some() {
        quoted.push('…');
    }
    let why: String = why.chars().take(QUOTED_CHARS * 2).collect();
    format!("ignored annotation {key}={quoted:?}: {why}")
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn join_list<'a>(items: impl Iterator<Item = &'a String>) -> Option<String> {
    let joined = items.map(String::as_str).collect::<Vec<_>>().join(",");
    (!joined.is_empty()).then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::state::RunOwner;

    fn full_state() -> RolloutState {
        RolloutState {
            mode: Mode::Auto,
            pause: Some(Pause {
                by: "rollcall auto".into(),
                at: Some("2026-11-29T13:00:00Z".parse().unwrap()),
                reason: Some("node pool-b-1: CrashLoopBackOff".into()),
            }),
            saved_strategy: Some(
                json!({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":0}}),
            ),
            canaries: ["node-1".to_owned(), "node-7".to_owned()].into(),
            canary_selector: Some("pool=canary,zone in (a,b)".into()),
            batch: Some(3),
            soak: Some(Duration::from_secs(90)),
            timeout: Some(Duration::from_secs(300)),
            batch_nodes: vec!["node-2".into(), "node-3".into()],
            rollback_to: Some(4),
            updated_by: Some("ana@laptop".into()),
            updated_at: Some("2026-11-29T13:00:01Z".parse().unwrap()),
            heartbeat: Some("2026-11-29T13:00:01Z".parse().unwrap()),
            fleet_run: Some("plan 0d769adc224969bb wave canary".into()),
        }
    }

    fn as_stored(state: &RolloutState) -> BTreeMap<String, String> {
        state
            .to_annotations()
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
            .collect()
    }

    #[test]
    fn round_trips() {
        for (name, state) in [("default", RolloutState::default()), ("full", full_state())] {
            let stored = as_stored(&state);
            let back = RolloutState::from_annotations(Some(&stored)).unwrap();
            assert_eq!(back, state, "{name}");
        }
    }

    #[test]
    fn clearing_a_full_state_nulls_every_key() {
        assert!(as_stored(&RolloutState::default()).is_empty());
        let patch = state_patch(&full_state(), &RolloutState::default(), None);
        let annotations = patch["metadata"]["annotations"].as_object().unwrap();
        assert_eq!(annotations.len(), ALL_KEYS.len());
        assert!(annotations.values().all(Value::is_null));
        assert!(patch["metadata"].get("resourceVersion").is_none());
    }

    #[test]
    fn patch_carries_only_changed_keys() {
        let before = full_state();
        let after = RolloutState {
            batch_nodes: vec!["node-9".into()],
            ..full_state()
        };
        let patch = state_patch(&before, &after, None);
        assert_eq!(
            patch["metadata"]["annotations"],
            json!({ BATCH_NODES: "node-9" })
        );
    }

    #[test]
    fn patch_touches_metadata_only_with_precondition() {
        let patch = state_patch(&RolloutState::default(), &full_state(), Some("42"));
        assert_eq!(
            patch.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["metadata"]
        );
        assert_eq!(patch["metadata"]["resourceVersion"], "42");
        assert_eq!(
            patch["metadata"]["annotations"][PAUSE_REASON],
            "node pool-b-1: CrashLoopBackOff"
        );
        assert_eq!(patch["metadata"]["annotations"][SOAK], "1m 30s");
        assert!(ALL_KEYS.iter().all(|k| k.starts_with(ANNOTATION_PREFIX)));
    }

    #[test]
    fn foreign_annotations_are_ignored() {
        let stored: BTreeMap<String, String> = [(
            "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
            "{}".to_owned(),
        )]
        .into();
        assert_eq!(
            RolloutState::from_annotations(Some(&stored)).unwrap(),
            RolloutState::default()
        );
    }

    #[test]
    fn malformed_values_are_ignored_with_a_warning_naming_the_key() {
        let cases = [
            (MODE, "sideways"),
            (BATCH, "-1"),
            (SOAK, "forever"),
            (TIMEOUT, "\u{1b}]52;c;ZXZpbA==\u{07}"),
            (SAVED_STRATEGY, "{not json"),
            (PAUSED_AT, "yesterday"),
            (ROLLBACK_TO, "x"),
            (UPDATED_AT, "soon"),
            (CANARY_SELECTOR, "zone in (a"),
        ];
        for (key, value) in cases {
            let mut stored: BTreeMap<String, String> =
                [(PAUSED_BY.to_owned(), "ana".to_owned())].into();
            stored.insert(key.to_owned(), value.to_owned());
            let (state, warnings) = RolloutState::read(Some(&stored));
            assert_eq!(warnings.len(), 1, "{key}: {warnings:?}");
            assert!(warnings[0].contains(key), "{key}: {warnings:?}");
            let expected = RolloutState {
                pause: Some(Pause {
                    by: "ana".into(),
                    ..Pause::default()
                }),
                ..RolloutState::default()
            };
            assert_eq!(state, expected, "{key}: the bad value is ignored");
            assert_eq!(
                RolloutState::from_annotations(Some(&stored)).unwrap(),
                expected
            );
        }
    }

    #[test]
    fn the_console_headline_names_an_ignored_value() {
        let stored: BTreeMap<String, String> = [
            (PAUSED_BY.to_owned(), "ana".to_owned()),
            (BATCH.to_owned(), "many".to_owned()),
        ]
        .into();
        assert_eq!(
            crate::ops::state::headline(Some(&stored), jiff::Timestamp::UNIX_EPOCH).as_deref(),
            Some("paused by ana · ignored annotation rollcall.dev/batch=\"many\": not a number")
        );
        let only_bad: BTreeMap<String, String> = [(MODE.to_owned(), "x".to_owned())].into();
        assert_eq!(
            crate::ops::state::headline(Some(&only_bad), jiff::Timestamp::UNIX_EPOCH).as_deref(),
            Some("ignored annotation rollcall.dev/mode=\"x\": unknown mode")
        );
    }

    #[test]
    fn a_run_a_fleet_run_started_is_named_while_it_runs() {
        let now: jiff::Timestamp = "2026-11-29T13:00:05Z".parse().unwrap();
        let mut stored: BTreeMap<String, String> = [
            (MODE.to_owned(), "auto".to_owned()),
            (FLEET_RUN.to_owned(), "plan 3f2a9c wave canary".to_owned()),
            (UPDATED_BY.to_owned(), "ana".to_owned()),
            (HEARTBEAT.to_owned(), "2026-11-29T13:00:01Z".to_owned()),
        ]
        .into();
        let headline = |stored: &BTreeMap<String, String>| {
            crate::ops::state::headline(Some(stored), now).unwrap_or_default()
        };
        assert_eq!(
            headline(&stored),
            "auto · fleet run plan 3f2a9c wave canary"
        );
        let (state, _) = RolloutState::read(Some(&stored));
        let refusal = state.run_in_progress(now).unwrap();
        assert!(
            refusal.contains("started by ana, fleet run plan 3f2a9c wave canary)"),
            "{refusal}"
        );
        // Paused, or done: the annotation only says who drove last.
        stored.insert(PAUSED_BY.to_owned(), "bo".to_owned());
        assert_eq!(headline(&stored), "paused by bo");
        stored.remove(PAUSED_BY);
        stored.insert(MODE.to_owned(), "idle".to_owned());
        assert_eq!(headline(&stored), "");
    }

    #[test]
    fn a_huge_malformed_value_gives_a_short_warning() {
        let stored: BTreeMap<String, String> = [(BATCH.to_owned(), "9".repeat(1 << 20))].into();
        let (_, warnings) = RolloutState::read(Some(&stored));
        assert!(warnings[0].len() < 300, "{}", warnings[0].len());
    }

    #[test]
    fn a_run_in_progress_is_unpaused_auto_or_rollback() {
        let mut state = full_state();
        assert!(
            state
                .run_in_progress("2026-11-29T13:00:05Z".parse().unwrap())
                .is_none(),
            "paused: the run has ended"
        );
        state.pause = None;
        let now: jiff::Timestamp = "2026-11-29T13:00:05Z".parse().unwrap();
        state.heartbeat = Some("2026-11-29T13:00:01Z".parse().unwrap());
        let text = state.run_in_progress(now).unwrap();
        assert!(
            text.starts_with(
                "auto is already running (started by ana@laptop at 2026-11-29T13:00:01Z, \
                 fleet run plan 0d769adc224969bb wave canary)"
            ),
            "{text}"
        );
        let later: jiff::Timestamp = "2026-11-29T13:01:00Z".parse().unwrap();
        assert!(
            state.run_in_progress(later).is_none(),
            "a run whose heartbeat expired may be taken over"
        );
        assert!(matches!(state.run_owner(later), RunOwner::Expired { .. }));
        state.mode = Mode::Idle;
        assert!(state.run_in_progress(now).is_none());
    }

    #[test]
    fn the_state_word_prefers_paused_then_a_live_run_then_the_rollout() {
        use crate::engine::blockers::{Blocker, BlockerCode};
        let blocker = |code| Blocker {
            code,
            message: String::new(),
            nodes: Vec::new(),
        };
        let now: jiff::Timestamp = "2026-11-29T13:00:05Z".parse().unwrap();
        let mut state = full_state();
        let done = blocker(BlockerCode::NothingToDo);
        assert_eq!(super::super::state_word(&state, &done, now), "paused");
        state.pause = None;
        assert_eq!(super::super::state_word(&state, &done, now), "auto");
        let later: jiff::Timestamp = "2026-11-29T14:00:00Z".parse().unwrap();
        assert_eq!(super::super::state_word(&state, &done, later), "stalled");
        state.mode = Mode::Idle;
        let stuck = blocker(BlockerCode::MaxUnavailableSpent);
        assert_eq!(super::super::state_word(&state, &stuck, now), "stuck");
        assert_eq!(super::super::state_word(&state, &done, now), "idle");
        // A run that drives an OnDelete rollout is not "waiting for an operator".
        state.mode = Mode::Auto;
        let waiting = blocker(BlockerCode::WaitingForOperator);
        let shown = super::super::blocker_with_pause(&state, waiting.clone());
        assert_eq!(shown.code, BlockerCode::Progressing);
        assert!(
            shown.message.starts_with("auto-advance is moving"),
            "{}",
            shown.message
        );
        state.mode = Mode::Idle;
        assert_eq!(
            super::super::blocker_with_pause(&state, waiting.clone()),
            waiting
        );
    }
}
