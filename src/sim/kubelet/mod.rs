//! Simulated kubelets (plus the small parts of the scheduler and the node
//! lifecycle controller a daemon pod's life needs): pods go Pending →
//! ContainerCreating → Running → Ready after scenario delays on tokio time,
//! image rules inject pull failures, crash loops and never-ready containers,
//! deleted pods finish after their grace period, and nodes go NotReady,
//! come back, join and leave on the scenario timeline.
//!
//! Writes only pod status, pod binding, node status and Events; it never
//! creates or deletes daemon pods (the controller does).

pub mod clock;
pub mod node_status;
pub mod pod_status;
pub mod rules;
