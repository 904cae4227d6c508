//! An embedded cluster's objects as `kubectl get
//! nodes,pods,ds,controllerrevisions -A -o json` prints them: one `List`.
//! What a rehearsal's snapshots look like when they come from a simulated
//! cluster instead of a real one (the benchmark and tests make fleets of
//! them). Reads the store; changes nothing.

use serde_json::{Value, json};

use crate::sim::resources::ResourceKind;
use crate::sim::store::Store;

/// The kinds a rehearsal reads, in kubectl's order.
const KINDS: [(ResourceKind, &str, &str); 4] = [
    (ResourceKind::Node, "v1", "Node"),
    (ResourceKind::Pod, "v1", "Pod"),
    (ResourceKind::DaemonSet, "apps/v1", "DaemonSet"),
    (
        ResourceKind::ControllerRevision,
        "apps/v1",
        "ControllerRevision",
    ),
];

/// Every node, pod, DaemonSet and ControllerRevision of `store`, each with
/// its `apiVersion` and `kind`, in a `v1 List`.
pub fn kubectl_list(store: &Store) -> Value {
    let mut items = Vec::new();
    for (kind, api_version, kind_name) in KINDS {
        let (objects, _) = store.list_objects(kind, None);
        items.extend(objects.iter().map(|object| {
            let mut value = object.value();
            if let Some(fields) = value.as_object_mut() {
                fields.insert("apiVersion".to_owned(), json!(api_version));
                fields.insert("kind".to_owned(), json!(kind_name));
            }
            value
        }));
    }
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::embedded::{EmbeddedOptions, Simulation};

    #[tokio::test(start_paused = true)]
    async fn a_dump_loads_back_into_a_cluster_with_the_same_objects() {
        let small = Simulation::start(&EmbeddedOptions {
            scenario: Some("small".to_owned()),
            ..EmbeddedOptions::default()
        })
        .unwrap();
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        let list = kubectl_list(&small.store);
        let count = |list: &Value, kind: &str| {
            list["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|item| item["kind"] == kind)
                .count()
        };
        assert_eq!(count(&list, "Node"), 5);
        assert!(count(&list, "ControllerRevision") >= 2);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.json");
        std::fs::write(&path, serde_json::to_vec(&list).unwrap()).unwrap();
        let again = Simulation::start(&EmbeddedOptions {
            snapshot: vec![path],
            ..EmbeddedOptions::default()
        })
        .unwrap();
        let reloaded = kubectl_list(&again.store);
        for kind in ["Node", "DaemonSet", "ControllerRevision"] {
            assert_eq!(count(&reloaded, kind), count(&list, kind), "{kind}");
        }
        small.shutdown().await;
        again.shutdown().await;
    }
}
