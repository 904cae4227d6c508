//! Realistic Node objects for scenario pools: the labels, annotations,
//! capacity, conditions, addresses, nodeInfo and image list a cloud node
//! carries (5–10 KB of JSON each, like real ones), deterministic for a seed.
//! Allocatable is capacity less what a kubelet reserves (EKS's formulas:
//! system and kube reserved CPU and memory, the 100Mi memory and 10 %
//! nodefs hard eviction thresholds), with the pool's `--max-pods` and
//! extended resources as a device plugin advertises them.

use std::collections::BTreeMap;

use jiff::Timestamp;
use rand::{Rng, rngs::StdRng};
use serde_json::{Value, json};

use crate::sim::kubelet::node_status;
use crate::sim::scenario::{NodeOverride, Pool};

/// Kubelet version generated nodes report unless their pool or override
/// says otherwise (matches the server's `/version`).
pub const KUBELET_VERSION: &str = "v1.32.4";

/// The annotations the simulated kubelet reads to report `MemoryPressure`
/// and `DiskPressure` (the kubelet's one definition).
pub use crate::sim::kubelet::pressure::{DISK_PRESSURE_ANNOTATION, MEMORY_PRESSURE_ANNOTATION};

/// Everything that decides one generated node.
#[derive(Clone, Debug)]
pub struct NodeShape<'a> {
    /// The pool it belongs to.
    pub pool: &'a Pool,
    /// 1-based index within the pool (names and addresses derive from it).
    pub index: usize,
    /// The label key naming the pool.
    pub pool_label: &'a str,
    /// When the node was created.
    pub created: Timestamp,
    /// Scenario changes for this node, if any.
    pub override_: Option<&'a NodeOverride>,
}

/// Builds the node object.
pub fn node_object(shape: &NodeShape<'_>, rng: &mut StdRng) -> Value {
    let pool = shape.pool;
    let name = pool.node_name(shape.index);
    let zone = zone_of(pool, shape.index);
    let created = shape.created.to_string();
    let instance_id = format!("i-0{:016x}", rng.random::<u64>());
    let internal_ip = internal_ip(pool, shape.index);
    let mut node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": internal_ip,
                "csi.volume.kubernetes.io/nodeid": format!("{{\"ebs.csi.aws.com\":\"{instance_id}\"}}"),
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": pod_cidr(pool, shape.index),
            "podCIDRs": [pod_cidr(pool, shape.index)],
            "providerID": format!("aws:///{zone}/{instance_id}"),
        },
    });
    // Moved in, not through `json!`: it copies every value it is given, which
    // was a tenth of the embedded cluster's start at 65,000 nodes.
    node["metadata"]["labels"] = labels(shape, &name, &zone)
        .into_iter()
        .map(|(key, value)| (key, Value::String(value)))
        .collect();
    node["status"] = status(shape, &name, &internal_ip, rng);
    apply_taints_and_flags(&mut node, shape, &created);
    node
}

