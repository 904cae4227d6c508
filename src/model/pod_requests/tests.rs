//! The requests rule against upstream's cases (component-helpers
//! `resource/helpers_test.go` `TestPodRequestsAndLimits`, restartable init
//! containers in `TestPodResourceRequests`), on decoded pods and templates
//! alike, and the round trip through the slim pod's encoding.

use serde_json::{Value, json};

use crate::model::{HostPort, Pod, ResourceList};

use super::template_requests;

fn decoded(spec: &Value) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).expect("decodes")
}

fn requests(pairs: &[(&str, i64)]) -> ResourceList {
    let mut list = ResourceList::default();
    for (name, amount) in pairs {
        list.set(name, *amount);
    }
    list
}

fn container(name: &str, requests: &Value) -> Value {
    json!({"name": name, "resources": {"requests": requests}})
}

fn sidecar(name: &str, requests: &Value) -> Value {
    json!({"name": name, "restartPolicy": "Always", "resources": {"requests": requests}})
}

/// (name, spec, expected requests)
fn cases() -> Vec<(&'static str, Value, ResourceList)> {
    vec![
        (
            "containers are summed",
            json!({"containers": [container("a", &json!({"cpu": "500m", "memory": "1Gi"})), container("b", &json!({"cpu": "250m"}))]}),
            requests(&[("cpu", 750), ("memory", 1 << 30)]),
        ),
        (
            "zero requests are zero",
            json!({"containers": [{"name": "a"}]}),
            requests(&[]),
        ),
        (
            "init containers max rule: a larger init container sets the request",
            json!({
                "initContainers": [container("i", &json!({"cpu": "2", "memory": "100Mi"}))],
                "containers": [container("a", &json!({"cpu": "1", "memory": "1Gi"}))]
            }),
            requests(&[("cpu", 2_000), ("memory", 1 << 30)]),
        ),
        (
            "init containers max rule: init containers run one at a time",
            json!({
                "initContainers": [container("i1", &json!({"cpu": "1"})), container("i2", &json!({"cpu": "1500m"}))],
                "containers": [container("a", &json!({"cpu": "500m"}))]
            }),
            requests(&[("cpu", 1_500)]),
        ),
        (
            "sidecars (restartable init containers) are added to the running sum",
            json!({
                "initContainers": [sidecar("s", &json!({"cpu": "200m"}))],
                "containers": [container("a", &json!({"cpu": "1"}))]
            }),
            requests(&[("cpu", 1_200)]),
        ),
        (
            "an init container after a sidecar runs alongside it",
            json!({
                "initContainers": [sidecar("s", &json!({"cpu": "1"})), container("i", &json!({"cpu": "2"}))],
                "containers": [container("a", &json!({"cpu": "500m"}))]
            }),
            requests(&[("cpu", 3_000)]),
        ),
        (
            "an init container before a sidecar runs without it",
            json!({
                "initContainers": [container("i", &json!({"cpu": "2"})), sidecar("s", &json!({"cpu": "1"}))],
                "containers": [container("a", &json!({"cpu": "500m"}))]
            }),
            requests(&[("cpu", 2_000)]),
        ),
        (
            "overhead is added to the requests",
            json!({"overhead": {"cpu": "250m", "memory": "120Mi"}, "containers": [container("a", &json!({"cpu": "1"}))]}),
            requests(&[("cpu", 1_250), ("memory", 120 << 20)]),
        ),
        (
            "extended resources and hugepages are counted",
            json!({"containers": [container("a", &json!({"nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi"})), container("b", &json!({"nvidia.com/gpu": 1}))]}),
            requests(&[("nvidia.com/gpu", 3), ("hugepages-2Mi", 4 << 20)]),
        ),
        (
            "a limit without a request is the request (SetDefaults_Pod)",
            json!({"containers": [{"name": "a", "resources": {"limits": {"cpu": "300m", "memory": "64Mi"}, "requests": {"memory": "32Mi"}}}]}),
            requests(&[("cpu", 300), ("memory", 32 << 20)]),
        ),
        (
            "pod-level requests replace the containers' aggregate",
            json!({"resources": {"requests": {"cpu": "2"}}, "containers": [container("a", &json!({"cpu": "1", "memory": "1Gi"}))]}),
            requests(&[("cpu", 2_000), ("memory", 1 << 30)]),
        ),
        (
            "an unparsable quantity is skipped, not a rejected pod",
            json!({"containers": [container("a", &json!({"cpu": "lots", "memory": "1Gi", "storage": "1Gi"}))]}),
            requests(&[("memory", 1 << 30)]),
        ),
    ]
}

#[test]
fn decoded_pods_carry_upstreams_effective_requests() {
    for (name, spec, want) in cases() {
        assert_eq!(decoded(&spec).spec.requests, want, "{name}");
    }
}

#[test]
fn templates_get_the_same_requests_as_pods() {
    for (name, spec, want) in cases() {
        let template: k8s_openapi::api::core::v1::PodSpec = match serde_json::from_value(spec) {
            Ok(template) => template,
            // k8s-openapi rejects a quantity given as a number; the
            // decoded pod tolerates it.
            Err(_) => continue,
        };
        assert_eq!(template_requests(&template), want, "{name}");
    }
}

