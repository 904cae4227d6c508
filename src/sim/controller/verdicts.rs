//! The eligibility verdicts of earlier syncs, kept per DaemonSet: upstream
//! asks `NodeShouldRunDaemonPod` of every node on every sync, and so does
//! this controller, but a verdict reads only the node and the DaemonSet's
//! pod template, so a node whose object is the very one the last sync judged
//! (the cache replaces a node's `Arc` on every change) under the same
//! template (the DaemonSet's uid and generation: the template moves the
//! generation) gets the verdict it got then. The decisions are the same; a
//! sync of 1,000 nodes of which a handful changed no longer builds every
//! node's tolerations and reasons again. Pure data; no I/O.

use std::collections::HashMap;
use std::sync::Arc;

use super::cache::DsKey;
use crate::engine::eligibility::{NodeVerdict, node_should_run_daemon_pod};
use crate::model::{DaemonSet, Node};

/// What a verdict was judged against: the DaemonSet's uid and generation.
type TemplateId = (Option<String>, Option<i64>);

/// The node list as the cache hands it out: rebuilt (a new `Arc`) only
/// after a node changed, so the same `Arc` means the same node objects.
type NodeList = Arc<Vec<Arc<Node>>>;

/// Verdicts by DaemonSet.
#[derive(Debug, Default)]
pub struct Verdicts {
    by_daemon_set: HashMap<DsKey, Judged>,
}

/// The verdicts of one DaemonSet's last sync: the template and node list
/// they were judged on, and one verdict per node of that list, in its order.
#[derive(Debug)]
struct Judged {
    template: TemplateId,
    nodes: NodeList,
    verdicts: Vec<NodeVerdict>,
}

impl Verdicts {
    /// Every node's verdict for `ds` (the DaemonSet of `key`), in the order
    /// of `nodes`: kept ones where neither the node nor the template
    /// changed, the rest judged now. Nodes gone since are forgotten.
    pub fn of<'n>(
        &mut self,
        key: &DsKey,
        ds: &DaemonSet,
        nodes: &'n NodeList,
    ) -> Vec<(&'n Node, NodeVerdict)> {
        let template = (ds.metadata.uid.clone(), ds.metadata.generation);
        let held = self
            .by_daemon_set
            .remove(key)
            .filter(|held| held.template == template);
        let verdicts = match held {
            // No node changed since (the list is the very one judged).
            Some(held) if Arc::ptr_eq(&held.nodes, nodes) => held.verdicts,
            held => judge_changed(held.as_ref(), ds, nodes),
        };
        let answer = nodes
            .iter()
            .map(Arc::as_ref)
            .zip(verdicts.iter().cloned())
            .collect();
        self.by_daemon_set.insert(
            key.clone(),
            Judged {
                template,
                nodes: Arc::clone(nodes),
                verdicts,
            },
        );
        answer
    }

    /// Forgets the verdicts of a DaemonSet that is gone.
    pub fn forget(&mut self, key: &DsKey) {
        self.by_daemon_set.remove(key);
    }
}

/// One verdict per node of `nodes`: the held one where the node object is
/// the one judged then, else judged now.
fn judge_changed(held: Option<&Judged>, ds: &DaemonSet, nodes: &NodeList) -> Vec<NodeVerdict> {
    let earlier: HashMap<&str, (&Arc<Node>, &NodeVerdict)> = held
        .map(|held| {
            held.nodes
                .iter()
                .zip(&held.verdicts)
                .map(|(node, verdict)| (node.name(), (node, verdict)))
                .collect()
        })
        .unwrap_or_default();
    nodes
        .iter()
        .map(|node| match earlier.get(node.name()) {
            Some((judged, verdict)) if Arc::ptr_eq(judged, node) => (*verdict).clone(),
            _ => node_should_run_daemon_pod(node, ds),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixtures::node;

    fn daemon_set(generation: i64, selector: Option<(&str, &str)>) -> DaemonSet {
        let mut ds: DaemonSet = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "agent", "namespace": "kube-system", "uid": "u1",
                         "generation": generation},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "a", "image": "a:1"}]}}}
        }))
        .unwrap();
        if let Some((key, value)) = selector
            && let Some(spec) = ds.spec.as_mut().and_then(|s| s.template.spec.as_mut())
        {
            spec.node_selector = Some([(key.to_owned(), value.to_owned())].into());
        }
        ds
    }

    fn judged(verdicts: &[(&Node, NodeVerdict)]) -> Vec<(String, bool)> {
        verdicts
            .iter()
            .map(|(n, v)| (n.name().to_owned(), v.should_run))
            .collect()
    }

    #[test]
    fn a_kept_verdict_is_the_one_judged_afresh_when_node_or_template_changes() {
        let key = DsKey::new("kube-system", "agent");
        let a = Arc::new(node("a").label("disk", "ssd").build());
        let b = Arc::new(node("b").build());
        let mut cache = Verdicts::default();
        let plain = daemon_set(1, None);
        let nodes = Arc::new(vec![Arc::clone(&a), Arc::clone(&b)]);
        let first = judged(&cache.of(&key, &plain, &nodes));
        assert_eq!(first, [("a".into(), true), ("b".into(), true)]);
        // A new template (generation 2) that selects ssd nodes: judged again.
        let ssd = daemon_set(2, Some(("disk", "ssd")));
        let second = judged(&cache.of(&key, &ssd, &nodes));
        assert_eq!(second, [("a".into(), true), ("b".into(), false)]);
        // Node b labelled: a new object, judged again; a is kept.
        let b2 = Arc::new(node("b").label("disk", "ssd").build());
        let changed = Arc::new(vec![Arc::clone(&a), Arc::clone(&b2)]);
        let third = judged(&cache.of(&key, &ssd, &changed));
        assert_eq!(third, [("a".into(), true), ("b".into(), true)]);
        // Kept verdicts are the ones judged afresh, reasons and all.
        let nodes = Arc::new(vec![a, b2]);
        let kept = cache.of(&key, &ssd, &nodes);
        for (node, verdict) in &kept {
            assert_eq!(verdict, &node_should_run_daemon_pod(node, &ssd));
        }
        // The same list again (no node changed): the same verdicts.
        let again = cache.of(&key, &ssd, &nodes);
        assert_eq!(again, kept);
    }
}
