//! The kubelet's eviction manager in the fleet (upstream
//! `pkg/kubelet/eviction` `synchronize`): a node's pressure annotation starts
//! a round, and every [`EVICTION_INTERVAL`] the kubelet evicts the first pod
//! in upstream's rank order until the round is done. The annotation's value
//! says how much is short: `true` is worked off by one eviction, a quantity
//! (`1Gi`) by evicting until that much simulated usage is reclaimed. The
//! condition stays True until the annotation goes (upstream holds it for the
//! pressure transition period anyway); removing it ends the round.
//!
//! Static and mirror pods are never evicted (upstream `evictPod` refuses
//! critical static pods, and every static pod is critical); DaemonSet pods
//! are evictable whatever their priority, as upstream.

use std::time::Duration;

use k8s_openapi::api::core::v1 as api;
use serde_json::Value;

use super::clock::rfc3339;
use super::eviction::{
    Candidate, ContainerUse, UNREQUESTED_MEMORY, UNREQUESTED_STORAGE, bytes, eviction_message,
    rank, simulated_usage,
};
use super::fleet::{EvictionRound, Fleet, PodKey, Stage};
use super::pod_status;
use super::pressure::{self, Pressure};
use crate::model::Pod;
use crate::model::pod_requests::{container_limits, container_requests};
use crate::model::quantity::parse_units;
use crate::sim::controller::events::EventType;
use crate::sim::resources::ResourceKind;

/// How often the simulated kubelet evicts one pod while under pressure
/// (upstream's eviction manager runs every 10 s; a constant here, as the
/// scenario format has no field for it, scaled by the sim's speed).
pub const EVICTION_INTERVAL: Duration = Duration::from_secs(2);

/// The memory threshold the message names: upstream's default hard eviction
/// threshold, `memory.available<100Mi`.
const MEMORY_THRESHOLD: u64 = 100 << 20;

/// The pod annotation that sets its first container's simulated usage.
fn usage_annotation(pressure: Pressure) -> &'static str {
    match pressure {
        Pressure::Memory => "sim.rollcall.dev/memory-usage",
        Pressure::Disk => "sim.rollcall.dev/disk-usage",
    }
}

impl Fleet {
    /// Brings the node's pressure conditions and taints in step with its
    /// annotations (one node write, only when something differs).
    pub(super) fn sync_pressure(
        &mut self,
        name: &str,
        node: &Value,
        wanted: &[Option<Box<str>>; 2],
    ) {
        let wanted = [Pressure::Memory, Pressure::Disk].map(|p| (p, wanted[p as usize].is_some()));
        if wanted
            .iter()
            .all(|(p, on)| pressure::reported(node, *p) == *on)
        {
            return;
        }
        let now = rfc3339(self.clock.now());
        self.edit_node(name, |n| {
            wanted.iter().fold(false, |changed, (p, on)| {
                pressure::set(n, *p, *on, &now) | changed
            })
        });
    }

    /// Starts a round when a pressure annotation appears or changes; ends it
    /// when the annotation goes.
    pub(super) fn pressure_changed(
        &mut self,
        name: &str,
        before: &[Option<Box<str>>; 2],
        after: &[Option<Box<str>>; 2],
    ) {
        for p in Pressure::ALL {
            let i = p as usize;
            if before[i] == after[i] {
                continue;
            }
            let key = (name.to_owned(), p);
            match after[i].as_deref() {
                Some(value) => {
                    let round = EvictionRound {
                        shortfall: quantity_bytes(value),
                        reclaimed: 0,
                        token: 0,
                    };
                    self.evictions.insert(key, round);
                    let after = EVICTION_INTERVAL.div_f64(self.options.speed.max(0.001));
                    self.schedule_eviction(name, p, after);
                }
                None => {
                    self.evictions.remove(&key);
                }
            }
        }
    }

