//! The slim Node: identity, labels, taints, cordon state and conditions.

use serde::{Deserialize, Serialize};

use super::{Labels, ObjectMeta, Taint, Time};

/// A node as rollcall sees it. Its labels live in [`Node::labels`] (interned,
/// see [`Labels`]); `metadata.labels` stays `None`. On the wire the node is the
/// API's shape: decoding moves the labels over, encoding puts them back.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(from = "WireNode", into = "WireNode")]
pub struct Node {
    /// Name, UID, resourceVersion (labels: see `labels`).
    pub metadata: ObjectMeta,
    /// The node's labels (pool and zone come from here).
    pub labels: Labels,
    /// Taints and the cordon flag.
    pub spec: NodeSpec,
    /// Conditions (Ready, pressure, network).
    pub status: NodeStatus,
}

/// The node as the API writes it.
#[derive(Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct WireNode {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: NodeSpec,
    #[serde(default)]
    status: NodeStatus,
}

impl From<WireNode> for Node {
    fn from(mut wire: WireNode) -> Self {
        let labels = wire.metadata.labels.take().map(Labels::from);
        Node {
            metadata: wire.metadata,
            labels: labels.unwrap_or_default(),
            spec: wire.spec,
            status: wire.status,
        }
    }
}

impl From<Node> for WireNode {
    fn from(node: Node) -> Self {
        let mut metadata = node.metadata;
        metadata.labels = node.labels.to_map().or(metadata.labels);
        WireNode {
            metadata,
            spec: node.spec,
            status: node.status,
        }
    }
}

/// The parts of `NodeSpec` that decide scheduling.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    /// `spec.unschedulable`: the node is cordoned.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    /// `spec.taints`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
}

/// The parts of `NodeStatus` the console shows.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// `status.conditions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<NodeCondition>,
}

/// One node condition.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeCondition {
    /// `Ready`, `MemoryPressure`, `DiskPressure`, `PIDPressure`, `NetworkUnavailable`, ...
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Machine-readable reason, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

impl Node {
    /// The node's name (empty if the object has none).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The node's UID (empty if the object has none).
    pub fn uid(&self) -> &str {
        self.metadata.uid.as_deref().unwrap_or_default()
    }

    /// A label value.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key)
    }

    /// The status of a condition type, if the node reports it.
    pub fn condition(&self, type_: &str) -> Option<&NodeCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Whether the Ready condition is `True`.
    pub fn is_ready(&self) -> bool {
        self.condition("Ready").is_some_and(|c| c.status == "True")
    }
}
