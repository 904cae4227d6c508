//! The scenario's PriorityClasses and plain workload pods: pods owned by
//! nothing, bound to the nodes of their pools (`spec.nodeName`), with the
//! requests, limits, host ports and priority class the scenario gives them.
//! They are created through the API's create path, so admission resolves
//! their priority and QoS class, and the kubelets bring them up.

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use crate::sim::scenario::{Scenario, WorkloadSpec};

/// The scenario's PriorityClasses as objects.
pub fn priority_classes(scenario: &Scenario) -> impl Iterator<Item = Value> + '_ {
    scenario.priority_classes.iter().map(|class| {
        let mut object = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": class.name}, "value": class.value});
        if let Some(policy) = &class.preemption_policy {
            object["preemptionPolicy"] = json!(policy);
        }
        if !class.description.is_empty() {
            object["description"] = json!(class.description);
        }
        if class.global_default {
            object["globalDefault"] = json!(true);
        }
        object
    })
}

/// Every workload pod, over the generated node names and their pools.
pub fn workload_pods<'a>(
    scenario: &'a Scenario,
    nodes: &'a [(String, String)],
) -> impl Iterator<Item = Value> + 'a {
    scenario.workloads.iter().flat_map(move |workload| {
        nodes
            .iter()
            .filter(move |(node, pool)| {
                workload.pools.contains(pool) || workload.nodes.contains(node)
            })
            .flat_map(move |(node, _)| {
                (1..=workload.per_node).map(move |n| workload_pod(workload, node, n))
            })
    })
}

/// The `n`th pod of `workload` on `node`.
fn workload_pod(workload: &WorkloadSpec, node: &str, n: usize) -> Value {
    let empty = std::collections::BTreeMap::new();
    let container = Container {
        name: workload.name.clone(),
        image: Some(workload.image.clone()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        resources: Some(super::needs::resources(
            workload.requests.as_ref().unwrap_or(&empty),
            workload.limits.as_ref().unwrap_or(&empty),
        )),
        ports: super::needs::host_ports(&workload.host_ports),
        ..Container::default()
    };
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some(format!("{}-{node}-{n}", workload.name)),
            namespace: Some(workload.namespace.clone()),
            labels: Some([("app".to_owned(), workload.name.clone())].into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![container],
            node_name: Some(node.to_owned()),
            priority_class_name: workload.priority_class_name.clone(),
            restart_policy: Some("Always".to_owned()),
            termination_grace_period_seconds: Some(30),
            ..PodSpec::default()
        }),
        status: None,
    };
    let mut value = serde_json::to_value(pod).unwrap_or(Value::Null);
    value["apiVersion"] = json!("v1");
    value["kind"] = json!("Pod");
    value
}
