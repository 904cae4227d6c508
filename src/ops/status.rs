//! The rollout status report that `rollcall status` prints (JSON or a table)
//! and that a second console or process sees the same way: the DaemonSet's
//! strategy and revision, the durable rollout state, the totals, every node
//! (revision, readiness, eligibility, canary) and the plan with skipped nodes.
//!
//! Pure: built from a [`Snapshot`] and `now`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::engine::coverage::Totals;
use crate::engine::owner::{SpecOwner, spec_owner};
use crate::engine::recorded_status::{StatusCounts, StatusDifference, rehearsal_difference};
use crate::ops::advance::skip_text;
use crate::ops::error::OpsError;
use crate::ops::owner_guard::{Revert, reverted};
use crate::ops::snapshot::Snapshot;
use crate::ops::state::RolloutState;
use crate::ops::status_kubelets::{MinorNodes, kubelet_skew};
pub use crate::ops::status_node::{NodeProblem, NodeStatus};
use crate::ops::status_node::{eligibility_word, names};
use crate::ops::status_summary::Summary;
use crate::rows::fit::{FitTarget, node_fit};

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
    /// `stalled` or `paused`; or `pause-reverted` / `rollback-reverted` when a
    /// GitOps controller undid what the stored state claims (see `revert`).
    pub state: String,
    /// Why the rollout is (not) moving, with the nodes that hold it up.
    pub blocker: crate::engine::blockers::Blocker,
    /// For a run whose driver stopped renewing its lease: "auto-advance by X
    /// stopped responding at T" (a new run may take it over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled: Option<String>,
    /// Who owns the spec (Argo CD, Flux, Fleet, Helm, kubectl apply), if a tool does.
    pub owner: Option<SpecOwner>,
    /// The pause or rollback another field manager reverted, if any.
    pub revert: Option<Revert>,
    /// The durable rollout state in full.
    pub rollout: RolloutState,
    /// The DaemonSet status fields, computed.
    pub totals: Totals,
    /// In a rehearsal of a dump (`rollcall sim -f`): how these counts differ
    /// from the ones the dump recorded, and why; absent when they agree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_status: Option<StatusDifference>,
    /// Counts by eligibility, revision and readiness; the problems.
    pub summary: Summary,
    /// When the DaemonSet's nodes (eligible, or running its pod) run more
    /// than one kubelet minor version: nodes per minor, `{"v1.30": 9,
    /// "v1.29": 5}`; `null` otherwise. Skew is a known cause of sandbox
    /// failures in a rollout.
    pub kubelet_versions: Option<std::collections::BTreeMap<String, usize>>,
    /// With [`StatusReport::kubelet_versions`]: the nodes of every minor but
    /// the newest (`[{"version": "v1.29", "nodes": [...]}]`), oldest first.
    pub kubelet_skew: Vec<MinorNodes>,
    /// One entry per node, by name.
    pub nodes: Vec<NodeStatus>,
    /// The nodes still to advance, in order.
    pub plan: Vec<PlanEntry>,
    /// Nodes left out of the plan, with the reason.
    pub skipped: Vec<SkippedEntry>,
    /// Malformed `rollcall.dev/...` annotations that were ignored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the user's rights keep out of this report (kinds the server
    /// forbids), each with what is missing because of it; empty when none.
    pub limitations: Vec<String>,
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
    /// A control-plane node (the plan moves it last).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub control_plane: bool,
}

/// A skipped node.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedEntry {
    /// Node name.
    pub node: String,
    /// Why, in words.
    pub reason: String,
}

/// The kubelet skew among the DaemonSet's nodes (eligible, or running its pod).
fn skew_of<'a>(
    rows: impl Iterator<Item = &'a crate::engine::coverage::NodeCoverage>,
    lookup: &crate::ops::snapshot::NodeLookup<'_>,
) -> crate::ops::status_kubelets::KubeletSkew {
    kubelet_skew(
        rows.filter(|row| row.verdict.should_run || !row.pods.is_empty())
            .filter_map(|row| lookup.get(&row.node))
            .map(|node| {
                (
                    node.name(),
                    node.status.node_info.kubelet_version.as_deref(),
                )
            }),
    )
    .unwrap_or_default()
}