#[test]
fn encoding_keeps_the_effective_requests_and_host_ports() {
    for (name, spec, want) in cases() {
        let pod = decoded(&spec);
        let again: Pod = serde_json::from_value(serde_json::to_value(&pod).unwrap()).unwrap();
        assert_eq!(again.spec.requests, want, "{name}");
        assert_eq!(again, pod, "{name}");
    }
    let pod = decoded(&json!({"containers": [
        {"name": "a", "ports": [{"containerPort": 9100, "hostPort": 9100}, {"containerPort": 80}]},
        {"name": "b", "ports": [{"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}]}
    ]}));
    assert_eq!(
        pod.spec.host_ports.to_vec(),
        vec![
            HostPort::new(9100, None, None).unwrap(),
            HostPort::new(53, Some("UDP"), Some("10.0.0.1")).unwrap(),
        ]
    );
    assert_eq!(pod.spec.host_ports[0].protocol, "TCP");
    assert_eq!(pod.spec.host_ports[0].host_ip, "0.0.0.0");
    let again: Pod = serde_json::from_value(serde_json::to_value(&pod).unwrap()).unwrap();
    assert_eq!(again, pod);
}

#[test]
fn init_container_ports_are_not_host_ports_of_the_pod() {
    // The nodeports plugin reads spec.containers only.
    let pod = decoded(&json!({
        "initContainers": [{"name": "i", "ports": [{"containerPort": 1, "hostPort": 1}]}],
        "containers": [{"name": "a"}]
    }));
    assert!(pod.spec.host_ports.is_empty());
}

#[test]
fn scheduling_fields_and_the_unscheduled_condition_are_kept() {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"priority": 2_000_001_000, "priorityClassName": "system-node-critical", "preemptionPolicy": "Never", "containers": [{"name": "a"}]},
        "status": {
            "phase": "Pending", "qosClass": "BestEffort", "nominatedNodeName": "n1",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available: 1 Insufficient cpu."},
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [a]"}
            ]
        }
    }))
    .unwrap();
    assert_eq!(pod.spec.priority, Some(2_000_001_000));
    assert_eq!(
        pod.spec.priority_class_name.as_deref(),
        Some("system-node-critical")
    );
    assert_eq!(pod.spec.preemption_policy.as_deref(), Some("Never"));
    assert_eq!(pod.status.qos_class.as_deref(), Some("BestEffort"));
    assert_eq!(pod.status.nominated_node_name.as_deref(), Some("n1"));
    let unscheduled = pod.unscheduled_condition().expect("kept");
    assert_eq!(unscheduled.reason.as_deref(), Some("Unschedulable"));
    assert_eq!(
        unscheduled.message.as_deref(),
        Some("0/1 nodes are available: 1 Insufficient cpu.")
    );
    assert_eq!(
        pod.status.conditions.len(),
        2,
        "Ready and PodScheduled only"
    );
    assert_eq!(
        pod.ready_condition().unwrap().reason,
        None,
        "Ready's texts are not kept"
    );
    let again: Pod = serde_json::from_value(serde_json::to_value(&pod).unwrap()).unwrap();
    assert_eq!(again, pod);
}

#[test]
fn a_scheduled_pod_keeps_no_pod_scheduled_condition() {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    }))
    .unwrap();
    assert!(pod.status.conditions.is_empty());
    assert!(pod.unscheduled_condition().is_none());
}

#[test]
#[cfg(target_pointer_width = "64")]
fn the_scheduling_part_costs_a_pod_one_pointer() {
    // Requests, host ports and priority held inline took 88 bytes a pod
    // (a 488-byte pod, jemalloc's 512 class); shared, one pointer. The
    // node an unbound daemon pod is pinned to costs 16 more (a 424-byte
    // pod, still the 448 class).
    assert_eq!(std::mem::size_of::<crate::model::PodSpec>(), 72);
    assert_eq!(std::mem::size_of::<ResourceList>(), 48);
    assert_eq!(std::mem::size_of::<HostPort>(), 24);
}

#[test]
fn pods_of_one_template_share_their_scheduling_part() {
    let spec = json!({"containers": [container("a", &json!({"cpu": "100m"}))]});
    let (a, b) = (decoded(&spec), decoded(&spec));
    assert!(std::ptr::eq(&raw const *a.spec, &raw const *b.spec));
}

/// Upstream `GetTargetNodeName`: a daemon pod the controller created unbound
/// is its node's by its required `matchFields metadata.name` term; a term
/// naming several nodes, or terms naming different ones, pin nothing; a
/// bound pod is its `nodeName`'s. Encoding writes the pin back.
#[test]
fn an_unbound_daemon_pod_is_its_pinned_nodes() {
    let pinned = |terms: Value| -> Pod {
        serde_json::from_value(
            json!({"spec": {"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}}),
        )
        .unwrap()
    };
    let field = |values: Value| json!({"matchFields": [{"key": "metadata.name", "operator": "In", "values": values}]});
    let one = pinned(json!([field(json!(["n1"]))]));
    assert_eq!((one.node_name(), one.target_node()), (None, Some("n1")));
    let again: Pod = serde_json::from_value(serde_json::to_value(&one).unwrap()).unwrap();
    assert_eq!(again.target_node(), Some("n1"), "encoding keeps the pin");
    assert_eq!(
        pinned(json!([field(json!(["n1", "n2"]))])).target_node(),
        None
    );
    assert_eq!(
        pinned(json!([field(json!(["n1"])), field(json!(["n2"]))])).target_node(),
        None
    );
    assert_eq!(
        pinned(json!([field(json!(["n1"])), field(json!(["n1"]))])).target_node(),
        Some("n1")
    );
    let bound: Pod = serde_json::from_value(json!({"spec": {"nodeName": "n2", "containers": [],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [field(json!(["n1"]))]}}}}}))
    .unwrap();
    assert_eq!(bound.target_node(), Some("n2"));
    assert!(bound.spec.pinned_node.is_none(), "a bound pod keeps no pin");
}