    /// One eviction of the node's round for `pressure`, then the next one
    /// scheduled unless the round is done.
    pub fn evict_next(&mut self, node: &str, pressure: Pressure) {
        let key = (node.to_owned(), pressure);
        let Some(round) = self.evictions.get(&key).copied() else {
            return;
        };
        let interval = EVICTION_INTERVAL.div_f64(self.options.speed.max(0.001));
        if !self.nodes.get(node).is_some_and(|n| n.ready) {
            self.schedule_eviction(node, pressure, interval);
            return;
        }
        let mut candidates = self.eviction_candidates(node, pressure);
        rank(&mut candidates);
        let Some(victim) = candidates.into_iter().next() else {
            self.evictions.remove(&key);
            return;
        };
        let usage = victim.usage();
        let remaining = round
            .shortfall
            .map_or(usage, |s| s.saturating_sub(round.reclaimed));
        let threshold = bytes(MEMORY_THRESHOLD);
        let available = bytes(MEMORY_THRESHOLD.saturating_sub(remaining));
        let message = eviction_message(
            pressure.resource(),
            (pressure == Pressure::Memory).then_some((threshold.as_str(), available.as_str())),
            &victim,
        );
        self.evict(&victim.key, &message);
        let reclaimed = round.reclaimed.saturating_add(usage);
        let done = round.shortfall.is_none_or(|s| reclaimed >= s);
        if done {
            self.evictions.remove(&key);
        } else if let Some(round) = self.evictions.get_mut(&key) {
            round.reclaimed = reclaimed;
            self.schedule_eviction(node, pressure, interval);
        }
    }

    /// Evicts one pod: Failed/Evicted with `message`, containers terminated,
    /// an `Evicted` Warning event; the kubelet drives it no further.
    fn evict(&mut self, key: &PodKey, message: &str) {
        self.write_status(key, |pod, now| pod_status::evicted(pod, message, now));
        self.event(key, None, EventType::Warning, "Evicted", message, "kubelet");
        self.cancel(key);
        if let Some(life) = self.pods.get_mut(key) {
            life.stage = Stage::Done;
        }
    }

    /// The node's pods the kubelet may evict, with their requests, simulated
    /// usage and priority read from the stored pods.
    fn eviction_candidates(&self, node: &str, pressure: Pressure) -> Vec<Candidate<PodKey>> {
        let mut keys = self.pods_on(node);
        keys.sort();
        keys.into_iter()
            .filter(|key| {
                self.pods
                    .get(key)
                    .is_some_and(|life| !matches!(life.stage, Stage::Terminating | Stage::Done))
            })
            .filter_map(|key| {
                let pod = self.store.get(ResourceKind::Pod, &key.0, &key.1)?;
                candidate(key, &pod, pressure)
            })
            .collect()
    }
}

/// A pod as an eviction candidate, or None when the kubelet may not evict it
/// (a static or mirror pod, or one already finished). Its request and
/// priority are the model's (`spec.requests`, `spec.priority`); each
/// container's request and limit, for its simulated usage and the message,
/// are the model's per-container rule.
fn candidate(key: PodKey, pod: &Value, pressure: Pressure) -> Option<Candidate<PodKey>> {
    let annotations = &pod["metadata"]["annotations"];
    let is_static = annotations["kubernetes.io/config.mirror"].is_string()
        || annotations["kubernetes.io/config.source"]
            .as_str()
            .is_some_and(|source| source != "api");
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    if is_static || matches!(phase, "Failed" | "Succeeded") {
        return None;
    }
    let model: Pod = serde_json::from_value(pod.clone()).ok()?;
    let containers: Vec<api::Container> =
        serde_json::from_value(pod["spec"]["containers"].clone()).unwrap_or_default();
    let resource = pressure.resource();
    let unrequested = match pressure {
        Pressure::Memory => UNREQUESTED_MEMORY,
        Pressure::Disk => UNREQUESTED_STORAGE,
    };
    let set_usage = annotations[usage_annotation(pressure)]
        .as_str()
        .and_then(quantity_bytes);
    let amount = |v: i64| u64::try_from(v).ok().filter(|v| *v > 0);
    let containers = containers
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // Requests default to limits, as the API server defaults pods.
            let request = amount(container_requests(c).requests.get(resource));
            let limit = amount(container_limits(c).get(resource));
            let usage = set_usage
                .filter(|_| i == 0)
                .unwrap_or_else(|| simulated_usage(request, limit, unrequested));
            ContainerUse {
                name: c.name.clone(),
                request: request.unwrap_or(0),
                usage,
            }
        })
        .collect();
    Some(Candidate {
        key,
        priority: model.spec.priority.unwrap_or(0),
        request: amount(model.spec.requests.get(resource)).unwrap_or(0),
        containers,
    })
}

/// A quantity in bytes (None when malformed or negative).
fn quantity_bytes(text: &str) -> Option<u64> {
    parse_units(text).ok().and_then(|v| u64::try_from(v).ok())
}
