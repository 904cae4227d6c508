//! Node pressure as the simulated kubelet reports it and the node lifecycle
//! controller taints it: the annotations `sim.rollcall.dev/memory-pressure`
//! and `sim.rollcall.dev/disk-pressure` (set by the scenario, or with
//! `kubectl annotate node` on a running sim; removing one relieves it) turn
//! the `MemoryPressure` / `DiskPressure` condition True with the kubelet's
//! reason and message, and taint-by-condition adds the matching NoSchedule
//! taint while it is True (upstream `nodelifecycle`
//! `nodeConditionToTaintKeyStatusMap`). Pure functions over node JSON.

use serde_json::{Value, json};

use crate::engine::taints::{TAINT_DISK_PRESSURE, TAINT_MEMORY_PRESSURE};

/// A kind of node pressure the sim models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pressure {
    /// `MemoryPressure`: evictions reclaim memory.
    Memory,
    /// `DiskPressure`: evictions reclaim ephemeral storage.
    Disk,
}

/// The node annotation that sets memory pressure (`true`, or how much is short).
pub const MEMORY_PRESSURE_ANNOTATION: &str = "sim.rollcall.dev/memory-pressure";

/// The node annotation that sets disk pressure.
pub const DISK_PRESSURE_ANNOTATION: &str = "sim.rollcall.dev/disk-pressure";

impl Pressure {
    /// Both kinds.
    pub const ALL: [Pressure; 2] = [Pressure::Memory, Pressure::Disk];

    /// The node annotation that sets it.
    pub fn annotation(self) -> &'static str {
        match self {
            Pressure::Memory => MEMORY_PRESSURE_ANNOTATION,
            Pressure::Disk => DISK_PRESSURE_ANNOTATION,
        }
    }

    /// The node condition type.
    pub fn condition(self) -> &'static str {
        match self {
            Pressure::Memory => "MemoryPressure",
            Pressure::Disk => "DiskPressure",
        }
    }

    /// The NoSchedule taint the node lifecycle controller adds while it holds.
    pub fn taint(self) -> &'static str {
        match self {
            Pressure::Memory => TAINT_MEMORY_PRESSURE,
            Pressure::Disk => TAINT_DISK_PRESSURE,
        }
    }

    /// The resource evictions reclaim (as the eviction message names it).
    pub fn resource(self) -> &'static str {
        match self {
            Pressure::Memory => "memory",
            Pressure::Disk => "ephemeral-storage",
        }
    }

    /// The kubelet's reason and message for the condition (upstream
    /// `nodestatus.MemoryPressureCondition` / `DiskPressureCondition`).
    fn words(self, on: bool) -> (&'static str, &'static str) {
        match (self, on) {
            (Pressure::Memory, true) => (
                "KubeletHasInsufficientMemory",
                "kubelet has insufficient memory available",
            ),
            (Pressure::Memory, false) => (
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            (Pressure::Disk, true) => ("KubeletHasDiskPressure", "kubelet has disk pressure"),
            (Pressure::Disk, false) => ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        }
    }
}

/// The annotation's value when it asks for pressure: anything but absent,
/// empty or `false` (`true`, or a quantity saying how much is short).
pub fn requested(node: &Value, pressure: Pressure) -> Option<&str> {
    node["metadata"]["annotations"][pressure.annotation()]
        .as_str()
        .map(str::trim)
        .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("false"))
}

/// Whether the node's condition for `pressure` is True.
pub fn reported(node: &Value, pressure: Pressure) -> bool {
    node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == pressure.condition() && c["status"] == "True")
}

