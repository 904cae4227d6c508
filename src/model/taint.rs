//! A node taint held compactly: its key, value and effect are interned (a
//! pool's nodes carry the same few taints), so a taint is four thin fields
//! and no heap block of its own. The upstream `Taint` took 96 bytes and up to
//! three string blocks a taint; under churn half of a 65,000-node fleet
//! carried one more, 4.4 MB.

use serde::{Deserialize, Serialize};

use super::{Interned, Stamp};

/// One entry of `spec.taints`, under the API's names and in its shape on the
/// wire (the fields in the order `k8s-openapi` writes them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: Interned,
    /// The taint key.
    pub key: Interned,
    /// When a `NoExecute` taint was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_added: Option<Stamp>,
    /// The value, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Interned>,
}

impl Taint {
    /// A taint of `key` with `value` (none when empty) and `effect`.
    pub fn new(key: &str, value: &str, effect: &str) -> Self {
        Taint {
            effect: effect.into(),
            key: key.into(),
            time_added: None,
            value: (!value.is_empty()).then(|| value.into()),
        }
    }

    /// The value, `""` when there is none.
    pub fn value(&self) -> &str {
        self.value.as_deref().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taint_is_four_thin_fields_on_the_wire_as_upstream_writes_it() {
        assert_eq!(std::mem::size_of::<Taint>(), 32);
        let wire = serde_json::json!({
            "key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
            "timeAdded": "2026-01-01T00:00:00Z"
        });
        let taint: Taint = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(taint.key, "node.kubernetes.io/unreachable");
        assert_eq!(taint.value(), "");
        let upstream: k8s_openapi::api::core::v1::Taint = serde_json::from_value(wire).unwrap();
        assert_eq!(
            serde_json::to_string(&taint).unwrap(),
            serde_json::to_string(&upstream).unwrap()
        );
        let valued = Taint::new("dedicated", "gpu", "NoSchedule");
        assert_eq!(
            serde_json::to_value(&valued).unwrap(),
            serde_json::json!({"effect": "NoSchedule", "key": "dedicated", "value": "gpu"})
        );
    }
}
