//! Table tests for [`super::compare`]: one case per issue list, the explanations,
//! the input errors and the per-node accessors.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DaemonSetSpec;
use k8s_openapi::api::core::v1::{PodSpec as TemplateSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::*;
use crate::audit::owned::fixtures::{daemonset, node, owner, pod, terminating, waiting};
use crate::audit::report::MissingCause;

fn roster(entries: &[(&str, &str)]) -> Roster {
    Roster::from_entries(
        entries
            .iter()
            .map(|(n, u)| ((*n).to_owned(), (*u).to_owned())),
    )
    .unwrap()
}

/// The DaemonSet with `selector app=agent` and a `disktype=ssd` nodeSelector.
fn ds_with_node_selector() -> DaemonSet {
    let mut ds = daemonset();
    ds.spec = Some(DaemonSetSpec {
        selector: LabelSelector {
            match_labels: Some(BTreeMap::from([("app".into(), "agent".into())])),
            ..LabelSelector::default()
        },
        template: PodTemplateSpec {
            spec: Some(TemplateSpec {
                node_selector: Some(BTreeMap::from([("disktype".into(), "ssd".into())])),
                ..TemplateSpec::default()
            }),
            ..PodTemplateSpec::default()
        },
        ..DaemonSetSpec::default()
    });
    ds
}

fn ssd(mut n: Node) -> Node {
    n.labels = n.labels.iter().chain([("disktype", "ssd")]).collect();
    n
}

#[test]
fn all_clear() {
    let r = roster(&[("n1", "u1"), ("n2", "u2")]);
    let nodes = [node("n1", "u1", "True"), node("n2", "u2", "True")];
    let pods = [pod("a", "p1", Some("n1")), pod("b", "p2", Some("n2"))];
    let report = compare(&r, &daemonset(), &nodes, &pods).unwrap();
    assert_eq!(report.issues, Issues::default());
    assert!(report.is_ok());
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.pods.len(), 2);
}

#[test]
fn each_list_catches_its_case() {
    let r = roster(&[
        ("n1", "u1"),
        ("n2", "u2"),
        ("n3", "u3"),
        ("n4", "u4"),
        ("n5", "u5"),
    ]);
    let nodes = [
        node("n1", "u1", "True"),
        node("n2", "u2-replaced", "True"), // replaced under the same name
        node("n3", "u3", "Unknown"),       // NotReady, pod still ready
        node("n5", "u5", "True"),          // pod not ready
        node("x9", "ux", "True"),          // outside the roster
                                           // n4 absent
    ];
    let pods = [
        pod("a1", "p1", Some("n1")),
        terminating(pod("a1-old", "p1-old", Some("n1"))),
        pod("a2", "p2", Some("n2")),
        pod("a3", "p3", Some("n3")),
        waiting(pod("a5", "p5", Some("n5")), "ImagePullBackOff"),
        pod("ax", "px", Some("x9")),
        waiting(pod("a-none", "p-none", None), "Unschedulable"),
    ];
    let report = compare(&r, &daemonset(), &nodes, &pods).unwrap();
    let expected = Issues {
        node_identity_mismatch: vec!["n2".into(), "n4".into()],
        node_not_ready: vec!["n3".into()],
        missing_ready: vec!["n4".into(), "n5".into()],
        unexpected_owned_nodes: vec!["x9".into()],
        multiple_pods: vec!["n1".into()],
        unassigned: vec!["p-none".into()],
        unready_pods: vec!["p-none".into(), "p1-old".into(), "p5".into()],
    };
    assert_eq!(report.issues, expected);
    assert_eq!(report.problem_count(), 11);
    assert_eq!(report.exit_code(), 1);
    let n2 = &report.details.node_identity_mismatch["n2"];
    assert_eq!(
        (n2.roster_uid.as_str(), n2.cluster_uid.as_deref()),
        ("u2", Some("u2-replaced"))
    );
    assert_eq!(
        report.details.node_identity_mismatch["n4"].cluster_uid,
        None
    );
    assert_eq!(report.details.node_not_ready["n3"], "Ready=Unknown");
}

