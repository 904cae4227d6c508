//! The priority classes every cluster is bootstrapped with (upstream
//! `scheduling.SystemPriorityClasses`): one table, read by the embedded
//! cluster's API (the objects it serves) and by fit (a template's class
//! resolved without a PriorityClass list).
//!
//! Pure data.

/// `system-cluster-critical`'s value (upstream `SystemCriticalPriority`).
pub const SYSTEM_CLUSTER_CRITICAL: i32 = 2_000_000_000;
/// `system-node-critical`'s value (upstream: `SystemCriticalPriority + 1000`).
pub const SYSTEM_NODE_CRITICAL: i32 = 2_000_001_000;

/// The system classes: name, value, description.
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i32, &str); 2] = [
    (
        "system-node-critical",
        SYSTEM_NODE_CRITICAL,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        SYSTEM_CLUSTER_CRITICAL,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The value of a system class, by name.
pub fn system_class_priority(name: &str) -> Option<i32> {
    SYSTEM_PRIORITY_CLASSES
        .iter()
        .find(|(class, ..)| *class == name)
        .map(|(_, value, _)| *value)
}
