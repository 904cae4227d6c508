//! What the kubelets learn from store events: pods bound to their node (by
//! the scheduler, or created with `spec.nodeName`), deletions starting (Killing, then termination after the grace
//! period), pods gone, nodes changing readiness (pods marked not ready, as the
//! node lifecycle controller does, and resumed when the node is back), nodes
//! cordoned (the `node.kubernetes.io/unschedulable` taint follows
//! `spec.unschedulable`) and nodes deleted (their pods garbage-collected).

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::fleet::{Fleet, PodKey, PodLife, Stage};
use super::pod_status;
use crate::sim::resources::ResourceKind;
use crate::sim::store::{DeleteOptions, StoredObject, Subresource, WriteOptions};

const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

fn pod_key(pod: &Value) -> PodKey {
    let meta = &pod["metadata"];
    (
        meta["namespace"].as_str().unwrap_or_default().to_owned(),
        meta["name"].as_str().unwrap_or_default().to_owned(),
    )
}

/// The stage a bound pod first seen in this state is at.
fn initial_stage(pod: &Value) -> Stage {
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    if matches!(phase, "Succeeded" | "Failed") {
        Stage::Done
    } else if pod_status::is_ready(pod) {
        Stage::Ready
    } else {
        Stage::Bound
    }
}

fn grace(pod: &Value) -> Duration {
    let seconds = pod["metadata"]["deletionGracePeriodSeconds"]
        .as_u64()
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_u64())
        .unwrap_or(30);
    Duration::from_secs(seconds)
}

