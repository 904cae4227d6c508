//! What a rehearsal found, as `-o json` prints it and the table shows it
//! ([`Rehearsal`]): per wave, per cluster, when each node's pod was deleted
//! and when its replacement was Ready (simulated time, seconds from the
//! start), where the plan stopped and why, the nodes never reached, and the
//! wall time the real run should expect. Built from the timeline, the run's
//! outcome and each cluster's planned order; pure.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::timeline::{ClusterTimeline, NodeDelete, Timeline, WaveEnd, WaveTimeline};
use crate::fleet::run::{FleetOutcome, Outcome};
use crate::fleet::waves::budget::Ledger;

/// A rehearsal's result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rehearsal {
    /// The DaemonSet (`NS/NAME`).
    pub daemonset: String,
    /// The plan's digest.
    pub plan: String,
    /// The scenario whose timings and failure rules the kubelets followed
    /// (`none`: default timings, no failures).
    pub scenario: String,
    /// `done`, `stopped`, `incomplete` or `interrupted`.
    pub result: &'static str,
    /// The run's last line, as `fleet auto` would print it.
    pub summary: String,
    /// Where and why the plan stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    /// The waves, in the plan's order.
    pub waves: Vec<WaveReport>,
    /// Nodes the run was to move and never started, fleet-wide.
    pub not_reached: usize,
    /// How long the real run should take: the simulated time it took.
    pub expected_wall_time: Span,
    /// The plan's own estimate (soaks and bakes only), for comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Span>,
    /// How long the rehearsal itself took (real time).
    pub rehearsal_time: Span,
}

/// Where the plan stopped.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stop {
    /// The wave it stopped in.
    pub wave: String,
    /// The cluster that stopped it.
    pub context: String,
    /// The node that failed, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Why.
    pub reason: String,
    /// When (seconds from the start, simulated).
    pub at: f64,
}

/// One wave.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaveReport {
    /// Its name.
    pub name: String,
    /// `passed`, `stopped` (it did not pass, or the fleet stopped while it
    /// ran), `interrupted` or `not reached`.
    pub result: &'static str,
    /// When it started (seconds from the start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<f64>,
    /// When it passed or stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<f64>,
    /// The bake that followed it, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bake_seconds: Option<u64>,
    /// The batch its clusters ran with (the plan's, or what the budget
    /// left of it).
    pub batch: usize,
    /// When the budget cut the plan's batch: the words `fleet plan` says
    /// (`batch 1 (cut from 2 by the budget)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_cut: Option<String>,
    /// Its clusters.
    pub clusters: Vec<ClusterReport>,
}

/// One cluster.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterReport {
    /// The context.
    pub context: String,
    /// Its outcome in one word (`done`, `failed`, `stopped`, …; `not reached`).
    pub result: &'static str,
    /// Its outcome in words.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// When its part started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<f64>,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<f64>,
    /// Each node whose pod was deleted, in order.
    pub moved: Vec<NodeReport>,
    /// The nodes of its plan never started, in plan order.
    pub not_reached: Vec<String>,
}

/// One node's move.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    /// The node.
    pub node: String,
    /// When its old pod was deleted.
    pub deleted: f64,
    /// When its new pod became Ready (`None`: it never did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<f64>,
}

/// A length of time, in seconds and in words.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Span {
    /// Seconds.
    pub seconds: f64,
    /// `1h 2m 3s`.
    pub text: String,
}

impl Span {
    /// A span of `duration`, to the millisecond.
    pub fn of(duration: std::time::Duration) -> Span {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        let whole = std::time::Duration::from_secs(duration.as_secs());
        let text = if duration.as_secs() == 0 {
            format!("{millis}ms")
        } else {
            humantime::format_duration(whole).to_string()
        };
        Span {
            seconds: millis_to_seconds(millis),
            text,
        }
    }
}

/// What [`Rehearsal::build`] needs besides the timeline and the outcome.
pub struct Facts<'a> {
    /// The DaemonSet.
    pub daemonset: String,
    /// The plan's digest.
    pub digest: String,
    /// The scenario's name (`none`).
    pub scenario: String,
    /// Each cluster's nodes in the order its run would move them.
    pub planned: &'a BTreeMap<String, Vec<String>>,
    /// When the new pod on a node deleted at a time became Ready.
    pub ready: &'a dyn Fn(&str, &NodeDelete) -> Option<Timestamp>,
    /// The fleet's budget, which may cut a wave's batch.
    pub ledger: &'a Ledger,
    /// Each wave's batch as the plan sets it, in the plan's order.
    pub batches: &'a [usize],
    /// The simulated start.
    pub start: Timestamp,
    /// The simulated end.
    pub end: Timestamp,
    /// The plan's estimate.
    pub estimate: Option<std::time::Duration>,
    /// The real time the rehearsal took.
    pub took: std::time::Duration,
}

