use super::*;
use crate::engine::eligibility::NodeVerdict;
use crate::engine::fixtures::at;

const MINUTE: Duration = Duration::from_secs(60);

fn policy() -> GatePolicy {
    GatePolicy {
        soak: MINUTE,
        timeout: 5 * MINUTE,
        min_ready_seconds: 10,
    }
}

/// A pod row at the current revision, Ready since `T0 + ready_at`.
fn new_pod(uid: &str, ready_at: Option<i64>) -> PodCoverage {
    PodCoverage {
        name: format!("pod-{uid}").into(),
        uid: uid.into(),
        hash: Some("new".into()),
        revision: Some(2),
        updated: true,
        phase: Some("Running".into()),
        ready: ready_at.is_some(),
        available: ready_at.is_some(),
        terminating: false,
        restarts: 0,
        problem: None,
        failure_detail: None,
        created: Some(at(0).into()),
        ready_since: ready_at.map(|seconds| at(seconds).into()),
    }
}

fn member(pods: Vec<PodCoverage>) -> BatchMember {
    BatchMember {
        node: "n1".into(),
        started: at(0),
        pod_uid_deleted: "old".into(),
        restarts_at_start: 0,
        new_pod_uid: None,
        coverage: NodeCoverage {
            node: "n1".into(),
            verdict: NodeVerdict::eligible(),
            pods,
        },
    }
}

fn old_terminating() -> PodCoverage {
    PodCoverage {
        uid: "old".into(),
        updated: false,
        terminating: true,
        hash: Some("old".into()),
        revision: Some(1),
        ..new_pod("old", Some(0))
    }
}

fn failed(reason: GateFailure) -> GateVerdict {
    GateVerdict::Failed {
        node: "n1".into(),
        reason,
    }
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one table of named cases reads best in one place"
)]
fn gate_table() {
    let with = |edit: fn(&mut PodCoverage)| {
        let mut p = new_pod("new", Some(20));
        edit(&mut p);
        member(vec![p])
    };
    // (name, member, now offset, expected)
    let cases: Vec<(&str, BatchMember, i64, GateVerdict)> = vec![
        (
            "passes after ready, available and soaked",
            member(vec![new_pod("new", Some(20))]),
            81,
            GateVerdict::Passed,
        ),
        (
            "soak not over yet",
            member(vec![new_pod("new", Some(20))]),
            79,
            GateVerdict::Waiting {
                waiting: vec![("n1".into(), WaitingFor::Soak { until: at(80) })],
            },
        ),
        (
            "ready but within min ready seconds",
            member(vec![new_pod("new", Some(20))]),
            30,
            GateVerdict::Waiting {
                waiting: vec![("n1".into(), WaitingFor::Available { at: at(30) })],
            },
        ),
        (
            "old pod still terminating, no replacement yet",
            member(vec![old_terminating()]),
            10,
            GateVerdict::Waiting {
                waiting: vec![("n1".into(), WaitingFor::ReplacementPod)],
            },
        ),
        (
            "no replacement within the timeout",
            member(vec![]),
            301,
            failed(GateFailure::NotReadyInTime {
                waited_seconds: 301,
            }),
        ),
        (
            "not ready yet",
            member(vec![new_pod("new", None)]),
            100,
            GateVerdict::Waiting {
                waiting: vec![("n1".into(), WaitingFor::Ready { deadline: at(300) })],
            },
        ),
        (
            "not ready within the timeout",
            member(vec![new_pod("new", None)]),
            301,
            failed(GateFailure::NotReadyInTime {
                waited_seconds: 301,
            }),
        ),
        (
            "crash loop fails at once",
            with(|p| {
                p.ready = false;
                p.problem = Some("CrashLoopBackOff".into());
            }),
            30,
            failed(GateFailure::Failing {
                reason: "CrashLoopBackOff".into(),
                detail: None,
            }),
        ),
        (
            "image pull fails at once",
            with(|p| {
                p.ready = false;
                p.problem = Some("ErrImagePull".into());
            }),
            30,
            failed(GateFailure::Failing {
                reason: "ErrImagePull".into(),
                detail: None,
            }),
        ),
        // Upstream leaves an unschedulable pod Pending for ever: waiting out
        // the Ready timeout would only delay the same answer.
        (
            "an unschedulable replacement fails at once, in the scheduler's words",
            with(|p| {
                p.ready = false;
                p.phase = Some("Pending".into());
                p.ready_since = None;
                p.problem = Some("Unschedulable".into());
                p.failure_detail = Some("0/3 nodes are available: 1 Insufficient cpu.".into());
            }),
            5,
            failed(GateFailure::Failing {
                reason: "Unschedulable".into(),
                detail: Some("0/3 nodes are available: 1 Insufficient cpu.".into()),
            }),
        ),
        (
            "an evicted replacement fails at once, in the kubelet's words",
            with(|p| {
                p.ready = false;
                p.phase = Some("Failed".into());
                p.problem = Some("Evicted".into());
                p.failure_detail = Some("The node was low on resource: memory.".into());
            }),
            30,
            failed(GateFailure::Failing {
                reason: "Evicted".into(),
                detail: Some("The node was low on resource: memory.".into()),
            }),
        ),
        (
            "a sandbox that cannot be created fails at once, in the kubelet's words",
            with(|p| {
                p.ready = false;
                p.phase = Some("Pending".into());
                p.problem = Some("FailedCreatePodSandBox".into());
                p.failure_detail = Some("Failed to create pod sandbox: rpc error".into());
            }),
            30,
            failed(GateFailure::Failing {
                reason: "FailedCreatePodSandBox".into(),
                detail: Some("Failed to create pod sandbox: rpc error".into()),
            }),
        ),
        (
            "a restart during soak fails",
            with(|p| p.restarts = 1),
            50,
            failed(GateFailure::Restarted { restarts: 1 }),
        ),
        (
            "failed phase fails",
            with(|p| {
                p.ready = false;
                p.phase = Some("Failed".into());
            }),
            30,
            failed(GateFailure::Failing {
                reason: "Failed".into(),
                detail: None,
            }),
        ),
        (
            "replaced by a pod of another revision",
            with(|p| {
                p.updated = false;
                p.revision = Some(1);
            }),
            30,
            failed(GateFailure::ReplacedByOther {
                pod: "pod-new".into(),
                revision: Some(1),
            }),
        ),
    ];
    for (name, m, now, expected) in cases {
        assert_eq!(gate(&[m], at(now), &policy()), expected, "{name}");
    }
}

