//! A simulated cluster's node-agent pods as a timeline (name, node,
//! created, Ready since), to compare two clusters that must move alike, and
//! their replacement (every daemon pod deleted, the controller recreates).

use rollcall::sim::resources::ResourceKind;
use rollcall::sim::store::{Preconditions, Store};
use serde_json::Value;

/// One pod's timeline: name, node, created, and when it became Ready.
pub type PodTimeline = (String, String, String, String);

/// The node-agent pods in kube-system.
pub fn daemon_pods(store: &Store) -> Vec<Value> {
    let (pods, _) = store.list(ResourceKind::Pod, Some("kube-system"));
    pods.into_iter()
        .filter(|p| {
            p["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("node-agent"))
        })
        .collect()
}

/// Every daemon pod's timeline, sorted.
pub fn timeline(store: &Store) -> Vec<PodTimeline> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut timeline: Vec<PodTimeline> = daemon_pods(store)
        .iter()
        .map(|pod| {
            let ready = pod["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Ready" && c["status"] == "True")
                .map(|c| text(&c["lastTransitionTime"]))
                .unwrap_or_default();
            (
                text(&pod["metadata"]["name"]),
                text(&pod["spec"]["nodeName"]),
                text(&pod["metadata"]["creationTimestamp"]),
                ready,
            )
        })
        .collect();
    timeline.sort();
    timeline
}

/// Deletes every daemon pod; how many there were.
pub fn replace_daemon_pods(store: &Store) -> usize {
    let pods = daemon_pods(store);
    for pod in &pods {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        store
            .delete(
                ResourceKind::Pod,
                "kube-system",
                name,
                &Preconditions::default(),
            )
            .expect("pod deleted");
    }
    pods.len()
}
