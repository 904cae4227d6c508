//! The embedded cluster's scheduler (being built): the scheduling queue with
//! upstream's back-off, and the placement filters of upstream's default
//! profile (NodeUnschedulable, TaintToleration, NodeAffinity with its
//! PreFilter) on the engine's rules.

pub mod placement;
pub mod queue;
