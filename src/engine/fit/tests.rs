//! Table tests for the fit engine, named after the upstream behaviour each
//! pins (noderesources `fit_test.go`, nodeports `node_ports_test.go`,
//! defaultpreemption `default_preemption_test.go`, kubelet
//! `predicate_test.go`), and properties.

use proptest::prelude::*;

use crate::model::{HostPort, ResourceList};

use super::*;

fn list(pairs: &[(&str, i64)]) -> ResourceList {
    let mut list = ResourceList::default();
    for (name, amount) in pairs {
        list.set(name, *amount);
    }
    list
}

/// A node with 3900m cpu, 15Gi memory, 110 pods.
fn node(pods: Vec<BoundPod>) -> NodeUse {
    NodeUse {
        allocatable: list(&[
            ("cpu", 3_900),
            ("memory", 15 << 30),
            ("pods", 110),
            ("nvidia.com/gpu", 1),
        ]),
        pods,
    }
}

fn bound(name: &str, priority: i32, requests: &[(&str, i64)]) -> BoundPod {
    BoundPod {
        uid: format!("uid-{name}"),
        namespace: "default".into(),
        name: name.into(),
        priority,
        start_time: None,
        requests: list(requests),
        host_ports: Vec::new(),
    }
}

fn demand(priority: i32, requests: &[(&str, i64)]) -> PodDemand {
    PodDemand {
        requests: list(requests),
        priority,
        ..PodDemand::default()
    }
}

fn codes(fit: &Fit) -> Vec<ReasonCode> {
    fit.reasons.iter().map(|r| r.code).collect()
}

fn names(fit: &Fit) -> Vec<&str> {
    fit.preempts.iter().map(|v| v.name.as_str()).collect()
}

#[test]
fn fits_request_table() {
    use ReasonCode::*;
    let full_cpu = || vec![bound("busy", 0, &[("cpu", 3_800)])];
    let cases: Vec<(&str, PodDemand, NodeUse, Vec<ReasonCode>)> = vec![
        (
            "zero requests fit a full node (only the pod count is checked)",
            demand(0, &[]),
            node(full_cpu()),
            vec![],
        ),
        (
            "insufficient cpu",
            demand(0, &[("cpu", 500)]),
            node(full_cpu()),
            vec![InsufficientCpu],
        ),
        (
            "exactly the free cpu fits",
            demand(0, &[("cpu", 100)]),
            node(full_cpu()),
            vec![],
        ),
        (
            "insufficient memory and cpu together",
            demand(0, &[("cpu", 500), ("memory", 16 << 30)]),
            node(full_cpu()),
            vec![InsufficientCpu, InsufficientMemory],
        ),
        (
            "extended resources are checked against allocatable",
            demand(0, &[("nvidia.com/gpu", 2)]),
            node(vec![]),
            vec![InsufficientResource],
        ),
        (
            "an extended resource the node lacks is insufficient",
            demand(0, &[("example.com/fpga", 1)]),
            node(vec![]),
            vec![InsufficientResource],
        ),
        (
            "ephemeral storage beyond allocatable",
            demand(0, &[("ephemeral-storage", 1)]),
            node(vec![]),
            vec![InsufficientEphemeralStorage],
        ),
        (
            "too many pods even for a pod that requests nothing",
            demand(0, &[]),
            NodeUse {
                allocatable: list(&[("pods", 1)]),
                pods: vec![bound("a", 0, &[])],
            },
            vec![TooManyPods],
        ),
    ];
    for (name, candidate, node, want) in cases {
        let fit = fit(&candidate, &node, &[]);
        let reasons: Vec<_> = codes(&fit)
            .into_iter()
            .filter(|c| *c != PreemptionCannotHelp)
            .collect();
        assert_eq!(reasons, want, "{name}");
        assert_eq!(fit.fits, want.is_empty(), "{name}");
    }
}

#[test]
fn messages_give_upstreams_words_then_the_numbers() {
    let fit = fit(
        &demand(0, &[("cpu", 500)]),
        &node(vec![bound("busy", 0, &[("cpu", 3_780)])]),
        &[],
    );
    assert_eq!(
        fit.reasons[0].message,
        "Insufficient cpu: needs 500m, 120m free of 3900m"
    );
    assert_eq!(
        fit.reasons[0].shortfall,
        Some(Shortfall::Resource {
            name: "cpu".into(),
            requested: 500,
            used: 3_780,
            allocatable: 3_900
        })
    );
    let json = serde_json::to_value(&fit).unwrap();
    assert_eq!(json["fits"], false);
    assert_eq!(json["reasons"][0]["code"], "insufficientCpu");
    assert_eq!(json["preempts"], serde_json::json!([]));
    assert_eq!(
        json.as_object().unwrap().len(),
        3,
        "the contract's three keys"
    );
    assert_eq!(json["reasons"][0].as_object().unwrap().len(), 2);
}

