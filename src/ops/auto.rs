//! Auto-advance as a pure state machine: batches of K nodes (canaries on their
//! own first); the next batch starts only when the engine's gate passes the
//! previous one (Ready, available, soaked without restarts); any failure — a
//! gate failure or a delete the server refused (the pod was replaced or
//! deleted by someone else) — ends the run with a pause naming the node and why.
//!
//! The same machine drives the headless `rollcall auto`, `rollback` of an
//! OnDelete DaemonSet (with the rollback order) and the console's `A` key. It
//! does no I/O: the caller submits the deletes it asks for, reports each result,
//! and calls [`AutoRun::step`] again when the cluster changed or the wake-up time came.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::engine::coverage::NodeCoverage;
use crate::engine::rollout::{GateFailure, GatePolicy, GateVerdict, RolloutPlan, WaitingFor, gate};
use crate::ops::advance::{AdvanceTarget, InFlight, Victim, choose, failure_text};
use crate::ops::error::OpsError;

/// How long a node waits before its pods are read afresh again after a
/// failed fresh read (the API server may be briefly unreachable or throttling).
pub const READ_AGAIN_AFTER: Duration = Duration::from_secs(5);

/// How auto-advance proceeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoPolicy {
    /// Nodes per batch (at least 1).
    pub batch: usize,
    /// Soak time after Ready.
    pub soak: Duration,
    /// How long a replacement may take to become Ready.
    pub timeout: Duration,
}

/// What the caller should do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Delete these pods (in order, one at a time), then report each result
    /// with [`AutoRun::deleted`].
    Delete(Vec<Victim>),
    /// Nothing to do until the cluster changes or `wake_at` passes.
    Wait {
        /// The earliest time the gate's answer can change by itself.
        wake_at: Option<jiff::Timestamp>,
        /// Per node, what it waits for (for progress messages).
        waiting: Vec<(String, WaitingFor)>,
    },
    /// Stop: the rollout must pause.
    Pause {
        /// The failing node.
        node: String,
        /// Why, in words.
        reason: String,
    },
    /// The node's replacement is not Ready within the timeout as the view
    /// shows it: read it afresh (the stream may be stale), report it with
    /// [`AutoRun::verified`], and ask again — only a run whose executor can
    /// read afresh ([`AutoRun::with_fresh_reads`]) is asked.
    Verify {
        /// The node.
        node: String,
    },
    /// Every node the plan could advance has passed its gate.
    Completed {
        /// How many nodes this run advanced.
        advanced: usize,
    },
}

/// A node's coverage row as of the decision, for the batch in flight.
pub type RowOf<'f> = &'f dyn Fn(&str) -> Option<NodeCoverage>;

/// The auto-advance run.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoRun {
    policy: AutoPolicy,
    /// The only nodes to move, in order (a rollback walks most recently updated first).
    priority: Option<Vec<String>>,
    awaiting_delete: BTreeMap<String, Victim>,
    in_flight: Vec<InFlight>,
    done: BTreeSet<String>,
    failed: Option<(String, String)>,
    /// Whether `failed` is a delete the cluster did not carry out for a
    /// cause of its own (unreachable, throttling, 5xx, an answer lost):
    /// nothing is known against the node.
    failed_by_cluster: bool,
    /// Whether a timeout is confirmed by a fresh read before it fails a node.
    fresh_reads: bool,
    /// Nodes read afresh since their deadline passed.
    verified: BTreeSet<String>,
    /// Nodes whose fresh read failed, and when to read them again: until
    /// then the wait goes on (a failed read is no verdict on the pod).
    read_again_at: BTreeMap<String, jiff::Timestamp>,
}

impl AutoRun {
    /// A run over the plan's order.
    pub fn new(policy: AutoPolicy) -> Self {
        Self {
            policy: AutoPolicy {
                batch: policy.batch.max(1),
                ..policy
            },
            priority: None,
            awaiting_delete: BTreeMap::new(),
            in_flight: Vec::new(),
            done: BTreeSet::new(),
            failed: None,
            failed_by_cluster: false,
            fresh_reads: false,
            verified: BTreeSet::new(),
            read_again_at: BTreeMap::new(),
        }
    }