fn labels(shape: &NodeShape<'_>, name: &str, zone: &str) -> BTreeMap<String, String> {
    let pool = shape.pool;
    let mut labels: BTreeMap<String, String> = [
        ("beta.kubernetes.io/arch", pool.arch.as_str()),
        (
            "beta.kubernetes.io/instance-type",
            pool.instance_type.as_str(),
        ),
        ("beta.kubernetes.io/os", "linux"),
        ("failure-domain.beta.kubernetes.io/region", region_of(zone)),
        ("failure-domain.beta.kubernetes.io/zone", zone),
        ("kubernetes.io/arch", pool.arch.as_str()),
        ("kubernetes.io/hostname", name),
        ("kubernetes.io/os", "linux"),
        (
            "node.kubernetes.io/instance-type",
            pool.instance_type.as_str(),
        ),
        ("topology.kubernetes.io/region", region_of(zone)),
        ("topology.kubernetes.io/zone", zone),
        (shape.pool_label, pool.name.as_str()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    labels.extend(pool.labels.clone());
    if let Some(extra) = shape.override_ {
        labels.extend(extra.labels.clone());
    }
    labels
}

fn apply_taints_and_flags(node: &mut Value, shape: &NodeShape<'_>, created: &str) {
    let mut taints = shape.pool.taints.clone();
    if let Some(extra) = shape.override_ {
        taints.extend(extra.taints.iter().cloned());
        if extra.cordoned {
            node["spec"]["unschedulable"] = json!(true);
            taints.push(k8s_openapi::api::core::v1::Taint {
                key: "node.kubernetes.io/unschedulable".to_owned(),
                effect: "NoSchedule".to_owned(),
                ..Default::default()
            });
        }
    }
    if !taints.is_empty() {
        node["spec"]["taints"] = serde_json::to_value(&taints).unwrap_or_default();
    }
    if let Some(extra) = shape.override_ {
        if extra.not_ready {
            node_status::mark_unreachable(node, created);
        }
        for (set, key) in [
            (extra.memory_pressure, MEMORY_PRESSURE_ANNOTATION),
            (extra.disk_pressure, DISK_PRESSURE_ANNOTATION),
        ] {
            if set {
                node["metadata"]["annotations"][key] = json!("true");
            }
        }
    }
}

/// The node's kubelet version: its override's, else its pool's, else the default.
fn kubelet_version<'a>(shape: &'a NodeShape<'_>) -> &'a str {
    shape
        .override_
        .and_then(|o| o.kubelet_version.as_deref())
        .or(shape.pool.kubelet_version.as_deref())
        .unwrap_or(KUBELET_VERSION)
}

/// `ephemeral-storage` capacity (KiB, less the filesystem's own overhead)
/// and allocatable (bytes: 90 % of capacity, less 1 GiB kube-reserved).
fn ephemeral_storage(gib: u32) -> (u64, u64) {
    let capacity_ki = (u64::from(gib) * 1024 * 1024).saturating_sub(12_308);
    let allocatable = (capacity_ki * 1024 / 10 * 9).saturating_sub(1 << 30);
    (capacity_ki, allocatable)
}

/// Capacity and allocatable, with the pool's pods, storage and extended resources.
fn resources(pool: &Pool) -> (Value, Value) {
    let memory_ki = u64::from(pool.memory_gib) * 1024 * 1024 - 420_000;
    let allocatable_memory_ki =
        memory_ki.saturating_sub(u64::from(pool.memory_gib) * 60_000 + 300_000);
    let (storage_ki, allocatable_storage) = ephemeral_storage(pool.ephemeral_storage_gib);
    let mut capacity = json!({
        "cpu": pool.cpu.to_string(),
        "ephemeral-storage": format!("{storage_ki}Ki"),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{memory_ki}Ki"),
        "pods": pool.pods.to_string(),
    });
    let mut allocatable = json!({
        "cpu": format!("{}m", (u64::from(pool.cpu) * 1000).saturating_sub(90)),
        "ephemeral-storage": allocatable_storage.to_string(),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{allocatable_memory_ki}Ki"),
        "pods": pool.pods.to_string(),
    });
    for (name, count) in &pool.extended_resources {
        capacity[name] = json!(count.to_string());
        allocatable[name] = json!(count.to_string());
    }
    (capacity, allocatable)
}

fn status(shape: &NodeShape<'_>, name: &str, internal_ip: &str, rng: &mut StdRng) -> Value {
    let pool = shape.pool;
    let kubelet_version = kubelet_version(shape);
    let created = shape.created.to_string();
    let (kernel, os_image) = match pool.arch.as_str() {
        "arm64" => (
            "6.1.112-124.190.amzn2023.aarch64",
            "Amazon Linux 2023.6.20241111",
        ),
        _ => (
            "6.1.112-124.190.amzn2023.x86_64",
            "Amazon Linux 2023.6.20241111",
        ),
    };
    let mut status = json!({
        "addresses": [
            {"type": "InternalIP", "address": internal_ip},
            {"type": "InternalDNS", "address": format!("ip-{}.{}.compute.internal", internal_ip.replace('.', "-"), "eu-west-1")},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": pool.arch,
            "bootID": uuid(rng),
            "containerRuntimeVersion": "containerd://1.7.23",
            "kernelVersion": kernel,
            "kubeProxyVersion": kubelet_version,
            "kubeletVersion": kubelet_version,
            "machineID": format!("{:016x}{:016x}", rng.random::<u64>(), rng.random::<u64>()),
            "operatingSystem": "linux",
            "osImage": os_image,
            "systemUUID": uuid(rng),
        },
    });
    let (capacity, allocatable) = resources(pool);
    status["capacity"] = capacity;
    status["allocatable"] = allocatable;
    status["conditions"] = node_status::healthy_conditions(&created, &created);
    status["images"] = super::images::node_images(rng);
    status
}

/// A random RFC 4122-shaped UUID from the seeded generator.
pub fn uuid(rng: &mut StdRng) -> String {
    let a: u128 = rng.random();
    let hex = format!("{a:032x}");
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// The zone of the `index`th node: pools spread round-robin over their zones.
pub fn zone_of(pool: &Pool, index: usize) -> String {
    if pool.zones.is_empty() {
        return "zone-a".to_owned();
    }
    pool.zones[(index - 1) % pool.zones.len()].clone()
}

/// The region a zone belongs to (`eu-west-1a` → `eu-west-1`).
fn region_of(zone: &str) -> &str {
    match zone.rfind(|c: char| c.is_ascii_digit()) {
        Some(last_digit) => &zone[..=last_digit],
        None => zone,
    }
}

/// A stable per-pool /16 keeps addresses unique across pools of up to 65,000 nodes.
fn pool_octet(pool: &Pool) -> u8 {
    let sum: u32 = pool.name.bytes().map(u32::from).sum();
    u8::try_from(sum % 200).unwrap_or(0) + 16
}

fn internal_ip(pool: &Pool, index: usize) -> String {
    let (hi, lo) = (index / 250, index % 250 + 2);
    format!("10.{}.{}.{}", pool_octet(pool), hi % 256, lo)
}

fn pod_cidr(pool: &Pool, index: usize) -> String {
    format!(
        "100.{}.{}.0/24",
        64 + usize::from(pool_octet(pool)) % 64,
        index % 256
    )
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::sim::scenario::Scenario;

    #[test]
    fn nodes_are_realistic_and_deterministic() {
        let scenario = Scenario::load("default").expect("default");
        let pool = &scenario.pools[0];
        let shape = NodeShape {
            pool,
            index: 2,
            pool_label: "node-pool",
            created: Timestamp::UNIX_EPOCH,
            override_: None,
        };
        let a = node_object(&shape, &mut StdRng::seed_from_u64(1));
        let b = node_object(&shape, &mut StdRng::seed_from_u64(1));
        assert_eq!(a, b);
        let size = serde_json::to_vec(&a).expect("json").len();
        assert!((5_000..=10_000).contains(&size), "node is {size} bytes");
        assert_eq!(
            a["metadata"]["labels"]["topology.kubernetes.io/region"],
            "eu-west-1"
        );
        assert_eq!(a["metadata"]["labels"]["kubernetes.io/hostname"], "cp-02");
        assert_eq!(
            a["spec"]["taints"][0]["key"],
            "node-role.kubernetes.io/control-plane"
        );
        let node: crate::model::Node = serde_json::from_value(a).expect("decodes");
        assert!(node.is_ready());
    }

    #[test]
    fn overrides_cordon_and_break_nodes() {
        let scenario = Scenario::load("default").expect("default");
        let pool = &scenario.pools[1];
        let override_ = NodeOverride {
            name: pool.node_name(1),
            cordoned: true,
            not_ready: true,
            ..NodeOverride::default()
        };
        let shape = NodeShape {
            pool,
            index: 1,
            pool_label: "node-pool",
            created: Timestamp::UNIX_EPOCH,
            override_: Some(&override_),
        };
        let node: crate::model::Node =
            serde_json::from_value(node_object(&shape, &mut StdRng::seed_from_u64(1)))
                .expect("decodes");
        assert!(node.spec.unschedulable);
        assert!(!node.is_ready());
        let keys: Vec<_> = node.spec.taints.iter().map(|t| t.key.as_str()).collect();
        assert!(keys.contains(&"node.kubernetes.io/unreachable"), "{keys:?}");
    }

    #[test]
    fn capacity_facts_follow_the_pool_and_the_override() {
        let mut scenario = Scenario::load("default").expect("default");
        let pool = &mut scenario.pools[1];
        pool.pods = 58;
        pool.extended_resources
            .insert("nvidia.com/gpu".to_owned(), 4);
        pool.kubelet_version = Some("v1.31.2".to_owned());
        let pool = &scenario.pools[1];
        let override_ = NodeOverride {
            name: pool.node_name(2),
            kubelet_version: Some("v1.30.6".to_owned()),
            memory_pressure: true,
            ..NodeOverride::default()
        };
        let shape = |index, override_| NodeShape {
            pool,
            index,
            pool_label: "node-pool",
            created: Timestamp::UNIX_EPOCH,
            override_,
        };
        let plain = node_object(&shape(1, None), &mut StdRng::seed_from_u64(1));
        let status = &plain["status"];
        assert_eq!(status["capacity"]["pods"], "58");
        assert_eq!(status["allocatable"]["pods"], "58");
        assert_eq!(status["allocatable"]["nvidia.com/gpu"], "4");
        assert_eq!(status["capacity"]["ephemeral-storage"], "104845292Ki");
        // 90 % of capacity less 1 GiB: what a 100 GiB EKS node reports.
        assert_eq!(status["allocatable"]["ephemeral-storage"], "95551679276");
        assert_eq!(status["nodeInfo"]["kubeletVersion"], "v1.31.2");
        assert!(plain["metadata"]["annotations"][MEMORY_PRESSURE_ANNOTATION].is_null());
        let pressed = node_object(&shape(2, Some(&override_)), &mut StdRng::seed_from_u64(1));
        assert_eq!(pressed["status"]["nodeInfo"]["kubeletVersion"], "v1.30.6");
        assert_eq!(
            pressed["metadata"]["annotations"][MEMORY_PRESSURE_ANNOTATION],
            "true"
        );
        assert!(pressed["metadata"]["annotations"][DISK_PRESSURE_ANNOTATION].is_null());
    }
}
