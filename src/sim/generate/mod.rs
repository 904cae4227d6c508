//! Building the simulated cluster's objects: realistic nodes for scenario
//! pools, DaemonSets with their ControllerRevisions, the daemon pods a settled
//! cluster already runs, and large generated clusters for `--nodes N`.
//!
//! Pure builders over JSON values; loading them into the store is
//! [`crate::sim::embedded`]'s job.

mod images;
pub mod large;
mod needs;
pub mod nodes;
pub mod plain_pods;
pub mod workloads;
