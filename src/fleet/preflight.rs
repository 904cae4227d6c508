//! `rollcall fleet preflight`: what each cluster says before a rollout —
//! one finding per line, each either blocking a rollout or a note. Pure:
//! facts gathered per cluster in, findings out.

use serde::Serialize;

use crate::ops::preflight::{FailingNode, failing_text};
use crate::ops::status_node::names;

/// Whether a finding stops a rollout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    /// A rollout here would fail or do harm.
    Blocks,
    /// Worth knowing before starting.
    Note,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Whether it blocks.
    pub severity: Severity,
    /// What was found, in words.
    pub message: String,
}

/// What one cluster said.
#[derive(Clone, Debug)]
pub struct Facts {
    /// The API server's `gitVersion`, when it said.
    pub server_version: Option<String>,
    /// May the user delete the DaemonSet's pods (advance)? `Err`: why not.
    pub may_delete_pods: Result<(), String>,
    /// May the user patch the DaemonSet (pause, rollback)? `Err`: why not.
    pub may_patch: Result<(), String>,
    /// `OnDelete` or `RollingUpdate`.
    pub strategy: String,
    /// The tool that owns the spec, described, if one does.
    pub owner: Option<String>,
    /// Cordoned nodes.
    pub cordoned: Vec<String>,
    /// Nodes whose Ready condition is not True.
    pub not_ready: Vec<String>,
    /// Nodes where the revision a rollout moves to would not fit.
    pub would_not_fit: Vec<String>,
    /// Nodes whose pod already runs the current revision and is failing.
    pub failing: Vec<FailingNode>,
}

/// The findings, blocking ones first.
pub fn findings(facts: &Facts) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut say = |severity, message: String| found.push(Finding { severity, message });
    if let Err(why) = &facts.may_delete_pods {
        say(Severity::Blocks, format!("may not delete pods: {why}"));
    }
    if let Err(why) = &facts.may_patch {
        say(
            Severity::Blocks,
            format!("may not patch the DaemonSet: {why}"),
        );
    }
    if !facts.failing.is_empty() {
        say(
            Severity::Blocks,
            format!(
                "failing on the new revision: {}",
                failing_text(&facts.failing, 3)
            ),
        );
    }
    if !facts.would_not_fit.is_empty() {
        say(
            Severity::Blocks,
            format!(
                "{} node(s) would not fit the new revision: {}",
                facts.would_not_fit.len(),
                names(&facts.would_not_fit)
            ),
        );
    }
    say(
        Severity::Note,
        format!(
            "server {}, strategy {}",
            facts.server_version.as_deref().unwrap_or("version unknown"),
            facts.strategy
        ),
    );
    if let Some(owner) = &facts.owner {
        say(Severity::Note, format!("spec owned by {owner}"));
    }
    for (what, nodes) in [
        ("cordoned", &facts.cordoned),
        ("NotReady", &facts.not_ready),
    ] {
        if !nodes.is_empty() {
            say(
                Severity::Note,
                format!("{} {what}: {}", nodes.len(), names(nodes)),
            );
        }
    }
    found.sort_by_key(|f| f.severity != Severity::Blocks);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clear() -> Facts {
        Facts {
            server_version: Some("v1.33.1".to_owned()),
            may_delete_pods: Ok(()),
            may_patch: Ok(()),
            strategy: "OnDelete".to_owned(),
            owner: None,
            cordoned: Vec::new(),
            not_ready: Vec::new(),
            would_not_fit: Vec::new(),
            failing: Vec::new(),
        }
    }

    #[test]
    fn a_clear_cluster_has_only_its_note() {
        assert_eq!(
            findings(&clear()),
            [Finding {
                severity: Severity::Note,
                message: "server v1.33.1, strategy OnDelete".to_owned()
            }]
        );
    }

    #[test]
    fn what_blocks_comes_first() {
        let facts = Facts {
            may_patch: Err("patch daemonsets.apps denied".to_owned()),
            cordoned: vec!["n1".to_owned()],
            would_not_fit: vec!["n2".to_owned(), "n3".to_owned()],
            failing: vec![FailingNode {
                node: "n4".to_owned(),
                reason: "CrashLoopBackOff".to_owned(),
            }],
            ..clear()
        };
        let found = findings(&facts);
        let severities: Vec<Severity> = found.iter().map(|f| f.severity).collect();
        assert_eq!(
            severities,
            [
                Severity::Blocks,
                Severity::Blocks,
                Severity::Blocks,
                Severity::Note,
                Severity::Note
            ]
        );
        assert!(
            found[0]
                .message
                .starts_with("may not patch the DaemonSet: ")
        );
        assert!(found[1].message.contains("n4"), "{}", found[1].message);
        assert!(found[2].message.starts_with("2 node(s) would not fit"));
        assert_eq!(found[4].message, "1 cordoned: n1");
    }
}
