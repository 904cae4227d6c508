//! [`UsagePod`]: the least of any pod in the cluster that says what it takes
//! from its node — the node it is bound to, its effective requests, host
//! ports and priority (one shared [`PodScheduling`] per template), its phase
//! and whether it is terminating. The node usage stream decodes every pod of
//! every namespace into it (fit needs all of a node's pods, not only the
//! DaemonSet's), so it keeps nothing else: no labels, owners, containers or
//! conditions.
//!
//! Counting follows upstream's scheduler cache (`NodeInfo`): a pod bound to a
//! node counts against it until it is gone, terminating included; a
//! `Succeeded` or `Failed` pod no longer does ([`UsagePod::counts`]).

use compact_str::CompactString;
use serde::Deserialize;

use super::pod_scheduling::PodScheduling;
use super::shared::Shared;
use super::{HostPort, Interned, MetaFields, PodSpec, ResourceList, Stamp};

/// One pod as the node usage stream keeps it (80 bytes, see the tests).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(from = "WireUsagePod")]
pub struct UsagePod {
    /// Name, namespace, resourceVersion.
    pub metadata: UsageMeta,
    /// `spec.nodeName`: the node it takes from; `None` while unbound, and
    /// for a `Succeeded` or `Failed` pod (it takes nothing any more).
    /// Shared by the node's pods: cloud node names are longer than an
    /// inline string (`ip-10-0-12-34.eu-west-1.compute.internal`), and a
    /// copy each was a heap block a pod.
    pub node: Option<Interned>,
    /// Requests, host ports, priority (shared by the pods of one template).
    pub scheduling: Shared<PodScheduling>,
    /// `status.startTime`: of two victims of equal priority, preemption
    /// keeps the one that started first.
    pub start_time: Option<Stamp>,
}

/// The metadata a [`UsagePod`] keeps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageMeta {
    /// `metadata.name` (inline up to 24 bytes).
    pub name: Option<CompactString>,
    /// `metadata.namespace` (shared).
    pub namespace: Option<Interned>,
    /// `metadata.resourceVersion` (what a relist compares).
    pub resource_version: Option<CompactString>,
}

impl MetaFields for UsageMeta {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
}

impl UsagePod {
    /// The node it counts against, if any.
    pub fn node_name(&self) -> Option<&str> {
        self.node.as_deref().filter(|n| !n.is_empty())
    }

    /// Whether it counts against its node: bound, and not `Succeeded` or
    /// `Failed` (terminating pods count until they are gone).
    pub fn counts(&self) -> bool {
        self.node_name().is_some()
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// Its effective requests.
    pub fn requests(&self) -> &ResourceList {
        &self.scheduling.requests
    }

    /// The host ports it holds.
    pub fn host_ports(&self) -> &[HostPort] {
        &self.scheduling.host_ports
    }

    /// `spec.priority` (0 when unset, as upstream's `PodPriority`).
    pub fn priority(&self) -> i32 {
        self.scheduling.priority.unwrap_or(0)
    }
}

impl From<&super::Pod> for UsagePod {
    /// A decoded pod's usage (a dump's pods, `explain -f`): the same
    /// fields, counted by the same rule.
    fn from(pod: &super::Pod) -> Self {
        UsagePod {
            metadata: UsageMeta {
                name: pod.metadata.name.clone(),
                namespace: pod.metadata.namespace.clone(),
                resource_version: pod.metadata.resource_version.clone(),
            },
            node: pod
                .node_name()
                .filter(|_| !matches!(pod.status.phase.as_deref(), Some("Succeeded" | "Failed")))
                .map(Interned::new),
            scheduling: pod.spec.scheduling.clone(),
            start_time: pod.status.start_time,
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct WireUsagePod {
    metadata: WireUsageMeta,
    spec: PodSpec,
    status: WireUsageStatus,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct WireUsageMeta {
    name: Option<CompactString>,
    namespace: Option<Interned>,
    resource_version: Option<CompactString>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct WireUsageStatus {
    phase: Option<Interned>,
    start_time: Option<Stamp>,
}

impl From<WireUsagePod> for UsagePod {
    fn from(wire: WireUsagePod) -> Self {
        let meta = wire.metadata;
        UsagePod {
            metadata: UsageMeta {
                name: meta.name,
                namespace: meta.namespace,
                resource_version: meta.resource_version,
            },
            node: wire
                .spec
                .node_name
                .filter(|n| !n.is_empty())
                .filter(|_| !matches!(wire.status.phase.as_deref(), Some("Succeeded" | "Failed")))
                .map(|n| Interned::new(&n)),
            scheduling: wire.spec.scheduling,
            start_time: wire.status.start_time,
        }
    }
}

impl k8s_openapi::Resource for UsagePod {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::ListableResource for UsagePod {
    const LIST_KIND: &'static str = "PodList";
}

impl k8s_openapi::Metadata for UsagePod {
    type Ty = UsageMeta;
    fn metadata(&self) -> &UsageMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut UsageMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(value: serde_json::Value) -> UsagePod {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn keeps_what_a_node_gives_and_nothing_else() {
        let pod = decode(json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
                "labels": {"app": "web"}, "annotations": {"big": "x"},
                "deletionTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": "n1", "priority": 1000,
                "containers": [{"name": "c", "image": "web:1",
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}]}]},
            "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
                "conditions": [{"type": "Ready", "status": "True"}]}
        }));
        assert_eq!(pod.node_name(), Some("n1"));
        assert_eq!((pod.requests().cpu, pod.requests().memory), (250, 64 << 20));
        assert_eq!(pod.host_ports().len(), 1);
        assert_eq!(pod.priority(), 1000);
        assert!(pod.counts(), "terminating pods count until gone");
        assert_eq!((pod.namespace(), pod.name()), ("shop", "web-1"));
    }

    #[test]
    fn counts_as_upstream_scheduler_cache() {
        let with = |node: Option<&str>, phase: &str| {
            let mut spec = json!({"containers": []});
            if let Some(node) = node {
                spec["nodeName"] = node.into();
            }
            decode(json!({"metadata": {"name": "p"}, "spec": spec, "status": {"phase": phase}}))
        };
        assert!(with(Some("n1"), "Pending").counts());
        assert!(with(Some("n1"), "Running").counts());
        assert!(!with(Some("n1"), "Succeeded").counts());
        assert!(!with(Some("n1"), "Failed").counts());
        assert!(
            !with(None, "Pending").counts(),
            "unbound pods take nothing yet"
        );
        assert!(!with(Some(""), "Pending").counts());
    }

    /// The projection's own size (in its `Arc`: 96, a jemalloc class).
    /// Measured with the store (1.3 million pods on 65,000 nodes, 20 a
    /// node, cloud-length node names, decoded from JSON): about 250 bytes
    /// of RSS a pod, index and allocator included; the node name and the
    /// scheduling part are shared.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn stays_small() {
        assert_eq!(std::mem::size_of::<UsagePod>(), 80);
    }
}
