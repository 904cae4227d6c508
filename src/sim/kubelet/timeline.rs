//! The scenario timeline: node events at fixed times after start (NotReady,
//! Ready, join, leave, cordon, uncordon), applied to node objects the way the
//! kubelet and the node lifecycle controller would, with their Events.

use jiff::Timestamp;
use rand::{SeedableRng, rngs::StdRng};
use serde_json::json;

use super::clock::rfc3339;
use super::fleet::Fleet;
use super::node_status;
use crate::sim::controller::events::{EventType, ObjectRef, Source};
use crate::sim::generate::nodes::{NodeShape, node_object};
use crate::sim::resources::ResourceKind;
use crate::sim::scenario::{TimelineAction, TimelineEntry};
use crate::sim::store::{Preconditions, Subresource, WriteOptions};

impl Fleet {
    /// Applies one timeline entry.
    pub fn apply_timeline(&mut self, entry: &TimelineEntry) {
        let now = rfc3339(self.clock.now());
        let node = entry.node.clone().unwrap_or_default();
        match entry.action {
            TimelineAction::NotReady => {
                if self.edit_node(&node, |n| node_status::mark_unreachable(n, &now)) {
                    self.node_event(
                        &node,
                        "NodeNotReady",
                        &format!("Node {node} status is now: NodeNotReady"),
                        "node-controller",
                    );
                }
            }
            TimelineAction::Ready => {
                if self.edit_node(&node, |n| node_status::mark_ready(n, &now)) {
                    self.node_event(
                        &node,
                        "NodeReady",
                        &format!("Node {node} status is now: NodeReady"),
                        "kubelet",
                    );
                }
            }
            TimelineAction::Cordon | TimelineAction::Uncordon => {
                let cordon = entry.action == TimelineAction::Cordon;
                if self.edit_node(&node, |n| {
                    let changed = (n["spec"]["unschedulable"] == true) != cordon;
                    n["spec"]["unschedulable"] = json!(cordon);
                    changed
                }) {
                    let (reason, state) = if cordon {
                        ("NodeNotSchedulable", "NodeNotSchedulable")
                    } else {
                        ("NodeSchedulable", "NodeSchedulable")
                    };
                    self.node_event(
                        &node,
                        reason,
                        &format!("Node {node} status is now: {state}"),
                        "kubelet",
                    );
                }
            }
            TimelineAction::Leave => {
                let uid = self
                    .nodes
                    .get(&node)
                    .map(|n| n.uid.clone())
                    .unwrap_or_default();
                self.node_event(
                    &node,
                    "RemovingNode",
                    &format!("Node {node} event: Removing Node {node} from Controller"),
                    "node-controller",
                );
                let preconditions = Preconditions {
                    uid: Some(uid),
                    resource_version: None,
                };
                if let Err(err) = self
                    .store
                    .delete(ResourceKind::Node, "", &node, &preconditions)
                {
                    tracing::debug!(node, %err, "timeline leave failed");
                }
            }
            TimelineAction::Join => self.join(
                entry.pool.as_deref().unwrap_or_default(),
                entry.count.unwrap_or(1),
            ),
        }
    }

    /// Changes a node's spec and status (two writes, as the API splits them);
    /// true when `edit` changed something.
    pub(super) fn edit_node(
        &mut self,
        name: &str,
        edit: impl FnOnce(&mut serde_json::Value) -> bool,
    ) -> bool {
        let Some(mut next) = self.store.get(ResourceKind::Node, "", name) else {
            return false;
        };
        if !edit(&mut next) {
            return false;
        }
        // An unconditional update: the edit is a fresh, idempotent change.
        if let Some(meta) = next["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        let spec = self.store.update_with(
            ResourceKind::Node,
            next.clone(),
            Subresource::Main,
            WriteOptions::default(),
        );
        let status = self.store.update_with(
            ResourceKind::Node,
            next,
            Subresource::Status,
            WriteOptions::default(),
        );
        spec.is_ok() && status.is_ok()
    }

    fn join(&mut self, pool_name: &str, count: usize) {
        let scenario = self.options.scenario.clone();
        let Some(pool) = scenario.pools.iter().find(|p| p.name == pool_name) else {
            return;
        };
        let prefix = pool.node_prefix();
        let mut index = self
            .nodes
            .keys()
            .filter_map(|n| {
                n.strip_prefix(&prefix)
                    .and_then(|rest| rest.parse::<usize>().ok())
            })
            .max()
            .unwrap_or(pool.count);
        for _ in 0..count {
            index += 1;
            let mut rng = StdRng::seed_from_u64(self.options.seed ^ (index as u64) << 20);
            let created: Timestamp = self.clock.now();
            let shape = NodeShape {
                pool,
                index,
                pool_label: &scenario.pool_label,
                created,
                override_: None,
            };
            let node = node_object(&shape, &mut rng);
            let name = pool.node_name(index);
            match self.store.create(ResourceKind::Node, node) {
                Ok(created) => {
                    let object = ObjectRef::of(ResourceKind::Node, &created);
                    let source = Source {
                        component: "kubelet",
                        host: Some(name.clone()),
                    };
                    self.recorder.record(
                        &object,
                        EventType::Normal,
                        "Starting",
                        "Starting kubelet.",
                        &source,
                    );
                    self.recorder.record(
                        &object,
                        EventType::Normal,
                        "NodeReady",
                        &format!("Node {name} status is now: NodeReady"),
                        &source,
                    );
                    let controller = Source {
                        component: "node-controller",
                        host: None,
                    };
                    self.recorder.record(
                        &object,
                        EventType::Normal,
                        "RegisteredNode",
                        &format!("Node {name} event: Registered Node {name} in Controller"),
                        &controller,
                    );
                }
                Err(err) => tracing::debug!(node = name, %err, "timeline join failed"),
            }
        }
    }

    fn node_event(
        &mut self,
        node: &str,
        reason: &'static str,
        message: &str,
        component: &'static str,
    ) {
        let uid = self
            .nodes
            .get(node)
            .map(|n| n.uid.clone())
            .unwrap_or_default();
        let object = ObjectRef {
            kind: "Node",
            api_version: "v1",
            namespace: String::new(),
            name: node.to_owned(),
            uid,
            field_path: None,
        };
        let host = (component == "kubelet").then(|| node.to_owned());
        self.recorder.record(
            &object,
            EventType::Normal,
            reason,
            message,
            &Source { component, host },
        );
    }
}
