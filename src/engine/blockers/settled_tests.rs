//! A DaemonSet with no node on an old revision has nothing to roll out,
//! whatever its strategy and budget and however many of its nodes are
//! unavailable: the rollout is complete and an unavailable node is a problem
//! of that node, named, but no rollout state (issue 30 item 3: flannel and
//! Calico, maxUnavailable=1, showed `stuck` behind a NotReady node; aws-node,
//! maxUnavailable=10%, showed `rolling`).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{BlockerCode, rollout_blocker};
use crate::engine::coverage::{NodeCoverage, node_coverage};
use crate::engine::fixtures::{PodBuilder, at, daemonset, node, pod, revision_of};
use crate::engine::revision::RevisionIndex;
use crate::model::{DaemonSet, Node, Pod};

/// How the pod on the NotReady node is made (`None`: no pod there).
type Step = Option<fn(PodBuilder) -> PodBuilder>;

/// Fourteen nodes, `n06` NotReady, as in the `default` scenario.
const NODES: usize = 14;
const NOT_READY: &str = "n06";

fn names() -> Vec<String> {
    (1..=NODES).map(|i| format!("n{i:02}")).collect()
}

fn nodes() -> Vec<Node> {
    names()
        .iter()
        .map(|name| {
            let builder = node(name);
            if name == NOT_READY {
                builder.not_ready().build()
            } else {
                builder.build()
            }
        })
        .collect()
}

/// Every node on the current revision (`h2`), Ready since T0; the pod on
/// the NotReady node as `on_not_ready` makes it (`None`: no pod there).
fn pods(on_not_ready: Step) -> Vec<Pod> {
    names()
        .iter()
        .filter_map(|name| {
            let builder = pod(&format!("p-{name}"), name, "h2").ready_since(0);
            if name == NOT_READY {
                on_not_ready.map(|step| step(pod(&format!("p-{name}"), name, "h2")).build())
            } else {
                Some(builder.build())
            }
        })
        .collect()
}

fn rows(ds: &DaemonSet, nodes: &[Node], pods: &[Pod]) -> Vec<NodeCoverage> {
    let revisions = vec![
        revision_of(&daemonset("a:v1").build(), "h1", 1),
        revision_of(ds, "h2", 2),
    ];
    let index = RevisionIndex::new(ds, &revisions);
    nodes
        .iter()
        .map(|n| {
            let on: Vec<&Pod> = pods
                .iter()
                .filter(|p| p.node_name() == Some(n.name()))
                .collect();
            node_coverage(n, ds, &on, &index, at(3600))
        })
        .collect()
}

fn stale_ready(p: PodBuilder) -> PodBuilder {
    // The kubelet stopped reporting: the last status said Ready.
    p.ready_since(0)
}

fn marked_not_ready(p: PodBuilder) -> PodBuilder {
    // The node controller marked the pod's Ready condition False.
    p.created(0).running_not_ready(600)
}