#[test]
fn only_owned_pods_count_as_coverage() {
    let r = roster(&[("n1", "u1")]);
    let nodes = [node("n1", "u1", "True")];
    let mut label_only = pod("a", "p1", Some("n1"));
    label_only.metadata.owner_references = crate::model::Owners::default();
    let mut old_uid = pod("b", "p2", Some("n1"));
    old_uid.metadata.owner_references =
        crate::model::Owners::from(vec![owner("DaemonSet", "agent", "old")]);
    let mut replicaset = pod("c", "p3", Some("n1"));
    replicaset.metadata.owner_references =
        crate::model::Owners::from(vec![owner("ReplicaSet", "agent", "ds-uid-1")]);
    let report = compare(&r, &daemonset(), &nodes, &[label_only, old_uid, replicaset]).unwrap();
    assert_eq!(report.issues.missing_ready, ["n1"]);
    assert!(report.pods.is_empty());
    assert!(report.issues.unready_pods.is_empty() && report.issues.multiple_pods.is_empty());
}

#[test]
fn explanations_per_cause() {
    let ds = ds_with_node_selector();
    let r = roster(&[
        ("absent", "u0"),
        ("plain", "u1"),
        ("ssd", "u2"),
        ("bad", "u3"),
    ]);
    let nodes = [
        node("plain", "u1", "True"),
        ssd(node("ssd", "u2", "True")),
        ssd(node("bad", "u3", "True")),
    ];
    let pods = [waiting(pod("a3", "p3", Some("bad")), "CrashLoopBackOff")];
    let report = compare(&r, &ds, &nodes, &pods).unwrap();
    assert_eq!(
        report.issues.missing_ready,
        ["absent", "bad", "plain", "ssd"]
    );
    let e = &report.explanations;
    assert_eq!(e.len(), 4);
    assert_eq!(e["absent"].cause, MissingCause::NodeAbsent);
    assert_eq!(e["plain"].cause, MissingCause::NotEligible);
    assert!(
        e["plain"].message.starts_with("not eligible because "),
        "{}",
        e["plain"].message
    );
    assert!(
        e["plain"].message.contains("disktype"),
        "{}",
        e["plain"].message
    );
    assert!(!e["plain"].reasons.is_empty());
    assert_eq!(e["ssd"].cause, MissingCause::NoPod);
    assert!(
        e["ssd"].message.contains("has not created one"),
        "{}",
        e["ssd"].message
    );
    assert_eq!(e["bad"].cause, MissingCause::PodNotReady);
    assert_eq!(
        e["bad"].message,
        "pod a3 not ready because phase Pending, container agent waiting: CrashLoopBackOff, Ready condition False"
    );
}

#[test]
fn no_pod_explanation_names_a_lookalike_pod() {
    let ds = ds_with_node_selector();
    let r = roster(&[("n1", "u1")]);
    let nodes = [ssd(node("n1", "u1", "True"))];
    let mut orphan = pod("agent-old", "p1", Some("n1"));
    orphan.metadata.owner_references =
        crate::model::Owners::from(vec![owner("DaemonSet", "agent", "old-uid")]);
    let report = compare(&r, &ds, &nodes, &[orphan]).unwrap();
    let message = &report.explanations["n1"].message;
    assert!(message.contains("agent-old"), "{message}");
    assert!(message.contains("old-uid"), "{message}");
}

