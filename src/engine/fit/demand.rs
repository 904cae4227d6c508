//! [`PodDemand`]: what a pod asks of a node, from a decoded pod or from a
//! template (the revision a rollout moves to), by the same rules.

use k8s_openapi::api::core::v1::PodSpec as TemplateSpec;

use crate::model::pod_requests::{template_host_ports, template_requests};
use crate::model::{HostPort, Pod, ResourceList};

/// What a pod asks of a node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodDemand {
    /// Effective requests (upstream `PodRequests`).
    pub requests: ResourceList,
    /// Host ports (`hostPort > 0`).
    pub host_ports: Vec<HostPort>,
    /// `spec.priority` (0 when unset, as upstream's `PodPriority`).
    pub priority: i32,
    /// `preemptionPolicy: Never`: the pod never preempts.
    pub never_preempts: bool,
}

impl PodDemand {
    /// A decoded pod's demand.
    pub fn of_pod(pod: &Pod) -> Self {
        PodDemand {
            requests: pod.spec.requests.clone(),
            host_ports: pod.spec.host_ports.to_vec(),
            priority: pod.spec.priority.unwrap_or(0),
            never_preempts: pod.spec.preemption_policy.as_deref() == Some("Never"),
        }
    }

    /// The demand of a pod made from `spec`. A template carries a
    /// `priorityClassName`, resolved into `priority` at admission: the
    /// caller passes the class's value (`None`: the template's own
    /// `priority`, else 0).
    pub fn of_template(spec: &TemplateSpec, class_priority: Option<i32>) -> Self {
        PodDemand {
            requests: template_requests(spec),
            host_ports: template_host_ports(spec).into_vec(),
            priority: class_priority.or(spec.priority).unwrap_or(0),
            never_preempts: spec.preemption_policy.as_deref() == Some("Never"),
        }
    }
}
