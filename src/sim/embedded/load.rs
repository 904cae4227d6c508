//! Filling a fresh store: a scenario's nodes, DaemonSets, revisions and
//! settled pods, or a snapshot of a real cluster. Objects go in with
//! `restore`, so the uids, creation times, generations and statuses built
//! here (or exported from the real cluster) are kept as given.

use jiff::{SignedDuration, Timestamp};
use rand::{SeedableRng, rngs::StdRng};
use serde::Serialize;
use serde_json::{Value, json};

use super::SimError;
use crate::model::Node;
use crate::model::snapshot::Snapshot;
use crate::sim::generate::nodes::{NodeShape, node_object, uuid};
use crate::sim::generate::workloads::{Generated, generate};
use crate::sim::kubelet::clock::rfc3339;
use crate::sim::resources::ResourceKind;
use crate::sim::scenario::Scenario;
use crate::sim::store::Store;

/// What was loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// Nodes.
    pub nodes: usize,
    /// DaemonSets.
    pub daemon_sets: usize,
    /// ControllerRevisions.
    pub revisions: usize,
    /// Pods.
    pub pods: usize,
}

fn restore(store: &Store, kind: ResourceKind, object: Value) -> Result<(), SimError> {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    store
        .restore(kind, object)
        .map(drop)
        .map_err(|source| SimError::Load {
            what: format!("{} {name}", kind.kind()),
            source,
        })
}

/// Loads `scenario` as of `now`, with `seed` deciding every random choice.
pub fn load_scenario(
    store: &Store,
    scenario: &Scenario,
    now: Timestamp,
    seed: u64,
) -> Result<LoadStats, SimError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut stats = LoadStats::default();
    let mut typed_nodes: Vec<(Node, String)> = Vec::new();
    for pool in &scenario.pools {
        let age = pool
            .age
            .unwrap_or(std::time::Duration::from_secs(30 * 86_400));
        for index in 1..=pool.count {
            let name = pool.node_name(index);
            let offset = SignedDuration::try_from(age).unwrap_or(SignedDuration::ZERO)
                - SignedDuration::from_mins(i64::try_from(index).unwrap_or(0));
            let shape = NodeShape {
                pool,
                index,
                pool_label: &scenario.pool_label,
                created: now.checked_sub(offset).unwrap_or(now),
                override_: scenario.nodes.iter().find(|o| o.name == name),
            };
            let mut node = node_object(&shape, &mut rng);
            node["metadata"]["uid"] = json!(uuid(&mut rng));
            let ip = node["status"]["addresses"][0]["address"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if let Ok(typed) = serde_json::from_value::<Node>(node.clone()) {
                typed_nodes.push((typed, ip));
            }
            restore(store, ResourceKind::Node, node)?;
            stats.nodes += 1;
        }
    }
    // Each object is stored as soon as it is built: the values are never all
    // held at once next to the stored objects.
    generate(
        scenario,
        &typed_nodes,
        now,
        &mut rng,
        |object| match object {
            Generated::DaemonSet(ds) => {
                stats.daemon_sets += 1;
                restore(store, ResourceKind::DaemonSet, ds)
            }
            Generated::Revision(revision) => {
                stats.revisions += 1;
                restore(store, ResourceKind::ControllerRevision, revision)
            }
            Generated::Pod(mut pod) => {
                if !pod["metadata"]["creationTimestamp"].is_string() {
                    pod["metadata"]["creationTimestamp"] = json!(rfc3339(now));
                }
                stats.pods += 1;
                restore(store, ResourceKind::Pod, pod)
            }
        },
    )?;
    Ok(stats)
}

fn with_kind(object: &impl Serialize, api_version: &str, kind: &str) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    value["apiVersion"] = json!(api_version);
    value["kind"] = json!(kind);
    value
}

/// Loads a real cluster's exported objects; pods keep their status.
pub fn load_snapshot(store: &Store, snapshot: &Snapshot) -> Result<LoadStats, SimError> {
    let mut stats = LoadStats::default();
    for node in &snapshot.nodes {
        restore(store, ResourceKind::Node, with_kind(node, "v1", "Node"))?;
        stats.nodes += 1;
    }
    for ds in &snapshot.daemonsets {
        restore(
            store,
            ResourceKind::DaemonSet,
            with_kind(ds, "apps/v1", "DaemonSet"),
        )?;
        stats.daemon_sets += 1;
    }
    for revision in &snapshot.revisions {
        restore(
            store,
            ResourceKind::ControllerRevision,
            with_kind(revision, "apps/v1", "ControllerRevision"),
        )?;
        stats.revisions += 1;
    }
    for pod in &snapshot.pods {
        restore(store, ResourceKind::Pod, with_kind(pod, "v1", "Pod"))?;
        stats.pods += 1;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::revision::RevisionIndex;
    use crate::model::{ControllerRevision, DaemonSet, Pod};

    #[test]
    fn default_scenario_loads_a_settled_cluster_mid_rollout() {
        let store = Store::new();
        let scenario = Scenario::load("default").expect("default");
        let stats = load_scenario(&store, &scenario, Timestamp::now(), 7).expect("loads");
        assert_eq!(stats.nodes, 14);
        assert_eq!(stats.daemon_sets, 3);
        let agent: DaemonSet = store
            .get_as(ResourceKind::DaemonSet, "kube-system", "node-agent")
            .expect("decodes")
            .expect("exists");
        let (revisions, _) = store
            .list_as::<ControllerRevision>(ResourceKind::ControllerRevision, Some("kube-system"))
            .expect("crs");
        let index = RevisionIndex::new(&agent, &revisions);
        assert_eq!(index.current().map(|r| r.number), Some(2));
        assert!(index.current_matches_template());
        let (pods, _) = store
            .list_as::<Pod>(ResourceKind::Pod, Some("kube-system"))
            .expect("pods");
        let agent_pods: Vec<&Pod> = pods
            .iter()
            .filter(|p| p.name().starts_with("node-agent-"))
            .collect();
        // 14 nodes minus the 2 GPU nodes whose taint the agent does not tolerate.
        assert_eq!(agent_pods.len(), 12);
        assert!(
            agent_pods
                .iter()
                .all(|p| index.number_for_hash(p.revision_hash().unwrap_or_default()) == Some(1))
        );
        assert!(
            agent_pods.iter().filter(|p| p.is_ready()).count() >= 11,
            "all but the NotReady node's pod are Ready"
        );
    }
}
