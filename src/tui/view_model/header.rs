//! The DaemonSet summary: strategy and budgets, current revision, the status
//! counts, progress and rollout state. Pure.

use k8s_openapi::api::apps::v1::DaemonSetStatus;

use super::{Cell, Tone};
use crate::engine::blockers::Blocker;
use crate::engine::recorded_status::{StatusCounts, rehearsal_difference};
use crate::model::DaemonSet;
use crate::rows::RowCache;

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
    /// What this user's rights keep out of the view and the rollout keys
    /// they disable, most important first (`view limited: cannot list nodes
    /// (forbidden) — …`); joined with ` · ` and wrapped by the header widget.
    pub limits: Vec<Cell>,
    /// When the DaemonSet's nodes run more than one kubelet minor version (a
    /// rollout across the skew is a known cause of sandbox failures).
    pub kubelets: Option<KubeletNotice>,
}

/// The kubelet skew, said two ways: whole on a line of its own where the
/// header has room, short on the summary line where it has not.
#[derive(Clone, Debug, PartialEq)]
pub struct KubeletNotice {
    /// `kubelets on 2 minor versions: v1.32 on 7 nodes, v1.31 on 5 nodes (general-01, …)`.
    pub full: Cell,
    /// `kubelets v1.31–v1.32`.
    pub short: Cell,
}

impl KubeletNotice {
    /// The notice of the row cache's skew, if any.
    pub fn of(rows: &RowCache) -> Option<Self> {
        let skew = rows.kubelet_skew()?;
        let oldest = skew.behind.first().map(|b| b.version.as_str());
        let newest = skew
            .versions
            .keys()
            .find(|version| skew.behind.iter().all(|b| &b.version != *version));
        let short = match (oldest, newest) {
            (Some(oldest), Some(newest)) => format!("kubelets {oldest}–{newest}"),
            _ => "kubelet skew".to_owned(),
        };
        Some(Self {
            full: Cell::new(
                &format!(
                    "kubelets on {} minor versions: {}",
                    skew.versions.len(),
                    skew.describe()
                ),
                Tone::Warn,
            ),
            short: Cell::new(&short, Tone::Warn),
        })
    }
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
        state: with_dump_note(rollout_state(ds, blocker, now), ds, &status),
        owner: crate::engine::owner::spec_owner(&ds.metadata)
            .map(|o| Cell::new(&format!("managed by {}", o.describe()), Tone::Accent)),
        limits: Vec::new(),
        kubelets: KubeletNotice::of(rows),
    }
}

/// The limitations: every kind the server forbids this user, with what is
/// missing from the view because of it, the first prefixed `view limited:`.
pub fn limits(cache: &crate::cluster::cache::Cache) -> Vec<Cell> {
    crate::cluster::access::limitations(cache.forbidden_kinds())
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let prefix = if i == 0 { "view limited: " } else { "" };
            Cell::new(&format!("{prefix}{text}"), Tone::Warn)
        })
        .collect()
}

/// In a rehearsal of a dump (`rollcall sim -f`), the state goes on to say how
/// the live counts differ from the ones the dump recorded, and why (see
/// [`crate::engine::recorded_status`]); nothing when they agree.
fn with_dump_note(state: Cell, ds: &DaemonSet, status: &DaemonSetStatus) -> Cell {
    match rehearsal_difference(ds, StatusCounts::of_status(status)) {
        Some(difference) => Cell::new(
            &format!("{} · {}", state.text, difference.message),
            state.tone,
        ),
        None => state,
    }
}

fn tone_if(condition: bool, tone: Tone) -> Tone {
    if condition { tone } else { Tone::Good }
}

