//! A generated large cluster for scale work (`rollcall sim --nodes N`): N
//! nodes spread over five pools and six zones in two regions, with the
//! DaemonSets a real fleet runs (a RollingUpdate log shipper everywhere, an
//! OnDelete node agent with an update waiting, a GPU exporter on the GPU pool).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::sim::scenario::{DaemonSetSpec, Pool, RevisionSpec, Scenario, StrategyKind, Timing};

/// Pool shares in per-mille: (name, share, instance type, arch, cpu, memory GiB).
const POOLS: &[(&str, usize, &str, &str, u32, u32)] = &[
    ("general", 700, "m6i.2xlarge", "amd64", 8, 32),
    ("compute", 150, "c7i.4xlarge", "amd64", 16, 32),
    ("memory", 80, "r7i.4xlarge", "amd64", 16, 128),
    ("gpu", 40, "g5.2xlarge", "amd64", 8, 32),
    ("edge", 30, "t4g.large", "arm64", 2, 8),
];

const ZONES: &[&str] = &[
    "us-east-1a",
    "us-east-1b",
    "us-east-1c",
    "us-west-2a",
    "us-west-2b",
    "us-west-2c",
];

/// A scenario with `nodes` nodes in five pools.
pub fn large_scenario(nodes: usize) -> Scenario {
    let mut scenario = Scenario::empty();
    scenario.name = format!("generated-{nodes}");
    scenario.description = format!("{nodes} generated nodes for scale work");
    scenario.timing = Timing::default();
    let mut remaining = nodes;
    for (position, (name, share, instance_type, arch, cpu, memory_gib)) in POOLS.iter().enumerate()
    {
        let count = if position + 1 == POOLS.len() {
            remaining
        } else {
            (nodes * share / 1000).min(remaining)
        };
        remaining -= count;
        let mut pool = Pool {
            name: (*name).to_owned(),
            count,
            prefix: None,
            instance_type: (*instance_type).to_owned(),
            arch: (*arch).to_owned(),
            zones: ZONES.iter().map(|z| (*z).to_owned()).collect(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            cpu: *cpu,
            memory_gib: *memory_gib,
            age: Some(Duration::from_secs(86_400 * 30)),
            pods: 110,
            ephemeral_storage_gib: 100,
            extended_resources: BTreeMap::new(),
            kubelet_version: None,
        };
        if *name == "gpu" {
            pool.extended_resources
                .insert("nvidia.com/gpu".to_owned(), 4);
            pool.labels
                .insert("nvidia.com/gpu.present".to_owned(), "true".to_owned());
            pool.taints.push(Taint {
                key: "dedicated".to_owned(),
                value: Some("gpu".to_owned()),
                effect: "NoSchedule".to_owned(),
                time_added: None,
            });
        }
        scenario.pools.push(pool);
    }
    scenario.daemon_sets = vec![log_shipper(), node_agent(), gpu_exporter()];
    scenario
}

fn revision(image: &str) -> RevisionSpec {
    RevisionSpec {
        image: image.to_owned(),
        change_cause: None,
        env: BTreeMap::new(),
        requests: None,
        limits: None,
        host_ports: Vec::new(),
        priority_class_name: None,
    }
}

fn base(name: &str, namespace: &str, strategy: StrategyKind) -> DaemonSetSpec {
    DaemonSetSpec {
        name: name.to_owned(),
        namespace: namespace.to_owned(),
        update_strategy: strategy,
        max_unavailable: None,
        max_surge: None,
        min_ready_seconds: 0,
        node_selector: BTreeMap::new(),
        tolerations: Vec::new(),
        host_network: false,
        container: None,
        revisions: Vec::new(),
        pods_at: None,
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        applied_by: None,
    }
}

fn log_shipper() -> DaemonSetSpec {
    let mut ds = base("log-shipper", "kube-system", StrategyKind::RollingUpdate);
    ds.max_unavailable = Some(IntOrString::String("10%".to_owned()));
    ds.container = Some("fluent-bit".to_owned());
    ds.tolerations = vec![Toleration {
        operator: Some("Exists".to_owned()),
        ..Toleration::default()
    }];
    ds.revisions = vec![revision("cr.fluentbit.io/fluent/fluent-bit:3.2.2")];
    ds
}

fn node_agent() -> DaemonSetSpec {
    let mut ds = base("node-agent", "kube-system", StrategyKind::OnDelete);
    ds.revisions = vec![
        revision("registry.example.com/platform/node-agent:1.4.2"),
        revision("registry.example.com/platform/node-agent:1.5.0"),
    ];
    ds.pods_at = Some(1);
    ds
}

fn gpu_exporter() -> DaemonSetSpec {
    let mut ds = base("gpu-exporter", "monitoring", StrategyKind::RollingUpdate);
    ds.node_selector
        .insert("nvidia.com/gpu.present".to_owned(), "true".to_owned());
    ds.tolerations = vec![Toleration {
        key: Some("dedicated".to_owned()),
        operator: Some("Equal".to_owned()),
        value: Some("gpu".to_owned()),
        effect: Some("NoSchedule".to_owned()),
        toleration_seconds: None,
    }];
    ds.container = Some("dcgm-exporter".to_owned());
    ds.revisions = vec![revision(
        "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04",
    )];
    ds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_add_up_to_the_requested_count() {
        for nodes in [1, 7, 5_000, 65_000] {
            let scenario = large_scenario(nodes);
            let total: usize = scenario.pools.iter().map(|p| p.count).sum();
            assert_eq!(total, nodes);
        }
    }
}