#[test]
fn terminating_pods_count_until_gone_and_finished_pods_do_not() {
    use crate::model::Pod;
    let pod = |name: &str, phase: &str, terminating: bool| -> Pod {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "uid": name},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": phase}
        }))
        .unwrap();
        if terminating {
            pod.metadata.deletion_timestamp =
                Some(crate::model::Stamp::new(jiff::Timestamp::UNIX_EPOCH));
        }
        pod
    };
    let node: crate::model::Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}
    }))
    .unwrap();
    let pods = [
        pod("running", "Running", false),
        pod("terminating", "Running", true),
        pod("done", "Succeeded", false),
        pod("failed", "Failed", false),
        pod("pending", "Pending", false),
    ];
    let used = NodeUse::new(&node, &pods);
    let counted: Vec<_> = used.pods.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(counted, ["running", "terminating", "pending"]);
    assert_eq!(used.requested().cpu, 3_000);
    assert!(!fit(&demand(0, &[("cpu", 2_000)]), &used, &[]).fits);
    assert!(
        fit(&demand(0, &[("cpu", 2_000)]), &used, &["terminating"]).fits,
        "once it is gone"
    );
}

#[test]
fn host_ports_conflict_as_upstreams_check_conflict() {
    let port = |p: i32, proto: &str, ip: &str| HostPort::new(p, Some(proto), Some(ip)).unwrap();
    let holder = |held: HostPort| {
        let mut pod = bound("node-exporter-x", 1_000, &[]);
        pod.namespace = "kube-system".into();
        pod.host_ports = vec![held];
        node(vec![pod])
    };
    let cases = [
        (
            "same port, all addresses",
            port(9100, "TCP", "0.0.0.0"),
            port(9100, "TCP", "0.0.0.0"),
            true,
        ),
        (
            "wanted on all addresses, held on one",
            port(9100, "TCP", "0.0.0.0"),
            port(9100, "TCP", "10.0.0.1"),
            true,
        ),
        (
            "wanted on one, held on all",
            port(9100, "TCP", "10.0.0.1"),
            port(9100, "TCP", "0.0.0.0"),
            true,
        ),
        (
            "different specific addresses",
            port(9100, "TCP", "10.0.0.2"),
            port(9100, "TCP", "10.0.0.1"),
            false,
        ),
        (
            "different protocol",
            port(53, "UDP", "0.0.0.0"),
            port(53, "TCP", "0.0.0.0"),
            false,
        ),
        (
            "different port",
            port(9101, "TCP", "0.0.0.0"),
            port(9100, "TCP", "0.0.0.0"),
            false,
        ),
    ];
    for (name, wanted, held, conflict) in cases {
        let candidate = PodDemand {
            host_ports: vec![wanted],
            ..PodDemand::default()
        };
        let fit = fit(&candidate, &holder(held), &[]);
        assert_eq!(
            codes(&fit).contains(&ReasonCode::HostPortInUse),
            conflict,
            "{name}"
        );
    }
    let candidate = PodDemand {
        host_ports: vec![port(9100, "TCP", "0.0.0.0")],
        ..PodDemand::default()
    };
    let fit = fit(&candidate, &holder(port(9100, "TCP", "0.0.0.0")), &[]);
    assert_eq!(
        fit.reasons[0].message,
        "node(s) didn't have free ports for the requested pod ports: hostPort 9100/TCP held by kube-system/node-exporter-x"
    );
    assert!(!fit.fits, "a higher-priority holder cannot be preempted");
}

#[test]
fn preemption_picks_the_fewest_lowest_priority_victims() {
    let mut older = bound("batch-old", 100, &[("cpu", 1_000)]);
    older.start_time = Some(crate::model::Stamp::new(jiff::Timestamp::UNIX_EPOCH));
    let node = node(vec![
        bound("system", 2_000, &[("cpu", 1_000)]),
        bound("batch-low", 10, &[("cpu", 1_000)]),
        older,
        bound("batch-new", 100, &[("cpu", 1_000)]),
    ]);
    // 4000m requested of 3900m: a 1500m pod needs two of the 1000m pods gone.
    let fit = fit(&demand(1_000, &[("cpu", 1_500)]), &node, &[]);
    assert!(fit.fits);
    // Reprieve from the most important down: batch-old (earlier start) is
    // kept first, so batch-new and batch-low go.
    assert_eq!(names(&fit), ["batch-new", "batch-low"]);
    assert_eq!(fit.preempts[1].priority, 10);
    assert_eq!(
        codes(&fit),
        [ReasonCode::InsufficientCpu],
        "why it does not fit as is"
    );
}

