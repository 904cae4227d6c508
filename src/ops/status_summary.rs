//! What `rollcall status` says first, and what `status --watch` prints when
//! something changes: the counts of a [`StatusReport`] by eligibility, revision
//! and readiness, the problems grouped by reason, and the difference between two
//! reports as a few words per change.
//!
//! Pure: built from reports, no clock and no I/O (the caller stamps the time).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::engine::vocabulary::Eligibility;
use crate::ops::status::{NodeStatus, StatusReport};

/// How many node names a problem line lists before "+N more".
const NAMES_SHOWN: usize = 5;

/// The counts `status` leads with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Every node of the cluster.
    pub nodes: usize,
    /// Nodes where a daemon pod should run (`yes`).
    pub eligible: usize,
    /// Nodes where no new pod goes but the running one stays (`keep`).
    pub keep: usize,
    /// Nodes where no daemon pod belongs (`no`).
    pub not_eligible: usize,
    /// Nodes that could not be read (`unknown`): only known from their pod.
    pub unknown: usize,
    /// Nodes per revision of their pod, newest first; `revision: null` counts
    /// eligible nodes without a pod.
    pub revisions: Vec<RevisionCount>,
    /// Nodes whose pod is Ready.
    pub ready: usize,
    /// Nodes with a pod that is not Ready.
    pub not_ready: usize,
    /// Problems, most frequent first.
    pub problems: Vec<Problem>,
}

/// Nodes running one revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionCount {
    /// The revision number (`null`: no pod).
    pub revision: Option<i64>,
    /// Whether it is the current revision.
    pub current: bool,
    /// How many nodes.
    pub nodes: usize,
}

/// One kind of problem and the nodes that have it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// What is wrong (`CrashLoopBackOff`, `no pod`, `not Ready`, `2 pods`).
    pub problem: String,
    /// The nodes, by name.
    pub nodes: Vec<String>,
}

/// The eligibility word for a node, the same as the console's (the one
/// vocabulary, [`crate::engine::vocabulary::Eligibility`]).
pub fn eligibility_word(node: &NodeStatus) -> &'static str {
    node.eligibility.word()
}

/// The node's problem, if it has one.
fn problem_of(node: &NodeStatus) -> Option<String> {
    if let Some(problem) = &node.problem {
        return Some(problem.clone());
    }
    if node.pod_count > 1 {
        return Some(format!("{} pods", node.pod_count));
    }
    match (node.pod.is_some(), node.eligible) {
        (false, true) => Some("no pod".to_owned()),
        (true, _) if !node.ready => Some("not Ready".to_owned()),
        _ => None,
    }
}

impl Summary {
    /// Counts the report's nodes.
    pub fn build(report: &StatusReport) -> Self {
        let mut summary = Self {
            nodes: report.nodes.len(),
            ..Self::default()
        };
        let mut revisions: BTreeMap<Option<i64>, usize> = BTreeMap::new();
        // The current revision is listed even before any node runs it.
        if report.current_revision.is_some() {
            revisions.insert(report.current_revision, 0);
        }
        let mut problems: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for node in &report.nodes {
            match node.eligibility {
                Eligibility::Yes => summary.eligible += 1,
                Eligibility::Keep => summary.keep += 1,
                Eligibility::No => summary.not_eligible += 1,
                Eligibility::Unknown => summary.unknown += 1,
            }
            if node.pod.is_some() {
                *revisions.entry(node.revision).or_default() += 1;
                if node.ready {
                    summary.ready += 1;
                } else {
                    summary.not_ready += 1;
                }
            } else if node.eligible {
                *revisions.entry(None).or_default() += 1;
            }
            if let Some(problem) = problem_of(node) {
                problems.entry(problem).or_default().push(node.name.clone());
            }
        }
        summary.revisions = revisions
            .into_iter()
            .rev()
            .map(|(revision, nodes)| RevisionCount {
                revision,
                current: revision.is_some() && revision == report.current_revision,
                nodes,
            })
            .collect();
        let mut problems: Vec<Problem> = problems
            .into_iter()
            .map(|(problem, nodes)| Problem { problem, nodes })
            .collect();
        problems.sort_by_key(|p| std::cmp::Reverse(p.nodes.len()));
        summary.problems = problems;
        summary
    }

