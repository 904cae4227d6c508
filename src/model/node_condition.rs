//! A node condition held compactly: its texts (type, status, reason,
//! message), which kubelets word alike across the fleet, are one shared
//! value; only the transition time ([`Stamp`], 8 bytes) is the node's own.
//! Four conditions took 224 bytes a node as separate fields, 64 this way.

use std::collections::HashSet;
use std::ops::Deref;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::{Interned, Stamp};

/// The texts of a node condition.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConditionText {
    /// `Ready`, `MemoryPressure`, `DiskPressure`, `PIDPressure`, `NetworkUnavailable`, ...
    pub type_: Interned,
    /// `True`, `False` or `Unknown`.
    pub status: Interned,
    /// Machine-readable reason, if any.
    pub reason: Option<Interned>,
    /// Human-readable message, if any.
    pub message: Option<Interned>,
}

/// One node condition: shared texts (read through `Deref`: `condition.type_`,
/// `condition.status`, ...) and the node's own transition time.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(from = "WireCondition", into = "WireCondition")]
pub struct NodeCondition {
    text: Arc<ConditionText>,
    /// When the status last changed.
    pub last_transition_time: Option<Stamp>,
}

impl NodeCondition {
    /// A condition with these texts (shared with every node that has the same).
    pub fn new(text: ConditionText, last_transition_time: Option<Stamp>) -> Self {
        Self {
            text: shared(text),
            last_transition_time,
        }
    }

    /// A condition of `type_` with `status`, no reason, message or time.
    pub fn of(type_: &str, status: &str) -> Self {
        Self::new(
            ConditionText {
                type_: type_.into(),
                status: status.into(),
                ..ConditionText::default()
            },
            None,
        )
    }

    /// The same condition with `status`.
    #[must_use]
    pub fn with_status(&self, status: &str) -> Self {
        Self::new(
            ConditionText {
                status: status.into(),
                ..(*self.text).clone()
            },
            self.last_transition_time,
        )
    }
}

impl Deref for NodeCondition {
    type Target = ConditionText;
    fn deref(&self) -> &ConditionText {
        &self.text
    }
}

/// The condition as the API writes it.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct WireCondition {
    #[serde(rename = "type")]
    type_: Interned,
    status: Interned,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<Interned>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Interned>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_transition_time: Option<Stamp>,
}

impl From<WireCondition> for NodeCondition {
    fn from(wire: WireCondition) -> Self {
        let text = ConditionText {
            type_: wire.type_,
            status: wire.status,
            reason: wire.reason,
            message: wire.message,
        };
        NodeCondition::new(text, wire.last_transition_time)
    }
}

impl From<NodeCondition> for WireCondition {
    fn from(condition: NodeCondition) -> Self {
        let text = Arc::unwrap_or_clone(condition.text);
        WireCondition {
            type_: text.type_,
            status: text.status,
            reason: text.reason,
            message: text.message,
            last_transition_time: condition.last_transition_time,
        }
    }
}

/// The shared texts: one copy per distinct condition; copies no node holds
/// any more are dropped once the table has doubled.
#[derive(Default)]
struct Table {
    texts: HashSet<Arc<ConditionText>, foldhash::fast::RandomState>,
    kept: usize,
}

static TABLE: LazyLock<Mutex<Table>> = LazyLock::new(Mutex::default);

fn shared(text: ConditionText) -> Arc<ConditionText> {
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = table.texts.get(&text) {
        return Arc::clone(found);
    }
    if table.texts.len() > 2 * table.kept.max(1024) {
        table.texts.retain(|t| Arc::strong_count(t) > 1);
        table.kept = table.texts.len();
    }
    let text = Arc::new(text);
    table.texts.insert(Arc::clone(&text));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_condition_is_its_shared_texts_and_its_own_time_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<NodeCondition>(), 16);
    }

    #[test]
    fn nodes_with_the_same_condition_texts_share_one_copy_and_keep_their_own_time() {
        let wire = |time: &str| {
            serde_json::json!({"type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status", "lastTransitionTime": time})
        };
        let a: NodeCondition = serde_json::from_value(wire("2026-01-01T00:00:00Z")).unwrap();
        let b: NodeCondition = serde_json::from_value(wire("2026-01-02T00:00:00Z")).unwrap();
        assert!(Arc::ptr_eq(&a.text, &b.text));
        assert_ne!(a.last_transition_time, b.last_transition_time);
        assert_eq!(a.type_, "Ready");
        assert_eq!(a.reason.as_deref(), Some("KubeletReady"));
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            wire("2026-01-01T00:00:00Z"),
            "encodes the API's shape"
        );
        let down = a.with_status("False");
        assert_eq!((down.status.as_str(), a.status.as_str()), ("False", "True"));
        assert_eq!(down.last_transition_time, a.last_transition_time);
    }
}
