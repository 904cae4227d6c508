//! How a run ends, what it says, and the one write that records the end: idle
//! (with the strategy a takeover saved written back) when it finished or its
//! operator stopped it; a pause with the reason when a gate failed, it was
//! interrupted or an error stopped it; nothing when someone else's pause
//! already stands or nothing was really done (a dry run).

use serde_json::{Value, json};

use crate::ops::error::OpsError;
use crate::ops::journal_action::JournalAction;
use crate::ops::pause::{PauseRequest, pause, resource_version, restorable};
use crate::ops::run::Run;
use crate::ops::run::fleet_run::FleetRunName;
use crate::ops::run::words::moved;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::{Mode, RolloutState};
use crate::ops::write::{Record, Write, WriteRequest};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every node the plan could move passed its gate. `left` names the nodes
    /// the run was meant to move but could not (cordoned, NotReady), with why:
    /// then the run is incomplete.
    Completed {
        /// Nodes moved by this run.
        advanced: usize,
        /// Nodes left behind, with the reason.
        left: Vec<(String, String)>,
    },
    /// A gate failed or a delete was refused; the rollout is now paused.
    Paused {
        /// The node.
        node: String,
        /// Why.
        reason: String,
        /// The cluster's fault, not the node's: a delete it could not carry
        /// out (unreachable, throttling, 5xx, an answer lost). A fleet does not
        /// count such a node against its failure budget.
        by_cluster: bool,
    },
    /// Someone else paused the rollout; their pause stands.
    Stopped {
        /// Who paused it (`a pause by …`).
        by: String,
    },
    /// Ctrl-C, SIGTERM or the console closed: the run stopped after its
    /// current step and paused the rollout.
    Interrupted {
        /// Who interrupted (the local user).
        by: String,
        /// How (`Ctrl-C or SIGTERM`, `console closed`).
        how: &'static str,
    },
    /// A larger run this one is part of stopped it (a fleet run, for a
    /// failure in another cluster): the rollout is paused with the reason.
    Halted {
        /// Why, naming the cluster, node and reason that stopped the larger run.
        reason: String,
    },
    /// Its operator stopped the run without pausing (the console's `A`): the
    /// rollout goes back to idle (and to its controller, if taken over).
    Cancelled {
        /// Who stopped it.
        by: String,
        /// Nodes this run moved.
        moved: usize,
    },
    /// An error stopped the run; the rollout is paused with it as the reason.
    Failed {
        /// The error in words.
        error: String,
    },
    /// A dry run showed its first batch; nothing was changed.
    DryRun,
}

impl RunEnd {
    /// The exit code of a headless run that ended so: 0 done, 1 paused,
    /// stopped, failed or incomplete, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Completed { left, .. } if left.is_empty() => 0,
            Self::Cancelled { .. } | Self::DryRun => 0,
            Self::Interrupted { .. } => crate::ops::interrupt::EXIT_INTERRUPTED,
            Self::Completed { .. }
            | Self::Paused { .. }
            | Self::Stopped { .. }
            | Self::Halted { .. } => 1,
            Self::Failed { .. } => 2,
        }
    }

    /// Whether the run did all it was meant to (the console says it as news,
    /// not as an error).
    pub fn is_success(&self) -> bool {
        self.exit_code() == 0
    }

    /// The end in words, for the last line of a command and the console's
    /// status line. `label` is the run's (`auto-advance`, `rollback`);
    /// `revision` is the revision the run moves nodes to.
    pub fn text(&self, label: &str, revision: Option<i64>) -> String {
        let verb = moved(label);
        let text = match self {
            Self::Completed { advanced, left } if left.is_empty() => {
                format!("completed: {advanced} node(s) {verb}")
            }
            Self::Completed { advanced, left } => {
                let on = revision.map_or_else(
                    || "the target revision".to_owned(),
                    |r| format!("revision {r}"),
                );
                let list: Vec<String> = left.iter().map(|(n, why)| format!("{n}: {why}")).collect();
                let cordoned = if left.iter().any(|(_, why)| why == "cordoned") {
                    "; --include-cordoned moves cordoned nodes"
                } else {
                    ""
                };
                format!(
                    "incomplete: {advanced} node(s) {verb}, {} node(s) still not on {on} ({}){cordoned}",
                    left.len(),
                    list.join(", ")
                )
            }
            Self::Paused { node, reason, .. } => format!("paused: node {node}: {reason}"),
            Self::Stopped { by } => format!("stopped by {by}"),
            Self::Interrupted { by, .. } => {
                format!("interrupted by {by}: the rollout is paused (resume it to continue)")
            }
            Self::Halted { reason } => format!("halted: {reason} (the rollout is paused)"),
            Self::Cancelled { by, moved } => {
                format!("stopped by {by} ({moved} node(s) {verb} by this run)")
            }
            Self::Failed { error } => format!("stopped by an error: {error}"),
            Self::DryRun => {
                "dry run: the first batch is shown; later batches follow as each passes its gate"
                    .to_owned()
            }
        };
        crate::sanitize::sanitize(&text).into_owned()
    }
}

