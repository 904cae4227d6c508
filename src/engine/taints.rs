//! Taints and tolerations: the default tolerations every daemon pod receives
//! (upstream `util.AddOrUpdateDaemonPodTolerations`) and toleration matching
//! (`Toleration.ToleratesTaint`, `FindMatchingUntoleratedTaint`).
//!
//! Pure; decides nothing about a node beyond "is this taint tolerated".

use k8s_openapi::api::core::v1::{PodSpec, Toleration};

use crate::model::Taint;

use super::requirement::parse_int;

/// Taint effect: no new pods unless tolerated; running pods stay.
pub const NO_SCHEDULE: &str = "NoSchedule";
/// Taint effect: a soft preference, never blocks a daemon pod.
pub const PREFER_NO_SCHEDULE: &str = "PreferNoSchedule";
/// Taint effect: no new pods, and running untolerating pods are evicted.
pub const NO_EXECUTE: &str = "NoExecute";

/// `node.kubernetes.io/not-ready`.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// `node.kubernetes.io/unreachable`.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `node.kubernetes.io/disk-pressure`.
pub const TAINT_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// `node.kubernetes.io/memory-pressure`.
pub const TAINT_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// `node.kubernetes.io/pid-pressure`.
pub const TAINT_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// `node.kubernetes.io/unschedulable` (the cordon taint).
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// `node.kubernetes.io/network-unavailable`.
pub const TAINT_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// The template's tolerations plus the ones the DaemonSet controller adds to
/// every daemon pod: not-ready and unreachable `NoExecute` (no
/// tolerationSeconds, so never evicted for them), the disk/memory/pid pressure
/// and unschedulable `NoSchedule`, and network-unavailable `NoSchedule` for
/// host-network pods. Like upstream `AddOrUpdateTolerationInPodSpec`, a template
/// toleration with the same key, operator, value and effect is replaced in place
/// by the default (dropping its tolerationSeconds); others are appended.
pub fn daemon_pod_tolerations(template: &PodSpec) -> Vec<Toleration> {
    let mut tolerations = template.tolerations.clone().unwrap_or_default();
    let mut defaults = vec![
        (TAINT_NOT_READY, NO_EXECUTE),
        (TAINT_UNREACHABLE, NO_EXECUTE),
        (TAINT_DISK_PRESSURE, NO_SCHEDULE),
        (TAINT_MEMORY_PRESSURE, NO_SCHEDULE),
        (TAINT_PID_PRESSURE, NO_SCHEDULE),
        (TAINT_UNSCHEDULABLE, NO_SCHEDULE),
    ];
    if template.host_network == Some(true) {
        defaults.push((TAINT_NETWORK_UNAVAILABLE, NO_SCHEDULE));
    }
    for (key, effect) in defaults {
        add_or_update(&mut tolerations, exists_toleration(key, effect));
    }
    tolerations
}

fn exists_toleration(key: &str, effect: &str) -> Toleration {
    Toleration {
        key: Some(key.to_owned()),
        operator: Some("Exists".to_owned()),
        effect: Some(effect.to_owned()),
        ..Toleration::default()
    }
}

/// Upstream `MatchToleration`: tolerations are the same entry when key, effect,
/// operator and value agree (absent and empty are the same).
fn same_entry(a: &Toleration, b: &Toleration) -> bool {
    text(a.key.as_ref()) == text(b.key.as_ref())
        && text(a.effect.as_ref()) == text(b.effect.as_ref())
        && text(a.operator.as_ref()) == text(b.operator.as_ref())
        && text(a.value.as_ref()) == text(b.value.as_ref())
}

/// Upstream `AddOrUpdateTolerationInPodSpec`: when an entry that is the same and
/// also has the same tolerationSeconds exists, nothing changes; otherwise every
/// same entry is replaced by `toleration`, or it is appended.
fn add_or_update(tolerations: &mut Vec<Toleration>, toleration: Toleration) {
    let identical = |t: &Toleration| {
        same_entry(t, &toleration) && t.toleration_seconds == toleration.toleration_seconds
    };
    if tolerations.iter().any(identical) {
        return;
    }
    let mut replaced = false;
    for existing in tolerations.iter_mut() {
        if same_entry(existing, &toleration) {
            existing.clone_from(&toleration);
            replaced = true;
        }
    }
    if !replaced {
        tolerations.push(toleration);
    }
}

