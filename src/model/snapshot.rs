//! The objects of a cluster as one value: what `kubectl get ... -o json`
//! printed, decoded into the model. Reading files into it is
//! `input`'s job; this module does no I/O.

use super::{ControllerRevision, DaemonSet, Event, Node, Pod};

/// The objects of a cluster snapshot, in the order first seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Pods (all namespaces given).
    pub pods: Vec<Pod>,
    /// DaemonSets.
    pub daemonsets: Vec<DaemonSet>,
    /// ControllerRevisions (the DaemonSets' template history).
    pub revisions: Vec<ControllerRevision>,
    /// core/v1 Events (events.k8s.io/v1 events are converted).
    pub events: Vec<Event>,
}

impl Snapshot {
    /// The DaemonSet `target`, if the snapshot has it.
    pub fn daemonset(&self, target: &super::Target) -> Option<&DaemonSet> {
        self.daemonsets.iter().find(|ds| {
            ds.metadata.namespace.as_deref().unwrap_or_default() == target.namespace
                && ds.metadata.name.as_deref() == Some(target.name.as_str())
        })
    }

    /// Whether the snapshot holds no objects at all.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.pods.is_empty()
            && self.daemonsets.is_empty()
            && self.revisions.is_empty()
            && self.events.is_empty()
    }
}