#[test]
fn recorded_replacement_that_vanished_is_pod_gone() {
    let mut m = member(vec![]);
    m.new_pod_uid = Some("new".into());
    assert_eq!(
        gate(&[m.clone()], at(30), &policy()),
        failed(GateFailure::PodGone { uid: "new".into() })
    );
    let mut other = new_pod("other", Some(20));
    other.updated = false;
    other.revision = Some(1);
    m.coverage.pods = vec![other];
    assert_eq!(
        gate(&[m], at(30), &policy()),
        failed(GateFailure::ReplacedByOther {
            pod: "pod-other".into(),
            revision: Some(1)
        })
    );
}

#[test]
fn restarts_count_from_the_baseline() {
    let mut p = new_pod("new", Some(20));
    p.restarts = 2;
    let mut m = member(vec![p]);
    m.restarts_at_start = 2;
    assert_eq!(gate(&[m], at(81), &policy()), GateVerdict::Passed);
}

#[test]
fn batch_waits_for_all_and_fails_on_any() {
    let ok = member(vec![new_pod("a", Some(0))]);
    let mut slow = member(vec![new_pod("b", None)]);
    slow.node = "n2".into();
    let verdict = gate(&[ok.clone(), slow.clone()], at(100), &policy());
    assert_eq!(
        verdict,
        GateVerdict::Waiting {
            waiting: vec![("n2".into(), WaitingFor::Ready { deadline: at(300) })]
        }
    );
    let mut broken = new_pod("c", None);
    broken.problem = Some("ImagePullBackOff".into());
    let mut bad = member(vec![broken]);
    bad.node = "n3".into();
    assert!(
        matches!(gate(&[ok.clone(), slow, bad], at(100), &policy()), GateVerdict::Failed { node, .. } if node == "n3")
    );
    assert_eq!(gate(&[ok], at(100), &policy()), GateVerdict::Passed);
    assert_eq!(gate(&[], at(0), &policy()), GateVerdict::Passed);
}
