//! A pod's effective requests and host ports, by upstream's rules, from
//! either a decoded pod or a template (`k8s_openapi` `PodSpec`): one rule for
//! the scheduler, the kubelet and preflight.
//!
//! Requests are k8s.io/component-helpers `resource.PodRequests`: the
//! containers' requests summed; each non-restartable init container runs
//! alone (with the sidecars started before it), so the pod needs the larger
//! of the running sum and that; restartable init containers
//! (`restartPolicy: Always`, sidecars) keep running and join the sum;
//! pod-level `spec.resources.requests` replace the aggregate for the
//! resources they name; `spec.overhead` is added last. A container's
//! request defaults to its limit, as the API server's `SetDefaults_Pod` does
//! for pods (templates are not defaulted, so a DaemonSet's next revision
//! needs it here). Host ports are the nodeports plugin's: the regular
//! containers' ports with `hostPort > 0`.

use k8s_openapi::api::core::v1 as api;
use serde::{Deserialize, Serialize};

use super::{Interned, ResourceList};

/// One host port a pod holds on its node.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostPort {
    /// `hostPort` (always > 0).
    pub port: i32,
    /// `TCP` (the default), `UDP` or `SCTP`.
    pub protocol: Interned,
    /// `hostIP`; `0.0.0.0` (every address, the default) when unset.
    #[serde(rename = "hostIP")]
    pub host_ip: Interned,
}

/// The address a host port binds when it names none.
pub const ALL_ADDRESSES: &str = "0.0.0.0";

impl HostPort {
    /// A host port with upstream's defaults for an empty protocol or address;
    /// `None` for `hostPort <= 0` (no host port).
    pub fn new(port: i32, protocol: Option<&str>, host_ip: Option<&str>) -> Option<Self> {
        (port > 0).then(|| HostPort {
            port,
            protocol: Interned::new(protocol.filter(|p| !p.is_empty()).unwrap_or("TCP")),
            host_ip: Interned::new(host_ip.filter(|ip| !ip.is_empty()).unwrap_or(ALL_ADDRESSES)),
        })
    }
}

/// A container's part in the pod's requests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainerRequests {
    /// Requests, with limits standing in for missing requests.
    pub requests: ResourceList,
    /// An init container with `restartPolicy: Always` (a sidecar).
    pub restartable: bool,
}

impl ContainerRequests {
    /// Requests defaulted from limits as `SetDefaults_Pod` does: a resource
    /// with a limit and no request requests its limit. (A request written
    /// as an explicit zero reads as absent here.)
    pub fn new(mut requests: ResourceList, limits: &ResourceList, restartable: bool) -> Self {
        for (name, limit) in limits.iter() {
            if requests.get(name) == 0 {
                requests.set(name, limit);
            }
        }
        ContainerRequests {
            requests,
            restartable,
        }
    }
}

/// The pod's effective requests (upstream `PodRequests`, see the module doc).
pub fn pod_requests<'a>(
    containers: impl IntoIterator<Item = &'a ContainerRequests>,
    init_containers: impl IntoIterator<Item = &'a ContainerRequests>,
    pod_level: &ResourceList,
    overhead: &ResourceList,
) -> ResourceList {
    let mut total = ResourceList::default();
    for container in containers {
        total.add(&container.requests);
    }
    let mut sidecars = ResourceList::default();
    let mut init_peak = ResourceList::default();
    for init in init_containers {
        if init.restartable {
            total.add(&init.requests);
            sidecars.add(&init.requests);
            init_peak.max(&sidecars);
        } else {
            let mut alone = init.requests.clone();
            alone.add(&sidecars);
            init_peak.max(&alone);
        }
    }
    total.max(&init_peak);
    for (name, amount) in pod_level.iter() {
        total.set(name, amount);
    }
    total.add(overhead);
    total
}

/// A template's (or any API pod spec's) effective requests: what a pod made
/// from it will request.
pub fn template_requests(spec: &api::PodSpec) -> ResourceList {
    let containers: Vec<_> = spec.containers.iter().map(container_requests).collect();
    let init: Vec<_> = spec
        .init_containers
        .iter()
        .flatten()
        .map(container_requests)
        .collect();
    let pod_level = spec
        .resources
        .as_ref()
        .map(|r| quantities(r.requests.as_ref()))
        .unwrap_or_default();
    pod_requests(
        &containers,
        &init,
        &pod_level,
        &quantities(spec.overhead.as_ref()),
    )
}

/// A template's host ports (the regular containers' `hostPort > 0`).
pub fn template_host_ports(spec: &api::PodSpec) -> Box<[HostPort]> {
    spec.containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            HostPort::new(
                p.host_port.unwrap_or(0),
                p.protocol.as_deref(),
                p.host_ip.as_deref(),
            )
        })
        .collect()
}

/// A template container's requests (defaulted from its limits).
pub fn container_requests(container: &api::Container) -> ContainerRequests {
    ContainerRequests::new(
        quantities(container_resources(container).and_then(|r| r.requests.as_ref())),
        &container_limits(container),
        container.restart_policy.as_deref() == Some("Always"),
    )
}

/// A template container's limits.
pub fn container_limits(container: &api::Container) -> ResourceList {
    quantities(container_resources(container).and_then(|r| r.limits.as_ref()))
}

fn container_resources(container: &api::Container) -> Option<&api::ResourceRequirements> {
    container.resources.as_ref()
}

/// An API resource map read into a [`ResourceList`] (unparsable entries skipped).
pub fn quantities(
    map: Option<
        &std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >,
    >,
) -> ResourceList {
    let mut list = ResourceList::default();
    for (name, quantity) in map.into_iter().flatten() {
        list.set_quantity(name, &quantity.0);
    }
    list
}

#[cfg(test)]
mod tests;
