//! Why a rollout is not moving, in words and as a code: the RollingUpdate
//! budget spent (and which nodes hold its slots, and why), pods stuck
//! terminating on unreachable nodes, `minReadySeconds`, an OnDelete DaemonSet
//! waiting for an operator, or nothing left to do. The header, the plan
//! overlay, `status` and `auto`'s messages all show this one answer.
//!
//! Pure: reads coverage rows, the nodes, the DaemonSet's strategy and `now`
//! (a pod starting for longer than [`READY_TIMEOUT`] no longer counts as on
//! its way); the budget is upstream `rollingUpdate`'s (see [`super::rolling`]).

mod tally;

use std::collections::BTreeMap;

use serde::Serialize;

use jiff::Timestamp;
pub use tally::{BlockerTally, Course, Holder, Share};

use super::coverage::{NodeCoverage, PodCoverage};
use super::health::{PodHealth, READY_TIMEOUT, UNSCHEDULABLE, pod_health};
use super::rolling::{RollingBudget, UpdateStrategy, rolling_budget, update_strategy};
use crate::model::{DaemonSet, Node};

/// The kind of blocker, stable for scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BlockerCode {
    /// No node the DaemonSet runs on is on an old revision: the rollout is
    /// complete. Nodes that are not available (NotReady, a failing pod) are
    /// named in the message and `nodes`, as problems of theirs, not of the
    /// rollout.
    NothingToDo,
    /// RollingUpdate: the pods allowed to be unavailable at once already
    /// are, and enough of them will not become available by themselves.
    MaxUnavailableSpent,
    /// RollingUpdate with surge: the surge slots are held by new pods enough
    /// of which will not become available by themselves.
    MaxSurgeSpent,
    /// Old pods are stuck terminating on nodes that are not Ready.
    StuckTerminating,
    /// New pods are Ready but not yet available for `minReadySeconds`.
    WaitingForMinReadySeconds,
    /// OnDelete: nothing moves until someone advances nodes.
    WaitingForOperator,
    /// RollingUpdate: the controller is replacing pods within its budget
    /// (which may be in use by pods on their way to available).
    Progressing,
    /// The rollout is paused (set by the operations layer).
    Paused,
}

/// One node that holds the rollout up, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockingNode {
    /// The node.
    pub node: String,
    /// Why it holds a slot (`node NotReady`, `pod Pending`, `CrashLoopBackOff: …`).
    pub why: String,
}

/// Why the rollout is (not) moving.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Blocker {
    /// The kind.
    pub code: BlockerCode,
    /// The whole answer in words, naming the nodes (API text: sanitise to print).
    pub message: String,
    /// The nodes behind it.
    pub nodes: Vec<BlockingNode>,
}

impl Blocker {
    fn new(code: BlockerCode, message: String, nodes: Vec<BlockingNode>) -> Self {
        Self {
            code,
            message,
            nodes,
        }
    }

    /// Whether the rollout is held up (anything but progressing or done).
    pub fn is_blocking(&self) -> bool {
        !matches!(
            self.code,
            BlockerCode::NothingToDo | BlockerCode::Progressing
        )
    }
}

/// Why a Ready pod holds a slot: it waits out `minReadySeconds`.
const WAITING_MIN_READY: &str = "Ready, not yet available (minReadySeconds)";

/// Names at most a few nodes with their reasons.
fn list(nodes: &[BlockingNode]) -> String {
    let mut parts: Vec<String> = nodes
        .iter()
        .take(3)
        .map(|n| format!("{} ({})", n.node, n.why))
        .collect();
    if nodes.len() > 3 {
        parts.push(format!("{} more", nodes.len() - 3));
    }
    parts.join(", ")
}