fn text(value: Option<&String>) -> &str {
    value.map_or("", String::as_str)
}

/// Whether one toleration tolerates one taint (upstream `ToleratesTaint`): an
/// empty effect matches every effect, an empty key every key; `Exists` matches
/// any value, `Equal` (or no operator) compares values; `Lt`/`Gt` compare the
/// taint value numerically against the toleration's; any other operator never
/// matches.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = text(toleration.effect.as_ref());
    if !effect.is_empty() && effect != taint.effect.as_str() {
        return false;
    }
    let key = text(toleration.key.as_ref());
    if !key.is_empty() && key != taint.key.as_str() {
        return false;
    }
    let wanted = text(toleration.value.as_ref());
    let actual = taint.value();
    match text(toleration.operator.as_ref()) {
        "" | "Equal" => wanted == actual,
        "Exists" => true,
        operator @ ("Lt" | "Gt") => match (parse_int(wanted), parse_int(actual)) {
            (Some(bound), Some(value)) if operator == "Lt" => value < bound,
            (Some(bound), Some(value)) => value > bound,
            _ => false,
        },
        _ => false,
    }
}

/// The first toleration that tolerates `taint`, if any.
pub fn toleration_for<'a>(taint: &Taint, tolerations: &'a [Toleration]) -> Option<&'a Toleration> {
    tolerations.iter().find(|t| tolerates(t, taint))
}

/// What one of a node's taints does to a DaemonSet's pod there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TaintVerdict<'a> {
    /// This toleration (the first that matches) tolerates it.
    Tolerated(&'a Toleration),
    /// Not tolerated, and its effect keeps the daemon pod off (`NoSchedule`,
    /// `NoExecute`).
    Blocks,
    /// Not tolerated, but its effect does not count: the controller checks
    /// only `NoSchedule` and `NoExecute` taints (upstream `predicates` filters
    /// the node's taints by those two effects), so `PreferNoSchedule` or an
    /// unknown effect never keeps a daemon pod off.
    Ignored,
}

/// The one decision of what `taint` does to a daemon pod with `tolerations`
/// (eligibility and the detail pane both ask it).
pub fn taint_verdict<'a>(taint: &Taint, tolerations: &'a [Toleration]) -> TaintVerdict<'a> {
    match toleration_for(taint, tolerations) {
        Some(toleration) => TaintVerdict::Tolerated(toleration),
        None if taint.effect == NO_SCHEDULE || taint.effect == NO_EXECUTE => TaintVerdict::Blocks,
        None => TaintVerdict::Ignored,
    }
}

/// The taints among `taints` that keep a daemon pod off ([`TaintVerdict::Blocks`]),
/// in node order.
pub fn untolerated_taints<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Vec<&'a Taint> {
    taints
        .iter()
        .filter(|t| taint_verdict(t, tolerations) == TaintVerdict::Blocks)
        .collect()
}

/// A taint as kubectl writes it: `key=value:Effect`, or `key:Effect` without a value.
pub fn format_taint(taint: &Taint) -> String {
    match taint.value.as_deref() {
        Some(value) if !value.is_empty() => format!("{}={value}:{}", taint.key, taint.effect),
        _ => format!("{}:{}", taint.key, taint.effect),
    }
}

/// A toleration in words: `key=value:Effect`, `key:Effect` for `Exists`,
/// `key Lt 5`, `everything` for an `Exists` without a key, with `for Ns`
/// when it has tolerationSeconds.
pub fn format_toleration(toleration: &Toleration) -> String {
    let key = text(toleration.key.as_ref());
    let operator = text(toleration.operator.as_ref());
    let mut out = if key.is_empty() && operator == "Exists" {
        "everything".to_owned()
    } else {
        let key = if key.is_empty() { "*" } else { key };
        match operator {
            "Exists" => key.to_owned(),
            "Lt" | "Gt" => format!("{key} {operator} {}", text(toleration.value.as_ref())),
            _ => format!("{key}={}", text(toleration.value.as_ref())),
        }
    };
    let effect = text(toleration.effect.as_ref());
    if !effect.is_empty() {
        out.push(':');
        out.push_str(effect);
    }
    if let Some(seconds) = toleration.toleration_seconds {
        out = format!("{out} for {seconds}s");
    }
    out
}

#[cfg(test)]
mod tests;