    /// The summary as text lines (no trailing blank line).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "nodes {}: eligible yes {}, keep {}, no {}",
            self.nodes, self.eligible, self.keep, self.not_eligible
        );
        if self.unknown > 0 {
            let _ = write!(out, ", unknown {}", self.unknown);
        }
        let _ = writeln!(
            out,
            " · pods ready {}, not ready {}",
            self.ready, self.not_ready
        );
        let revisions: Vec<String> = self
            .revisions
            .iter()
            .map(|r| match r.revision {
                Some(n) if r.current => format!("r{n} (current) {}", r.nodes),
                Some(n) => format!("r{n} {}", r.nodes),
                None => format!("no pod {}", r.nodes),
            })
            .collect();
        let _ = writeln!(out, "revisions: {}", or_none(&revisions.join(", ")));
        if self.problems.is_empty() {
            let _ = writeln!(out, "problems: none");
        } else {
            let _ = writeln!(out, "problems:");
            for problem in &self.problems {
                let _ = writeln!(
                    out,
                    "  {:<24} {:>6}  {}",
                    problem.problem,
                    problem.nodes.len(),
                    names(&problem.nodes)
                );
            }
        }
        out
    }
}

fn or_none(text: &str) -> &str {
    if text.is_empty() { "none" } else { text }
}