impl Rehearsal {
    /// The rehearsal's result from its timeline and the run's outcome.
    pub fn build(timeline: &Timeline, outcome: &FleetOutcome, facts: &Facts<'_>) -> Rehearsal {
        let offset = |at: Timestamp| seconds_between(facts.start, at);
        let waves: Vec<WaveReport> = timeline
            .waves
            .iter()
            .enumerate()
            .map(|(at, wave)| {
                let batch = facts.batches.get(at).copied().unwrap_or(1);
                wave_report(wave, batch, outcome.interrupted, facts, &offset)
            })
            .collect();
        let not_reached = waves
            .iter()
            .flat_map(|w| &w.clusters)
            .map(|c| c.not_reached.len())
            .sum();
        let stop = stop_of(timeline, outcome).map(|(wave, context, node, reason, at)| Stop {
            wave,
            context,
            node,
            reason,
            at: offset(at),
        });
        let result = if outcome.interrupted {
            "interrupted"
        } else if stop.is_some() || outcome.stop.is_some() {
            "stopped"
        } else if outcome.all_done() {
            "done"
        } else {
            "incomplete"
        };
        let wall = facts.end.duration_since(facts.start).unsigned_abs();
        Rehearsal {
            daemonset: facts.daemonset.clone(),
            plan: facts.digest.clone(),
            scenario: facts.scenario.clone(),
            result,
            summary: outcome.summary(),
            stop,
            waves,
            not_reached,
            expected_wall_time: Span::of(wall),
            estimate: facts.estimate.map(Span::of),
            rehearsal_time: Span::of(facts.took),
        }
    }

    /// The exit code: 0 when every node of the plan moved, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.result != "done")
    }
}

fn wave_report(
    wave: &WaveTimeline,
    planned_batch: usize,
    interrupted: bool,
    facts: &Facts<'_>,
    offset: &dyn Fn(Timestamp) -> f64,
) -> WaveReport {
    WaveReport {
        name: wave.name.clone(),
        result: match wave.end {
            WaveEnd::Passed => "passed",
            WaveEnd::Cut if interrupted => "interrupted",
            // Cut short by the fleet's stop: a failure past the budget (or
            // an error) stops the run mid-wave, as a wave that did not pass.
            WaveEnd::Stopped | WaveEnd::Cut => "stopped",
            WaveEnd::NotReached => "not reached",
        },
        start: wave.started.map(offset),
        end: wave.ended.map(offset),
        bake_seconds: wave.bake.map(|b| b.as_secs()),
        batch: facts.ledger.batch_within(planned_batch),
        budget_cut: (facts.ledger.batch_within(planned_batch) != planned_batch)
            .then(|| facts.ledger.batch_text(planned_batch)),
        clusters: wave
            .clusters
            .iter()
            .map(|cluster| cluster_report(cluster, facts, offset))
            .collect(),
    }
}

fn cluster_report(
    cluster: &ClusterTimeline,
    facts: &Facts<'_>,
    offset: &dyn Fn(Timestamp) -> f64,
) -> ClusterReport {
    let moved: Vec<NodeReport> = cluster
        .deletes
        .iter()
        .map(|delete| NodeReport {
            node: delete.node.clone(),
            deleted: offset(delete.at),
            ready: (facts.ready)(&cluster.context, delete).map(offset),
        })
        .collect();
    let not_reached = facts
        .planned
        .get(&cluster.context)
        .into_iter()
        .flatten()
        .filter(|node| !cluster.deletes.iter().any(|d| &d.node == *node))
        .cloned()
        .collect();
    let (result, message) = match &cluster.ended {
        Some((_, outcome)) => (outcome.word(), outcome.text()),
        None => ("not reached", String::new()),
    };
    ClusterReport {
        context: cluster.context.clone(),
        result,
        message,
        start: cluster.started.map(offset),
        end: cluster.ended.as_ref().map(|(at, _)| offset(*at)),
        moved,
        not_reached,
    }
}

/// The wave, cluster, node, reason and time of the plan's stop: the first
/// cluster to end without passing in the wave that stopped (or was cut),
/// with the budget's words when the budget stopped it.
fn stop_of(
    timeline: &Timeline,
    outcome: &FleetOutcome,
) -> Option<(String, String, Option<String>, String, Timestamp)> {
    let wave = timeline
        .waves
        .iter()
        .find(|w| matches!(w.end, WaveEnd::Stopped | WaveEnd::Cut))?;
    let (cluster, at, failed) = wave
        .clusters
        .iter()
        .filter_map(|c| match &c.ended {
            Some((at, ended)) if !ended.passed() => Some((c, *at, ended)),
            _ => None,
        })
        .min_by_key(|(_, at, ended)| (!matches!(ended, Outcome::Failed { .. }), *at))?;
    let node = match failed {
        Outcome::Failed { node, .. } => Some(node.clone()),
        _ => None,
    };
    let reason = outcome.stop.clone().unwrap_or_else(|| failed.text());
    Some((wave.name.clone(), cluster.context.clone(), node, reason, at))
}

