//! What `rollcall status` says first: the counts of a status report's nodes
//! by eligibility, revision and readiness, and the problems grouped by reason
//! (what changed between two reports is `ops::status_changes`).
//!
//! Pure: built from the report's nodes, no clock and no I/O.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::engine::vocabulary::Eligibility;
use crate::ops::status_node::{NodeStatus, names};

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

/// The node's problem, if it has one.
fn problem_of(node: &NodeStatus) -> Option<String> {
    if let Some(problem) = &node.problem {
        return Some(problem.reason.clone());
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
    /// Counts a report's nodes (`current_revision`: the DaemonSet's).
    pub fn build(nodes: &[NodeStatus], current_revision: Option<i64>) -> Self {
        let mut summary = Self {
            nodes: nodes.len(),
            ..Self::default()
        };
        let mut revisions: BTreeMap<Option<i64>, usize> = BTreeMap::new();
        // The current revision is listed even before any node runs it.
        if current_revision.is_some() {
            revisions.insert(current_revision, 0);
        }
        let mut problems: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for node in nodes {
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
                current: revision.is_some() && revision == current_revision,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::status::StatusReport;
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
        let summary = report.summary.clone();
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
        let summary = report(&nodes, all_old(&nodes)).summary;
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
        let summary = report(&nodes, pods).summary;
        assert_eq!(
            summary.problems,
            [Problem {
                problem: "no pod".to_owned(),
                nodes: vec!["n2".to_owned()]
            }]
        );
        assert!(summary.render().contains("no pod 1"));
    }
}
