//! `explain -f`'s fit: the same per-node answer as `status` and the console
//! ([`crate::rows::fit::node_fit`]), computed offline from the dump's pods
//! (all of them count against their nodes, as the node usage stream's do),
//! and its word in the table's FIT column.

use std::collections::HashMap;

use crate::cluster::usage::{UsageByNode, UsageStore};
use crate::engine::coverage::node_coverage;
use crate::engine::fit::Fit;
use crate::engine::ownership::is_controlled_by;
use crate::engine::revision::RevisionIndex;
use crate::model::{DaemonSet, Pod, Snapshot, UsagePod};
use crate::rows::fit::{FitTarget, node_fit};

/// What every node gives away in the dump; `None` (fit unknown) when the
/// dump holds no pods at all.
pub fn dump_usage(snapshot: &Snapshot) -> Option<UsageByNode> {
    (!snapshot.pods.is_empty())
        .then(|| UsageStore::of_list(snapshot.pods.iter().map(UsagePod::from).collect()))
}

/// The fit of `ds`'s update revision on each node of the dump, by node name.
pub fn fits(
    snapshot: &Snapshot,
    ds: &DaemonSet,
    usage: Option<&UsageByNode>,
    now: jiff::Timestamp,
) -> HashMap<String, Fit> {
    let own: Vec<&Pod> = snapshot
        .pods
        .iter()
        .filter(|pod| is_controlled_by(pod, ds))
        .collect();
    let (Some(target), Some(usage)) = (FitTarget::of(ds, own.iter().copied()), usage) else {
        return HashMap::new();
    };
    let index = RevisionIndex::new(ds, &snapshot.revisions);
    // By node once: a scan of every pod per node would be quadratic.
    let mut by_node: HashMap<&str, Vec<&Pod>> = HashMap::new();
    for pod in &own {
        if let Some(node) = pod.target_node() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    snapshot
        .nodes
        .iter()
        .filter_map(|node| {
            let on = by_node.get(node.name()).map_or(&[][..], Vec::as_slice);
            let coverage = node_coverage(node, ds, on, &index, now);
            let fit = node_fit(&target, node, &coverage, Some(usage.get(node.name())))?;
            Some((node.name().to_owned(), fit))
        })
        .collect()
}

/// The FIT column: `yes`, `no: Insufficient cpu`, `preempts 2`, `-` when
/// there is nothing to ask (the node runs the update revision, or is not
/// eligible), `?` when the dump holds no pods.
pub fn fit_word(fit: Option<&Fit>, usage_known: bool) -> String {
    match fit {
        None if !usage_known => "?".to_owned(),
        None => "-".to_owned(),
        Some(fit) if !fit.fits => {
            let first = fit.reasons.first().map_or("", |r| r.message.as_str());
            // Upstream's words, without the numbers behind them.
            let words = first.split(": ").next().unwrap_or(first);
            format!("no: {words}")
        }
        Some(fit) if !fit.preempts.is_empty() => format!("preempts {}", fit.preempts.len()),
        Some(_) => "yes".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fit::{FitReason, ReasonCode, Victim};

    #[test]
    fn fit_words_table() {
        let unfit = Fit {
            fits: false,
            reasons: vec![FitReason {
                code: ReasonCode::InsufficientCpu,
                message: "Insufficient cpu: needs 3, 2860m free of 3910m".into(),
                shortfall: None,
            }],
            ..Fit::default()
        };
        let victim = Victim {
            namespace: "batch".into(),
            name: "job".into(),
            priority: 0,
        };
        let preempting = Fit {
            fits: true,
            preempts: vec![victim.clone(), victim],
            ..Fit::default()
        };
        let fits = Fit {
            fits: true,
            ..Fit::default()
        };
        let cases = [
            ("fits", Some(&fits), true, "yes"),
            ("does not fit", Some(&unfit), true, "no: Insufficient cpu"),
            ("preempts", Some(&preempting), true, "preempts 2"),
            ("nothing to ask", None, true, "-"),
            ("a dump without pods", None, false, "?"),
        ];
        for (name, fit, known, want) in cases {
            assert_eq!(fit_word(fit, known), want, "{name}");
        }
    }
}
