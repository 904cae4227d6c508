//! `fleet plan`'s table: a header with the budget, per wave its settings
//! (a batch cut by the budget says so) and per cluster its nodes in order,
//! canaries marked `*`, then the exclusions and the estimate. Every name
//! from the API or the plan file is sanitised before it is printed.

use super::fleet_plan::PlanReport;
use crate::fleet::waves::budget::Ledger;
use crate::fleet::waves::file::PlanFile;

/// The plan for people: a header, per wave its settings and per cluster its
/// nodes in order (canaries marked `*`), the exclusions, the estimate.
pub(super) fn render(report: &PlanReport, plan: &PlanFile) -> String {
    use std::fmt::Write as _;
    let clean = |text: &str| crate::sanitize::sanitize(text).into_owned();
    let ledger = Ledger::new(plan.budget);
    let mut text = format!(
        "plan {}: {}, {} wave(s), {} node(s) to move\n\
         budget: {} failed node(s), {} failed cluster(s); at most {} node(s) at risk at once\n",
        report.digest,
        clean(&report.daemonset),
        report.waves.len(),
        report.total,
        plan.budget.nodes,
        plan.budget.clusters,
        ledger.capacity()
    );
    for (wave, spec) in report.waves.iter().zip(&plan.waves) {
        let _ = writeln!(
            text,
            "wave {}: {}, soak {}, timeout {}, bake {}, {} cluster(s) at once",
            clean(&wave.name),
            ledger.batch_text(spec.batch),
            humantime::format_duration(spec.soak.0),
            humantime::format_duration(spec.timeout.0),
            humantime::format_duration(spec.bake.0),
            spec.parallel,
        );
        if let Some(canary) = &spec.canary {
            let _ = writeln!(text, "  canaries (*): {}", clean(canary));
        }
        for cluster in &wave.clusters {
            let _ = write!(
                text,
                "  {} ({}): {}",
                clean(&cluster.context),
                cluster.nodes.len(),
                node_list(cluster)
            );
            if let Some(skipped) = &cluster.skipped {
                let _ = write!(text, " — skipped: {}", clean(skipped));
            }
            for left in &cluster.left {
                let _ = write!(
                    text,
                    "; leaves {}: {}",
                    clean(&left.node),
                    clean(&left.reason)
                );
            }
            text.push('\n');
        }
    }
    if !report.excluded.is_empty() {
        let excluded: Vec<String> = report.excluded.iter().map(|c| clean(c)).collect();
        let _ = writeln!(text, "excluded: {}", excluded.join(", "));
    }
    let _ = writeln!(text, "estimate: {}", report.estimate.text);
    text
}

/// How many nodes of a cluster the table names (`-o json` lists them all).
const NODES_SHOWN: usize = 6;

/// The cluster's first nodes in order, canaries marked `*`, and how many more.
fn node_list(cluster: &crate::cli::fleet_plan::ClusterPlan) -> String {
    let mut names: Vec<String> = cluster
        .nodes
        .iter()
        .take(NODES_SHOWN)
        .map(|n| {
            let star = if cluster.canaries.contains(n) {
                "*"
            } else {
                ""
            };
            format!("{}{star}", crate::sanitize::sanitize(n))
        })
        .collect();
    let more = cluster.nodes.len().saturating_sub(NODES_SHOWN);
    if more > 0 {
        names.push(format!("… {more} more"));
    }
    if names.is_empty() {
        return "nothing to move".to_owned();
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::fleet_plan::{ClusterPlan, Estimate, LeftNode, WavePlan};

    #[test]
    fn the_table_marks_canaries_says_the_cut_and_strips_escapes() {
        let plan = PlanFile::parse(
            "daemonset: kube-system/agent\nclusters: [\"*\"]\nwaves:\n  - name: one\n    clusters: [\"*\"]\n    batch: 3\n    canary: pool=a\n",
            "test",
        )
        .unwrap();
        let report = PlanReport {
            daemonset: "kube-system/agent".into(),
            digest: "0d76".into(),
            reference: Some("35fd".into()),
            waves: vec![WavePlan {
                name: "one".into(),
                clusters: vec![ClusterPlan {
                    context: "prod\u{1b}[31m-1".into(),
                    nodes: vec!["a-1".into(), "b-1".into()],
                    canaries: vec!["a-1".into()],
                    left: vec![LeftNode {
                        node: "c-1".into(),
                        reason: "cordoned".into(),
                    }],
                    skipped: None,
                }],
            }],
            excluded: vec!["prod-legacy".into()],
            total: 2,
            estimate: Estimate {
                seconds: 60,
                text: "at least 1m".into(),
            },
        };
        let text = render(&report, &plan);
        assert!(!text.contains('\u{1b}'), "{text}");
        for words in [
            "at most 1 node(s) at risk at once",
            "batch 1 (cut from 3 by the budget)",
            "canaries (*): pool=a",
            "prod-1 (2): a-1*, b-1; leaves c-1: cordoned",
            "excluded: prod-legacy",
            "estimate: at least 1m",
        ] {
            assert!(text.contains(words), "{words:?} in {text}");
        }
    }
}
