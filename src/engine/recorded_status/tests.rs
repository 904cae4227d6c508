use k8s_openapi::api::apps::v1::DaemonSetStatus;

use super::*;
use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};

const OLD: &str = "h1";
const NEW: &str = "h2";

/// `kube-system/agent` at revision 2 (hash `NEW`, revision 1 `OLD`),
/// generation 2, whose status records `counts` for generation 2.
fn ds(counts: [i32; 5]) -> (DaemonSet, Vec<ControllerRevision>) {
    let mut ds = daemonset("agent:2").build();
    ds.metadata.generation = Some(2);
    let [desired, current, updated, ready, available] = counts;
    ds.status = Some(DaemonSetStatus {
        desired_number_scheduled: desired,
        current_number_scheduled: current,
        updated_number_scheduled: Some(updated),
        number_ready: ready,
        number_available: Some(available),
        observed_generation: Some(2),
        ..DaemonSetStatus::default()
    });
    let mut old = daemonset("agent:1").build();
    old.metadata.generation = Some(1);
    let revisions = vec![revision_of(&old, OLD, 1), revision_of(&ds, NEW, 2)];
    (ds, revisions)
}

fn ready(name: &str, on: &str, hash: &str) -> Pod {
    pod(name, on, hash).ready_since(10).build()
}

fn nodes(names: &[&str]) -> Vec<Node> {
    names.iter().map(|n| node(n).build()).collect()
}

fn codes(check: &StatusCheck) -> Vec<ReasonCode> {
    check.reasons.iter().map(|r| r.code).collect()
}

#[test]
fn a_steady_dump_agrees_and_says_nothing() {
    let (ds, revisions) = ds([2, 2, 2, 2, 2]);
    let pods = vec![ready("a-1", "n1", NEW), ready("a-2", "n2", NEW)];
    let check = check(&ds, &nodes(&["n1", "n2"]), &pods, &revisions, at(100)).expect("status");
    assert_eq!(check.actual, check.recorded);
    assert!(!check.differs());
    assert_eq!(check.reasons, Vec::new());
    assert_eq!(check.difference(), None);
}

/// One case: name, the dump's nodes, its pods, the counts they give, the
/// reasons found and how the message ends.
type Case<'a> = (
    &'a str,
    &'a [&'a str],
    Vec<Pod>,
    [i32; 5],
    Vec<ReasonCode>,
    &'a str,
);

#[test]
fn differences_and_their_reasons() {
    let two = ["n1", "n2"];
    let cases: Vec<Case> = vec![
        (
            "missing pod",
            &two,
            vec![ready("a-1", "n1", NEW)],
            [2, 1, 1, 1, 1],
            vec![ReasonCode::MissingPod],
            "no pod on 1 eligible node (n2)",
        ),
        (
            "pod on a node the dump lacks",
            &["n1"],
            vec![ready("a-1", "n1", NEW), ready("a-2", "n2", NEW)],
            [1, 1, 1, 1, 1],
            vec![ReasonCode::PodOnAbsentNode],
            "pods on 1 node absent from the dump (n2)",
        ),
        (
            "not ready",
            &two,
            vec![
                ready("a-1", "n1", NEW),
                pod("a-2", "n2", NEW).running_not_ready(10).build(),
            ],
            [2, 2, 2, 1, 1],
            vec![ReasonCode::NotReady],
            "1 pod not Ready (n2)",
        ),
    ];
    for (name, node_names, pods, actual, expected, message) in cases {
        let (ds, revisions) = ds([2, 2, 2, 2, 2]);
        let check = check(&ds, &nodes(node_names), &pods, &revisions, at(100)).expect(name);
        let [desired, current, updated, ready, available] = actual;
        let actual = StatusCounts {
            desired,
            current,
            updated,
            ready,
            available,
        };
        assert_eq!(check.actual, actual, "{name}");
        assert_eq!(codes(&check), expected, "{name}");
        let difference = check.difference().expect(name);
        assert!(
            difference.message.ends_with(message),
            "{name}: {difference:?}"
        );
    }
}

#[test]
fn the_message_names_desired_ready_and_the_counts_that_say_more() {
    let (ds, revisions) = ds([2, 2, 2, 2, 2]);
    let pods = vec![
        ready("a-1", "n1", NEW),
        pod("a-2", "n2", NEW).running_not_ready(10).build(),
    ];
    let check = check(&ds, &nodes(&["n1", "n2"]), &pods, &revisions, at(100)).expect("status");
    assert_eq!(
        check.difference().expect("differs").message,
        "the dump's status records desired 2, ready 2; its nodes and pods give desired 2, ready 1: 1 pod not Ready (n2)"
    );
}

#[test]
fn a_dump_mid_rollout_agrees_but_keeps_its_reason() {
    let (ds, revisions) = ds([2, 2, 1, 2, 2]);
    let pods = vec![ready("a-1", "n1", NEW), ready("a-2", "n2", OLD)];
    let check = check(&ds, &nodes(&["n1", "n2"]), &pods, &revisions, at(100)).expect("status");
    assert!(!check.differs());
    assert_eq!(codes(&check), [ReasonCode::OldRevision]);
    assert_eq!(
        check.reasons[0].message,
        "mid-rollout: 1 node on an older revision (n2)"
    );
}

