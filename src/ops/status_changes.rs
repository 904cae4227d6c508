//! What `status --watch` prints when something changes: the difference
//! between two status reports as a few words per change.
//!
//! Pure: built from reports, no clock and no I/O (the caller stamps the time).

use std::collections::BTreeMap;

use crate::ops::run::fit::{preempts_text, wont_fit_text};
use crate::ops::status::StatusReport;
use crate::ops::status_node::{NAMES_SHOWN, NodeStatus, eligibility_word};

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
    // Changes that move the plan without touching the node's row: a cordon, a
    // NotReady node the plan now leaves out (and back). A node whose row
    // changed already has its line (a node updated leaves the plan by itself).
    let named: std::collections::BTreeSet<String> = moved
        .iter()
        .filter_map(|line: &String| line.split(' ').next().map(str::to_owned))
        .collect();
    let skipped_before: BTreeMap<&str, &str> = before
        .skipped
        .iter()
        .map(|s| (s.node.as_str(), s.reason.as_str()))
        .collect();
    let skipped_after: BTreeMap<&str, &str> = after
        .skipped
        .iter()
        .map(|s| (s.node.as_str(), s.reason.as_str()))
        .collect();
    for (node, reason) in &skipped_after {
        if skipped_before.get(node) != Some(reason) && !named.contains(*node) {
            moved.push(format!("{node} left out of the plan: {reason}"));
        }
    }
    for node in skipped_before.keys() {
        if !skipped_after.contains_key(node)
            && !named.contains(*node)
            && after.plan.iter().any(|p| p.node == *node)
        {
            moved.push(format!("{node} back in the plan"));
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
    let reason = |n: &NodeStatus| n.problem.as_ref().map(|p| p.reason.clone());
    if reason(was) != reason(now) {
        parts.push(match (reason(was), reason(now)) {
            (_, Some(problem)) => problem,
            (Some(gone), None) => format!("{gone} cleared"),
            (None, None) => String::new(),
        });
    }
    if let Some(fit) = fit_change(was, now) {
        parts.push(fit);
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

/// Whether the next revision fits changed: it stopped fitting (with why),
/// fits again, or now needs preemption. Only when both reports judged it:
/// a node whose pod moved to the target revision has nothing left to fit.
fn fit_change(was: &NodeStatus, now: &NodeStatus) -> Option<String> {
    let (Some(was), Some(now)) = (&was.fit, &now.fit) else {
        return None;
    };
    match (was.fits, now.fits) {
        (true, false) => Some(wont_fit_text(&now.reasons)),
        (false, false) if was.reasons != now.reasons => Some(wont_fit_text(&now.reasons)),
        (_, true) if !was.fits || was.preempts.len() != now.preempts.len() => {
            Some(match (now.preempts.is_empty(), was.fits) {
                (true, false) => "fits again".to_owned(),
                (true, true) => "fits without preemption".to_owned(),
                (false, _) => format!("fits if it {}", preempts_text(&now.preempts)),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::{NEW, all_old, ds, ready_pod, replace, snapshot, t};

    fn report(nodes: &[&str], pods: Vec<crate::model::Pod>) -> StatusReport {
        StatusReport::build(&snapshot(ds(false, &[]), nodes, pods), t(100)).unwrap()
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
    fn a_cordon_that_only_moves_the_plan_prints_its_line() {
        let nodes = ["n1", "n2"];
        let before = report(&nodes, all_old(&nodes));
        let mut cordoned = before.clone();
        cordoned.plan.retain(|p| p.node != "n2");
        cordoned.skipped.push(crate::ops::status::SkippedEntry {
            node: "n2".to_owned(),
            reason: "cordoned".to_owned(),
        });
        assert_eq!(
            changes(&before, &cordoned),
            ["n2 left out of the plan: cordoned"]
        );
        assert_eq!(changes(&cordoned, &before), ["n2 back in the plan"]);
    }

    #[test]
    fn a_node_that_stops_fitting_or_fits_again_prints_its_line() {
        use crate::engine::fit::{Fit, FitReason, ReasonCode, Victim};
        let nodes = ["n1", "n2"];
        let before = report(&nodes, all_old(&nodes));
        let judged = |fit: Fit| {
            let mut report = before.clone();
            report.nodes[1].fit = Some(fit);
            report
        };
        let fits = judged(Fit {
            fits: true,
            ..Fit::default()
        });
        let full = judged(Fit {
            fits: false,
            reasons: vec![FitReason {
                code: ReasonCode::InsufficientCpu,
                message: "Insufficient cpu: needs 300m, 210m free".to_owned(),
                shortfall: None,
            }],
            ..Fit::default()
        });
        let preempting = judged(Fit {
            fits: true,
            preempts: vec![Victim {
                namespace: "batch".to_owned(),
                name: "job-1".to_owned(),
                priority: 100,
            }],
            ..Fit::default()
        });
        assert_eq!(
            changes(&fits, &full),
            ["n2 won't fit: Insufficient cpu: needs 300m, 210m free"]
        );
        assert_eq!(changes(&full, &fits), ["n2 fits again"]);
        assert_eq!(
            changes(&full, &preempting),
            ["n2 fits if it preempts batch/job-1 (priority 100)"]
        );
        assert_eq!(changes(&preempting, &fits), ["n2 fits without preemption"]);
        // Not judged on one side (its pod is on the target revision): silent.
        assert!(changes(&before, &full).is_empty());
    }
}
