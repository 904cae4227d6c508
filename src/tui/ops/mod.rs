//! The console's rollout operations as one component: advance (`a`, `n`),
//! canary (`c`/Space), auto-advance (`A`), pause/resume (`p`), rollback
//! (`r`) and the plan (`P`), with their dialogs, the run this console drives
//! and the writes in flight. [`OpsConsole`] owns that state; the app forwards
//! actions to [`OpsConsole::update`], cache changes to
//! [`OpsConsole::on_change`] and effects-side results to
//! [`OpsConsole::on_event`], each with an [`OpsScope`]: the few things of the
//! console around it the operations read (the DaemonSet shown, the selected
//! node, the row cache) and the status line they report on. Nothing here
//! reaches into the app.
//!
//! Every key builds the action value from a snapshot of the cache and opens a
//! confirmation; only "yes" turns it into writes for the effects task. The
//! keys and dialogs are in `keys`, the run's executor in `auto`, the nodes
//! advanced by hand in `follow`, the rollback dialog in `rollback_dialog`, the
//! plan in `plan_view`. Every step of a run is decided by
//! [`crate::ops::run::Run`]; this component only executes and shows it.

mod auto;
mod follow;
mod keys;
mod plan_view;
mod rollback_dialog;

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use super::confirm::{Intent, Modal};
use super::keymap::Context;
use super::state::StatusLine;
use crate::cluster::cache::Cache;
use crate::model::Target;
use crate::ops::auto::AutoPolicy;
use crate::ops::rbac::{Operation, Permissions};
use crate::ops::run::Run;
use crate::ops::snapshot::Snapshot;
use crate::ops::write::{WriteEvent, WriteRequest};
use crate::rows::RowCache;

pub use follow::Followed;
pub use plan_view::LISTED;
pub use rollback_dialog::rollback_picker;

/// Defaults for auto-advance when the DaemonSet has no stored settings.
pub const DEFAULT_POLICY: AutoPolicy = AutoPolicy {
    batch: 1,
    soak: Duration::from_secs(30),
    timeout: crate::engine::health::READY_TIMEOUT,
};

/// What comes back from the effects side.
#[derive(Debug)]
pub enum OpsEvent {
    /// A write finished.
    Write(Box<WriteEvent>),
    /// The RBAC pre-check answered.
    Permissions(Permissions),
    /// A fresh read of a node's pods ([`super::effect::Effect::ReadPodsOn`])
    /// is in the cache, or failed with this message.
    FreshRead {
        /// The node read.
        node: String,
        /// `Err`: why the read failed.
        result: Result<(), String>,
    },
}

/// What the rollout operations take from the console around them, on each
/// call: read-only views of what is shown and the status line to report on.
pub struct OpsScope<'a> {
    /// The DaemonSet shown.
    pub target: Option<&'a Target>,
    /// The node selected in the grid.
    pub selected_node: Option<&'a str>,
    /// The row cache: coverage rows (borrowed by snapshots) and the blocker
    /// the header shows.
    pub rows: &'a RowCache,
    /// The status line.
    pub status: StatusLine<'a>,
}

impl<'a> OpsScope<'a> {
    /// The console's snapshot of the DaemonSet shown: borrows the watch
    /// cache's nodes and pods and the row cache's coverage rows (no copy of
    /// the cluster under the cache lock), see [`Snapshot::live`].
    pub fn snapshot<'c>(&self, cache: &'c Cache) -> Result<Snapshot<'c>, String>
    where
        'a: 'c,
    {
        let target = self.target.ok_or("no daemonset selected")?;
        Snapshot::live(cache, target, self.rows)
            .ok_or_else(|| format!("daemonset {target} not loaded yet"))
    }

    /// The selected node, or why there is none.
    fn selected(&self) -> Result<String, String> {
        self.selected_node
            .map(str::to_owned)
            .ok_or_else(|| "no node selected".to_owned())
    }
}

/// The run (auto-advance or rollback) this console drives: the one run state
/// machine, and which of the writes in flight are its deletes.
#[derive(Debug)]
pub struct ConsoleRun {
    pub(super) run: Run,
    /// Write id → node, for the deletes it asked for.
    deletes: BTreeMap<u64, String>,
    /// The batch's deletes not sent yet: one at a time, each answered before
    /// the next, none after a refusal (as the headless executor runs them).
    queued: VecDeque<WriteRequest>,
    /// The node whose pods are being read afresh: the run waits for the answer.
    reading: Option<String>,
}

impl ConsoleRun {
    /// The console reads afresh off the UI thread before a timeout fails a
    /// node, as the headless executor does.
    fn new(run: Run) -> Self {
        Self {
            run: run.with_fresh_reads(),
            deletes: BTreeMap::new(),
            queued: VecDeque::new(),
            reading: None,
        }
    }
}

/// The console's rollout-operation state.
#[derive(Debug, Default)]
pub struct OpsConsole {
    /// Writes are refused (`--read-only`).
    pub read_only: bool,
    /// Who acts (for the journal and annotations).
    pub actor: String,
    /// The RBAC answers, once in.
    pub permissions: Option<Permissions>,
    /// The open dialog.
    pub modal: Option<Modal>,
    /// The run this console drives, when on.
    pub auto: Option<ConsoleRun>,
    /// Writes sent and not yet answered.
    pub pending: BTreeMap<u64, String>,
    /// The resourceVersion of this console's last DaemonSet write, until the
    /// watch shows it: the auto run decides nothing from an older view.
    pub unechoed: Option<String>,
    /// The nodes advanced by hand, followed until they pass the gate or fail.
    pub followed: Option<Followed>,
    /// The user chose to stop this console's run and quit: the console exits
    /// once the pause is answered (written, or failed and journalled).
    pub quit_when_idle: bool,
    next_id: u64,
}

impl OpsConsole {
    /// A console that may write (unless `read_only`) as `actor`.
    pub fn new(read_only: bool, actor: String) -> Self {
        Self {
            read_only,
            actor,
            ..Self::default()
        }
    }

    /// The keymap context of the open dialog, if any.
    pub fn context(&self) -> Option<Context> {
        match &self.modal {
            Some(Modal::Confirm(confirm)) => Some(match confirm.intent {
                Intent::DespiteFailing(_) => Context::FailingConfirm,
                _ => Context::Confirm,
            }),
            Some(Modal::Rollback(_)) => Some(Context::RollbackPicker),
            Some(Modal::Info { .. }) => Some(Context::PlanView),
            Some(Modal::AutoForm(_)) => Some(Context::AutoForm),
            Some(Modal::PauseReason(_)) => Some(Context::ReasonInput),
            None => None,
        }
    }

    /// Numbers the writes and remembers what they are.
    fn submit(&mut self, requests: Vec<WriteRequest>) -> Vec<(u64, WriteRequest)> {
        requests
            .into_iter()
            .map(|request| {
                self.next_id += 1;
                let label = request.record.node.as_ref().map_or_else(
                    || request.record.action.to_string(),
                    |n| format!("{} {n}", request.record.action),
                );
                self.pending.insert(self.next_id, label);
                (self.next_id, request)
            })
            .collect()
    }

    /// Refuses an operation the console may not do, with why.
    fn allowed(&self, operation: Operation, what: &str) -> Result<(), String> {
        if self.read_only {
            return Err(format!("read-only mode: {what} is disabled"));
        }
        if let Some(permissions) = &self.permissions {
            permissions
                .allows(operation)
                .map_err(|why| format!("{what} disabled: {why}"))?;
        }
        if !self.pending.is_empty() {
            return Err(format!(
                "{what}: busy, waiting for {}",
                self.pending
                    .values()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }
}