    /// A run whose executor reads a node's pods afresh before a timeout
    /// fails it: a gate never fails a Ready pod because its stream is stale.
    #[must_use]
    pub fn with_fresh_reads(mut self) -> Self {
        self.fresh_reads = true;
        self
    }

    /// Reports that `node`'s pods were just read afresh into the view.
    pub fn verified(&mut self, node: &str) {
        self.read_again_at.remove(node);
        self.verified.insert(node.to_owned());
    }

    /// Reports that reading `node`'s pods afresh failed at `now`: the node
    /// is not failed on a view that may be stale; its wait is extended by
    /// [`READ_AGAIN_AFTER`], then it is read again.
    pub fn read_failed(&mut self, node: &str, now: jiff::Timestamp) {
        let again = jiff::SignedDuration::try_from(READ_AGAIN_AFTER).unwrap_or_default();
        self.read_again_at
            .insert(node.to_owned(), now.checked_add(again).unwrap_or(now));
    }

    /// A run that moves only the nodes of `order`, in that order (a rollback
    /// moves back the nodes it undoes, never nodes on other revisions).
    #[must_use]
    pub fn only(mut self, order: Vec<String>) -> Self {
        self.priority = Some(order);
        self
    }

    /// Whether deletes are pending or a batch is still being judged.
    pub fn has_work_in_flight(&self) -> bool {
        !self.awaiting_delete.is_empty() || !self.in_flight.is_empty()
    }

    /// The nodes advanced and passed so far.
    pub fn done(&self) -> &BTreeSet<String> {
        &self.done
    }

    /// How many nodes this run moved: old pod deleted, whether or not the
    /// replacement has passed its gate yet.
    pub fn moved(&self) -> usize {
        self.done.len() + self.in_flight.len()
    }

    /// The nodes of the batch in flight (deletes sent or acknowledged).
    pub fn batch_nodes(&self) -> Vec<String> {
        self.awaiting_delete
            .keys()
            .cloned()
            .chain(self.in_flight.iter().map(|f| f.victim.node.clone()))
            .collect()
    }

    /// Decides the next move from the current plan and coverage rows
    /// ([`AutoRun::judge_batch`], then [`AutoRun::next`]).
    pub fn step(
        &mut self,
        plan: &RolloutPlan,
        rows: &[NodeCoverage],
        min_ready_seconds: i32,
        now: jiff::Timestamp,
    ) -> Step {
        let row_of = |node: &str| rows.iter().find(|r| r.node == node).cloned();
        match self.judge_batch(&row_of, min_ready_seconds, now) {
            Some(step) => step,
            None => self.next(plan),
        }
    }

    /// Judges what the run is waiting for (a refused delete, answers still
    /// pending, the batch in flight), looking up only the batch's rows:
    /// `None` when the next batch may start.
    pub fn judge_batch(
        &mut self,
        row_of: RowOf<'_>,
        min_ready_seconds: i32,
        now: jiff::Timestamp,
    ) -> Option<Step> {
        if let Some((node, reason)) = &self.failed {
            return Some(Step::Pause {
                node: node.clone(),
                reason: reason.clone(),
            });
        }
        if !self.awaiting_delete.is_empty() {
            return Some(Step::Wait {
                wake_at: None,
                waiting: Vec::new(),
            });
        }
        if !self.in_flight.is_empty() {
            match self.judge(row_of, min_ready_seconds, now) {
                Some(step) => return Some(step),
                None => {
                    self.done
                        .extend(self.in_flight.drain(..).map(|f| f.victim.node));
                }
            }
        }
        None
    }

    /// Starts the next batch from `plan` (which must hold at least the
    /// plan's next [`AutoRun::batch_size`] steps outside [`AutoRun::done`],
    /// or, for a run limited to an order, those nodes), or completes.
    pub fn next(&mut self, plan: &RolloutPlan) -> Step {
        self.next_up_to(plan, self.policy.batch)
    }

