//! The rollout status report that `rollcall status` prints (JSON or a table)
//! and that a second console or process sees the same way: the DaemonSet's
//! strategy and revision, the durable rollout state, the totals, every node
//! (revision, readiness, eligibility, canary) and the plan with skipped nodes.
//!
//! Pure: built from a [`Snapshot`] and `now`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::engine::coverage::Totals;
use crate::ops::advance::skip_text;
use crate::ops::error::OpsError;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::RolloutState;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    /// Namespace.
    pub namespace: String,
    /// DaemonSet name.
    pub name: String,
    /// `OnDelete` or `RollingUpdate`.
    pub strategy: String,
    /// The current revision number.
    pub current_revision: Option<i64>,
    /// The one state word (see [`crate::ops::state::state_word`]): `idle`,
    /// `waiting`, `rolling`, `stuck`, `advancing`, `auto`, `rolling-back`,
    /// `stalled` or `paused`.
    pub state: String,
    /// Why the rollout is (not) moving, with the nodes that hold it up.
    pub blocker: crate::engine::blockers::Blocker,
    /// For a run whose driver stopped renewing its lease: "auto-advance by X
    /// stopped responding at T" (a new run may take it over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled: Option<String>,
    /// The durable rollout state in full.
    pub rollout: RolloutState,
    /// The DaemonSet status fields, computed.
    pub totals: Totals,
    /// One entry per node, by name.
    pub nodes: Vec<NodeStatus>,
    /// The nodes still to advance, in order.
    pub plan: Vec<PlanEntry>,
    /// Nodes left out of the plan, with the reason.
    pub skipped: Vec<SkippedEntry>,
}

/// One node.
#[allow(
    clippy::struct_excessive_bools,
    reason = "a flat JSON record of independent yes/no facts"
)]
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// Node name.
    pub name: String,
    /// Whether a daemon pod should run here.
    pub eligible: bool,
    /// Whether a running daemon pod may stay.
    pub should_continue_running: bool,
    /// Why not eligible, in words.
    pub reasons: Vec<String>,
    /// The daemon pod (the newest live one), if any.
    pub pod: Option<String>,
    /// Its revision number.
    pub revision: Option<i64>,
    /// Whether it runs the current revision.
    pub updated: bool,
    /// Whether it is Ready.
    pub ready: bool,
    /// Whether it is available (Ready for minReadySeconds).
    pub available: bool,
    /// Its waiting/terminated reason, if any.
    pub problem: Option<String>,
    /// When the pod is failing: the reason and the container's own words
    /// (last termination, waiting message), from the one health classification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// How many live daemon pods the node has.
    pub pod_count: usize,
    /// Marked or selected as a canary.
    pub canary: bool,
}

/// One step of the plan.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    /// Node name.
    pub node: String,
    /// A canary.
    pub canary: bool,
    /// Its pool/zone group (`key=value`).
    pub group: String,
    /// The old pod to delete.
    pub pod: Option<String>,
}

/// A skipped node.
#[derive(Clone, Debug, Serialize)]
pub struct SkippedEntry {
    /// Node name.
    pub node: String,
    /// Why, in words.
    pub reason: String,
}

impl StatusReport {
    /// Builds the report.
    pub fn build(snapshot: &Snapshot, now: jiff::Timestamp) -> Result<Self, OpsError> {
        let state = snapshot.state()?;
        let index = snapshot.index();
        let rows = snapshot.rows(&index, now);
        let plan = snapshot.plan(&rows, &state)?;
        let canaries: std::collections::BTreeSet<&str> = plan
            .steps
            .iter()
            .filter(|s| s.canary)
            .map(|s| s.node.as_str())
            .collect();
        let nodes = rows
            .iter()
            .map(|row| {
                let live: Vec<_> = row.pods.iter().filter(|p| !p.terminating).collect();
                let pod = live.last().copied().or_else(|| row.pods.last());
                NodeStatus {
                    name: row.node.clone(),
                    eligible: row.verdict.should_run,
                    should_continue_running: row.verdict.should_continue_running,
                    reasons: row
                        .verdict
                        .reasons
                        .iter()
                        .map(|r| r.message.clone())
                        .collect(),
                    pod: pod.map(|p| p.name.clone()),
                    revision: pod.and_then(|p| p.revision),
                    updated: pod.is_some_and(|p| p.updated),
                    ready: pod.is_some_and(|p| p.ready),
                    available: pod.is_some_and(|p| p.available),
                    problem: pod.and_then(|p| p.problem.clone()),
                    failure: pod.and_then(|p| crate::engine::health::pod_health(p).failure_text()),
                    pod_count: live.len(),
                    canary: canaries.contains(row.node.as_str())
                        || state.canaries.contains(&row.node),
                }
            })
            .collect();
        let blocker = crate::ops::state::blocker_with_pause(
            &state,
            crate::engine::blockers::rollout_blocker(&snapshot.ds, &rows, &snapshot.nodes),
        );
        let target = snapshot.target();
        Ok(Self {
            namespace: target.namespace,
            name: target.name,
            strategy: snapshot.strategy_type().to_owned(),
            current_revision: index.current().map(|c| c.number),
            state: crate::ops::state::state_word(&state, &blocker, now).to_owned(),
            stalled: state.run_owner(now).expired_text(),
            blocker,
            totals: Snapshot::totals(&rows),
            nodes,
            plan: plan
                .steps
                .iter()
                .map(|s| PlanEntry {
                    node: s.node.clone(),
                    canary: s.canary,
                    group: s.group.clone(),
                    pod: s.pod.as_ref().map(|p| p.name.clone()),
                })
                .collect(),
            skipped: plan
                .skipped
                .iter()
                .map(|s| SkippedEntry {
                    node: s.node.clone(),
                    reason: skip_text(&s.reason),
                })
                .collect(),
            rollout: state,
        })
    }