/// The one state word, a noticed revert taking precedence: what
/// `rollcall status` and the console's plan view show.
pub fn state_label(
    revert: Option<&Revert>,
    state: &RolloutState,
    blocker: &crate::engine::blockers::Blocker,
    now: jiff::Timestamp,
) -> &'static str {
    revert.map_or_else(
        || crate::ops::state::state_word(state, blocker, now),
        Revert::label,
    )
}

impl StatusReport {
    /// Builds the report.
    pub fn build(snapshot: &Snapshot<'_>, now: jiff::Timestamp) -> Result<Self, OpsError> {
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
        let lookup = snapshot.node_lookup();
        let fit_target = FitTarget::of(&snapshot.ds, snapshot.pods());
        let fit_of = |row: &crate::engine::coverage::NodeCoverage| {
            let target = fit_target.as_ref()?;
            let node = lookup.get(&row.node)?;
            node_fit(target, node, row, snapshot.usage_on(&row.node))
        };
        let nodes = rows
            .iter()
            .map(|row| {
                let live: Vec<_> = row.pods.iter().filter(|p| !p.terminating).collect();
                let pod = live.last().copied().or_else(|| row.pods.last());
                NodeStatus {
                    name: row.node.to_string(),
                    eligible: row.verdict.should_run,
                    eligibility: crate::engine::vocabulary::Eligibility::of(
                        &row.verdict,
                        pod.is_some(),
                    ),
                    should_continue_running: row.verdict.should_continue_running,
                    reasons: row
                        .verdict
                        .reasons
                        .iter()
                        .map(|r| r.message.clone())
                        .collect(),
                    pod: pod.map(|p| p.name.to_string()),
                    revision: pod.and_then(|p| p.revision),
                    updated: pod.is_some_and(|p| p.updated),
                    ready: pod.is_some_and(|p| p.ready),
                    available: pod.is_some_and(|p| p.available),
                    problem: pod.and_then(NodeProblem::of),
                    failure: pod.and_then(|p| crate::engine::health::pod_health(p).failure_text()),
                    pod_count: live.len(),
                    fit: fit_of(row),
                    canary: canaries.contains(row.node.as_str())
                        || state.canaries.contains(row.node.as_str()),
                }
            })
            .collect();
        let skew = skew_of(rows.iter(), &lookup);
        let blocker = crate::ops::state::blocker_with_pause(&state, snapshot.blocker(&rows, now));
        let target = snapshot.target();
        let revert = reverted(&snapshot.ds, &state);
        let mut report = Self {
            namespace: target.namespace,
            name: target.name,
            strategy: snapshot.update_strategy().type_name().to_owned(),
            current_revision: index.current().map(|c| c.number),
            state: state_label(revert.as_ref(), &state, &blocker, now).to_owned(),
            stalled: state.run_owner(now).expired_text(),
            blocker,
            owner: spec_owner(&snapshot.ds.metadata),
            revert,
            totals: Snapshot::totals(&rows),
            recorded_status: None,
            kubelet_versions: (!skew.versions.is_empty()).then_some(skew.versions),
            kubelet_skew: skew.behind,
            nodes,
            plan: plan
                .steps
                .iter()
                .map(|s| PlanEntry {
                    node: s.node.clone(),
                    canary: s.canary,
                    group: s.group.clone(),
                    pod: s.pod.as_ref().map(|p| p.name.to_string()),
                    control_plane: s.control_plane,
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
            warnings: snapshot.state_warnings(),
            limitations: crate::cluster::access::limitations(snapshot.forbidden.iter().copied()),
            summary: Summary::default(),
        };
        report.summary = Summary::build(&report.nodes, report.current_revision);
        report.recorded_status =
            rehearsal_difference(&snapshot.ds, StatusCounts::of_totals(&report.totals));
        Ok(report)
    }

    /// The human-readable report: the header and the summary, then the node
    /// table and the whole plan when `all` or when there are at most
    /// [`NODES_LISTED`] nodes (else a count and how to see them).
    pub fn render_table(&self, all: bool) -> String {
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
            "desired {}  current {}  updated {}  ready {}  available {}  misscheduled {}",
            t.desired, t.current, t.updated, t.ready, t.available, t.misscheduled
        );
        if let Some(difference) = &self.recorded_status {
            let _ = writeln!(out, "dump  {}", difference.message);
        }
        if let Some(owner) = &self.owner {
            let _ = writeln!(out, "managed by {}", owner.describe());
        }
        let _ = writeln!(out, "state {}{}", self.state, self.state_detail());
        for warning in &self.warnings {
            let _ = writeln!(out, "warning: {warning}");
        }
        for limitation in &self.limitations {
            let _ = writeln!(out, "view limited: {limitation}");
        }
        if let Some(versions) = &self.kubelet_versions {
            let skew = crate::ops::status_kubelets::KubeletSkew {
                versions: versions.clone(),
                behind: self.kubelet_skew.clone(),
            };
            let _ = writeln!(
                out,
                "kubelets  {} minor versions: {}",
                versions.len(),
                crate::sanitize::sanitize(&skew.describe())
            );
        }
        let _ = writeln!(
            out,
            "why   {}",
            crate::sanitize::sanitize(&self.blocker.message)
        );
        out.push_str(&self.summary.render());
        self.render_fit(&mut out);
        let _ = writeln!(out);
        let all = all || self.nodes.len() <= NODES_LISTED;
        if all {
            self.render_nodes(&mut out);
        } else {
            let _ = writeln!(
                out,
                "{} nodes: not listed (--all lists every node; -o json has them all)",
                self.nodes.len()
            );
        }
        let _ = writeln!(out);
        self.render_plan(&mut out, all);
        out
    }

    fn render_nodes(&self, out: &mut String) {
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
                        .or(n.problem.as_ref().map(|p| &p.reason))
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
                eligibility_word(n),
                revision,
                yes_no(n.ready),
                if n.canary { "canary" } else { "" },
            );
        }
    }

    /// The nodes the update revision's pod will not fit on, and those
    /// where it preempts, named (capped).
    fn render_fit(&self, out: &mut String) {
        let named = |wanted: fn(&crate::engine::fit::Fit) -> bool| -> Vec<String> {
            self.nodes
                .iter()
                .filter(|n| n.fit.as_ref().is_some_and(wanted))
                .map(|n| n.name.clone())
                .collect()
        };
        // One line per first reason (cpu, a host port, …), so no node is
        // named under another node's reason; the message is the group's first.
        let mut groups: Vec<(Option<&crate::engine::fit::ReasonCode>, String, Vec<String>)> =
            Vec::new();
        for node in &self.nodes {
            let Some(fit) = node.fit.as_ref().filter(|f| !f.fits) else {
                continue;
            };
            let (code, message) = fit.reasons.first().map_or((None, String::new()), |r| {
                (Some(&r.code), r.message.clone())
            });
            match groups.iter_mut().find(|(c, _, _)| *c == code) {
                Some((_, _, nodes)) => nodes.push(node.name.clone()),
                None => groups.push((code, message, vec![node.name.clone()])),
            }
        }
        for (index, (_, message, nodes)) in groups.iter().enumerate() {
            let label = if index == 0 { "won't fit" } else { "" };
            let why = if message.is_empty() {
                String::new()
            } else {
                format!(" — {}", crate::sanitize::sanitize(message))
            };
            let _ = writeln!(
                out,
                "{label:<9}  {} node(s): {}{why}",
                nodes.len(),
                names(nodes)
            );
        }
        let preempting = named(|f| f.fits && !f.preempts.is_empty());
        if !preempting.is_empty() {
            let victims: usize = self
                .nodes
                .iter()
                .filter_map(|n| n.fit.as_ref())
                .map(|f| f.preempts.len())
                .sum();
            let _ = writeln!(
                out,
                "preempts  {victims} pod(s) on {} node(s): {}",
                preempting.len(),
                names(&preempting)
            );
        }
    }

    fn render_plan(&self, out: &mut String, all: bool) {
        let _ = writeln!(out, "plan ({} to advance):", self.plan.len());
        let shown = if all { self.plan.len() } else { PLAN_LISTED };
        for (i, step) in self.plan.iter().enumerate().take(shown) {
            let mark = crate::ops::advance::step_mark(step.canary, step.control_plane);
            let _ = writeln!(out, "  {:>3}. {}{mark} {}", i + 1, step.node, step.group);
        }
        if self.plan.len() > shown {
            let _ = writeln!(out, "  … {} more (--all)", self.plan.len() - shown);
        }
        if all {
            for s in &self.skipped {
                let _ = writeln!(out, "  skip {}: {}", s.node, s.reason);
            }
            return;
        }
        let mut reasons: std::collections::BTreeMap<&str, Vec<String>> =
            std::collections::BTreeMap::new();
        for s in &self.skipped {
            reasons.entry(&s.reason).or_default().push(s.node.clone());
        }
        for (reason, nodes) in reasons {
            let _ = writeln!(
                out,
                "  skip {} node(s): {reason} ({})",
                nodes.len(),
                names(&nodes)
            );
        }
    }

    fn state_detail(&self) -> String {
        if let Some(revert) = &self.revert {
            return format!(" ({})", revert.describe());
        }
        let mut parts = Vec::new();
        if let Some(stalled) = &self.stalled {
            parts.push(stalled.clone());
        }
        if let Some(fleet) = self.rollout.fleet_run_driving() {
            parts.push(fleet);
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

/// Up to this many nodes, `status` lists every node without `--all`.
pub const NODES_LISTED: usize = 30;

/// Without `--all`, a long plan shows this many steps.
const PLAN_LISTED: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::{NEW, all_old, ds, ready_pod, replace, snapshot, t};

    const NODES: [&str; 3] = ["n1", "n2", "n3"];

    #[test]
    fn malformed_annotations_are_reported_not_fatal() {
        let bad = ds(
            false,
            &[
                ("rollcall.dev/canary-selector", "zone in (a"),
                ("rollcall.dev/batch", "lots"),
            ],
        );
        let report = StatusReport::build(&snapshot(bad, &NODES, all_old(&NODES)), t(100)).unwrap();
        assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
        assert_eq!(report.plan.len(), 3, "the plan is still made");
        let table = report.render_table(true);
        assert!(
            table.contains(
                "warning: ignored annotation rollcall.dev/canary-selector=\"zone in (a\""
            ),
            "{table}"
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["warnings"].as_array().map(Vec::len), Some(2));
        assert_eq!(json["rollout"]["mode"], "idle");
    }

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
        assert_eq!(json["summary"]["nodes"], 3);
        assert!(json["rollout"].get("batchNodes").is_some(), "{json}");
        assert!(json["rollout"].get("batch_nodes").is_none(), "{json}");
        let table = report.render_table(false);
        assert!(
            table.contains("state paused (by rollcall auto, reason: node n2: CrashLoopBackOff)"),
            "{table}"
        );
    }

    #[test]
    fn an_owner_and_a_reverted_pause_are_reported() {
        let tracking = (
            "argocd.argoproj.io/tracking-id",
            "node-agents:apps/DaemonSet:kube-system/agent",
        );
        let owned = |rolling: bool| {
            ds(
                rolling,
                &[
                    tracking,
                    ("rollcall.dev/paused-by", "ana@box"),
                    (
                        "rollcall.dev/saved-update-strategy",
                        r#"{"type":"RollingUpdate"}"#,
                    ),
                ],
            )
        };
        // Still paused: the strategy is OnDelete as pause left it.
        let report =
            StatusReport::build(&snapshot(owned(false), &NODES, all_old(&NODES)), t(100)).unwrap();
        assert_eq!(report.state, "paused");
        assert!(report.revert.is_none());
        // Self-healed back to RollingUpdate: no longer paused.
        let report =
            StatusReport::build(&snapshot(owned(true), &NODES, all_old(&NODES)), t(100)).unwrap();
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["state"], "pause-reverted");
        assert_eq!(json["owner"]["tool"], "argoCd");
        assert_eq!(json["owner"]["name"], "node-agents");
        assert_eq!(json["revert"]["what"], "pause");
        let table = report.render_table(true);
        assert!(
            table.contains("managed by Argo CD app node-agents"),
            "{table}"
        );
        assert!(
            table.contains("state pause-reverted (pause reverted by another field manager)"),
            "{table}"
        );
    }

    #[test]
    fn a_rehearsal_says_how_it_differs_from_the_dump() {
        let record = r#"{"recorded":{"desired":4,"current":4,"updated":0,"ready":4,"available":4},
            "reasons":[{"code":"podOnAbsentNode","count":1,"nodes":["n4"],
            "message":"pods on 1 node absent from the dump (n4)"}]}"#;
        let rehearsal = ds(false, &[("rollcall.dev/dump-status", record)]);
        let report =
            StatusReport::build(&snapshot(rehearsal, &NODES, all_old(&NODES)), t(100)).unwrap();
        let table = report.render_table(true);
        assert!(
            table.contains("\ndump  the dump recorded desired 4, ready 4; rehearsal has desired 3, ready 3: pods on 1 node absent from the dump (n4)\n"),
            "{table}"
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["recordedStatus"]["recorded"]["desired"], 4, "{json}");
        assert_eq!(json["recordedStatus"]["actual"]["desired"], 3, "{json}");
        assert_eq!(
            json["recordedStatus"]["reasons"][0]["code"],
            "podOnAbsentNode"
        );
        // Counts that agree with the record: nothing said.
        let agreeing = record.replace(":4", ":3");
        let rehearsal = ds(false, &[("rollcall.dev/dump-status", &agreeing)]);
        let report =
            StatusReport::build(&snapshot(rehearsal, &NODES, all_old(&NODES)), t(100)).unwrap();
        assert!(!report.render_table(true).contains("dump "));
        assert!(
            serde_json::to_value(&report)
                .unwrap()
                .get("recordedStatus")
                .is_none()
        );
    }

    /// Issue 30 item 3: nothing on an old revision is `idle`, whatever the
    /// strategy and budget, with the NotReady node named in the why line.
    #[test]
    fn a_rolled_out_daemonset_with_a_not_ready_node_is_idle() {
        use crate::engine::fixtures::{daemonset, node, pod, revision_of};
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        let names: Vec<String> = (1..=14).map(|i| format!("general-{i:02}")).collect();
        let nodes: Vec<crate::model::Node> = names
            .iter()
            .map(|n| match n.as_str() {
                "general-06" => node(n).not_ready().build(),
                _ => node(n).build(),
            })
            .collect();
        // The node controller marked the pod on the NotReady node not Ready.
        let pods: Vec<crate::model::Pod> = names
            .iter()
            .map(|n| match n.as_str() {
                "general-06" => pod(&format!("agent-{n}-{NEW}"), n, NEW)
                    .created(10)
                    .running_not_ready(600)
                    .build(),
                _ => ready_pod(n, NEW, 10),
            })
            .collect();
        let percent = daemonset("v2")
            .rolling(IntOrString::String("10%".into()), IntOrString::Int(0))
            .build();
        let cases = [
            ("OnDelete", ds(false, &[])),
            ("RollingUpdate maxUnavailable=1", ds(true, &[])),
            ("RollingUpdate maxUnavailable=10%", percent),
        ];
        for (name, daemonset_) in cases {
            let revisions = vec![
                revision_of(&daemonset("v1").build(), crate::ops::testing::OLD, 1),
                revision_of(&daemonset_, NEW, 2),
            ];
            let snapshot = Snapshot::new(daemonset_, nodes.clone(), pods.clone(), revisions);
            let report = StatusReport::build(&snapshot, t(100)).unwrap();
            assert_eq!(report.state, "idle", "{name}: {:?}", report.blocker);
            let table = report.render_table(false);
            assert!(table.contains("\nstate idle\n"), "{name}: {table}");
            assert!(
                table.contains(
                    "\nwhy   nothing to do: every node runs the current revision; \
                     1 node(s) not available: general-06 (node NotReady)\n"
                ),
                "{name}: {table}"
            );
        }
    }
}
