//! What churn may change: every node, and every pod or only the pods a
//! DaemonSet controls (the pods a console focused on that DaemonSet watches,
//! so that each pod change is an event it receives). Re-read now and then,
//! as pods come and go. Reads the store; writes nothing.

use rand::Rng;
use rand::rngs::StdRng;
use serde::Deserialize;

use crate::engine::ownership::controller_of;
use crate::model::Owner;
use crate::sim::resources::ResourceKind;
use crate::sim::store::{ObjectKey, Store};

/// The keys of the nodes and pods churn picks from.
pub(super) struct Targets {
    nodes: Vec<ObjectKey>,
    pods: Vec<ObjectKey>,
}

/// Just the owner references of a pod (the rest of its JSON is skipped).
#[derive(Deserialize)]
struct Owned {
    #[serde(default)]
    metadata: OwnedMeta,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnedMeta {
    #[serde(default)]
    owner_references: Option<Vec<Owner>>,
}

impl Owned {
    /// Whether the pod's controller is the DaemonSet called `name`.
    fn controlled_by_daemon_set(&self, name: &str) -> bool {
        controller_of(self.metadata.owner_references.as_deref())
            .is_some_and(|owner| owner.kind == "DaemonSet" && owner.name == name)
    }
}

impl Targets {
    /// Every node, and the pods of `daemon_set` (every pod when `None`).
    pub(super) fn read(store: &Store, daemon_set: Option<&ObjectKey>) -> Targets {
        let (nodes, _) = store.list_objects(ResourceKind::Node, None);
        let nodes = nodes.iter().map(|o| o.key.clone()).collect();
        let pods = match daemon_set {
            None => {
                let (pods, _) = store.list_objects(ResourceKind::Pod, None);
                pods.iter().map(|o| o.key.clone()).collect()
            }
            Some(ds) => {
                let (pods, _) = store.list_objects(ResourceKind::Pod, Some(&ds.namespace));
                pods.iter()
                    .filter(|o| {
                        o.decode::<Owned>()
                            .is_ok_and(|owned| owned.controlled_by_daemon_set(&ds.name))
                    })
                    .map(|o| o.key.clone())
                    .collect()
            }
        };
        Targets { nodes, pods }
    }

    /// A random node (`pod` false) or pod.
    pub(super) fn pick(&self, pod: bool, rng: &mut StdRng) -> Option<&ObjectKey> {
        let list = if pod { &self.pods } else { &self.nodes };
        if list.is_empty() {
            return None;
        }
        list.get(rng.random_range(0..list.len()))
    }

    /// How many pods churn picks from.
    #[cfg(test)]
    pub(super) fn pod_count(&self) -> usize {
        self.pods.len()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_daemon_sets_pods_are_targets() {
        let store = Store::new();
        let owned = |name: &str, ds: &str| {
            json!({"metadata": {"name": name, "namespace": "kube-system", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds, "uid": "u", "controller": true}]},
                "spec": {"containers": [{"name": "c", "image": "i"}]}})
        };
        for pod in [
            owned("a-1", "agent"),
            owned("b-1", "other"),
            owned("a-2", "agent"),
        ] {
            store.create(ResourceKind::Pod, pod).unwrap();
        }
        let all = Targets::read(&store, None);
        assert_eq!(all.pod_count(), 3);
        let agent = ObjectKey::new("kube-system", "agent");
        let mine = Targets::read(&store, Some(&agent));
        assert_eq!(mine.pod_count(), 2);
        let mut rng = rand::SeedableRng::seed_from_u64(1);
        for _ in 0..20 {
            let picked = mine.pick(true, &mut rng).unwrap();
            assert!(picked.name.starts_with("a-"));
        }
    }
}