#[test]
fn a_stale_or_unexplained_status_is_named() {
    let (mut ds, revisions) = ds([3, 3, 3, 3, 3]);
    let pods = vec![ready("a-1", "n1", NEW), ready("a-2", "n2", NEW)];
    let two = nodes(&["n1", "n2"]);
    let check_now = |ds: &DaemonSet| check(ds, &two, &pods, &revisions, at(100)).expect("status");
    assert_eq!(codes(&check_now(&ds)), [ReasonCode::Unexplained]);
    ds.metadata.generation = Some(3);
    assert_eq!(codes(&check_now(&ds)), [ReasonCode::StaleStatus]);
    // An export without pods says nothing about them: nothing to compare.
    assert_eq!(check(&ds, &two, &[], &revisions, at(100)), None);
    ds.status = None;
    assert_eq!(check(&ds, &two, &pods, &revisions, at(100)), None);
}

#[test]
fn many_nodes_are_counted_and_the_first_named() {
    let names: Vec<String> = (1..=8).map(|i| format!("n{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (ds, revisions) = ds([8, 8, 8, 8, 8]);
    let elsewhere = vec![ready("b-1", "m1", NEW)];
    let check = check(&ds, &nodes(&refs), &elsewhere, &revisions, at(100)).expect("status");
    let missing = &check.reasons[0];
    assert_eq!((missing.code, missing.count), (ReasonCode::MissingPod, 8));
    assert_eq!(missing.nodes, ["n1", "n2", "n3", "n4", "n5"]);
    assert!(
        missing.message.ends_with("(n1, n2, n3, n4, n5, 3 more)"),
        "{missing:?}"
    );
}

#[test]
fn a_rehearsal_compares_its_live_counts_with_the_record() {
    let (mut ds, revisions) = ds([2, 2, 2, 2, 2]);
    let pods = vec![ready("a-1", "n1", NEW)];
    let check = check(&ds, &nodes(&["n1", "n2"]), &pods, &revisions, at(100)).expect("status");
    let record = check.load_record(Some(2));
    ds.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(ANNOTATION.to_owned(), record);
    let live = |ready: i32| StatusCounts {
        desired: 2,
        current: 2,
        updated: 2,
        ready,
        available: ready,
    };
    assert_eq!(
        rehearsal_difference(&ds, live(2)),
        None,
        "agrees: nothing said"
    );
    let difference = rehearsal_difference(&ds, live(1)).expect("differs");
    assert_eq!(
        difference.message,
        "the dump recorded desired 2, ready 2; rehearsal has desired 2, ready 1: no pod on 1 eligible node (n2)"
    );
    // Once the template changes, the rollout is the rehearsal's own.
    ds.metadata.generation = Some(3);
    assert_eq!(rehearsal_difference(&ds, live(1)), None);
}

#[test]
fn a_record_without_reasons_says_the_rehearsal_changed() {
    let (mut ds, _) = ds([2, 2, 2, 2, 2]);
    let annotations = ds.metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert(
        ANNOTATION.to_owned(),
        r#"{"recorded":{"desired":2,"current":2,"updated":2,"ready":2,"available":2}}"#.to_owned(),
    );
    let live = StatusCounts {
        desired: 2,
        current: 2,
        updated: 1,
        ready: 2,
        available: 2,
    };
    let difference = rehearsal_difference(&ds, live).expect("differs");
    assert_eq!(difference.reasons[0].code, ReasonCode::ChangedSinceLoad);
    // Anyone may write annotations: a malformed one is ignored.
    if let Some(annotations) = ds.metadata.annotations.as_mut() {
        annotations.insert(ANNOTATION.to_owned(), "{not json".to_owned());
    }
    assert_eq!(rehearsal_difference(&ds, live), None);
}

#[test]
fn counts_that_follow_another_on_both_sides_are_not_repeated() {
    let counts = |c: [i32; 5]| StatusCounts {
        desired: c[0],
        current: c[1],
        updated: c[2],
        ready: c[3],
        available: c[4],
    };
    let cases = [
        ("all move together", [2; 5], [1; 5], vec![0, 3]),
        ("a pod missing", [2; 5], [2, 1, 1, 1, 1], vec![0, 1, 3]),
        (
            "a rollout moved on",
            [5, 5, 3, 5, 5],
            [5, 5, 4, 5, 5],
            vec![0, 2, 3],
        ),
        (
            "ready, not available",
            [2; 5],
            [2, 2, 2, 2, 1],
            vec![0, 3, 4],
        ),
    ];
    for (name, recorded, actual, expected) in cases {
        assert_eq!(
            shown_counts(counts(recorded), counts(actual)),
            expected,
            "{name}"
        );
    }
}
