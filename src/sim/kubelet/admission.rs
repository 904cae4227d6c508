//! The kubelet's admission of a pod newly bound to its node (upstream
//! `HandlePodAdditions` → `canAdmitPod`, the predicate admit handler): the
//! fit engine's rule against the node's allocatable and the pods this
//! kubelet already runs there. A pod created with `spec.nodeName` skips the
//! scheduler, so this is its only check; a rejected pod goes `Failed` with
//! the kubelet's reason (`OutOfcpu`, `OutOfmemory`, `NodePorts`, …) and
//! message, gets a Warning event of that reason, and is never started.

use serde::Deserialize;
use serde_json::{Value, json};

use super::fleet::{Fleet, PodKey, Stage};
use crate::engine::fit::{NodeUse, PodDemand, admit};
use crate::model::{Node, Pod};
use crate::sim::controller::events::EventType;
use crate::sim::resources::ResourceKind;

impl Fleet {
    /// Admits the pod at `key`, bound to `node` and known to the fleet but
    /// not started; false when it was rejected (and marked so).
    pub(super) fn admit(&mut self, key: &PodKey, node: &str, pod: &Value) -> bool {
        let Ok(candidate) = Pod::deserialize(pod) else {
            return true;
        };
        let Some(node) = self
            .store
            .get_as::<Node>(ResourceKind::Node, "", node)
            .ok()
            .flatten()
        else {
            return true;
        };
        let running: Vec<Pod> = self
            .pods_on(node.name())
            .iter()
            .filter(|other| *other != key)
            .filter_map(|other| {
                self.store
                    .get_as::<Pod>(ResourceKind::Pod, &other.0, &other.1)
                    .ok()
                    .flatten()
            })
            .collect();
        let usage = NodeUse::new(&node, running.iter());
        let Err(rejection) = admit(&PodDemand::of_pod(&candidate), &usage, &[]) else {
            return true;
        };
        let message = rejection.status_message();
        self.write_status(key, |pod, _| {
            pod["status"]["phase"] = json!("Failed");
            pod["status"]["reason"] = json!(rejection.reason);
            pod["status"]["message"] = json!(message);
        });
        self.event(
            key,
            None,
            EventType::Warning,
            &rejection.reason,
            &rejection.message,
            "kubelet",
        );
        if let Some(life) = self.pods.get_mut(key) {
            life.stage = Stage::Done;
        }
        false
    }
}