/// Why the node's pod is not available, in words, and whether it is on its
/// way (`node_ready`: the node's Ready condition, `None` when unknown).
fn why_unavailable(pod: Option<&PodCoverage>, node_ready: Option<bool>) -> Holder {
    let holder = |why: &'static str, course| Holder {
        why: why.into(),
        course,
    };
    if node_ready == Some(false) {
        return holder("node NotReady", Course::Stalled);
    }
    let Some(pod) = pod else {
        // The controller creates it at its next sync.
        return holder("no daemon pod", Course::Moving);
    };
    match pod_health(pod) {
        // A replacement the scheduler cannot place stays Pending for ever
        // (upstream retries it, but nothing changes until room is made):
        // named with the scheduler's words.
        PodHealth::Failing { reason, detail } if reason == UNSCHEDULABLE => Holder {
            why: detail
                .map_or_else(
                    || "pod Pending, unschedulable".to_owned(),
                    |d| format!("pod Pending, unschedulable: {d}"),
                )
                .into(),
            course: Course::Stalled,
        },
        PodHealth::Failing { reason, .. } => Holder {
            why: reason.into(),
            course: Course::Stalled,
        },
        PodHealth::Gone => holder("pod terminating", Course::Moving),
        PodHealth::Ready => holder(WAITING_MIN_READY, Course::Moving),
        PodHealth::Progressing => {
            let why = match pod.phase.as_deref() {
                Some("Pending") | None => "pod Pending",
                _ => "pod not Ready",
            };
            let course = pod
                .ready_since
                .or(pod.created)
                .and_then(|since| since.timestamp().checked_add(READY_TIMEOUT).ok())
                .map_or(Course::Moving, Course::StartingUntil);
            holder(why, course)
        }
    }
}

/// Why the rollout of `ds` over `rows` is not moving (or that it is) at
/// `now`, from the nodes' Ready conditions as given by `node_ready`.
pub fn rollout_blocker(
    ds: &DaemonSet,
    rows: &[NodeCoverage],
    nodes: &[Node],
    now: Timestamp,
) -> Blocker {
    let ready: BTreeMap<&str, bool> = nodes.iter().map(|n| (n.name(), n.is_ready())).collect();
    rollout_blocker_with(
        ds,
        rows.iter()
            .map(|r| (r, ready.get(r.node.as_str()).copied())),
        now,
    )
}

/// [`rollout_blocker`] over rows paired with their node's Ready condition
/// (the console's row cache holds both).
pub fn rollout_blocker_with<'a>(
    ds: &DaemonSet,
    rows: impl IntoIterator<Item = (&'a NodeCoverage, Option<bool>)>,
    now: Timestamp,
) -> Blocker {
    BlockerTally::of(rows).blocker(ds, now)
}

impl BlockerTally {
    /// Why the rollout of `ds` is not moving (or that it is) at `now`, from
    /// the summed shares of its nodes: what [`rollout_blocker`] answers over
    /// the same rows.
    pub fn blocker(&self, ds: &DaemonSet, now: Timestamp) -> Blocker {
        let outdated = self.outdated;
        if outdated == 0
            && (self.stuck.is_empty()
                || self.unavailable.values().all(Holder::is_waiting_min_ready))
        {
            return self.settled(now);
        }
        if !self.stuck.is_empty() {
            let stuck = tally::nodes(&self.stuck);
            return Blocker::new(
                BlockerCode::StuckTerminating,
                format!(
                    "{} pod(s) stuck terminating on unreachable nodes: {}",
                    stuck.len(),
                    list(&stuck)
                ),
                stuck,
            );
        }
        if outdated == 0 {
            return self.settled(now);
        }
        match update_strategy(ds) {
            UpdateStrategy::OnDelete => Blocker::new(
                BlockerCode::WaitingForOperator,
                format!("{outdated} node(s) on old revisions wait for an operator (OnDelete)"),
                Vec::new(),
            ),
            UpdateStrategy::RollingUpdate { .. } => {
                let desired = i32::try_from(self.eligible).unwrap_or(i32::MAX);
                match rolling_budget(ds, desired) {
                    Ok(Some(budget)) => self.rolling_blocker(&budget, now),
                    Ok(None) => {
                        Blocker::new(BlockerCode::Progressing, "rolling".to_owned(), Vec::new())
                    }
                    Err(err) => Blocker::new(
                        BlockerCode::MaxUnavailableSpent,
                        format!("the controller cannot roll: {err}"),
                        Vec::new(),
                    ),
                }
            }
        }
    }