/// Sets the condition for `pressure` to `on` at `now` (its transition time
/// only when the status flips) and keeps the taint in step. Returns whether
/// anything changed.
pub fn set(node: &mut Value, pressure: Pressure, on: bool, now: &str) -> bool {
    let (reason, message) = pressure.words(on);
    let status = if on { "True" } else { "False" };
    let mut changed = false;
    if !node["status"]["conditions"].is_array() {
        node["status"]["conditions"] = json!([]);
    }
    if let Some(conditions) = node["status"]["conditions"].as_array_mut() {
        match conditions
            .iter_mut()
            .find(|c| c["type"] == pressure.condition())
        {
            Some(cond) if cond["status"] == status => {}
            Some(cond) => {
                cond["status"] = json!(status);
                cond["reason"] = json!(reason);
                cond["message"] = json!(message);
                cond["lastTransitionTime"] = json!(now);
                cond["lastHeartbeatTime"] = json!(now);
                changed = true;
            }
            None => {
                conditions.push(json!({
                    "type": pressure.condition(), "status": status, "reason": reason,
                    "message": message, "lastHeartbeatTime": now, "lastTransitionTime": now,
                }));
                changed = true;
            }
        }
    }
    changed | set_taint(node, pressure.taint(), on)
}

fn set_taint(node: &mut Value, key: &str, on: bool) -> bool {
    let has = node["spec"]["taints"].as_array().is_some_and(|t| {
        t.iter()
            .any(|t| t["key"] == key && t["effect"] == "NoSchedule")
    });
    if has == on {
        return false;
    }
    let mut taints: Vec<Value> = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if on {
        taints.push(json!({"key": key, "effect": "NoSchedule"}));
    } else {
        taints.retain(|t| !(t["key"] == key && t["effect"] == "NoSchedule"));
    }
    if taints.is_empty() {
        if let Some(spec) = node["spec"].as_object_mut() {
            spec.remove("taints");
        }
    } else {
        node["spec"]["taints"] = Value::Array(taints);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kubelet::node_status::healthy_conditions;

    fn node(annotations: &Value) -> Value {
        json!({"metadata": {"name": "n", "annotations": annotations}, "spec": {},
               "status": {"conditions": healthy_conditions("t0", "t0")}})
    }

    #[test]
    fn the_annotation_asks_for_pressure_unless_false_or_empty() {
        let cases = [
            (
                json!({"sim.rollcall.dev/memory-pressure": "true"}),
                Some("true"),
            ),
            (
                json!({"sim.rollcall.dev/memory-pressure": "512Mi"}),
                Some("512Mi"),
            ),
            (json!({"sim.rollcall.dev/memory-pressure": "false"}), None),
            (json!({"sim.rollcall.dev/memory-pressure": ""}), None),
            (json!({"sim.rollcall.dev/disk-pressure": "true"}), None),
            (json!({"sim.rollcall.dev/memory-pressure": 3}), None),
        ];
        for (annotations, expected) in cases {
            assert_eq!(
                requested(&node(&annotations), Pressure::Memory),
                expected,
                "{annotations}"
            );
        }
    }

    /// Upstream taint-by-condition: `MemoryPressure=True` taints
    /// `node.kubernetes.io/memory-pressure:NoSchedule`; the taint goes when
    /// the condition clears; other taints stay.
    #[test]
    fn pressure_sets_the_condition_and_its_taint_and_clears_both() {
        let mut n = node(&json!({}));
        n["spec"]["taints"] = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
        assert!(set(&mut n, Pressure::Memory, true, "t1"));
        assert!(reported(&n, Pressure::Memory));
        assert!(!reported(&n, Pressure::Disk));
        let cond = n["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "MemoryPressure"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(cond["reason"], "KubeletHasInsufficientMemory");
        assert_eq!(cond["message"], "kubelet has insufficient memory available");
        assert_eq!(cond["lastTransitionTime"], "t1");
        assert_eq!(
            n["spec"]["taints"][1],
            json!({"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"})
        );
        assert!(!set(&mut n, Pressure::Memory, true, "t2"), "already set");
        assert!(set(&mut n, Pressure::Memory, false, "t3"));
        assert!(!reported(&n, Pressure::Memory));
        assert_eq!(
            n["spec"]["taints"],
            json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
        );
        assert!(set(&mut n, Pressure::Disk, true, "t4"));
        assert_eq!(
            n["spec"]["taints"][1]["key"],
            "node.kubernetes.io/disk-pressure"
        );
    }
}