type InputCase = (&'static str, DaemonSet, Vec<Node>, Vec<Pod>, InputError);

#[test]
fn input_errors() {
    let r = roster(&[("n1", "u1")]);
    let mut no_uid = daemonset();
    no_uid.metadata.uid = None;
    let mut unnamed_node = node("n1", "u1", "True");
    unnamed_node.metadata.name = None;
    let mut uidless_pod = pod("a", "p1", Some("n1"));
    uidless_pod.metadata.uid = None;
    let n = || node("n1", "u1", "True");
    let cases: Vec<InputCase> = vec![
        (
            "ds without uid",
            no_uid,
            vec![n()],
            vec![],
            InputError::DaemonSetIncomplete("uid"),
        ),
        (
            "duplicate node",
            daemonset(),
            vec![n(), n()],
            vec![],
            InputError::DuplicateNode("n1".into()),
        ),
        (
            "node without name",
            daemonset(),
            vec![unnamed_node],
            vec![],
            InputError::NodeWithoutName,
        ),
        (
            "duplicate pod uid",
            daemonset(),
            vec![n()],
            vec![pod("a", "p1", Some("n1")), pod("b", "p1", Some("n1"))],
            InputError::DuplicatePodUid("p1".into()),
        ),
        (
            "owned pod without uid",
            daemonset(),
            vec![n()],
            vec![uidless_pod],
            InputError::OwnedPodWithoutUid("a".into()),
        ),
    ];
    for (name, ds, nodes, pods, expected) in cases {
        assert_eq!(
            compare(&r, &ds, &nodes, &pods).unwrap_err(),
            expected,
            "{name}"
        );
    }
}

#[test]
fn node_status_accessors() {
    let r = roster(&[("n1", "u1"), ("n2", "u2")]);
    let nodes = [node("n1", "u1", "True"), node("x", "ux", "True")];
    let pods = [
        pod("a", "p1", Some("n1")),
        pod("b", "p2", Some("x")),
        pod("c", "p3", Some("x")),
    ];
    let report = compare(&r, &daemonset(), &nodes, &pods).unwrap();
    assert!(!report.node_status("n1").has_problem());
    assert!(report.node_status("n1").on_roster);
    let n2 = report.node_status("n2");
    assert!(n2.mismatched && n2.missing && !n2.unexpected && !n2.not_ready);
    let x = report.node_status("x");
    assert!(x.unexpected && x.multiple && !x.on_roster && !x.missing);
    assert!(report.is_missing("n2") && report.is_mismatched("n2") && report.is_unexpected("x"));
    assert_eq!(report.pods_on("x").len(), 2);
    assert_eq!(report.pods_on("n1").len(), 1);
    assert!(report.pods_on("n2").is_empty() && report.pods_on("a").is_empty());
    assert_eq!(report.pod("p1").map(|p| p.name.as_str()), Some("a"));
}

#[test]
fn json_shape() {
    let r = roster(&[("n1", "u1"), ("n2", "u2")]);
    let nodes = [node("n1", "u1", "True")];
    let pods = [pod("a", "p1", Some("n1"))];
    let json = compare(&r, &daemonset(), &nodes, &pods).unwrap().to_json();
    let expected = serde_json::json!({
        "ok": false,
        "problems": 2,
        "daemonset": {"namespace": "kube-system", "name": "agent", "uid": "ds-uid-1"},
        "roster": {"n1": "u1", "n2": "u2"},
        "pods": [{
            "name": "a", "uid": "p1", "node": "n1", "phase": "Running",
            "ready": true, "terminating": false, "revision_hash": "5d4f6b7c8"
        }],
        "issues": {
            "node_identity_mismatch": ["n2"],
            "node_not_ready": [],
            "missing_ready": ["n2"],
            "unexpected_owned_nodes": [],
            "multiple_pods": [],
            "unassigned": [],
            "unready_pods": []
        },
        "explanations": {
            "n2": {"cause": "node_absent", "message": "no pod because no node of this name is in the cluster"}
        },
        "details": {
            "node_identity_mismatch": {"n2": {"roster_uid": "u2", "cluster_uid": null}},
            "node_not_ready": {}
        }
    });
    assert_eq!(json, expected);
}

/// A fleet of `n` ready nodes with one pod each, except: every 100th node has
/// no pod, and every 250th has its pod not ready.
fn fleet(n: usize) -> (Roster, Vec<Node>, Vec<Pod>) {
    let names: Vec<String> = (0..n).map(|i| format!("node-{i:05}")).collect();
    let r = Roster::from_entries(names.iter().map(|nm| (nm.clone(), format!("uid-{nm}")))).unwrap();
    let nodes = names
        .iter()
        .map(|nm| node(nm, &format!("uid-{nm}"), "True"))
        .collect();
    let mut pods = Vec::new();
    for (i, nm) in names.iter().enumerate() {
        if i % 100 == 0 {
            continue;
        }
        let p = pod(&format!("agent-{i}"), &format!("pod-{i:05}"), Some(nm));
        pods.push(if i % 250 == 0 {
            waiting(p, "CrashLoopBackOff")
        } else {
            p
        });
    }
    (r, nodes, pods)
}

#[test]
fn everyday_fleet_of_5000_nodes() {
    let (r, nodes, pods) = fleet(5000);
    let report = compare(&r, &daemonset(), &nodes, &pods).unwrap();
    // 50 without a pod + 10 (every 250th not on a 100th) with an unready pod.
    assert_eq!(report.issues.missing_ready.len(), 60);
    assert_eq!(report.issues.unready_pods.len(), 10);
    assert_eq!(report.explanations.len(), 60);
    assert_eq!(report.problem_count(), 70);
    assert_eq!(report.pods.len(), 4950);
}
