//! The pod spec on the wire: what decoding reads to compute a slim
//! [`PodSpec`]'s requests and host ports once, and the shape encoding writes
//! back.
//!
//! Encoding cannot restore the containers' own requests (they are not kept),
//! so it writes the pod's effective requests as pod-level
//! `spec.resources.requests` (upstream's PodLevelResources field, which
//! replaces the containers' aggregate for the resources it names) and no
//! overhead or init containers: decoding that gives back the same requests.
//! Host ports go back on the first container (the nodeports plugin counts a
//! pod's ports whichever container holds them).

use serde::{Deserialize, Serialize};

use super::pod::{Few, PodContainer, PodSpec};
use super::pod_requests::{ContainerRequests, HostPort, pod_requests};
use super::pod_scheduling::PodScheduling;
use super::shared::Shared;
use super::{Interned, ResourceList};

/// The pod spec as decoded.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WirePodSpecIn {
    node_name: Option<compact_str::CompactString>,
    containers: Few<WireContainer>,
    init_containers: Vec<WireContainer>,
    overhead: ResourceList,
    resources: WireResources,
    priority: Option<i32>,
    priority_class_name: Option<Interned>,
    preemption_policy: Option<Interned>,
    affinity: WireAffinity,
}

/// `spec.affinity`, of which only the node a DaemonSet pins its pods to is
/// read: the controller creates them unbound, with a required node affinity
/// term `matchFields metadata.name In [node]` (upstream since 1.12).
#[derive(Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
struct WireAffinity {
    #[serde(skip_serializing_if = "Option::is_none")]
    node_affinity: Option<WireNodeAffinity>,
}

#[derive(Default, Deserialize, Serialize)]
#[serde(default)]
struct WireNodeAffinity {
    #[serde(rename = "requiredDuringSchedulingIgnoredDuringExecution")]
    required: Option<WireNodeSelector>,
}

#[derive(Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
struct WireNodeSelector {
    node_selector_terms: Vec<WireTerm>,
}

#[derive(Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
struct WireTerm {
    match_fields: Vec<WireRequirement>,
}

#[derive(Default, Deserialize, Serialize)]
#[serde(default)]
struct WireRequirement {
    key: String,
    operator: String,
    values: Vec<compact_str::CompactString>,
}

impl WireAffinity {
    /// Upstream `GetTargetNodeName` for a pod without `nodeName`: the one
    /// node named by a `metadata.name In [node]` field requirement of its
    /// required node affinity, when every term names the same single node.
    fn target_node(self) -> Option<Box<str>> {
        let terms = self.node_affinity?.required?.node_selector_terms;
        let mut named = terms
            .into_iter()
            .flat_map(|t| t.match_fields)
            .filter_map(|r| {
                (r.key == "metadata.name" && r.operator == "In" && r.values.len() == 1)
                    .then(|| r.values.into_iter().next())
                    .flatten()
            });
        let first = named.next()?;
        named.all(|n| n == first).then(|| first.as_str().into())
    }

    /// The term that pins a pod to `node`, as the DaemonSet controller writes it.
    fn pinned_to(node: &str) -> Self {
        WireAffinity {
            node_affinity: Some(WireNodeAffinity {
                required: Some(WireNodeSelector {
                    node_selector_terms: vec![WireTerm {
                        match_fields: vec![WireRequirement {
                            key: "metadata.name".into(),
                            operator: "In".into(),
                            values: vec![node.into()],
                        }],
                    }],
                }),
            }),
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct WireContainer {
    name: Interned,
    image: Option<Interned>,
    resources: WireResources,
    ports: Vec<WirePort>,
    restart_policy: Option<Interned>,
}

#[derive(Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
struct WireResources {
    #[serde(skip_serializing_if = "ResourceList::is_zero")]
    requests: ResourceList,
    #[serde(skip_serializing)]
    limits: ResourceList,
}

#[derive(Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
struct WirePort {
    host_port: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    container_port: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<Interned>,
    #[serde(rename = "hostIP", skip_serializing_if = "Option::is_none")]
    host_ip: Option<Interned>,
}

impl WireContainer {
    fn requests(&self) -> ContainerRequests {
        ContainerRequests::new(
            self.resources.requests.clone(),
            &self.resources.limits,
            self.restart_policy.as_deref() == Some("Always"),
        )
    }
}

impl From<WirePodSpecIn> for PodSpec {
    fn from(wire: WirePodSpecIn) -> Self {
        let containers: Vec<_> = wire
            .containers
            .iter()
            .map(WireContainer::requests)
            .collect();
        let init: Vec<_> = wire
            .init_containers
            .iter()
            .map(WireContainer::requests)
            .collect();
        let requests = pod_requests(&containers, &init, &wire.resources.requests, &wire.overhead);
        let host_ports = wire
            .containers
            .iter()
            .flat_map(|c| &c.ports)
            .filter_map(|p| HostPort::new(p.host_port, p.protocol.as_deref(), p.host_ip.as_deref()))
            .collect();
        let mut kept: Few<PodContainer> = wire
            .containers
            .into_iter()
            .map(|c| PodContainer {
                name: c.name,
                image: c.image,
            })
            .collect();
        kept.shrink_to_fit();
        let pinned_node = if wire.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
            None
        } else {
            wire.affinity.target_node()
        };
        PodSpec {
            node_name: wire.node_name,
            pinned_node,
            containers: kept,
            scheduling: Shared::new(PodScheduling {
                requests,
                host_ports,
                priority: wire.priority,
                priority_class_name: wire.priority_class_name,
                preemption_policy: wire.preemption_policy,
            }),
        }
    }
}

/// The pod spec as encoded.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WirePodSpecOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    node_name: Option<compact_str::CompactString>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    containers: Vec<WireContainerOut>,
    #[serde(skip_serializing_if = "ResourceListHolder::is_empty")]
    resources: ResourceListHolder,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority_class_name: Option<Interned>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preemption_policy: Option<Interned>,
    #[serde(skip_serializing_if = "Option::is_none")]
    affinity: Option<WireAffinity>,
}

/// `{"requests": {...}}`.
#[derive(Serialize)]
struct ResourceListHolder {
    requests: ResourceList,
}

impl ResourceListHolder {
    fn is_empty(&self) -> bool {
        self.requests.is_zero()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireContainerOut {
    name: Interned,
    #[serde(skip_serializing_if = "Option::is_none")]
    image: Option<Interned>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<WirePort>,
}

impl From<PodSpec> for WirePodSpecOut {
    fn from(spec: PodSpec) -> Self {
        let mut ports: Vec<WirePort> = spec
            .host_ports
            .iter()
            .map(|p| WirePort {
                host_port: p.port,
                container_port: Some(p.port),
                protocol: Some(p.protocol.clone()),
                host_ip: (p.host_ip != super::pod_requests::ALL_ADDRESSES)
                    .then(|| p.host_ip.clone()),
            })
            .collect();
        let containers = spec
            .containers
            .into_iter()
            .map(|c| WireContainerOut {
                name: c.name,
                image: c.image,
                ports: std::mem::take(&mut ports),
            })
            .collect();
        WirePodSpecOut {
            node_name: spec.node_name,
            containers,
            resources: ResourceListHolder {
                requests: spec.scheduling.requests.clone(),
            },
            priority: spec.scheduling.priority,
            priority_class_name: spec.scheduling.priority_class_name.clone(),
            preemption_policy: spec.scheduling.preemption_policy.clone(),
            affinity: spec.pinned_node.as_deref().map(WireAffinity::pinned_to),
        }
    }
}