#[test]
fn preemption_removes_only_what_it_must() {
    let node = node(vec![
        bound("big", 10, &[("cpu", 3_000)]),
        bound("small", 5, &[("cpu", 500)]),
    ]);
    let fit = fit(&demand(1_000, &[("cpu", 1_000)]), &node, &[]);
    assert_eq!(names(&fit), ["big"], "the small one is reprieved");
}

#[test]
fn preemption_policy_never_does_not_preempt() {
    let node = node(vec![bound("batch", 0, &[("cpu", 3_800)])]);
    let mut candidate = demand(1_000, &[("cpu", 500)]);
    candidate.never_preempts = true;
    let fit = fit(&candidate, &node, &[]);
    assert!(!fit.fits);
    assert_eq!(fit.preemption, Preemption::NotEligible);
    assert_eq!(
        fit.reasons.last().unwrap().message,
        "preemption: not eligible due to preemptionPolicy=Never."
    );
}

#[test]
fn preemption_not_helpful_when_the_pod_exceeds_allocatable() {
    let fit = fit(
        &demand(1_000, &[("cpu", 64_000)]),
        &node(vec![bound("batch", 0, &[("cpu", 100)])]),
        &[],
    );
    assert!(!fit.fits);
    assert_eq!(fit.preemption, Preemption::NotHelpful);
}

#[test]
fn preemption_finds_no_victims_among_equal_or_higher_priority() {
    let fit = fit(
        &demand(0, &[("cpu", 500)]),
        &node(vec![bound("same", 0, &[("cpu", 3_800)])]),
        &[],
    );
    assert!(!fit.fits);
    assert_eq!(fit.preemption, Preemption::NoVictims);
    assert_eq!(
        fit.reasons.last().unwrap().code,
        ReasonCode::PreemptionCannotHelp
    );
}

#[test]
fn preemption_that_would_not_make_room_reports_the_remaining_reason() {
    let node = node(vec![
        bound("system", 2_000, &[("cpu", 3_500)]),
        bound("batch", 0, &[("cpu", 300)]),
    ]);
    let fit = fit(&demand(1_000, &[("cpu", 500)]), &node, &[]);
    assert!(!fit.fits);
    assert_eq!(
        fit.preemption,
        Preemption::StillUnfit(vec!["Insufficient cpu".into()])
    );
}