fn strategy(ds: &DaemonSet) -> String {
    // With the API server's defaults: maxUnavailable 1, maxSurge 0.
    crate::engine::rolling::update_strategy(ds).to_string()
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

    #[test]
    fn a_rehearsal_of_a_dump_says_how_its_counts_differ() {
        let record = r#"{"recorded":{"desired":5,"current":5,"updated":5,"ready":5,"available":5},
            "reasons":[{"code":"notReady","count":2,"nodes":["n4","n5"],"message":"2 pods not Ready (n4, n5)"}]}"#;
        // The state line of a rehearsal with this record and `ready` live.
        let state = |record: &str, ready: i32| {
            let mut ds = daemonset("a:v2")
                .annotation(crate::engine::recorded_status::ANNOTATION, record)
                .build();
            ds.status = Some(k8s_openapi::api::apps::v1::DaemonSetStatus {
                desired_number_scheduled: 5,
                current_number_scheduled: 5,
                updated_number_scheduled: Some(5),
                number_ready: ready,
                number_available: Some(ready),
                ..Default::default()
            });
            let rows = RowCache::default();
            let blocker = rows.blocker(&ds).clone();
            build(&ds, &rows, blocker, jiff::Timestamp::UNIX_EPOCH)
                .state
                .text
        };
        assert_eq!(
            state(record, 3),
            "idle · the dump recorded desired 5, ready 5; rehearsal has desired 5, ready 3: 2 pods not Ready (n4, n5)"
        );
        assert_eq!(state(record, 5), "idle", "counts that agree: nothing said");
        // Anyone may annotate: what the record says is drawn sanitised.
        let hostile = record.replace("2 pods not Ready", "\\u001b]0;pwned\\u0007\\u001b[2J");
        let text = state(&hostile, 3);
        assert!(text.contains("ready 3:"), "{text}");
        assert!(!text.chars().any(char::is_control), "{text:?}");
    }

    /// Issue 30 item 3: the console's header says what `status` says for a
    /// DaemonSet with nothing to roll out and a NotReady node: `idle`, from
    /// the row cache's blocker (the one `BlockerTally::blocker`), not `stuck`,
    /// `rolling` or `waiting`.
    #[test]
    fn a_rolled_out_daemonset_with_a_not_ready_node_is_idle() {
        use crate::cluster::cache::WatchUpdate;
        use crate::engine::fixtures::{node, pod, revision_of};
        use crate::tui::fixtures::{grid_streams_started, list, now};
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        let names: Vec<String> = (1..=14).map(|i| format!("general-{i:02}")).collect();
        let nodes: Vec<crate::model::Node> = names
            .iter()
            .map(|n| match n.as_str() {
                "general-06" => node(n).not_ready().build(),
                _ => node(n).build(),
            })
            .collect();
        // The node controller marked the pod on the NotReady node not Ready.
        let pods: Vec<crate::model::Pod> = names
            .iter()
            .map(|n| {
                let builder = pod(&format!("agent-{n}"), n, "h2");
                match n.as_str() {
                    "general-06" => builder.created(0).running_not_ready(600),
                    _ => builder.ready_since(0),
                }
                .build()
            })
            .collect();
        let cases = [
            ("OnDelete", daemonset("a:v2").on_delete().build()),
            (
                "RollingUpdate maxUnavailable=1",
                daemonset("a:v2")
                    .rolling(IntOrString::Int(1), IntOrString::Int(0))
                    .build(),
            ),
            (
                "RollingUpdate maxUnavailable=10%",
                daemonset("a:v2")
                    .rolling(IntOrString::String("10%".into()), IntOrString::Int(0))
                    .build(),
            ),
        ];
        for (name, ds) in cases {
            let mut cache = grid_streams_started();
            list(&mut cache, WatchUpdate::Node, nodes.clone());
            list(&mut cache, WatchUpdate::DaemonSet, vec![ds.clone()]);
            list(
                &mut cache,
                WatchUpdate::Revision,
                vec![
                    revision_of(&daemonset("a:v1").build(), "h1", 1),
                    revision_of(&ds, "h2", 2),
                ],
            );
            list(&mut cache, WatchUpdate::Pod, pods.clone());
            let mut rows = RowCache::default();
            let changed = cache.take_changes();
            rows.refresh(
                &cache,
                crate::model::Target::from_key("kube-system/agent").as_ref(),
                &changed,
                now(),
            );
            let blocker = rows.blocker(&ds).clone();
            assert_eq!(
                blocker.code,
                crate::engine::blockers::BlockerCode::NothingToDo,
                "{name}: {blocker:?}"
            );
            let state = rollout_state(&ds, blocker, now());
            assert_eq!(state.text, "idle", "{name}");
            assert_eq!(state.tone, Tone::Good, "{name}");
        }
    }
}
