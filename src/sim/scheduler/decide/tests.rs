//! The scheduler's decisions as a table: nodes with allocatable room, pods
//! already bound there, and the pod to place, in the API's JSON shape.

use serde_json::{Value, json};

use super::*;
use crate::model::Node;

fn node(name: &str, cpu: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})
}

fn pod(name: &str, cpu: &str, priority: i32) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
           "spec": {"priority": priority,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}})
}

fn pinned(mut pod: Value, node: &str) -> Value {
    pod["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}});
    pod
}

fn with_host_port(mut pod: Value, port: i32) -> Value {
    pod["spec"]["containers"][0]["ports"] = json!([{"containerPort": port, "hostPort": port}]);
    pod
}

/// A cluster of `nodes` with `bound` pods (pod JSON, node name) counted.
fn cluster(nodes: &[Value], bound: &[(Value, &str)]) -> ClusterCache {
    let mut cache = ClusterCache::new();
    for node in nodes {
        cache.upsert_node(serde_json::from_value::<Node>(node.clone()).expect("node"));
    }
    for (pod, node) in bound {
        let pod: Pod = serde_json::from_value(pod.clone()).expect("pod");
        let key = (pod.namespace().to_owned(), pod.name().to_owned());
        cache.count(&key, &pod, node);
    }
    cache
}

fn decide_for(pod: &Value, cache: &ClusterCache) -> Decision {
    let placement: Placement = serde_json::from_value(pod["spec"].clone()).expect("placement");
    let pod: Pod = serde_json::from_value(pod.clone()).expect("pod");
    decide(&pod, &placement, cache)
}

fn key(name: &str) -> PodKey {
    ("ns".to_owned(), name.to_owned())
}

fn unschedulable(message: &str, nomination: Nomination, victims: &[&str]) -> Decision {
    Decision::Unschedulable {
        message: message.to_owned(),
        nomination,
        victims: victims
            .iter()
            .map(|name| (key(name), format!("uid-{name}")))
            .collect(),
    }
}

#[test]
fn scheduling_decisions() {
    let three = [node("n1", "1"), node("n2", "4"), node("n3", "2")];
    let full_n1 = [(pod("busy", "800m", 0), "n1")];
    let cases: Vec<(&str, ClusterCache, Value, Decision)> = vec![
        (
            "a daemon pod goes to its own node when it fits",
            cluster(&three, &full_n1),
            pinned(pod("agent", "100m", 0), "n1"),
            Decision::Bind("n1".to_owned()),
        ),
        (
            "a daemon pod that does not fit its node (the other nodes, never filtered \
             after NodeAffinity's PreFilter, do not match its affinity), nothing of lower \
             priority to preempt",
            cluster(&three, &full_n1),
            pinned(pod("agent", "500m", 0), "n1"),
            unschedulable(
                "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node \
                 affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims \
                 found for incoming pod, 2 Preemption is not helpful for scheduling.",
                Nomination::Clear,
                &[],
            ),
        ),
        (
            "a host port held on the pod's node",
            cluster(
                &three,
                &[(with_host_port(pod("holder", "0", 0), 9100), "n3")],
            ),
            pinned(with_host_port(pod("agent", "0", 0), 9100), "n3"),
            unschedulable(
                "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod \
                 ports, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes \
                 are available: 1 No preemption victims found for incoming pod, 2 Preemption is \
                 not helpful for scheduling.",
                Nomination::Clear,
                &[],
            ),
        ),
        (
            "a plain pod goes to the least requested node that fits",
            cluster(&three, &full_n1),
            pod("web", "500m", 0),
            Decision::Bind("n2".to_owned()),
        ),
        (
            "a higher-priority daemon pod preempts the lowest pod that makes room",
            cluster(
                &three,
                &[
                    (pod("batch-a", "400m", 10), "n1"),
                    (pod("batch-b", "400m", 0), "n1"),
                ],
            ),
            pinned(pod("agent", "500m", 1000), "n1"),
            unschedulable(
                "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node \
                 affinity/selector.",
                Nomination::Set("n1".to_owned()),
                &["batch-b"],
            ),
        ),
    ];
    for (name, cache, pod, expected) in cases {
        assert_eq!(decide_for(&pod, &cache), expected, "{name}");
    }
}

#[test]
fn cordoned_and_tainted_nodes_are_filtered_with_upstream_reasons() {
    let mut cordoned = node("a-cordoned", "4");
    cordoned["spec"]["unschedulable"] = json!(true);
    let mut tainted = node("b-tainted", "4");
    tainted["spec"]["taints"] =
        json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
    let cache = cluster(&[cordoned.clone(), tainted.clone()], &[]);
    assert_eq!(
        decide_for(&pod("web", "100m", 0), &cache),
        unschedulable(
            "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) \
             were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful \
             for scheduling.",
            Nomination::Clear,
            &[],
        )
    );
    let roomy = node("c-roomy", "4");
    let cache = cluster(&[cordoned, tainted, roomy], &[]);
    assert_eq!(
        decide_for(&pod("web", "100m", 0), &cache),
        Decision::Bind("c-roomy".to_owned())
    );
}

#[test]
fn a_nominated_preemptor_waits_for_its_victims_then_binds_there() {
    let nodes = [node("n1", "1")];
    let mut cache = cluster(&nodes, &[(pod("batch", "800m", 0), "n1")]);
    let mut agent = pinned(pod("agent", "500m", 1000), "n1");
    let Decision::Unschedulable {
        nomination,
        victims,
        ..
    } = decide_for(&agent, &cache)
    else {
        panic!("the agent does not fit before preemption");
    };
    assert_eq!(nomination, Nomination::Set("n1".to_owned()));
    assert_eq!(victims, vec![(key("batch"), "uid-batch".to_owned())]);
    agent["status"]["nominatedNodeName"] = json!("n1");
    cache.mark_preempted(&key("batch"));
    assert_eq!(
        decide_for(&agent, &cache),
        unschedulable(
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a \
             terminating pod on the nominated node.",
            Nomination::Keep,
            &[],
        ),
        "upstream PodEligibleToPreemptOthers: no second round while the victim terminates"
    );
    cache.uncount(&key("batch"));
    assert_eq!(decide_for(&agent, &cache), Decision::Bind("n1".to_owned()));
}

#[test]
fn preemption_policy_never_keeps_the_pod_pending() {
    let cache = cluster(&[node("n1", "1")], &[(pod("batch", "800m", 0), "n1")]);
    let mut agent = pinned(pod("agent", "500m", 1000), "n1");
    agent["spec"]["preemptionPolicy"] = json!("Never");
    assert_eq!(
        decide_for(&agent, &cache),
        unschedulable(
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to \
             preemptionPolicy=Never.",
            Nomination::Keep,
            &[],
        )
    );
}

/// Upstream `addGENominatedPods`: a pod nominated to a node by preemption
/// holds its room there against pods of lower or equal priority until it
/// binds; a pod of higher priority does not see it.
#[test]
fn a_nominated_preemptor_keeps_its_room_from_lower_priority_pods() {
    let mut cache = cluster(&[node("n1", "2")], &[]);
    let preemptor: Pod = serde_json::from_value(pod("agent", "1500m", 100)).expect("pod");
    cache.nominate(&key("agent"), &preemptor, "n1");

    let lower = pinned(pod("batch", "1", 0), "n1");
    assert!(
        matches!(decide_for(&lower, &cache), Decision::Unschedulable { .. }),
        "the room is kept for the nominated pod"
    );
    let equal = pinned(pod("peer", "1", 100), "n1");
    assert!(matches!(
        decide_for(&equal, &cache),
        Decision::Unschedulable { .. }
    ));
    let higher = pinned(pod("critical", "1", 1000), "n1");
    assert_eq!(decide_for(&higher, &cache), Decision::Bind("n1".into()));
    // The preemptor itself is not in its own way.
    assert_eq!(
        decide_for(&pinned(pod("agent", "1500m", 100), "n1"), &cache),
        Decision::Bind("n1".into())
    );

    cache.forget_nomination(&key("agent"));
    assert_eq!(decide_for(&lower, &cache), Decision::Bind("n1".into()));
}