/// A pod's uid, deletion mark and node, decoded without the rest of its JSON.
#[derive(Deserialize)]
struct PodHead {
    #[serde(default)]
    metadata: HeadMeta,
    #[serde(default)]
    spec: HeadSpec,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadSpec {
    #[serde(default)]
    node_name: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadMeta {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    deletion_timestamp: Option<String>,
}

impl Fleet {
    /// Whether a created or changed pod can tell the kubelets anything that
    /// [`Fleet::on_pod`] acts on: a bound pod they do not know, a namesake
    /// with another uid, or a deletion that has not begun. A status change of
    /// a known pod (the kubelets' own writes, churn) or of a pod no node has
    /// yet (the scheduler's) is no news, and is answered from its head
    /// without decoding the rest.
    pub fn pod_has_news(&self, object: &StoredObject) -> bool {
        let Ok(head) = object.decode::<PodHead>() else {
            return true;
        };
        let key = (object.key.namespace.clone(), object.key.name.clone());
        if !self.pods.contains_key(&key) && head.spec.node_name.is_none_or(|n| n.is_empty()) {
            return false;
        }
        self.pods.get(&key).is_none_or(|life| {
            life.uid != head.metadata.uid
                || (head.metadata.deletion_timestamp.is_some() && life.stage != Stage::Terminating)
        })
    }

    /// A pod was created or changed.
    pub fn on_pod(&mut self, pod: &Value) {
        let key = pod_key(pod);
        let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
        if self.pods.get(&key).is_some_and(|life| life.uid != uid) {
            self.forget(&key);
        }
        let terminating = pod["metadata"]["deletionTimestamp"].is_string();
        if let Some(life) = self.pods.get(&key) {
            if terminating && life.stage != Stage::Terminating {
                self.begin_termination(&key, grace(pod));
            }
            return;
        }
        self.adopt(&key, uid, pod, terminating);
    }

    /// Starts driving a pod bound to a node; a pod no node has yet is the
    /// scheduler's, not a kubelet's.
    fn adopt(&mut self, key: &PodKey, uid: &str, pod: &Value, terminating: bool) {
        let Some(node) = pod["spec"]["nodeName"]
            .as_str()
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
        else {
            return;
        };
        let container = &pod["spec"]["containers"][0];
        let stage = initial_stage(pod);
        let restarts = pod["status"]["containerStatuses"][0]["restartCount"]
            .as_u64()
            .unwrap_or(0);
        let life = PodLife {
            uid: uid.to_owned(),
            node: Some(node.clone()),
            image: container["image"].as_str().unwrap_or_default().to_owned(),
            container: container["name"].as_str().unwrap_or_default().to_owned(),
            stage,
            restarts: u32::try_from(restarts).unwrap_or(u32::MAX),
            pull_failures: 0,
            sandbox_failures: 0,
            token: 0,
            pull_started: None,
            pulled_digest: None,
            grace: grace(pod),
        };
        self.pods.insert(key.clone(), life);
        self.index(key, Some(&node));
        // A pod not started yet is admitted first (upstream's kubelet admits
        // every pod it is handed, bound by the scheduler or not).
        if stage == Stage::Bound && !terminating && !self.admit(key, &node, pod) {
            return;
        }
        if terminating {
            self.begin_termination(key, grace(pod));
        } else if stage != Stage::Ready && self.nodes.get(&node).is_some_and(|n| n.ready) {
            self.resume(key);
        }
    }

    /// A pod was removed.
    pub fn on_pod_deleted(&mut self, pod: &Value) {
        let key = pod_key(pod);
        if self
            .pods
            .get(&key)
            .is_some_and(|life| Some(life.uid.as_str()) == pod["metadata"]["uid"].as_str())
        {
            self.forget(&key);
        }
    }

    /// A node was created or changed.
    pub fn on_node(&mut self, node: &Value) {
        let name = node["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let info = self.node_info(node);
        let was = self.nodes.get(&name).map(|n| (n.ready, n.pressure.clone()));
        let was_ready = was.as_ref().map(|(ready, _)| *ready);
        let ready = info.ready;
        let pressure = info.pressure.clone();
        self.nodes.insert(name.clone(), info);
        self.sync_unschedulable_taint(&name, node);
        if ready {
            self.sync_pressure(&name, node, &pressure);
            // A node that was not Ready evicted nothing: its pressure starts now.
            let before = match was {
                Some((true, before)) => before,
                _ => [None, None],
            };
            self.pressure_changed(&name, &before, &pressure);
        }
        match (was_ready, ready) {
            (Some(true), false) => self.node_went_away(&name),
            (Some(false) | None, true) => {
                for key in self.pods_on(&name) {
                    self.resume(&key);
                }
            }
            _ => {}
        }
    }

    /// The node stopped reporting: freeze its pods and mark them not ready
    /// (upstream node lifecycle `MarkPodsNotReady`).
    fn node_went_away(&mut self, node: &str) {
        for key in self.pods_on(node) {
            self.cancel(&key);
            let stage = self.pods.get(&key).map(|l| l.stage);
            if matches!(stage, Some(Stage::Ready | Stage::Started)) {
                self.write_status(&key, |pod, now| {
                    pod_status::set_condition(pod, "Ready", "False", None, None, now);
                });
            }
        }
    }

    /// A node was deleted: its pods are garbage-collected (upstream podgc
    /// force-deletes pods bound to nodes that no longer exist).
    pub fn on_node_deleted(&mut self, node: &Value) {
        let name = node["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.nodes.remove(&name);
        for key in self.pods_on(&name) {
            let options = DeleteOptions {
                grace_period_seconds: Some(0),
                ..DeleteOptions::default()
            };
            let _ = self
                .store
                .delete_with(ResourceKind::Pod, &key.0, &key.1, &options);
            self.forget(&key);
        }
    }

    /// Keeps the unschedulable taint in step with `spec.unschedulable`, as
    /// the node lifecycle controller's taint-by-condition does on cordon.
    fn sync_unschedulable_taint(&self, name: &str, node: &Value) {
        let cordoned = node["spec"]["unschedulable"] == true;
        let tainted = node["spec"]["taints"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["key"] == UNSCHEDULABLE_TAINT));
        if cordoned == tainted {
            return;
        }
        let result = self.store.modify_with(
            ResourceKind::Node,
            "",
            name,
            Subresource::Main,
            WriteOptions::default(),
            |current| {
                let mut next = current.clone();
                let mut taints: Vec<Value> = next["spec"]["taints"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                taints.retain(|t| t["key"] != UNSCHEDULABLE_TAINT);
                if next["spec"]["unschedulable"] == true {
                    taints.push(json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}));
                }
                if taints.is_empty() {
                    if let Some(spec) = next["spec"].as_object_mut() {
                        spec.remove("taints");
                    }
                } else {
                    next["spec"]["taints"] = Value::Array(taints);
                }
                Ok(next)
            },
        );
        if let Err(err) = result {
            tracing::debug!(node = name, %err, "cannot sync the unschedulable taint");
        }
    }
}
