//! What a scenario container asks for and holds, as API fields: requests
//! and limits as `ResourceRequirements`, host ports as container ports.
//! Shared by DaemonSet revisions and plain workload pods.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ContainerPort, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// `resources` from the scenario's requests and limits (empty ones left out).
pub fn resources(
    requests: &BTreeMap<String, String>,
    limits: &BTreeMap<String, String>,
) -> ResourceRequirements {
    let quantities = |list: &BTreeMap<String, String>| {
        (!list.is_empty()).then(|| {
            list.iter()
                .map(|(name, value)| (name.clone(), Quantity(value.clone())))
                .collect()
        })
    };
    ResourceRequirements {
        requests: quantities(requests),
        limits: quantities(limits),
        ..ResourceRequirements::default()
    }
}

/// Container ports bound on the node: `hostPort` = `containerPort`, TCP.
pub fn host_ports(ports: &[u16]) -> Option<Vec<ContainerPort>> {
    (!ports.is_empty()).then(|| {
        ports
            .iter()
            .map(|port| ContainerPort {
                container_port: i32::from(*port),
                host_port: Some(i32::from(*port)),
                protocol: Some("TCP".to_owned()),
                ..ContainerPort::default()
            })
            .collect()
    })
}
