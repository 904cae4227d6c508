//! When each moved node's new pod became Ready, read from the member's
//! store after the run: the DaemonSet's pod on the node created at or after
//! the old one's delete, and its Ready condition's lastTransitionTime (as
//! the simulated kubelet wrote it on the simulated clock). The store is the
//! truth here; the run's own lines only say what it waited for.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;

use crate::model::Target;
use crate::sim::resources::ResourceKind;
use crate::sim::store::Store;

/// Object timestamps are whole seconds, rounded: a pod created just after
/// a delete may carry a time up to this much before it.
const STAMP_SLACK: SignedDuration = SignedDuration::from_secs(1);

/// The DaemonSet's pods per node: when each was created, and became Ready.
#[derive(Debug, Default)]
pub struct ReadyTimes {
    by_node: HashMap<String, Vec<(Timestamp, Option<Timestamp>)>>,
}

impl ReadyTimes {
    /// Reads `target`'s pods from `store`.
    pub fn read(store: &Store, target: &Target) -> ReadyTimes {
        let (pods, _) = store.list_objects(ResourceKind::Pod, Some(&target.namespace));
        let mut by_node: HashMap<String, Vec<(Timestamp, Option<Timestamp>)>> = HashMap::new();
        for stored in &pods {
            // Only the four fields read here are decoded: a whole pod as a
            // `Value` was a second per 50 members of the run's end.
            let Ok(pod) = stored.decode::<ReadPod>() else {
                continue;
            };
            if !pod.owned_by(&target.name) {
                continue;
            }
            let (Some(node), Some(created)) = (
                pod.spec.node_name,
                pod.metadata.creation_timestamp.as_deref().and_then(stamp),
            ) else {
                continue;
            };
            let ready = pod.status.ready_since();
            by_node.entry(node).or_default().push((created, ready));
        }
        ReadyTimes { by_node }
    }

    /// When the pod that replaced the one deleted from `node` at `deleted`
    /// became Ready; `None` when none did (or none came).
    pub fn after(&self, node: &str, deleted: Timestamp) -> Option<Timestamp> {
        let since = deleted.checked_sub(STAMP_SLACK).unwrap_or(deleted);
        self.by_node
            .get(node)?
            .iter()
            .filter(|(created, _)| *created >= since)
            .min_by_key(|(created, _)| *created)
            .and_then(|(_, ready)| *ready)
    }
}

/// What [`ReadyTimes::read`] reads of a pod.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadPod {
    metadata: ReadMeta,
    #[serde(default)]
    spec: ReadSpec,
    #[serde(default)]
    status: ReadStatus,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadMeta {
    creation_timestamp: Option<String>,
    #[serde(default)]
    owner_references: Vec<ReadOwner>,
}

#[derive(Deserialize)]
struct ReadOwner {
    kind: String,
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadSpec {
    node_name: Option<String>,
}

#[derive(Default, Deserialize)]
struct ReadStatus {
    #[serde(default)]
    conditions: Vec<ReadCondition>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadCondition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
    last_transition_time: Option<String>,
}

impl ReadPod {
    fn owned_by(&self, daemonset: &str) -> bool {
        self.metadata
            .owner_references
            .iter()
            .any(|owner| owner.kind == "DaemonSet" && owner.name == daemonset)
    }
}

impl ReadStatus {
    fn ready_since(&self) -> Option<Timestamp> {
        self.conditions
            .iter()
            .find(|c| c.type_ == "Ready" && c.status == "True")
            .and_then(|c| c.last_transition_time.as_deref().and_then(stamp))
    }
}

fn stamp(text: &str) -> Option<Timestamp> {
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn pod(name: &str, node: &str, owner: &str, created: &str, ready: Option<&str>) -> Value {
        let conditions = ready.map_or_else(
            || json!([{"type": "Ready", "status": "False", "lastTransitionTime": created}]),
            |at| json!([{"type": "Ready", "status": "True", "lastTransitionTime": at}]),
        );
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "kube-system", "creationTimestamp": created,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": owner,
                    "uid": "u1", "controller": true}]},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Running", "conditions": conditions}
        })
    }

    #[test]
    fn the_replacement_after_the_delete_gives_the_ready_time() {
        let store = Store::new();
        for object in [
            pod(
                "agent-old",
                "n1",
                "agent",
                "2026-01-01T00:00:00Z",
                Some("2026-01-01T00:00:10Z"),
            ),
            pod(
                "agent-new",
                "n1",
                "agent",
                "2026-01-01T01:00:05Z",
                Some("2026-01-01T01:00:09Z"),
            ),
            pod(
                "other-new",
                "n2",
                "other",
                "2026-01-01T01:00:05Z",
                Some("2026-01-01T01:00:07Z"),
            ),
            pod("agent-n3", "n3", "agent", "2026-01-01T01:00:05Z", None),
        ] {
            store.restore(ResourceKind::Pod, object).unwrap();
        }
        let target = Target {
            namespace: "kube-system".to_owned(),
            name: "agent".to_owned(),
        };
        let times = ReadyTimes::read(&store, &target);
        let deleted: Timestamp = "2026-01-01T01:00:05.4Z".parse().unwrap();
        assert_eq!(
            times.after("n1", deleted),
            Some("2026-01-01T01:00:09Z".parse().unwrap())
        );
        assert_eq!(times.after("n2", deleted), None);
        assert_eq!(times.after("n3", deleted), None);
        let later: Timestamp = "2026-01-01T02:00:00Z".parse().unwrap();
        assert_eq!(times.after("n1", later), None);
    }
}