    /// The human-readable table.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        let t = &self.totals;
        let revision = self
            .current_revision
            .map_or_else(|| "-".to_owned(), |r| r.to_string());
        let _ = writeln!(
            out,
            "daemonset {}/{}  strategy {}  revision {revision}",
            self.namespace, self.name, self.strategy
        );
        let _ = writeln!(
            out,
            "desired {}  current {}  updated {}  ready {}  available {}",
            t.desired, t.current, t.updated, t.ready, t.available
        );
        let _ = writeln!(out, "state {}{}", self.state, self.state_detail());
        let _ = writeln!(
            out,
            "why   {}",
            crate::sanitize::sanitize(&self.blocker.message)
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<28} {:<9} {:<8} {:<6} {:<8} POD / REASON",
            "NODE", "ELIGIBLE", "REVISION", "READY", "CANARY"
        );
        for n in &self.nodes {
            let revision = n.revision.map_or_else(
                || "-".to_owned(),
                |r| format!("{r}{}", if n.updated { "" } else { " (old)" }),
            );
            let detail = match (&n.pod, n.reasons.first()) {
                (Some(pod), _) => format!(
                    "{pod}{}",
                    n.failure
                        .as_ref()
                        .or(n.problem.as_ref())
                        .map(|p| format!(" {p}"))
                        .unwrap_or_default()
                ),
                (None, Some(reason)) => reason.clone(),
                (None, None) => "no pod".to_owned(),
            };
            let _ = writeln!(
                out,
                "{:<28} {:<9} {:<8} {:<6} {:<8} {detail}",
                n.name,
                yes_no(n.eligible),
                revision,
                yes_no(n.ready),
                if n.canary { "canary" } else { "" },
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "plan ({} to advance):", self.plan.len());
        for (i, step) in self.plan.iter().enumerate() {
            let canary = if step.canary { " [canary]" } else { "" };
            let _ = writeln!(out, "  {:>3}. {}{canary} {}", i + 1, step.node, step.group);
        }
        for s in &self.skipped {
            let _ = writeln!(out, "  skip {}: {}", s.node, s.reason);
        }
        out
    }

    fn state_detail(&self) -> String {
        let mut parts = Vec::new();
        if let Some(stalled) = &self.stalled {
            parts.push(stalled.clone());
        }
        if let Some(pause) = &self.rollout.pause {
            parts.push(format!("by {}", pause.by));
            if let Some(at) = pause.at {
                parts.push(format!("at {at}"));
            }
            if let Some(reason) = &pause.reason {
                parts.push(format!("reason: {reason}"));
            }
        }
        if !self.rollout.batch_nodes.is_empty() {
            parts.push(format!("batch: {}", self.rollout.batch_nodes.join(",")));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    }
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::{NEW, all_old, ds, ready_pod, replace, snapshot, t};

    const NODES: [&str; 3] = ["n1", "n2", "n3"];

    #[test]
    fn json_reports_nodes_state_and_plan() {
        let paused = ds(
            false,
            &[
                ("rollcall.dev/paused-by", "rollcall auto"),
                ("rollcall.dev/pause-reason", "node n2: CrashLoopBackOff"),
                ("rollcall.dev/canaries", "n3"),
            ],
        );
        let pods = replace(all_old(&NODES), vec![ready_pod("n1", NEW, 10)]);
        let report = StatusReport::build(&snapshot(paused, &NODES, pods), t(100)).unwrap();
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["state"], "paused");
        assert_eq!(
            json["rollout"]["pause"]["reason"],
            "node n2: CrashLoopBackOff"
        );
        assert_eq!(json["currentRevision"], 2);
        assert_eq!(json["strategy"], "OnDelete");
        let n1 = &json["nodes"][0];
        assert_eq!(
            (
                n1["name"].as_str(),
                n1["revision"].as_i64(),
                n1["updated"].as_bool(),
                n1["ready"].as_bool(),
                n1["eligible"].as_bool()
            ),
            (Some("n1"), Some(2), Some(true), Some(true), Some(true))
        );
        assert_eq!(json["nodes"][1]["revision"], 1);
        let plan: Vec<&str> = report.plan.iter().map(|p| p.node.as_str()).collect();
        assert_eq!(plan, ["n3", "n2"], "the canary goes first");
        assert_eq!(
            report.skipped[0].reason,
            "already runs the current revision"
        );
        assert_eq!(json["totals"]["updated"], 1);
        let table = report.render_table();
        assert!(
            table.contains("state paused (by rollcall auto, reason: node n2: CrashLoopBackOff)"),
            "{table}"
        );
    }
}