fn seconds_between(start: Timestamp, at: Timestamp) -> f64 {
    let millis = at.duration_since(start).as_millis().max(0);
    millis_to_seconds(u64::try_from(millis).unwrap_or(u64::MAX))
}

#[expect(
    clippy::cast_precision_loss,
    reason = "simulated runs last hours, far below 2^52 milliseconds"
)]
fn millis_to_seconds(millis: u64) -> f64 {
    millis as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::fleet::rehearse::timeline::ClusterTimeline;
    use crate::fleet::run::MemberResult;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    fn cluster(
        context: &str,
        deletes: &[(&str, i64)],
        ended: Option<(i64, Outcome)>,
    ) -> ClusterTimeline {
        ClusterTimeline {
            context: context.to_owned(),
            started: deletes.first().map(|(_, s)| at(*s)),
            ended: ended.map(|(s, o)| (at(s), o)),
            deletes: deletes
                .iter()
                .map(|(node, s)| NodeDelete {
                    node: (*node).to_owned(),
                    at: at(*s),
                })
                .collect(),
        }
    }

    #[test]
    fn a_stopped_run_names_its_failure_and_the_nodes_never_reached() {
        let failed = Outcome::Failed {
            node: "a2".to_owned(),
            reason: "CrashLoopBackOff".to_owned(),
        };
        let timeline = Timeline {
            waves: vec![
                WaveTimeline {
                    name: "one".to_owned(),
                    started: Some(at(0)),
                    ended: Some(at(90)),
                    end: WaveEnd::Stopped,
                    bake: None,
                    clusters: vec![cluster(
                        "a",
                        &[("a1", 1), ("a2", 30)],
                        Some((90, failed.clone())),
                    )],
                },
                WaveTimeline {
                    name: "two".to_owned(),
                    started: None,
                    ended: None,
                    end: WaveEnd::NotReached,
                    bake: None,
                    clusters: vec![cluster("b", &[], None)],
                },
            ],
            last: Some(at(90)),
        };
        let outcome = FleetOutcome {
            members: vec![MemberResult {
                context: "a".to_owned(),
                outcome: failed,
                touched: true,
            }],
            not_reached: vec!["b".to_owned()],
            stop: Some("a: node a2: CrashLoopBackOff".to_owned()),
            interrupted: false,
            dry_run: false,
            waves: 2,
        };
        let planned = BTreeMap::from([
            (
                "a".to_owned(),
                vec!["a1".to_owned(), "a2".to_owned(), "a3".to_owned()],
            ),
            ("b".to_owned(), vec!["b1".to_owned(), "b2".to_owned()]),
        ]);
        let ready = |_: &str, delete: &NodeDelete| {
            (delete.node == "a1").then(|| delete.at + jiff::SignedDuration::from_secs(12))
        };
        let ledger = Ledger::new(crate::fleet::waves::file::Budget::default());
        let facts = Facts {
            daemonset: "kube-system/agent".to_owned(),
            digest: "d1".to_owned(),
            scenario: "none".to_owned(),
            planned: &planned,
            ready: &ready,
            ledger: &ledger,
            batches: &[2, 1],
            start: at(0),
            end: at(95),
            estimate: Some(Duration::from_secs(60)),
            took: Duration::from_millis(250),
        };
        let report = Rehearsal::build(&timeline, &outcome, &facts);
        assert_eq!(report.result, "stopped");
        assert_eq!(report.exit_code(), 1);
        assert_eq!(
            report.stop,
            Some(Stop {
                wave: "one".to_owned(),
                context: "a".to_owned(),
                node: Some("a2".to_owned()),
                reason: "a: node a2: CrashLoopBackOff".to_owned(),
                at: 90.0,
            })
        );
        let a = &report.waves[0].clusters[0];
        assert_eq!(a.moved[0].ready, Some(13.0));
        assert_eq!(a.moved[1].ready, None);
        assert_eq!(a.not_reached, ["a3"]);
        assert_eq!(report.waves[0].batch, 1);
        assert_eq!(
            report.waves[0].budget_cut.as_deref(),
            Some("batch 1 (cut from 2 by the budget)")
        );
        assert_eq!(report.waves[1].budget_cut, None);
        assert_eq!(report.waves[1].result, "not reached");
        assert_eq!(report.waves[1].clusters[0].not_reached, ["b1", "b2"]);
        assert_eq!(report.not_reached, 3);
        assert_eq!(report.expected_wall_time.text, "1m 35s");
        assert_eq!(report.rehearsal_time.text, "250ms");
    }
}