/// The first few names and "+N more".
pub fn names(nodes: &[String]) -> String {
    let mut text = nodes
        .iter()
        .take(NAMES_SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if nodes.len() > NAMES_SHOWN {
        let _ = write!(text, " +{} more", nodes.len() - NAMES_SHOWN);
    }
    text
}

/// What changed from `before` to `after`, in words (empty: nothing shown changed).
pub fn changes(before: &StatusReport, after: &StatusReport) -> Vec<String> {
    let mut out = Vec::new();
    if before.state != after.state {
        out.push(format!("state {} → {}", before.state, after.state));
    }
    if before.current_revision != after.current_revision {
        out.push(format!(
            "current revision {} → {}",
            revision_text(before.current_revision),
            revision_text(after.current_revision)
        ));
    }
    if before.rollout.pause != after.rollout.pause
        && let Some(pause) = &after.rollout.pause
    {
        out.push(format!(
            "paused by {}{}",
            pause.by,
            pause
                .reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ));
    }
    match (&before.recorded_status, &after.recorded_status) {
        (None, Some(difference)) => out.push(format!("dump: {}", difference.message)),
        (Some(_), None) => out.push("counts agree with the dump's again".to_owned()),
        _ => {}
    }
    let (b, a) = (&before.totals, &after.totals);
    for (name, from, to) in [
        ("desired", b.desired, a.desired),
        ("updated", b.updated, a.updated),
        ("ready", b.ready, a.ready),
        ("available", b.available, a.available),
    ] {
        if from != to {
            out.push(format!("{name} {from} → {to}"));
        }
    }
    let old: BTreeMap<&str, &NodeStatus> =
        before.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    let mut moved = Vec::new();
    for node in &after.nodes {
        let text = match old.get(node.name.as_str()) {
            None => Some("added".to_owned()),
            Some(was) => node_change(was, node),
        };
        if let Some(text) = text {
            moved.push(format!("{} {text}", node.name));
        }
    }
    let now: std::collections::BTreeSet<&str> =
        after.nodes.iter().map(|n| n.name.as_str()).collect();
    moved.extend(
        before
            .nodes
            .iter()
            .filter(|n| !now.contains(n.name.as_str()))
            .map(|n| format!("{} removed", n.name)),
    );
    let total = moved.len();
    out.extend(moved.into_iter().take(NAMES_SHOWN));
    if total > NAMES_SHOWN {
        out.push(format!("+{} more node(s) changed", total - NAMES_SHOWN));
    }
    out
}

fn revision_text(revision: Option<i64>) -> String {
    revision.map_or_else(|| "-".to_owned(), |r| format!("r{r}"))
}

/// One node's change: revision, readiness, problem, eligibility.
fn node_change(was: &NodeStatus, now: &NodeStatus) -> Option<String> {
    let mut parts = Vec::new();
    if was.pod.is_some() != now.pod.is_some() || was.revision != now.revision {
        let pod = |n: &NodeStatus| {
            if n.pod.is_some() {
                revision_text(n.revision)
            } else {
                "no pod".to_owned()
            }
        };
        parts.push(format!("{} → {}", pod(was), pod(now)));
    }
    if was.ready != now.ready && now.pod.is_some() {
        parts.push(if now.ready { "Ready" } else { "not Ready" }.to_owned());
    }
    if was.problem != now.problem {
        parts.push(match (&was.problem, &now.problem) {
            (_, Some(problem)) => problem.clone(),
            (Some(gone), None) => format!("{gone} cleared"),
            (None, None) => String::new(),
        });
    }
    if eligibility_word(was) != eligibility_word(now) {
        parts.push(format!(
            "eligible {} → {}",
            eligibility_word(was),
            eligibility_word(now)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::{NEW, all_old, ds, ready_pod, replace, snapshot, t};

    fn report(nodes: &[&str], pods: Vec<crate::model::Pod>) -> StatusReport {
        StatusReport::build(&snapshot(ds(false, &[]), nodes, pods), t(100)).unwrap()
    }

    #[test]
    fn summary_counts_by_revision_and_eligibility() {
        let nodes = ["n1", "n2", "n3"];
        let report = report(
            &nodes,
            replace(all_old(&nodes), vec![ready_pod("n1", NEW, 10)]),
        );
        let summary = Summary::build(&report);
        assert_eq!((summary.nodes, summary.eligible, summary.ready), (3, 3, 3));
        assert_eq!(
            summary.revisions,
            [
                RevisionCount {
                    revision: Some(2),
                    current: true,
                    nodes: 1
                },
                RevisionCount {
                    revision: Some(1),
                    current: false,
                    nodes: 2
                },
            ]
        );
        let text = summary.render();
        assert!(text.contains("revisions: r2 (current) 1, r1 2"), "{text}");
        assert!(text.contains("problems: none"), "{text}");
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["notEligible"], 0);
        assert_eq!(json["notReady"], 0);
    }

    #[test]
    fn the_current_revision_is_listed_before_any_node_runs_it() {
        let nodes = ["n1", "n2"];
        let summary = Summary::build(&report(&nodes, all_old(&nodes)));
        assert!(
            summary.render().contains("revisions: r2 (current) 0, r1 2"),
            "{}",
            summary.render()
        );
    }

    #[test]
    fn the_table_lists_nodes_only_when_few_or_asked() {
        let names: Vec<String> = (1..=31).map(|i| format!("node-{i:02}")).collect();
        let nodes: Vec<&str> = names.iter().map(String::as_str).collect();
        let big = report(&nodes, all_old(&nodes));
        let summary_only = big.render_table(false);
        assert!(
            summary_only.contains("31 nodes: not listed (--all"),
            "{summary_only}"
        );
        assert!(!summary_only.contains("node-31"), "{summary_only}");
        assert!(summary_only.contains("… 21 more (--all)"), "{summary_only}");
        let all = big.render_table(true);
        assert!(all.contains("NODE ") && all.contains("node-31"), "{all}");
        let few = report(&nodes[..30], all_old(&nodes[..30])).render_table(false);
        assert!(few.contains("node-30"), "{few}");
    }

    #[test]
    fn a_node_without_a_pod_is_a_problem() {
        let nodes = ["n1", "n2"];
        let pods = all_old(&["n1"]);
        let summary = Summary::build(&report(&nodes, pods));
        assert_eq!(
            summary.problems,
            [Problem {
                problem: "no pod".to_owned(),
                nodes: vec!["n2".to_owned()]
            }]
        );
        assert!(summary.render().contains("no pod 1"));
    }

    #[test]
    fn changes_name_what_moved() {
        let nodes = ["n1", "n2", "n3"];
        let before = report(&nodes, all_old(&nodes));
        assert!(changes(&before, &before).is_empty());
        let after = report(
            &nodes,
            replace(all_old(&nodes), vec![ready_pod("n2", NEW, 10)]),
        );
        let lines = changes(&before, &after);
        assert!(lines.contains(&"updated 0 → 1".to_owned()), "{lines:?}");
        assert!(lines.contains(&"n2 r1 → r2".to_owned()), "{lines:?}");
        assert_eq!(lines.len(), 2, "{lines:?}");
        // A rehearsal whose counts leave, then rejoin, the dump's.
        let mut rehearsal = after.clone();
        rehearsal.recorded_status = Some(crate::engine::recorded_status::StatusDifference {
            recorded: crate::engine::recorded_status::StatusCounts::default(),
            actual: crate::engine::recorded_status::StatusCounts::default(),
            reasons: Vec::new(),
            message:
                "the dump recorded desired 3, updated 0; rehearsal has desired 3, updated 1: …"
                    .to_owned(),
        });
        assert_eq!(
            changes(&after, &rehearsal),
            ["dump: the dump recorded desired 3, updated 0; rehearsal has desired 3, updated 1: …"]
        );
        assert_eq!(
            changes(&rehearsal, &after),
            ["counts agree with the dump's again"]
        );
    }

    #[test]
    fn names_are_capped() {
        let many: Vec<String> = (1..=7).map(|i| format!("n{i}")).collect();
        assert_eq!(names(&many), "n1, n2, n3, n4, n5 +2 more");
    }
}
