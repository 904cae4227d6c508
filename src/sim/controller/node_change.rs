//! Which DaemonSets a node's change concerns (upstream `updateNode`): only
//! those for which the node's two answers, "a pod may be placed" and "a
//! running pod may stay", differ between its old and new version. A sync
//! reads a node only through its name and those two answers (the plan's
//! per-node decision and the status totals), so for any other DaemonSet it
//! would decide and write exactly what it did before. Decides nothing else.

use crate::engine::eligibility::node_should_run_daemon_pod;
use crate::model::{DaemonSet, Node};

/// Whether `ds` gives `old` and `new` the same two answers, so that
/// replacing `old` by `new` cannot change what a sync of `ds` does.
pub fn same_answers(old: &Node, new: &Node, ds: &DaemonSet) -> bool {
    let (before, after) = (
        node_should_run_daemon_pod(old, ds),
        node_should_run_daemon_pod(new, ds),
    );
    before.should_run == after.should_run
        && before.should_continue_running == after.should_continue_running
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::engine::eligibility::NodeVerdict;
    use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
    use crate::engine::reconcile::plan_reconcile_with_verdicts;
    use crate::engine::revision::RevisionIndex;
    use crate::model::Pod;
    use crate::sim::controller::status::compute_status;

    /// A node from a few switches: the label the selector asks for, taints of
    /// each effect (one of them churn's), cordoned, not ready.
    fn make_node(name: &str, bits: u8) -> Node {
        let mut builder = node(name);
        if bits & 1 != 0 {
            builder = builder.label("disktype", "ssd");
        }
        if bits & 2 != 0 {
            builder = builder.taint("dedicated", "gpu", "NoSchedule");
        }
        if bits & 4 != 0 {
            builder = builder.taint("dedicated", "gpu", "NoExecute");
        }
        if bits & 8 != 0 {
            builder = builder.taint(crate::sim::churn::CHURN_TAINT, "", "PreferNoSchedule");
        }
        if bits & 16 != 0 {
            builder = builder.cordoned();
        }
        if bits & 32 != 0 {
            builder = builder.not_ready();
        }
        if bits & 64 != 0 {
            builder = builder.label(crate::sim::churn::CHURN_LABEL, "7");
        }
        builder.build()
    }

    /// What a sync over `nodes` does: the nodes it creates on, the pods it
    /// deletes, and the status it writes.
    fn sync_result(
        ds: &DaemonSet,
        nodes: &[Node],
        pods: &[Pod],
    ) -> (Vec<String>, Vec<String>, String) {
        let old = daemonset("agent:1").build();
        let index = RevisionIndex::new(
            ds,
            &[revision_of(&old, "old", 1), revision_of(ds, "new", 2)],
        );
        let verdicts: Vec<(&Node, NodeVerdict)> = nodes
            .iter()
            .map(|n| (n, node_should_run_daemon_pod(n, ds)))
            .collect();
        let plan = plan_reconcile_with_verdicts(ds, &verdicts, pods, &index, at(100), &|_| false);
        let (status, _) = compute_status(ds, &verdicts, pods, &index, at(100));
        (
            plan.create_on.iter().map(|a| a.node.clone()).collect(),
            plan.delete.iter().map(|d| d.name.clone()).collect(),
            format!("{status:?}"),
        )
    }

    proptest! {
        /// Skipping a DaemonSet whose answers did not change is exact: a
        /// from-scratch sync over the changed node list decides and writes
        /// the same as over the old one.
        #[test]
        fn a_skipped_node_change_changes_no_sync(
            before in proptest::collection::vec(0u8..128, 6),
            pods_on in proptest::collection::vec(0u8..4, 6),
            changed in 0usize..6,
            after in 0u8..128,
            selector in any::<bool>(),
            on_delete in any::<bool>(),
        ) {
            let mut ds = daemonset("agent:2");
            if selector {
                ds = ds.node_selector("disktype", "ssd");
            }
            if on_delete {
                ds = ds.on_delete();
            }
            let ds = ds.build();
            let nodes: Vec<Node> = before
                .iter()
                .enumerate()
                .map(|(i, bits)| make_node(&format!("n{i}"), *bits))
                .collect();
            // None, an old ready pod, a new ready pod, a new pod not ready.
            let pods: Vec<Pod> = pods_on
                .iter()
                .enumerate()
                .filter_map(|(i, which)| {
                    let on = format!("n{i}");
                    let name = format!("p{i}");
                    match which {
                        1 => Some(pod(&name, &on, "old").ready_since(0).build()),
                        2 => Some(pod(&name, &on, "new").ready_since(0).build()),
                        3 => Some(pod(&name, &on, "new").running_not_ready(90).build()),
                        _ => None,
                    }
                })
                .collect();
            let mut next = nodes.clone();
            next[changed] = make_node(&format!("n{changed}"), after);
            if same_answers(&nodes[changed], &next[changed], &ds) {
                prop_assert_eq!(sync_result(&ds, &nodes, &pods), sync_result(&ds, &next, &pods));
            }
        }
    }

    #[test]
    fn churn_edits_concern_no_daemon_set_and_a_taint_does() {
        let ds = daemonset("agent:2").build();
        let plain = make_node("n", 0);
        assert!(same_answers(&plain, &make_node("n", 8 | 64 | 32), &ds));
        assert!(!same_answers(&plain, &make_node("n", 4), &ds));
    }
}