#[test]
fn failed_scheduling_message_counts_and_sorts_as_upstream() {
    let full = node(vec![bound("same", 0, &[("cpu", 3_800)])]);
    let insufficient = fit(&demand(0, &[("cpu", 500)]), &full, &[]);
    let mut outcomes = vec![NodeOutcome::Fit(&insufficient)];
    outcomes.extend(std::iter::repeat_n(
        NodeOutcome::Rejected(NODE_AFFINITY_MISMATCH),
        13,
    ));
    assert_eq!(
        failed_scheduling_message(&outcomes, false),
        "0/14 nodes are available: 1 Insufficient cpu, 13 node(s) didn't match Pod's node affinity/selector. \
         preemption: 0/14 nodes are available: 1 No preemption victims found for incoming pod, \
         13 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        failed_scheduling_message(&outcomes[..1], true),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    );
    let taint = untolerated_taint("node.kubernetes.io/disk-pressure", "");
    assert_eq!(
        failed_scheduling_message(&[NodeOutcome::Rejected(&taint)], false),
        "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }. \
         preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        failed_scheduling_message(&[], false),
        "no nodes available to schedule pods"
    );
}

#[test]
fn a_port_conflict_hides_the_resource_reasons_in_the_event() {
    let mut holder = bound("exporter", 0, &[("cpu", 3_800)]);
    holder.host_ports = vec![HostPort::new(9100, None, None).unwrap()];
    let candidate = PodDemand {
        requests: list(&[("cpu", 500)]),
        host_ports: vec![HostPort::new(9100, None, None).unwrap()],
        ..PodDemand::default()
    };
    let fit = fit(&candidate, &node(vec![holder]), &[]);
    assert_eq!(
        failed_scheduling_message(&[NodeOutcome::Fit(&fit)], false),
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. \
         preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    );
}

#[test]
fn kubelet_admission_rejects_as_upstreams_predicate_admit_handler() {
    let full = node(vec![bound("busy", 0, &[("cpu", 3_800)])]);
    let rejected = admit(&demand(0, &[("cpu", 500)]), &full, &[]).unwrap_err();
    assert_eq!(rejected.reason, "OutOfcpu");
    assert_eq!(
        rejected.status_message(),
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 500, used: 3800, capacity: 3900"
    );
    let rejected = admit(&demand(0, &[("memory", 16 << 30)]), &full, &[]).unwrap_err();
    assert_eq!(rejected.reason, "OutOfmemory");
    let tiny = NodeUse {
        allocatable: list(&[("pods", 1)]),
        pods: vec![bound("a", 0, &[])],
    };
    let rejected = admit(&demand(0, &[]), &tiny, &[]).unwrap_err();
    assert_eq!(
        (rejected.reason.as_str(), rejected.message.as_str()),
        (
            "OutOfpods",
            "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"
        )
    );
    let rejected = admit(&demand(0, &[("nvidia.com/gpu", 2)]), &full, &[]).unwrap_err();
    assert_eq!(rejected.reason, "OutOfnvidia.com/gpu");
    assert_eq!(
        admit(&demand(0, &[("example.com/fpga", 1)]), &full, &[]),
        Ok(()),
        "an extended resource the node does not list is dropped"
    );
    let mut holder = bound("exporter", 0, &[]);
    holder.host_ports = vec![HostPort::new(9100, None, None).unwrap()];
    let candidate = PodDemand {
        host_ports: vec![HostPort::new(9100, None, None).unwrap()],
        ..PodDemand::default()
    };
    let rejected = admit(&candidate, &node(vec![holder]), &[]).unwrap_err();
    assert_eq!(rejected.reason, "NodePorts");
    assert_eq!(
        rejected.message,
        "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
    );
    assert_eq!(
        admit(&demand(0, &[("cpu", 500)]), &full, &["uid-busy"]),
        Ok(())
    );
}

#[test]
fn a_template_and_its_pod_make_the_same_demand() {
    let spec = serde_json::json!({
        "priority": 1000, "preemptionPolicy": "Never",
        "initContainers": [{"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}}],
        "containers": [{"name": "c", "resources": {"limits": {"cpu": "200m"}}, "ports": [{"containerPort": 9100, "hostPort": 9100}]}]
    });
    let template: k8s_openapi::api::core::v1::PodSpec =
        serde_json::from_value(spec.clone()).unwrap();
    let pod: crate::model::Pod = serde_json::from_value(serde_json::json!({"spec": spec})).unwrap();
    assert_eq!(
        PodDemand::of_template(&template, None),
        PodDemand::of_pod(&pod)
    );
    assert_eq!(PodDemand::of_pod(&pod).requests.cpu, 300);
    assert_eq!(PodDemand::of_template(&template, Some(5)).priority, 5);
}

fn arbitrary_pod() -> impl Strategy<Value = BoundPod> {
    (
        0..5i32,
        0..2_000i64,
        0..4i64,
        proptest::option::of(9100..9103i32),
    )
        .prop_map(|(priority, cpu, gpu, port)| {
            let mut pod = bound(
                &format!("p{priority}{cpu}{gpu}"),
                priority * 100,
                &[("cpu", cpu), ("nvidia.com/gpu", gpu)],
            );
            pod.host_ports = port
                .and_then(|p| HostPort::new(p, None, None))
                .into_iter()
                .collect();
            pod
        })
}

proptest! {
    #[test]
    fn without_every_pod_is_an_empty_node(
        pods in proptest::collection::vec(arbitrary_pod(), 0..8),
        cpu in 0..5_000i64,
        priority in 0..600i32,
        port in proptest::option::of(9100..9103i32),
    ) {
        let mut pods = pods;
        for (i, pod) in pods.iter_mut().enumerate() {
            pod.uid = format!("uid-{i}");
        }
        let candidate = PodDemand {
            requests: list(&[("cpu", cpu), ("nvidia.com/gpu", 1)]),
            host_ports: port.and_then(|p| HostPort::new(p, None, None)).into_iter().collect(),
            priority,
            never_preempts: false,
        };
        let full = node(pods.clone());
        let uids: Vec<&str> = pods.iter().map(|p| p.uid.as_str()).collect();
        prop_assert_eq!(fit(&candidate, &full, &uids), fit(&candidate, &node(Vec::new()), &[]));
        let verdict = fit(&candidate, &full, &[]);
        if verdict.fits && !verdict.preempts.is_empty() {
            let gone: Vec<&str> = pods
                .iter()
                .filter(|p| verdict.preempts.iter().any(|v| v.name == p.name && v.priority == p.priority))
                .map(|p| p.uid.as_str())
                .collect();
            let after = fit(&candidate, &full, &gone);
            prop_assert!(after.fits && after.reasons.is_empty(), "{:?}", after);
            prop_assert!(verdict.preempts.iter().all(|v| v.priority < candidate.priority));
        }
    }
}
