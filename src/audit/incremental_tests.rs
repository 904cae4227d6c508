//! The report kept per changed node against a full comparison: after random
//! changes to nodes (gone, another UID, NotReady) and to the pods bound to
//! them (ready, waiting, terminating, a second pod, another owner, deleted),
//! applying the changed nodes to the old report gives what [`compare`] gives
//! from scratch.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DaemonSetSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use proptest::prelude::*;

use super::update_nodes;
use crate::audit::compare::compare;
use crate::audit::owned::fixtures::{daemonset, node, owner, pod, terminating, waiting};
use crate::audit::roster::Roster;
use crate::model::{DaemonSet, Node, Pod};

/// Nodes `node-0` .. `node-5`; the roster lists 0..=4 and a node absent from
/// the cluster (`node-9`), so node 5 is off the roster.
const NODES: usize = 6;

fn ds() -> DaemonSet {
    let mut ds = daemonset();
    ds.spec = Some(DaemonSetSpec {
        selector: LabelSelector {
            match_labels: Some(BTreeMap::from([("app".into(), "agent".into())])),
            ..LabelSelector::default()
        },
        ..DaemonSetSpec::default()
    });
    ds
}

fn roster() -> Roster {
    let listed = (0..5).map(|i| (format!("node-{i}"), format!("uid-node-{i}")));
    Roster::from_entries(listed.chain([("node-9".to_owned(), "uid-node-9".to_owned())]))
        .unwrap_or_else(|_| unreachable!())
}

/// The cluster as the test sees it: nodes by name, pods by key.
#[derive(Clone, Debug, Default)]
struct Cluster {
    nodes: BTreeMap<String, Node>,
    pods: BTreeMap<String, Pod>,
}

impl Cluster {
    fn start() -> Self {
        let mut cluster = Self::default();
        for i in 0..NODES {
            cluster.set_node(i, 0);
            cluster.set_pod(i, 0, 0);
        }
        cluster
    }

    /// Node `i`: present and Ready, NotReady, with another UID, or gone.
    fn set_node(&mut self, i: usize, shape: u8) {
        let name = format!("node-{i}");
        match shape % 4 {
            0 => self
                .nodes
                .insert(name.clone(), node(&name, &format!("uid-{name}"), "True")),
            1 => self
                .nodes
                .insert(name.clone(), node(&name, &format!("uid-{name}"), "False")),
            2 => self
                .nodes
                .insert(name.clone(), node(&name, "uid-replaced", "True")),
            _ => self.nodes.remove(&name),
        };
    }

    /// Pod `k` on node `i`: ready, waiting, terminating, owned by another
    /// DaemonSet (a look-alike), or deleted.
    fn set_pod(&mut self, i: usize, k: usize, shape: u8) {
        let key = format!("agent-{i}-{k}");
        let ready = pod(&key, &format!("uid-{key}"), Some(&format!("node-{i}")));
        let pod = match shape % 5 {
            0 => ready,
            1 => waiting(ready, "ImagePullBackOff"),
            2 => terminating(ready),
            3 => {
                let mut other = ready;
                other.metadata.owner_references =
                    crate::model::Owners::from(vec![owner("DaemonSet", "agent", "an-older-uid")]);
                other
            }
            _ => {
                self.pods.remove(&key);
                return;
            }
        };
        self.pods.insert(key, pod);
    }

    fn node_list(&self) -> Vec<Node> {
        self.nodes.values().cloned().collect()
    }

    fn pod_list(&self) -> Vec<Pod> {
        self.pods.values().cloned().collect()
    }

    fn pods_on(&self, node: &str) -> Vec<&Pod> {
        self.pods
            .values()
            .filter(|p| p.node_name() == Some(node))
            .collect()
    }
}

#[derive(Clone, Debug)]
enum Change {
    Node(usize, u8),
    Pod(usize, usize, u8),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        1 => (0..NODES, any::<u8>()).prop_map(|(i, s)| Change::Node(i, s)),
        3 => (0..NODES, 0..2_usize, any::<u8>()).prop_map(|(i, k, s)| Change::Pod(i, k, s)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn per_node_updates_equal_a_full_comparison(
        batches in proptest::collection::vec(proptest::collection::vec(change(), 1..4), 1..12),
    ) {
        let (ds, roster) = (ds(), roster());
        let mut cluster = Cluster::start();
        let mut report = compare(&roster, &ds, &cluster.node_list(), &cluster.pod_list())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for batch in &batches {
            let mut changed = Vec::new();
            for change in batch {
                match change {
                    Change::Node(i, shape) => cluster.set_node(*i, *shape),
                    Change::Pod(i, k, shape) => cluster.set_pod(*i, *k, *shape),
                }
                let (Change::Node(i, _) | Change::Pod(i, _, _)) = change;
                changed.push(format!("node-{i}"));
            }
            update_nodes(
                &mut report,
                &ds,
                changed.iter().map(String::as_str),
                |name| cluster.nodes.get(name),
                |name| cluster.pods_on(name),
            )
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let full = compare(&roster, &ds, &cluster.node_list(), &cluster.pod_list())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&report, &full, "after {:?}", batch);
        }
    }
}