#[test]
fn a_settled_daemonset_with_a_not_ready_node_has_nothing_to_do() {
    let flannel = daemonset("a:v2").build();
    let calico = daemonset("a:v2")
        .rolling(IntOrString::Int(1), IntOrString::Int(0))
        .build();
    let aws_node = daemonset("a:v2")
        .rolling(IntOrString::String("10%".into()), IntOrString::Int(0))
        .build();
    let surge = daemonset("a:v2")
        .rolling(IntOrString::Int(0), IntOrString::Int(1))
        .build();
    let on_delete = daemonset("a:v2").on_delete().build();
    // The last column: the node named as not available (`None`: a pod whose
    // last status says Ready is available, so nothing is named).
    let cases: [(&str, &DaemonSet, Step, Option<&str>); 9] = [
        (
            "RollingUpdate default budget, pod marked not Ready",
            &flannel,
            Some(marked_not_ready),
            Some("n06 (node NotReady)"),
        ),
        (
            "RollingUpdate maxUnavailable=1, pod marked not Ready",
            &calico,
            Some(marked_not_ready),
            Some("n06 (node NotReady)"),
        ),
        (
            "RollingUpdate maxUnavailable=1, stale Ready pod",
            &calico,
            Some(stale_ready),
            None,
        ),
        (
            "RollingUpdate maxUnavailable=1, no pod on the NotReady node",
            &calico,
            None,
            Some("n06 (node NotReady)"),
        ),
        (
            "RollingUpdate maxUnavailable=10%, pod marked not Ready",
            &aws_node,
            Some(marked_not_ready),
            Some("n06 (node NotReady)"),
        ),
        (
            "RollingUpdate maxUnavailable=10%, stale Ready pod",
            &aws_node,
            Some(stale_ready),
            None,
        ),
        (
            "RollingUpdate maxSurge=1, pod marked not Ready",
            &surge,
            Some(marked_not_ready),
            Some("n06 (node NotReady)"),
        ),
        (
            "OnDelete, pod marked not Ready",
            &on_delete,
            Some(marked_not_ready),
            Some("n06 (node NotReady)"),
        ),
        (
            "OnDelete, no pod on the NotReady node",
            &on_delete,
            None,
            Some("n06 (node NotReady)"),
        ),
    ];
    let nodes = nodes();
    for (name, ds, on_not_ready, named) in cases {
        let pods = pods(on_not_ready);
        let blocker = rollout_blocker(ds, &rows(ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(
            blocker.code,
            BlockerCode::NothingToDo,
            "{name}: {blocker:?}"
        );
        assert!(!blocker.is_blocking(), "{name}");
        let done = "nothing to do: every node runs the current revision";
        let listed: Vec<&str> = blocker.nodes.iter().map(|n| n.node.as_str()).collect();
        if let Some(named) = named {
            assert_eq!(
                blocker.message,
                format!("{done}; 1 node(s) not available: {named}"),
                "{name}"
            );
            assert_eq!(listed, [NOT_READY], "{name}");
        } else {
            assert_eq!(blocker.message, done, "{name}");
            assert!(listed.is_empty(), "{name}");
        }
    }
}

#[test]
fn a_settled_daemonset_with_every_node_ready_says_only_that() {
    let ds = daemonset("a:v2")
        .rolling(IntOrString::String("10%".into()), IntOrString::Int(0))
        .build();
    let nodes: Vec<Node> = names().iter().map(|n| node(n).build()).collect();
    let pods = pods(Some(stale_ready));
    let blocker = rollout_blocker(&ds, &rows(&ds, &nodes, &pods), &nodes, at(3600));
    assert_eq!(blocker.code, BlockerCode::NothingToDo);
    assert_eq!(
        blocker.message,
        "nothing to do: every node runs the current revision"
    );
    assert!(blocker.nodes.is_empty());
}

#[test]
fn the_last_pods_waiting_out_min_ready_seconds_beside_a_not_ready_node() {
    // minReadySeconds is the last step of the rollout: the new pods that
    // will be available by themselves are waited for; the NotReady node is
    // not one of them and is not named.
    let ds = daemonset("a:v2").min_ready_seconds(30).build();
    let nodes = nodes();
    let mut pods = pods(Some(marked_not_ready));
    let last = pods.iter_mut().find(|p| p.node_name() == Some("n01"));
    *last.expect("a pod on n01") = pod("p-n01", "n01", "h2").ready_since(3590).build();
    let blocker = rollout_blocker(&ds, &rows(&ds, &nodes, &pods), &nodes, at(3600));
    assert_eq!(
        blocker.code,
        BlockerCode::WaitingForMinReadySeconds,
        "{blocker:?}"
    );
    assert_eq!(
        blocker.message,
        "waiting for minReadySeconds: n01 (Ready, not yet available (minReadySeconds))"
    );
}

#[test]
fn an_old_node_behind_a_not_ready_node_is_still_stuck() {
    // One node left on the old revision: the rollout is not complete, and
    // the NotReady node's new pod holds the only maxUnavailable slot.
    let ds = daemonset("a:v2").build();
    let nodes = nodes();
    let mut pods = pods(Some(marked_not_ready));
    let old = pods.iter_mut().find(|p| p.node_name() == Some("n01"));
    *old.expect("a pod on n01") = pod("p-n01", "n01", "h1").ready_since(0).build();
    let blocker = rollout_blocker(&ds, &rows(&ds, &nodes, &pods), &nodes, at(3600));
    assert_eq!(
        blocker.code,
        BlockerCode::MaxUnavailableSpent,
        "{blocker:?}"
    );
    assert_eq!(
        blocker.message,
        "rolling update stopped at 1 old node(s): maxUnavailable=1 is spent by \
         n06 (node NotReady)"
    );
}
