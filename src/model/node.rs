//! The slim Node: identity, labels, taints, cordon state, conditions, what
//! it can hold (allocatable) and its kubelet's version.

use serde::{Deserialize, Serialize};

use super::meta::{JoinedMeta, Meta, WireMeta, joined};
use super::shared::Shared;
use super::{Interned, Labels, NodeCondition, ResourceList, Taint};

fn is_zero(list: &Shared<ResourceList>) -> bool {
    list.is_zero()
}

/// A node as rollcall sees it. Its labels live in [`Node::labels`] (interned,
/// see [`Labels`]); `metadata.labels` stays `None`, and of the metadata only
/// the fields [`WireMeta`] names are kept. On the wire the node is the API's
/// shape: decoding moves the labels over, encoding puts them back.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(from = "WireNodeIn", into = "WireNodeOut")]
pub struct Node {
    /// Name, UID, resourceVersion (labels: see `labels`).
    pub metadata: Meta,
    /// The node's labels (pool and zone come from here).
    pub labels: Labels,
    /// Taints and the cordon flag.
    pub spec: NodeSpec,
    /// Conditions (Ready, pressure, network).
    pub status: NodeStatus,
}

/// The node as decoded.
#[derive(Default, Deserialize)]
#[serde(default)]
struct WireNodeIn {
    metadata: WireMeta,
    spec: NodeSpec,
    status: NodeStatus,
}

/// The node as encoded.
#[derive(Serialize)]
struct WireNodeOut {
    metadata: JoinedMeta,
    spec: NodeSpec,
    status: NodeStatus,
}

impl From<WireNodeIn> for Node {
    fn from(wire: WireNodeIn) -> Self {
        let (metadata, labels) = wire.metadata.split();
        let mut spec = wire.spec;
        spec.taints.shrink_to_fit();
        let mut status = wire.status;
        status.conditions.shrink_to_fit();
        Node {
            metadata,
            labels,
            spec,
            status,
        }
    }
}

impl From<Node> for WireNodeOut {
    fn from(node: Node) -> Self {
        WireNodeOut {
            metadata: joined(node.metadata, &node.labels),
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

/// The parts of `NodeStatus` the console and the fit engine read.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// `status.conditions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<NodeCondition>,
    /// `status.allocatable`: what pods' requests may add up to.
    /// Shared with every node that has the same (one instance type).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub allocatable: Shared<ResourceList>,
    /// `status.nodeInfo` (the versions and the build a node class is made of).
    #[serde(default, skip_serializing_if = "NodeSystemInfo::is_empty")]
    pub node_info: NodeSystemInfo,
}

/// The parts of `status.nodeInfo` rollcall reads.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSystemInfo {
    /// `kubeletVersion`, e.g. `v1.33.2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_version: Option<Interned>,
    /// `osImage`, e.g. `Amazon Linux 2023.6.20241111`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_image: Option<Interned>,
    /// `kernelVersion`, e.g. `6.1.112-124.190.amzn2023.x86_64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_version: Option<Interned>,
    /// `containerRuntimeVersion`, e.g. `containerd://1.7.23`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_runtime_version: Option<Interned>,
    /// `architecture`, e.g. `amd64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<Interned>,
}

impl NodeSystemInfo {
    fn is_empty(&self) -> bool {
        self.kubelet_version.is_none()
            && self.os_image.is_none()
            && self.kernel_version.is_none()
            && self.container_runtime_version.is_none()
            && self.architecture.is_none()
    }
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
