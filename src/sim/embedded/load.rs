//! Filling a fresh store: a scenario's nodes, DaemonSets, revisions and
//! settled pods, or a snapshot of a real cluster. Objects go in with
//! `restore`, so the uids, creation times, generations and statuses built
//! here (or exported from the real cluster) are kept as given.

use jiff::{SignedDuration, Timestamp};
use rand::{SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::SimError;
use crate::engine::recorded_status;
use crate::input::WholeObjects;
use crate::model::{Node, Snapshot};
use crate::sim::generate::nodes::{NodeShape, node_object, uuid};
use crate::sim::generate::plain_pods;
use crate::sim::generate::workloads::{Generated, generate};
use crate::sim::kubelet::clock::rfc3339;
use crate::sim::resources::ResourceKind;
use crate::sim::scenario::Scenario;
use crate::sim::store::{Store, StoreError};

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

impl LoadStats {
    /// Adds what a second load brought.
    pub fn add(&mut self, other: LoadStats) {
        self.nodes += other.nodes;
        self.daemon_sets += other.daemon_sets;
        self.revisions += other.revisions;
        self.pods += other.pods;
    }
}

fn restore(store: &Store, kind: ResourceKind, object: Value) -> Result<(), SimError> {
    restore_kept(store, kind, object).map(drop)
}

/// Restores an object as built; answers the value the store made it from.
fn restore_kept(store: &Store, kind: ResourceKind, object: Value) -> Result<Value, SimError> {
    let name = object_name(&object);
    store
        .restore(kind, object)
        .map_err(|source| load_failed(kind, &name, source))
}

/// Stores an object through the API's create path, admission included.
fn create(store: &Store, kind: ResourceKind, object: Value) -> Result<(), SimError> {
    let name = object_name(&object);
    store
        .create(kind, object)
        .map(drop)
        .map_err(|source| load_failed(kind, &name, source))
}

fn object_name(object: &Value) -> String {
    object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn load_failed(kind: ResourceKind, name: &str, source: StoreError) -> SimError {
    SimError::Load {
        what: format!("{} {name}", kind.kind()),
        source,
    }
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
    let mut node_pools: Vec<(String, String)> = Vec::new();
    for class in plain_pods::priority_classes(scenario) {
        create(store, ResourceKind::PriorityClass, class)?;
    }
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
            node_pools.push((name.clone(), pool.name.clone()));
            let mut node = node_object(&shape, &mut rng);
            node["metadata"]["uid"] = json!(uuid(&mut rng));
            let ip = node["status"]["addresses"][0]["address"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            // Decoded from the tree in place: cloning a 8 KB node's tree
            // first cost 65,000 short-lived copies at start.
            if let Ok(typed) = Node::deserialize(&node) {
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
    // Workload pods start Pending, bound: the kubelets bring them up.
    for pod in plain_pods::workload_pods(scenario, &node_pools) {
        stats.pods += 1;
        create(store, ResourceKind::Pod, pod)?;
    }
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
    kind_set(
        serde_json::to_value(object).unwrap_or(Value::Null),
        api_version,
        kind,
    )
}

fn kind_set(mut value: Value, api_version: &str, kind: &str) -> Value {
    value["apiVersion"] = json!(api_version);
    value["kind"] = json!(kind);
    value
}

/// Restores one object of `kind` for each of `projections`: the whole
/// object as read where the loader kept them all (`whole`, in the same
/// order), else the projection. The whole objects go in without a copy
/// (copying each was an eighth of a rehearsal's loading); what the store
/// hands back is kept in `spent`, to be freed with the rest at the end:
/// freed one by one between the stored objects' own allocations, they left
/// the store's JSON scattered over pages (75 MiB more at 50 rehearsed
/// members).
fn restore_each<T: Serialize>(
    store: &Store,
    kind: ResourceKind,
    projections: &[T],
    whole: Option<Vec<Value>>,
    spent: &mut Vec<Value>,
) -> Result<usize, SimError> {
    let mut whole = whole
        .filter(|objects| objects.len() == projections.len())
        .map(Vec::into_iter);
    for projection in projections {
        match whole.as_mut().and_then(Iterator::next) {
            Some(raw) => spent.push(restore_kept(
                store,
                kind,
                kind_set(raw, kind.api_version(), kind.kind()),
            )?),
            None => restore(
                store,
                kind,
                with_kind(projection, kind.api_version(), kind.kind()),
            )?,
        }
    }
    Ok(projections.len())
}

/// Loads a real cluster's exported objects; pods keep their status. Nodes
/// and pods go in whole when the loader kept them so (tolerations, affinity,
/// host IPs, container statuses), else as their projections. Each DaemonSet
/// that carries a status also gets the load record
/// ([`recorded_status::ANNOTATION`]: the dump's counts and the reasons its
/// nodes and pods give, as of `now`), so that `status` and the console can
/// tell the rehearsal's counts from the dump's; where they differ already,
/// a line naming both goes to `report`. The whole objects are moved into
/// the store ([`restore_each`]).
pub fn load_snapshot(
    store: &Store,
    snapshot: &Snapshot,
    whole: Option<WholeObjects>,
    now: Timestamp,
    report: &mut Vec<String>,
) -> Result<LoadStats, SimError> {
    let (whole_nodes, whole_pods) = whole.map(|w| (w.nodes, w.pods)).unzip();
    let mut spent = Vec::new();
    let mut stats = LoadStats {
        nodes: restore_each(
            store,
            ResourceKind::Node,
            &snapshot.nodes,
            whole_nodes,
            &mut spent,
        )?,
        ..LoadStats::default()
    };
    for ds in &snapshot.daemonsets {
        let mut object = with_kind(ds, "apps/v1", "DaemonSet");
        let check = recorded_status::check(
            ds,
            &snapshot.nodes,
            &snapshot.pods,
            &snapshot.revisions,
            now,
        );
        if let Some(check) = check {
            if let Some(difference) = check.difference() {
                report.push(format!(
                    "warning: {}",
                    recorded_status::warning_line(ds, &difference)
                ));
            }
            object["metadata"]["annotations"][recorded_status::ANNOTATION] =
                json!(check.load_record(ds.metadata.generation));
        }
        restore(store, ResourceKind::DaemonSet, object)?;
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
    stats.pods = restore_each(
        store,
        ResourceKind::Pod,
        &snapshot.pods,
        whole_pods,
        &mut spent,
    )?;
    drop(spent);
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
        let mut loader = crate::input::SnapshotLoader::default();
        loader.add_text("dump.json", text).expect("loads");
        let mut dump = loader.finish();
        let now = Timestamp::now();
        let load = |loaded: &crate::input::LoadedSnapshot| {
            let store = Store::new();
            let mut report = Vec::new();
            let whole = loaded.whole.clone();
            load_snapshot(&store, &loaded.snapshot, whole, now, &mut report).expect("loads");
            let ds: DaemonSet = store
                .get_as(ResourceKind::DaemonSet, "ns", "a")
                .expect("decodes")
                .expect("exists");
            let record = ds
                .metadata
                .annotations
                .and_then(|a| a.get(recorded_status::ANNOTATION).cloned())
                .expect("the load record");
            (report, record)
        };
        let (report, record) = load(&dump);
        assert_eq!(
            report,
            [
                "warning: DaemonSet ns/a: the dump's status records desired 2, current 2, ready 2; its nodes and pods give desired 2, current 1, ready 1: no pod on 1 eligible node (n2)"
            ]
        );
        let record: serde_json::Value = serde_json::from_str(&record).expect("json");
        assert_eq!(record["recorded"]["ready"], 2, "{record}");
        assert_eq!(record["reasons"][0]["code"], "missingPod", "{record}");
        // With the second pod the dump is at steady state: nothing to say.
        let mut second = dump.snapshot.pods[0].clone();
        second.metadata.name = Some("a-2".into());
        second.spec.node_name = Some("n2".into());
        dump.snapshot.pods.push(second);
        dump.whole = None;
        let (report, record) = load(&dump);
        assert_eq!(report, Vec::<String>::new());
        assert_eq!(
            record,
            r#"{"recorded":{"desired":2,"current":2,"updated":2,"ready":2,"available":2},"reasons":[]}"#
        );
    }
}
