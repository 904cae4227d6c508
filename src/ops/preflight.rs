//! Checks made before any rollout work starts, by the console and the headless
//! commands alike (one decision, many callers): a canary selector must match an
//! eligible node, and no new node is advanced while pods already on the target
//! revision are failing.
//!
//! Pure: reads the snapshot's rows and nodes.

use crate::engine::coverage::NodeCoverage;
use crate::engine::health::pod_health;
use crate::engine::selector::Selector;
use crate::model::Node;
use crate::ops::error::OpsError;

/// A node whose updated pod is failing, with the reason in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailingNode {
    /// The node.
    pub node: String,
    /// The failure (reason and the container's own words), unsanitised.
    pub reason: String,
}

/// Nodes whose live pod already runs the current revision and is failing, by name.
/// Advancing more nodes onto that revision would spread the failure.
pub fn failing_updated<'r>(rows: impl IntoIterator<Item = &'r NodeCoverage>) -> Vec<FailingNode> {
    let mut failing: Vec<FailingNode> = rows
        .into_iter()
        .filter_map(|row| {
            row.pods
                .iter()
                .filter(|p| p.updated)
                .find_map(|p| pod_health(p).failure_text())
                .map(|reason| FailingNode {
                    node: row.node.to_string(),
                    reason,
                })
        })
        .collect();
    // Rows may come in any order (the console's are unordered): by name.
    failing.sort_by(|a, b| a.node.cmp(&b.node));
    failing
}

/// The refusal text for failing updated nodes (at most `shown` listed).
pub fn failing_text(failing: &[FailingNode], shown: usize) -> String {
    let mut list: Vec<String> = failing
        .iter()
        .take(shown)
        .map(|f| format!("{}: {}", f.node, crate::sanitize::sanitize(&f.reason)))
        .collect();
    if failing.len() > shown {
        list.push(format!("and {} more", failing.len() - shown));
    }
    format!(
        "{} node(s) already on the target revision are failing ({}); fix them or advance anyway with an explicit override",
        failing.len(),
        list.join("; ")
    )
}

/// Checks that a canary selector parses and matches at least one node the
/// DaemonSet should run on; a typo must not silently turn the canary stage
/// into an ordinary batch.
pub fn check_canary_selector<'r, 'n>(
    text: &str,
    rows: impl IntoIterator<Item = &'r NodeCoverage>,
    nodes: impl IntoIterator<Item = &'n Node>,
) -> Result<usize, OpsError> {
    let selector = Selector::parse(text)
        .map_err(|e| OpsError::Invalid(format!("bad canary selector {text:?}: {e}")))?;
    let eligible: std::collections::BTreeSet<&str> = rows
        .into_iter()
        .filter(|r| r.verdict.should_run)
        .map(|r| r.node.as_str())
        .collect();
    let matched = nodes
        .into_iter()
        .filter(|n| eligible.contains(n.name()) && selector.matches(Some(&n.labels)))
        .count();
    if matched == 0 {
        return Err(OpsError::Invalid(format!(
            "canary selector {text:?} matches no node the DaemonSet runs on ({} eligible node(s)); nothing was changed",
            eligible.len()
        )));
    }
    Ok(matched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixtures::{node, pod};
    use crate::ops::testing::{NEW, OLD, all_old, ds, replace, snapshot};

    const NODES: [&str; 3] = ["n1", "n2", "n3"];

    #[test]
    fn failing_updated_lists_only_current_revision_failures() {
        let crashing = pod("agent-n1-new", "n1", NEW)
            .running_not_ready(50)
            .waiting("CrashLoopBackOff", 3)
            .last_terminated(1, "Error", "exec format error")
            .build();
        let old_failing = pod("agent-n2-old", "n2", OLD)
            .running_not_ready(50)
            .waiting("CrashLoopBackOff", 3)
            .build();
        let pods = replace(all_old(&NODES), vec![crashing, old_failing]);
        let snap = snapshot(ds(false, &[]), &NODES, pods);
        let rows = snap.rows(&snap.index(), crate::ops::testing::t(100));
        let failing = failing_updated(&rows);
        assert_eq!(failing.len(), 1, "{failing:?}");
        assert_eq!(failing[0].node, "n1");
        assert!(failing[0].reason.contains("exec format error"));
        assert!(failing_text(&failing, 5).contains("n1: CrashLoopBackOff"));
    }

    #[test]
    fn a_canary_selector_that_matches_nothing_is_an_error() {
        let snap = snapshot(ds(false, &[]), &NODES, all_old(&NODES));
        let rows = snap.rows(&snap.index(), crate::ops::testing::t(0));
        let nodes = vec![
            node("n1").label("node-pool", "edge").build(),
            node("n2").build(),
            node("n3").build(),
        ];
        assert_eq!(
            check_canary_selector("node-pool=edge", &rows, &nodes).ok(),
            Some(1)
        );
        let err = check_canary_selector("node-pool=typo", &rows, &nodes).unwrap_err();
        assert!(err.to_string().contains("matches no node"), "{err}");
        assert!(check_canary_selector("node-pool in (", &rows, &nodes).is_err());
    }
}
