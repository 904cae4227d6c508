//! The reconcile engine: DaemonSet node eligibility, revisions, coverage and
//! rollout planning, re-implementing the upstream DaemonSet controller's logic.
//!
//! Pure: plain data in, plain data out. No I/O, no async, no clock (time is an
//! argument), no tokio, kube or ratatui.

// Eligibility (engine helper): selectors, taints, affinity, the per-node verdict.
pub mod affinity;
pub mod eligibility;
pub mod requirement;
pub mod selector;
pub mod taints;

// Revisions, coverage and planning ("plan" helper).
pub mod blockers;
pub mod coverage;
pub mod fit;
#[cfg(test)]
pub mod fixtures;
pub mod health;
pub mod owner;
pub mod ownership;
pub mod priority;
pub mod qos;
pub mod reconcile;
pub mod recorded_status;
pub mod revision;
pub mod rolling;
pub mod rollout;
pub mod vocabulary;
