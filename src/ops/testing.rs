//! Test fixtures for the operations: an OnDelete DaemonSet `kube-system/agent`
//! at revision 2 (image v2) with revision 1 (image v1), Ready nodes, and one
//! Ready daemon pod per node on the revision the case asks for.

use std::collections::BTreeMap;

use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
use crate::model::{DaemonSet, Pod};
use crate::ops::snapshot::Snapshot;

/// The hash of revision 1 (image v1).
pub const OLD: &str = "h1";
/// The hash of revision 2 (image v2, current).
pub const NEW: &str = "h2";

/// The fixture DaemonSet (OnDelete unless `rolling`), with annotations.
pub fn ds(rolling: bool, annotations: &[(&str, &str)]) -> DaemonSet {
    let mut builder = daemonset("v2");
    if !rolling {
        builder = builder.on_delete();
    }
    for (k, v) in annotations {
        builder = builder.annotation(k, v);
    }
    let mut ds = builder.build();
    ds.metadata.resource_version = Some("100".into());
    ds
}

/// A snapshot of `ds` over `nodes`; `pods` maps node → (hash, extra builder step).
pub fn snapshot(ds: DaemonSet, nodes: &[&str], pods: Vec<Pod>) -> Snapshot<'static> {
    let old = revision_of(&daemonset("v1").build(), OLD, 1);
    let new = revision_of(&ds, NEW, 2);
    let nodes = nodes.iter().map(|n| node(n).build());
    Snapshot::new(ds, nodes, pods, vec![old, new])
}

/// A Ready pod on `node` at `hash`, created at T0 + `created`.
pub fn ready_pod(node_name: &str, hash: &str, created: i64) -> Pod {
    pod(&format!("agent-{node_name}-{hash}"), node_name, hash)
        .created(created)
        .ready_since(created)
        .build()
}

/// Old Ready pods on every node.
pub fn all_old(nodes: &[&str]) -> Vec<Pod> {
    nodes.iter().map(|n| ready_pod(n, OLD, 0)).collect()
}

/// Replaces the pod of each node in `updates` (node → pod).
pub fn replace(mut pods: Vec<Pod>, updates: Vec<Pod>) -> Vec<Pod> {
    let by_node: BTreeMap<String, Pod> = updates
        .into_iter()
        .map(|p| (p.node_name().unwrap_or_default().to_owned(), p))
        .collect();
    pods.retain(|p| !by_node.contains_key(p.node_name().unwrap_or_default()));
    pods.extend(by_node.into_values());
    pods
}

/// T0 + seconds.
pub fn t(seconds: i64) -> jiff::Timestamp {
    at(seconds)
}
