//! Rollout operations (advance, auto-advance, pause, resume, rollback) shared by
//! the console's keys and the headless commands.
//!
//! Decisions are pure functions over a [`snapshot`] of the cluster and the
//! durable [`state`] on the DaemonSet; they return [`write::Write`] values that
//! the one [`write::Executor`] runs (single flight, preconditions, no retries,
//! journaled). Planning and health gates come from `engine::rollout`; this module
//! never re-implements them. A rollout run (auto-advance, a rollback's node
//! moves) has one home, the pure state machine in [`run`]; [`drive`] executes
//! it (and the other async flows) for the headless commands, the console's
//! `tui::ops` for the console; [`follow`] watches a DaemonSet through the
//! cluster layer.

pub mod advance;
pub mod advance_target;
pub mod auto;
pub mod drive;
pub mod echo;
pub mod error;
pub mod follow;
pub mod fresh_read;
pub mod interrupt;
pub mod journal;
pub mod journal_action;
pub mod not_found;
pub mod owner_guard;
pub mod pause;
pub mod precheck;
pub mod preflight;
pub mod rbac;
pub mod revert_watch;
pub mod rollback;
pub mod run;
pub mod shared_budget;
pub mod snapshot;
pub mod state;
pub mod status;
pub mod status_changes;
pub mod status_kubelets;
pub mod status_node;
pub mod status_summary;
pub mod write;

#[cfg(test)]
pub(crate) mod testing;
