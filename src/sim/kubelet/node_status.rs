//! Node conditions and the node lifecycle taints, as the kubelet and the node
//! lifecycle controller write them: a healthy node reports the pressure
//! conditions False and Ready True; a node whose kubelet stopped posting status
//! gets every condition Unknown and the `unreachable` NoSchedule and NoExecute
//! taints (upstream `node_lifecycle_controller.go` `tryUpdateNodeHealth`,
//! `markNodeAsReachable`). Pure functions over node JSON; no store access.

use serde_json::{Value, json};

/// `node.kubernetes.io/unreachable`.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `node.kubernetes.io/not-ready`.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";

/// The four conditions of a healthy node, all changed at `since`.
pub fn healthy_conditions(since: &str, heartbeat: &str) -> Value {
    // An array, not `json!([...])`: that copies each condition it is given.
    Value::Array(vec![
        condition(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
            since,
            heartbeat,
        ),
        condition(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
            since,
            heartbeat,
        ),
        condition(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
            since,
            heartbeat,
        ),
        condition(
            "Ready",
            "True",
            "KubeletReady",
            "kubelet is posting ready status",
            since,
            heartbeat,
        ),
    ])
}

fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    since: &str,
    heartbeat: &str,
) -> Value {
    json!({
        "type": type_, "status": status, "reason": reason, "message": message,
        "lastHeartbeatTime": heartbeat, "lastTransitionTime": since,
    })
}

/// Marks `node` unreachable at `now`: every condition Unknown
/// (`NodeStatusUnknown`, "Kubelet stopped posting node status."), plus the
/// unreachable NoSchedule and NoExecute taints. Returns whether anything changed.
pub fn mark_unreachable(node: &mut Value, now: &str) -> bool {
    let mut changed = false;
    if let Some(conditions) = node["status"]["conditions"].as_array_mut() {
        for cond in conditions {
            if cond["status"] != "Unknown" {
                cond["status"] = json!("Unknown");
                cond["reason"] = json!("NodeStatusUnknown");
                cond["message"] = json!("Kubelet stopped posting node status.");
                cond["lastTransitionTime"] = json!(now);
                changed = true;
            }
        }
    }
    for effect in ["NoSchedule", "NoExecute"] {
        changed |= add_taint(node, TAINT_UNREACHABLE, effect, now);
    }
    changed
}

/// Marks `node` healthy again at `now`: healthy conditions, lifecycle taints
/// removed. Returns whether anything changed.
pub fn mark_ready(node: &mut Value, now: &str) -> bool {
    let was_ready = is_ready(node);
    let mut changed = false;
    if !was_ready {
        node["status"]["conditions"] = healthy_conditions(now, now);
        changed = true;
    }
    for key in [TAINT_UNREACHABLE, TAINT_NOT_READY] {
        changed |= remove_taints(node, key);
    }
    changed
}

/// Whether the node's Ready condition is True.
pub fn is_ready(node: &Value) -> bool {
    node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

fn add_taint(node: &mut Value, key: &str, effect: &str, now: &str) -> bool {
    let spec = &mut node["spec"];
    if !spec["taints"].is_array() {
        spec["taints"] = json!([]);
    }
    let Some(taints) = spec["taints"].as_array_mut() else {
        return false;
    };
    if taints
        .iter()
        .any(|t| t["key"] == key && t["effect"] == effect)
    {
        return false;
    }
    let mut taint = json!({"key": key, "effect": effect});
    if effect == "NoExecute" {
        taint["timeAdded"] = json!(now);
    }
    taints.push(taint);
    true
}

fn remove_taints(node: &mut Value, key: &str) -> bool {
    let Some(taints) = node
        .get_mut("spec")
        .and_then(|spec| spec.get_mut("taints"))
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let before = taints.len();
    taints.retain(|t| t["key"] != key);
    let changed = taints.len() != before;
    if taints.is_empty()
        && let Some(spec) = node["spec"].as_object_mut()
    {
        spec.remove("taints");
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> Value {
        json!({"metadata": {"name": "n"}, "spec": {}, "status": {"conditions": healthy_conditions("t0", "t0")}})
    }

    #[test]
    fn unreachable_then_ready_round_trips() {
        let mut n = node();
        assert!(is_ready(&n));
        assert!(mark_unreachable(&mut n, "t1"));
        assert!(!is_ready(&n));
        let taints = n["spec"]["taints"].as_array().expect("taints");
        assert_eq!(taints.len(), 2);
        assert_eq!(taints[1]["timeAdded"], "t1");
        assert!(
            !mark_unreachable(&mut n, "t2"),
            "second mark changes nothing"
        );
        assert!(mark_ready(&mut n, "t3"));
        assert!(is_ready(&n));
        assert!(n["spec"].get("taints").is_none());
        assert!(!mark_ready(&mut n, "t4"));
    }

    #[test]
    fn unrelated_taints_survive() {
        let mut n = node();
        n["spec"]["taints"] = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
        mark_unreachable(&mut n, "t1");
        mark_ready(&mut n, "t2");
        assert_eq!(
            n["spec"]["taints"],
            json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
        );
    }
}