    /// No live pod on an old revision: the rollout is over, whatever the
    /// strategy and budget. New pods Ready but not yet available wait out
    /// `minReadySeconds` (the last step of the rollout); any other unavailable
    /// node (NotReady, a failing or starting pod, no pod yet) is a problem of
    /// that node, named in the message but no rollout state: there is nothing
    /// left for the controller or an operator to replace.
    fn settled(&self, now: Timestamp) -> Blocker {
        let waiting = tally::holders(&self.unavailable, now, Holder::is_waiting_min_ready);
        if !waiting.is_empty() {
            return Blocker::new(
                BlockerCode::WaitingForMinReadySeconds,
                format!("waiting for minReadySeconds: {}", list(&waiting)),
                waiting,
            );
        }
        let unavailable = tally::holders(&self.unavailable, now, |_| true);
        let done = "nothing to do: every node runs the current revision";
        let message = if unavailable.is_empty() {
            done.to_owned()
        } else {
            format!(
                "{done}; {} node(s) not available: {}",
                unavailable.len(),
                list(&unavailable)
            )
        };
        Blocker::new(BlockerCode::NothingToDo, message, unavailable)
    }

    /// RollingUpdate: is a budget spent, and does it free by itself. The
    /// controller replaces pods only while fewer slots are held than the
    /// budget (upstream `rollingUpdate`), so a spent budget is the normal
    /// state of a rollout in progress; it is stuck only when the holders
    /// that will not become available (node NotReady, pod failing, or
    /// starting for longer than [`READY_TIMEOUT`]) fill the budget alone.
    fn rolling_blocker(&self, budget: &RollingBudget, now: Timestamp) -> Blocker {
        let outdated = self.outdated;
        let surge = budget.max_surge > 0;
        let (slots, limit) = if surge {
            (&self.surging, budget.max_surge)
        } else {
            (&self.unavailable, budget.max_unavailable)
        };
        let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        if count(slots.len()) < limit {
            return Blocker::new(
                BlockerCode::Progressing,
                format!(
                    "rolling: the controller is replacing pods ({outdated} node(s) on old revisions)"
                ),
                Vec::new(),
            );
        }
        let stalled = tally::holders(slots, now, |h| h.course.is_stalled(now));
        if count(stalled.len()) >= limit {
            let (code, message) = if surge {
                (
                    BlockerCode::MaxSurgeSpent,
                    format!(
                        "rolling update stopped at {outdated} old node(s): all {limit} maxSurge slot(s) are held by new pods that do not become available: {}",
                        list(&stalled)
                    ),
                )
            } else {
                (
                    BlockerCode::MaxUnavailableSpent,
                    format!(
                        "rolling update stopped at {outdated} old node(s): maxUnavailable={limit} is spent by {}",
                        list(&stalled)
                    ),
                )
            };
            return Blocker::new(code, message, stalled);
        }
        let held = tally::holders(slots, now, |_| true);
        let budget_name = if surge { "maxSurge" } else { "maxUnavailable" };
        Blocker::new(
            BlockerCode::Progressing,
            format!(
                "rolling: replacing pods within {budget_name}={limit}: {}; {outdated} node(s) on old revisions",
                list(&held)
            ),
            held,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::coverage::node_coverage;
    use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
    use crate::engine::revision::RevisionIndex;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    fn rows_of(ds: &DaemonSet, nodes: &[Node], pods: &[crate::model::Pod]) -> Vec<NodeCoverage> {
        let revisions = vec![
            revision_of(&daemonset("a:v1").build(), "h1", 1),
            revision_of(ds, "h2", 2),
        ];
        let index = RevisionIndex::new(ds, &revisions);
        nodes
            .iter()
            .map(|n| {
                let on: Vec<&crate::model::Pod> = pods
                    .iter()
                    .filter(|p| p.target_node() == Some(n.name()))
                    .collect();
                node_coverage(n, ds, &on, &index, at(3600))
            })
            .collect()
    }

    #[test]
    fn rolling_update_stopped_by_an_unschedulable_replacement_names_it() {
        // Upstream creates the replacement unbound, pinned to its node by
        // node affinity; when it does not fit, the scheduler leaves it
        // Pending with PodScheduled=False/Unschedulable and it holds the
        // only maxUnavailable slot for ever.
        let ds = daemonset("a:v2").build();
        let nodes = vec![node("n1").build(), node("n6").build()];
        let mut pending = pod("p6", "n6", "h2").build();
        pending.spec.pinned_node = pending.spec.node_name.take().map(|n| n.as_str().into());
        pending.status.conditions.push(crate::model::PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("Unschedulable".into()),
            message: Some("0/2 nodes are available: 1 Insufficient cpu.".into()),
            ..crate::model::PodCondition::default()
        });
        let pods = vec![pod("p1", "n1", "h1").ready_since(0).build(), pending];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(
            blocker.code,
            BlockerCode::MaxUnavailableSpent,
            "{blocker:?}"
        );
        assert!(
            blocker.message.contains(
                "n6 (pod Pending, unschedulable: 0/2 nodes are available: 1 Insufficient cpu.)"
            ),
            "{}",
            blocker.message
        );
    }

    #[test]
    fn rolling_update_blocked_by_a_new_pod_on_a_not_ready_node_names_it() {
        // Upstream: with maxUnavailable=1, a new pod that cannot become
        // available holds the only slot, so no other old pod is deleted.
        let ds = daemonset("a:v2").build();
        let nodes = vec![
            node("n1").build(),
            node("n2").build(),
            node("n6").not_ready().build(),
        ];
        let pods = vec![
            pod("p1", "n1", "h1").ready_since(0).build(),
            pod("p2", "n2", "h1").ready_since(0).build(),
            pod("p6", "n6", "h2").build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(
            blocker.code,
            BlockerCode::MaxUnavailableSpent,
            "{blocker:?}"
        );
        assert!(
            blocker.message.contains("n6 (node NotReady)"),
            "{}",
            blocker.message
        );
    }

    #[test]
    fn on_delete_waits_for_an_operator_and_done_is_nothing_to_do() {
        let ds = daemonset("a:v2").on_delete().build();
        let nodes = vec![node("n1").build(), node("n2").build()];
        let old = vec![
            pod("p1", "n1", "h1").ready_since(0).build(),
            pod("p2", "n2", "h2").ready_since(0).build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &old), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::WaitingForOperator);
        let done = vec![
            pod("p1", "n1", "h2").ready_since(0).build(),
            pod("p2", "n2", "h2").ready_since(0).build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &done), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::NothingToDo);
    }

