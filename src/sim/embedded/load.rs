//! Filling a fresh store: a scenario's nodes, DaemonSets, revisions and
//! settled pods, or a snapshot of a real cluster. Objects go in with
//! `restore`, so the uids, creation times, generations and statuses built
//! here (or exported from the real cluster) are kept as given.

use jiff::{SignedDuration, Timestamp};
use rand::{SeedableRng, rngs::StdRng};
use serde::Serialize;
use serde_json::{Value, json};

use super::SimError;
use k8s_openapi::api::apps::v1::DaemonSetStatus;

use crate::engine::eligibility::{NodeVerdict, node_should_run_daemon_pod};
use crate::engine::ownership::is_controlled_by;
use crate::engine::revision::RevisionIndex;
use crate::model::snapshot::{LoadedSnapshot, Snapshot};
use crate::model::{Node, Pod};
use crate::sim::controller::status::compute_status;
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
            Generated::DaemonSet(mut ds) => {
                mark_owner(&mut ds, scenario, now);
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

/// Adds the scenario's labels and annotations to a DaemonSet and, when it
/// names the manager that applied it, the managedFields entry a server-side
/// apply of the whole object leaves (operation `Apply`, every field).
fn mark_owner(daemon_set: &mut Value, scenario: &Scenario, now: Timestamp) {
    let name = daemon_set["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = daemon_set["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    let Some(spec) = scenario
        .daemon_sets
        .iter()
        .find(|d| d.name == name && d.namespace == namespace)
    else {
        return;
    };
    for (field, extra) in [("labels", &spec.labels), ("annotations", &spec.annotations)] {
        for (key, value) in extra {
            daemon_set["metadata"][field][key] = json!(value);
        }
    }
    if let Some(manager) = &spec.applied_by {
        let fields = crate::sim::store::managed::all_fields(daemon_set);
        daemon_set["metadata"]["managedFields"] = json!([{
            "manager": manager, "operation": "Apply", "apiVersion": "apps/v1",
            "time": rfc3339(now), "fieldsType": "FieldsV1", "fieldsV1": fields,
        }]);
    }
}

fn with_kind(object: &impl Serialize, api_version: &str, kind: &str) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    value["apiVersion"] = json!(api_version);
    value["kind"] = json!(kind);
    value
}

/// Loads a real cluster's exported objects; pods keep their status. Nodes
/// and pods go in whole when the loader kept them so (tolerations, affinity,
/// host IPs, container statuses), else as their projections.
pub fn load_snapshot(store: &Store, loaded: &LoadedSnapshot) -> Result<LoadStats, SimError> {
    let snapshot = &loaded.snapshot;
    let whole = loaded.whole.as_ref();
    let mut stats = LoadStats::default();
    let whole_nodes = whole.filter(|w| w.nodes.len() == snapshot.nodes.len());
    for (index, node) in snapshot.nodes.iter().enumerate() {
        let object = match whole_nodes.and_then(|w| w.nodes.get(index)) {
            Some(raw) => with_kind(raw, "v1", "Node"),
            None => with_kind(node, "v1", "Node"),
        };
        restore(store, ResourceKind::Node, object)?;
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
    let whole_pods = whole.filter(|w| w.pods.len() == snapshot.pods.len());
    for (index, pod) in snapshot.pods.iter().enumerate() {
        let object = match whole_pods.and_then(|w| w.pods.get(index)) {
            Some(raw) => with_kind(raw, "v1", "Pod"),
            None => with_kind(pod, "v1", "Pod"),
        };
        restore(store, ResourceKind::Pod, object)?;
        stats.pods += 1;
    }
    Ok(stats)
}

/// Where a dump's own DaemonSet status disagrees with what its nodes and pods
/// say (a dump taken mid-rollout, or an inconsistent one): one line per
/// DaemonSet, naming both sets of counts. The embedded controller acts on the
/// nodes and pods, so these are the DaemonSets a rehearsal will change.
pub fn status_differences(snapshot: &Snapshot, now: Timestamp) -> Vec<String> {
    let mut lines = Vec::new();
    for ds in &snapshot.daemonsets {
        let Some(recorded) = ds.status.as_ref() else {
            continue;
        };
        let verdicts: Vec<(&Node, NodeVerdict)> = snapshot
            .nodes
            .iter()
            .map(|n| (n, node_should_run_daemon_pod(n, ds)))
            .collect();
        let pods: Vec<Pod> = snapshot
            .pods
            .iter()
            .filter(|p| p.metadata.namespace == ds.metadata.namespace && is_controlled_by(p, ds))
            .cloned()
            .collect();
        let index = RevisionIndex::new(ds, &snapshot.revisions);
        let (computed, _) = compute_status(ds, &verdicts, &pods, &index, now);
        let said = counts(recorded);
        let seen = counts(&computed);
        if said != seen {
            let name = format!(
                "{}/{}",
                ds.metadata.namespace.as_deref().unwrap_or_default(),
                ds.metadata.name.as_deref().unwrap_or_default()
            );
            lines.push(format!(
                "DaemonSet {name}: the dump's status says {}, its nodes and pods say {}; the rehearsal starts from the latter",
                words(said),
                words(seen)
            ));
        }
    }
    lines
}

/// desired, current, updated, ready, available.
fn counts(status: &DaemonSetStatus) -> [i32; 5] {
    [
        status.desired_number_scheduled,
        status.current_number_scheduled,
        status.updated_number_scheduled.unwrap_or_default(),
        status.number_ready,
        status.number_available.unwrap_or_default(),
    ]
}

fn words(counts: [i32; 5]) -> String {
    let [desired, current, updated, ready, available] = counts;
    format!(
        "desired {desired}, current {current}, updated {updated}, ready {ready}, available {available}"
    )
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

    #[test]
    fn a_dump_whose_status_disagrees_with_its_pods_is_named() {
        let text = r#"{"kind":"List","items":[
          {"kind":"Node","metadata":{"name":"n1"},"status":{"conditions":[{"type":"Ready","status":"True"}]}},
          {"kind":"Node","metadata":{"name":"n2"},"status":{"conditions":[{"type":"Ready","status":"True"}]}},
          {"kind":"DaemonSet","apiVersion":"apps/v1","metadata":{"name":"a","namespace":"ns","uid":"ds-uid",
            "annotations":{"deprecated.daemonset.template.generation":"1"}},
           "spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},
             "spec":{"containers":[{"name":"a","image":"a:1"}]}}},
           "status":{"desiredNumberScheduled":2,"currentNumberScheduled":2,"updatedNumberScheduled":2,
             "numberReady":2,"numberAvailable":2,"numberMisscheduled":0}},
          {"kind":"Pod","metadata":{"name":"a-1","namespace":"ns","labels":{"app":"a","pod-template-generation":"1"},
            "ownerReferences":[{"apiVersion":"extensions/v1beta1","kind":"DaemonSet","name":"a","uid":"ds-uid","controller":true}]},
           "spec":{"nodeName":"n1","containers":[{"name":"a"}]},
           "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}
        ]}"#;
        let mut loader = crate::model::snapshot::SnapshotLoader::default();
        loader.add_text("dump.json", text).expect("loads");
        let mut snapshot = loader.finish().snapshot;
        let now = Timestamp::now();
        let lines = status_differences(&snapshot, now);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("DaemonSet ns/a: the dump's status says desired 2, current 2, updated 2, ready 2, available 2, its nodes and pods say desired 2, current 1, updated 1, ready 1, available 1"),
            "{lines:?}"
        );
        // With the second pod the dump is at steady state: nothing to say.
        let mut second = snapshot.pods[0].clone();
        second.metadata.name = Some("a-2".into());
        second.spec.node_name = Some("n2".into());
        snapshot.pods.push(second);
        assert_eq!(status_differences(&snapshot, now), Vec::<String>::new());
    }
}