    /// [`AutoRun::next`] with a batch of at most `size` nodes (a budget
    /// smaller than the run's batch: what a RollingUpdate DaemonSet's
    /// `maxUnavailable` leaves).
    pub fn next_up_to(&mut self, plan: &RolloutPlan, size: usize) -> Step {
        match self.next_victims(plan, size.clamp(1, self.policy.batch)) {
            Some(victims) => {
                for v in &victims {
                    self.awaiting_delete.insert(v.node.clone(), v.clone());
                }
                Step::Delete(victims)
            }
            None => Step::Completed {
                advanced: self.done.len(),
            },
        }
    }

    /// How many nodes a batch holds.
    pub fn batch_size(&self) -> usize {
        self.policy.batch
    }

    /// Whether the run moves only the nodes of an order (a rollback).
    pub fn is_limited(&self) -> bool {
        self.priority.is_some()
    }

    /// Records the server's answer to one delete. A refused delete (409: the pod
    /// was replaced; 404: it is gone; 403; unreachable) is never retried: the
    /// run pauses with the reason.
    pub fn deleted(&mut self, node: &str, result: Result<(), &OpsError>, now: jiff::Timestamp) {
        let Some(victim) = self.awaiting_delete.remove(node) else {
            return;
        };
        match result {
            Ok(()) => self.in_flight.push(InFlight {
                victim,
                started: now,
                new_pod_uid: None,
            }),
            Err(err) => {
                if self.failed.is_none() {
                    let reason = format!("delete of pod {} refused: {err}", victim.pod);
                    self.failed = Some((victim.node, reason));
                    self.failed_by_cluster = err.is_transient();
                }
            }
        }
    }

    /// Whether the run's failure is the cluster's (a delete it could not
    /// carry out: unreachable, throttling, 5xx, an answer lost), not a node's.
    pub fn failed_by_cluster(&self) -> bool {
        self.failed.is_some() && self.failed_by_cluster
    }

    /// Takes over nodes whose pods were already deleted (a manual advance being followed).
    pub fn adopt(&mut self, flights: Vec<InFlight>) {
        self.in_flight.extend(flights);
    }

    /// Judges only the batch in flight, starting nothing new: `None` when it
    /// passed, else a [`Step::Wait`] or [`Step::Pause`].
    pub fn judge_only(
        &mut self,
        row_of: RowOf<'_>,
        min_ready_seconds: i32,
        now: jiff::Timestamp,
    ) -> Option<Step> {
        if let Some((node, reason)) = &self.failed {
            return Some(Step::Pause {
                node: node.clone(),
                reason: reason.clone(),
            });
        }
        let verdict = self.judge(row_of, min_ready_seconds, now);
        if verdict.is_none() {
            self.done
                .extend(self.in_flight.drain(..).map(|f| f.victim.node));
        }
        verdict
    }

    /// Gate verdict for the batch in flight; `None` when it passed.
    fn judge(
        &mut self,
        row_of: RowOf<'_>,
        min_ready_seconds: i32,
        now: jiff::Timestamp,
    ) -> Option<Step> {
        let members: Vec<_> = self
            .in_flight
            .iter_mut()
            .map(|flight| {
                let row = row_of(&flight.victim.node);
                flight.observe(row.as_ref());
                flight.member(row)
            })
            .collect();
        let policy = GatePolicy {
            soak: self.policy.soak,
            timeout: self.policy.timeout,
            min_ready_seconds,
        };
        match gate(&members, now, &policy) {
            GateVerdict::Passed => None,
            GateVerdict::Failed { node, reason } => {
                if self.fresh_reads
                    && matches!(reason, GateFailure::NotReadyInTime { .. })
                    && !self.verified.contains(&node)
                {
                    return Some(match self.read_again_at.get(&node) {
                        Some(&again) if now < again => Step::Wait {
                            wake_at: Some(again),
                            waiting: vec![(node, WaitingFor::Ready { deadline: again })],
                        },
                        _ => Step::Verify { node },
                    });
                }
                let reason = failure_text(&reason);
                self.failed = Some((node.clone(), reason.clone()));
                Some(Step::Pause { node, reason })
            }
            GateVerdict::Waiting { waiting } => Some(Step::Wait {
                wake_at: self.wake_at(&waiting),
                waiting,
            }),
        }
    }