    #[test]
    fn stuck_terminating_on_an_unreachable_node() {
        let ds = daemonset("a:v2").build();
        let nodes = vec![node("n1").build(), node("n2").not_ready().build()];
        let pods = vec![
            pod("p1", "n1", "h2").ready_since(0).build(),
            pod("p2", "n2", "h1").ready_since(0).terminating().build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::StuckTerminating, "{blocker:?}");
        assert!(blocker.message.contains("n2"));
    }

    #[test]
    fn a_spent_budget_held_by_a_starting_pod_is_progressing_not_stuck() {
        // Upstream rollingUpdate deletes an old pod, then waits with its one
        // maxUnavailable slot in use until the new pod is available: the
        // budget is spent at every step of a healthy rollout.
        let ds = daemonset("a:v2").build();
        let nodes = vec![node("n1").build(), node("n2").build(), node("n3").build()];
        let mut pods = vec![
            pod("p1", "n1", "h1").ready_since(0).build(),
            pod("p2", "n2", "h1").ready_since(0).build(),
            pod("p3", "n3", "h2").created(3500).phase("Pending").build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::Progressing, "{blocker:?}");
        assert!(!blocker.is_blocking());
        assert_eq!(
            blocker.message,
            "rolling: replacing pods within maxUnavailable=1: n3 (pod Pending); \
             2 node(s) on old revisions"
        );

        // Running, Ready condition False since 3550: still starting.
        pods[2] = pod("p3", "n3", "h2")
            .created(3500)
            .running_not_ready(3550)
            .build();
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::Progressing, "{blocker:?}");
        assert!(blocker.message.contains("n3 (pod not Ready)"));
        // The same pod READY_TIMEOUT after its Ready condition last changed.
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3850));
        assert_eq!(
            blocker.code,
            BlockerCode::MaxUnavailableSpent,
            "{blocker:?}"
        );
        assert_eq!(
            blocker.message,
            "rolling update stopped at 2 old node(s): maxUnavailable=1 is spent by \
             n3 (pod not Ready for over 5m)"
        );
    }

    #[test]
    fn a_spent_budget_is_stuck_only_when_stalled_holders_fill_it() {
        // maxUnavailable=2: one slot held by a NotReady node, the other by a
        // starting pod; when that one is available, a slot frees and the
        // controller goes on. Two stalled holders stop it.
        let ds = daemonset("a:v2")
            .rolling(IntOrString::Int(2), IntOrString::Int(0))
            .build();
        let nodes = vec![
            node("n1").build(),
            node("n2").build(),
            node("n3").build(),
            node("n4").not_ready().build(),
        ];
        let mut pods = vec![
            pod("p1", "n1", "h1").ready_since(0).build(),
            pod("p2", "n2", "h1").ready_since(0).build(),
            pod("p3", "n3", "h2").created(3590).phase("Pending").build(),
            pod("p4", "n4", "h2").running_not_ready(3000).build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::Progressing, "{blocker:?}");
        assert!(
            blocker
                .message
                .contains("n3 (pod Pending), n4 (node NotReady)"),
            "{}",
            blocker.message
        );

        pods[2] = pod("p3", "n3", "h2")
            .phase("Running")
            .waiting("CrashLoopBackOff", 4)
            .build();
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(
            blocker.code,
            BlockerCode::MaxUnavailableSpent,
            "{blocker:?}"
        );
        let named: Vec<&str> = blocker.nodes.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(named, ["n3", "n4"]);
    }

    #[test]
    fn surge_slots_held_by_starting_pods_are_progressing_and_by_failing_ones_stuck() {
        // maxSurge=1: the new pod runs beside the old one until available.
        let ds = daemonset("a:v2")
            .rolling(IntOrString::Int(0), IntOrString::Int(1))
            .build();
        let nodes = vec![node("n1").build(), node("n2").build()];
        let old = |name: &str, node: &str| pod(name, node, "h1").created(0).ready_since(0);
        let mut pods = vec![
            old("p1", "n1").build(),
            old("p2", "n2").build(),
            pod("p2b", "n2", "h2")
                .created(3590)
                .phase("Pending")
                .build(),
        ];
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::Progressing, "{blocker:?}");
        assert!(
            blocker
                .message
                .contains("within maxSurge=1: n2 (pod Pending)"),
            "{}",
            blocker.message
        );

        pods[2] = pod("p2b", "n2", "h2")
            .created(3590)
            .phase("Pending")
            .waiting("ImagePullBackOff", 0)
            .build();
        let blocker = rollout_blocker(&ds, &rows_of(&ds, &nodes, &pods), &nodes, at(3600));
        assert_eq!(blocker.code, BlockerCode::MaxSurgeSpent, "{blocker:?}");
        assert!(
            blocker.message.contains("n2 (ImagePullBackOff)"),
            "{}",
            blocker.message
        );
    }
}

#[cfg(test)]
mod settled_tests;
