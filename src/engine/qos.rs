//! A pod's QoS class as upstream computes it (`pkg/apis/core/v1/helper/qos`
//! `ComputePodQOS`), from an API pod spec: the embedded cluster sets
//! `status.qosClass` with it at admission, and eviction order reads it.
//!
//! Only cpu and memory count. `BestEffort`: no container (init containers
//! included) requests or limits either. `Guaranteed`: every container limits
//! both, and the summed requests equal the summed limits for each. Anything
//! else is `Burstable`. Pod-level `spec.resources`, when set, decide alone.
//! Requests default to limits first, as the API server does for a pod.

use k8s_openapi::api::core::v1::PodSpec;

use crate::model::ResourceList;
use crate::model::pod_requests::{container_limits, container_requests, quantities};
use crate::model::resource_list::{CPU, MEMORY};

/// The three QoS classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QosClass {
    /// Evicted first under node pressure.
    BestEffort,
    /// Between the two.
    Burstable,
    /// Evicted last.
    Guaranteed,
}

impl QosClass {
    /// The class as `status.qosClass` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            QosClass::BestEffort => "BestEffort",
            QosClass::Burstable => "Burstable",
            QosClass::Guaranteed => "Guaranteed",
        }
    }
}

/// Summed cpu and memory requests and limits, and whether every part
/// limited both.
#[derive(Default)]
struct Totals {
    requests: ResourceList,
    limits: ResourceList,
    all_limited: bool,
}

impl Totals {
    fn add(&mut self, requests: &ResourceList, limits: &ResourceList) {
        for name in [CPU, MEMORY] {
            let request = requests.get(name);
            if request > 0 {
                self.requests
                    .set(name, self.requests.get(name).saturating_add(request));
            }
            let limit = limits.get(name);
            if limit > 0 {
                self.limits
                    .set(name, self.limits.get(name).saturating_add(limit));
            }
        }
        self.all_limited &= limits.get(CPU) > 0 && limits.get(MEMORY) > 0;
    }
}

/// The QoS class of a pod made from `spec`.
pub fn qos_class(spec: &PodSpec) -> QosClass {
    let mut totals = Totals {
        all_limited: true,
        ..Totals::default()
    };
    match spec.resources.as_ref() {
        Some(pod_level) if pod_level.requests.is_some() || pod_level.limits.is_some() => {
            let limits = quantities(pod_level.limits.as_ref());
            let mut requests = quantities(pod_level.requests.as_ref());
            for (name, limit) in limits.iter() {
                if requests.get(name) == 0 {
                    requests.set(name, limit);
                }
            }
            totals.add(&requests, &limits);
        }
        _ => {
            let containers = spec
                .containers
                .iter()
                .chain(spec.init_containers.iter().flatten());
            for container in containers {
                totals.add(
                    &container_requests(container).requests,
                    &container_limits(container),
                );
            }
        }
    }
    if totals.requests.is_zero() && totals.limits.is_zero() {
        return QosClass::BestEffort;
    }
    // Every part limits both (so the limits hold cpu and memory) and the
    // requests match them exactly.
    let equal = [CPU, MEMORY]
        .iter()
        .all(|name| totals.requests.get(name) == totals.limits.get(name));
    if totals.all_limited && equal {
        QosClass::Guaranteed
    } else {
        QosClass::Burstable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, ResourceRequirements};
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use std::collections::BTreeMap;

    fn list(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, Quantity>> {
        (!pairs.is_empty()).then(|| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Quantity((*v).to_owned())))
                .collect()
        })
    }

    fn container(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        Container {
            name: "c".into(),
            resources: Some(ResourceRequirements {
                requests: list(requests),
                limits: list(limits),
                ..ResourceRequirements::default()
            }),
            ..Container::default()
        }
    }

    fn spec(containers: Vec<Container>, init: Vec<Container>) -> PodSpec {
        PodSpec {
            containers,
            init_containers: (!init.is_empty()).then_some(init),
            ..PodSpec::default()
        }
    }

    /// Rows after upstream's `TestComputePodQOS` (qos_test.go).
    #[test]
    fn qos_class_as_upstream_computes_it() {
        let cpu_mem = [("cpu", "100m"), ("memory", "100Mi")];
        let cases: Vec<(&str, PodSpec, QosClass)> = vec![
            (
                "no requests or limits is best effort",
                spec(vec![container(&[], &[])], vec![]),
                QosClass::BestEffort,
            ),
            (
                "only a non-compute resource is best effort",
                spec(
                    vec![container(
                        &[("nvidia.com/gpu", "1")],
                        &[("nvidia.com/gpu", "1")],
                    )],
                    vec![],
                ),
                QosClass::BestEffort,
            ),
            (
                "equal requests and limits is guaranteed",
                spec(vec![container(&cpu_mem, &cpu_mem)], vec![]),
                QosClass::Guaranteed,
            ),
            (
                "limits alone default the requests: guaranteed",
                spec(vec![container(&[], &cpu_mem)], vec![]),
                QosClass::Guaranteed,
            ),
            (
                "requests below limits is burstable",
                spec(
                    vec![container(&[("cpu", "50m"), ("memory", "100Mi")], &cpu_mem)],
                    vec![],
                ),
                QosClass::Burstable,
            ),
            (
                "a cpu limit without memory is burstable",
                spec(vec![container(&[], &[("cpu", "1")])], vec![]),
                QosClass::Burstable,
            ),
            (
                "one guaranteed and one best-effort container is burstable",
                spec(
                    vec![container(&cpu_mem, &cpu_mem), container(&[], &[])],
                    vec![],
                ),
                QosClass::Burstable,
            ),
            (
                "an init container without limits makes it burstable",
                spec(
                    vec![container(&cpu_mem, &cpu_mem)],
                    vec![container(&[("cpu", "10m")], &[])],
                ),
                QosClass::Burstable,
            ),
            (
                "requests only is burstable",
                spec(vec![container(&[("memory", "1Gi")], &[])], vec![]),
                QosClass::Burstable,
            ),
        ];
        for (name, spec, want) in cases {
            assert_eq!(qos_class(&spec), want, "{name}");
        }
    }
}