    fn wake_at(&self, waiting: &[(String, WaitingFor)]) -> Option<jiff::Timestamp> {
        let timeout = jiff::SignedDuration::try_from(self.policy.timeout)
            .unwrap_or(jiff::SignedDuration::MAX);
        waiting
            .iter()
            .filter_map(|(node, what)| match what {
                WaitingFor::Ready { deadline } => Some(*deadline),
                WaitingFor::Available { at } => Some(*at),
                WaitingFor::Soak { until } => Some(*until),
                WaitingFor::ReplacementPod => self
                    .in_flight
                    .iter()
                    .find(|f| &f.victim.node == node)
                    .and_then(|f| f.started.checked_add(timeout).ok()),
            })
            .min()
    }

    fn next_victims(&self, plan: &RolloutPlan, size: usize) -> Option<Vec<Victim>> {
        let plan = match &self.priority {
            Some(order) => prioritized(plan, order),
            None => plan.clone(),
        };
        let exclude = &self.done;
        choose(&plan, &AdvanceTarget::Next(size), exclude).ok()
    }
}

/// The plan's steps named in `order`, in that order, and no others; canary
/// flags are dropped so the order is not overridden by the canary stage.
fn prioritized(plan: &RolloutPlan, order: &[String]) -> RolloutPlan {
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut steps: Vec<_> = plan
        .steps
        .iter()
        .filter(|s| rank.contains_key(s.node.as_str()))
        .cloned()
        .collect();
    steps.sort_by_key(|s| rank.get(s.node.as_str()).copied().unwrap_or(usize::MAX));
    for step in &mut steps {
        step.canary = false;
    }
    RolloutPlan {
        steps,
        skipped: plan.skipped.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixtures::pod;
    use crate::ops::error::OpsError;
    use crate::ops::snapshot::Snapshot;
    use crate::ops::state::RolloutState;
    use crate::ops::testing::{NEW, all_old, ds, ready_pod, replace, snapshot, t};

    const NODES: [&str; 4] = ["n1", "n2", "n3", "n4"];

    fn policy(batch: usize) -> AutoPolicy {
        AutoPolicy {
            batch,
            soak: Duration::from_secs(30),
            timeout: Duration::from_secs(300),
        }
    }

    fn step(
        run: &mut AutoRun,
        snap: &Snapshot<'_>,
        state: &RolloutState,
        now: jiff::Timestamp,
    ) -> Step {
        let rows = snap.rows(&snap.index(), now);
        let plan = snap.plan(&rows, state).unwrap();
        let rows: Vec<_> = rows.iter().cloned().collect();
        run.step(&plan, &rows, 0, now)
    }

    fn nodes_of(step: &Step) -> Vec<String> {
        match step {
            Step::Delete(victims) => victims.iter().map(|v| v.node.clone()).collect(),
            other => panic!("expected deletes, got {other:?}"),
        }
    }

    #[test]
    fn next_batch_waits_for_soak_then_starts() {
        let state = RolloutState::default();
        let mut run = AutoRun::new(policy(2));
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        let first = step(&mut run, &start, &state, t(0));
        assert_eq!(nodes_of(&first), ["n1", "n2"]);
        assert!(
            matches!(step(&mut run, &start, &state, t(1)), Step::Wait { .. }),
            "no new deletes while answers are pending"
        );
        run.deleted("n1", Ok(()), t(1));
        run.deleted("n2", Ok(()), t(1));
        let pods = replace(
            all_old(&NODES),
            vec![ready_pod("n1", NEW, 100), ready_pod("n2", NEW, 100)],
        );
        let mid = snapshot(ds(false, &[]), &NODES, pods.clone());
        match step(&mut run, &mid, &state, t(110)) {
            Step::Wait { wake_at, .. } => assert_eq!(wake_at, Some(t(130))),
            other => panic!("expected soak wait, got {other:?}"),
        }
        assert_eq!(
            nodes_of(&step(&mut run, &mid, &state, t(131))),
            ["n3", "n4"]
        );
        assert_eq!(run.done().len(), 2);
    }

    #[test]
    fn crash_looping_replacement_pauses_naming_the_node() {
        let state = RolloutState::default();
        let mut run = AutoRun::new(policy(1));
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        assert_eq!(nodes_of(&step(&mut run, &start, &state, t(0))), ["n1"]);
        run.deleted("n1", Ok(()), t(1));
        let crashing = pod("agent-n1-new", "n1", NEW)
            .running_not_ready(50)
            .waiting("CrashLoopBackOff", 3)
            .build();
        let snap = snapshot(
            ds(false, &[]),
            &NODES,
            replace(all_old(&NODES), vec![crashing]),
        );
        match step(&mut run, &snap, &state, t(60)) {
            Step::Pause { node, reason } => {
                assert_eq!(node, "n1");
                assert!(reason.contains("CrashLoopBackOff"), "{reason}");
            }
            other => panic!("expected pause, got {other:?}"),
        }
        assert!(
            matches!(step(&mut run, &start, &state, t(61)), Step::Pause { .. }),
            "a failed run never deletes again"
        );
    }

    #[test]
    fn refused_delete_pauses_without_retry() {
        let state = RolloutState::default();
        let mut run = AutoRun::new(policy(2));
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        assert_eq!(nodes_of(&step(&mut run, &start, &state, t(0))).len(), 2);
        let conflict = OpsError::Conflict {
            what: "pod kube-system/agent-n1-h1".into(),
            message: "uid".into(),
        };
        run.deleted("n1", Err(&conflict), t(1));
        match step(&mut run, &start, &state, t(2)) {
            Step::Pause { node, reason } => {
                assert_eq!(node, "n1");
                assert!(reason.contains("refused"), "{reason}");
            }
            other => panic!("expected pause, got {other:?}"),
        }
        assert!(
            !run.failed_by_cluster(),
            "a 409 is the node's pod moving on"
        );
    }

    #[test]
    fn a_delete_the_cluster_could_not_carry_out_is_the_clusters_fault() {
        let state = RolloutState::default();
        let mut run = AutoRun::new(policy(2));
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        assert_eq!(nodes_of(&step(&mut run, &start, &state, t(0))).len(), 2);
        assert!(!run.failed_by_cluster());
        let refused = OpsError::Unreachable {
            attempt: "delete pods kube-system/agent-n1-h1".into(),
            message: "Connection refused (os error 111)".into(),
        };
        run.deleted("n1", Err(&refused), t(1));
        assert!(matches!(
            step(&mut run, &start, &state, t(2)),
            Step::Pause { .. }
        ));
        assert!(run.failed_by_cluster());
    }

    #[test]
    fn canaries_go_first_on_their_own() {
        let state = RolloutState {
            canaries: ["n3".to_owned()].into(),
            ..RolloutState::default()
        };
        let mut run = AutoRun::new(policy(2));
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        assert_eq!(nodes_of(&step(&mut run, &start, &state, t(0))), ["n3"]);
    }

    #[test]
    fn rollback_moves_only_its_nodes_in_its_order() {
        let state = RolloutState::default();
        let mut run = AutoRun::new(policy(2)).only(vec!["n4".into(), "n2".into()]);
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        assert_eq!(
            nodes_of(&step(&mut run, &start, &state, t(0))),
            ["n4", "n2"]
        );
        run.deleted("n4", Ok(()), t(1));
        run.deleted("n2", Ok(()), t(1));
        let pods = replace(
            all_old(&NODES),
            vec![ready_pod("n4", NEW, 0), ready_pod("n2", NEW, 0)],
        );
        let moved = snapshot(ds(false, &[]), &NODES, pods);
        assert_eq!(
            step(&mut run, &moved, &state, t(100)),
            Step::Completed { advanced: 2 },
            "n1 and n3 are on another revision: not touched"
        );
    }

    #[test]
    fn completes_when_nothing_is_old() {
        let state = RolloutState::default();
        let mut run = AutoRun::new(policy(3));
        let pods = NODES.iter().map(|n| ready_pod(n, NEW, 0)).collect();
        let done = snapshot(ds(false, &[]), &NODES, pods);
        assert_eq!(
            step(&mut run, &done, &state, t(0)),
            Step::Completed { advanced: 0 }
        );
    }

    #[test]
    fn replacement_not_ready_in_time_pauses() {
        let state = RolloutState::default();
        let mut run = AutoRun::new(policy(1));
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        step(&mut run, &start, &state, t(0));
        run.deleted("n1", Ok(()), t(0));
        let pending = pod("agent-n1-new", "n1", NEW).build();
        let snap = snapshot(
            ds(false, &[]),
            &NODES,
            replace(all_old(&NODES), vec![pending]),
        );
        assert!(matches!(
            step(&mut run, &snap, &state, t(100)),
            Step::Wait { .. }
        ));
        match step(&mut run, &snap, &state, t(301)) {
            Step::Pause { node, reason } => {
                assert_eq!((node.as_str(), reason.contains("not Ready")), ("n1", true));
            }
            other => panic!("expected timeout pause, got {other:?}"),
        }
    }

    /// A stalled stream must not fail a pod that is Ready: with fresh reads,
    /// a timeout first asks for the node to be read afresh; a fresh view that
    /// shows it Ready passes it, one that still shows it not Ready fails it.
    #[test]
    fn a_timeout_is_confirmed_by_a_fresh_read_before_it_fails_the_node() {
        let state = RolloutState::default();
        let pending = pod("agent-n1-new", "n1", NEW).created(1).build();
        let not_ready_view = snapshot(
            ds(false, &[]),
            &NODES,
            replace(all_old(&NODES), vec![pending]),
        );
        let ready_view = snapshot(
            ds(false, &[]),
            &NODES,
            replace(
                all_old(&NODES),
                vec![
                    pod("agent-n1-new", "n1", NEW)
                        .created(1)
                        .ready_since(2)
                        .build(),
                ],
            ),
        );
        for (name, after_read, passes) in [
            ("Ready after all", &ready_view, true),
            ("still not Ready", &not_ready_view, false),
        ] {
            let mut run = AutoRun::new(AutoPolicy {
                soak: Duration::ZERO,
                ..policy(1)
            })
            .with_fresh_reads();
            let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
            step(&mut run, &start, &state, t(0));
            run.deleted("n1", Ok(()), t(0));
            match step(&mut run, &not_ready_view, &state, t(301)) {
                Step::Verify { node } => assert_eq!(node, "n1", "{name}"),
                other => panic!("{name}: expected a fresh read first, got {other:?}"),
            }
            run.verified("n1");
            let next = step(&mut run, after_read, &state, t(302));
            if passes {
                assert!(matches!(next, Step::Delete(_)), "{name}: {next:?}");
            } else {
                assert!(matches!(next, Step::Pause { .. }), "{name}: {next:?}");
            }
        }
    }

    /// A fresh read that fails says nothing about the pod: the node waits
    /// [`READ_AGAIN_AFTER`] more and is read again, never failed on the view.
    #[test]
    fn a_failed_fresh_read_extends_the_wait_and_reads_again() {
        let state = RolloutState::default();
        let pending = pod("agent-n1-new", "n1", NEW).created(1).build();
        let stale_view = snapshot(
            ds(false, &[]),
            &NODES,
            replace(all_old(&NODES), vec![pending]),
        );
        let mut run = AutoRun::new(policy(1)).with_fresh_reads();
        let start = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        step(&mut run, &start, &state, t(0));
        run.deleted("n1", Ok(()), t(0));
        assert!(matches!(
            step(&mut run, &stale_view, &state, t(301)),
            Step::Verify { .. }
        ));
        run.read_failed("n1", t(301));
        match step(&mut run, &stale_view, &state, t(303)) {
            Step::Wait { wake_at, .. } => assert_eq!(wake_at, Some(t(306))),
            other => panic!("expected a longer wait, got {other:?}"),
        }
        match step(&mut run, &stale_view, &state, t(306)) {
            Step::Verify { node } => assert_eq!(node, "n1"),
            other => panic!("expected a second fresh read, got {other:?}"),
        }
    }
}