/// See [`Run::closing`].
pub(super) fn closing(
    run: &Run,
    end: &RunEnd,
    snapshot: &Snapshot<'_>,
    now: jiff::Timestamp,
) -> Result<Option<WriteRequest>, OpsError> {
    let state = snapshot.state()?;
    let reason = match end {
        RunEnd::Stopped { .. } | RunEnd::DryRun => return Ok(None),
        RunEnd::Completed { .. } => {
            return idle(run, snapshot, state, JournalAction::AutoDone, now);
        }
        RunEnd::Cancelled { .. } => {
            return idle(run, snapshot, state, JournalAction::AutoStopped, now);
        }
        // Someone else paused meanwhile: their pause (and its reason) stands.
        _ if state.is_paused() => return Ok(None),
        RunEnd::Paused {
            node,
            reason,
            by_cluster,
        } => {
            let text = format!("node {node}: {reason}");
            let text = match fleet_mark(run).filter(|_| *by_cluster) {
                Some(mark) => format!(
                    "{mark}: stopped: {text} (the cluster could not carry out the delete; a run of the same plan resumes here)"
                ),
                None => text,
            };
            (Some(node.clone()), text)
        }
        RunEnd::Interrupted { by, how } => (None, format!("interrupted by {by} ({how})")),
        RunEnd::Failed { error } => {
            let text = format!("stopped by an error: {error}");
            match fleet_mark(run) {
                Some(mark) => (None, format!("{mark}: {text}")),
                None => (None, text),
            }
        }
        RunEnd::Halted { reason } => (None, reason.clone()),
    };
    let request = PauseRequest {
        by: format!("rollcall {} ({})", short_label(run.label()), run.actor()),
        reason: Some(reason.1),
        node: reason.0,
        automatic: true,
    };
    pause(snapshot, &request, now).map(Some)
}

/// The mark of the fleet run this run is part of, if any: a pause that
/// nothing known against a node caused (the cluster failed a delete, an
/// error stopped the run) begins with it, so a run of the same plan resumes
/// it; a node's own failure does not, and waits for a person.
fn fleet_mark(run: &Run) -> Option<String> {
    run.settings.fleet_run.as_ref().map(FleetRunName::mark)
}

/// `auto` or `rollback`, as pause reasons name the run.
fn short_label(label: &str) -> &'static str {
    if label == "rollback" {
        "rollback"
    } else {
        "auto"
    }
}

/// Back to idle: no mode, batch, heartbeat, canary selector or rollback
/// record left to go stale; the strategy a takeover saved written back.
fn idle(
    run: &Run,
    snapshot: &Snapshot<'_>,
    before: RolloutState,
    action: JournalAction,
    now: jiff::Timestamp,
) -> Result<Option<WriteRequest>, OpsError> {
    let after = RolloutState {
        mode: Mode::Idle,
        batch_nodes: Vec::new(),
        rollback_to: None,
        heartbeat: None,
        canary_selector: None,
        ..before.clone()
    }
    .touched(run.actor(), now);
    let saved = before
        .saved_strategy
        .clone()
        .filter(|_| run.taken_over().is_some() && snapshot.update_strategy().is_on_delete());
    let mut write = match saved {
        Some(strategy) => {
            let after = RolloutState {
                saved_strategy: None,
                ..after
            };
            strategy_write(snapshot, before, after, restorable(strategy))?
        }
        None if before == after => return Ok(None),
        None => WriteRequest::state(snapshot, before, after, action, None),
    };
    write.record.action = action;
    Ok(Some(write))
}

/// The OnDelete strategy a takeover switches to (`rollingUpdate` removed).
pub(super) static ON_DELETE: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| json!({ "type": "OnDelete", "rollingUpdate": null }));

/// One merge patch of the strategy and the state, only if the DaemonSet is
/// unchanged since `snapshot` was read.
pub(super) fn strategy_write(
    snapshot: &Snapshot<'_>,
    before: RolloutState,
    after: RolloutState,
    strategy: Value,
) -> Result<WriteRequest, OpsError> {
    let target = snapshot.target();
    let resource_version = resource_version(snapshot)?;
    Ok(WriteRequest {
        record: Record::new(JournalAction::AutoStart, target.clone()),
        write: Write::PatchStrategy {
            namespace: target.namespace,
            name: target.name,
            strategy,
            before,
            after,
            resource_version,
        },
    })
}
