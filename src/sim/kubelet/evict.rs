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

use serde_json::Value;

use super::clock::rfc3339;
use super::eviction::{
    Candidate, ContainerUse, UNREQUESTED_MEMORY, UNREQUESTED_STORAGE, binary_quantity,
    eviction_message, rank, simulated_usage,
};
use super::fleet::{EvictionRound, Fleet, PodKey, Stage};
use super::pod_status;
use super::pressure::{self, Pressure};
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
        let threshold = binary_quantity(MEMORY_THRESHOLD);
        let available = binary_quantity(MEMORY_THRESHOLD.saturating_sub(remaining));
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
/// (a static or mirror pod, or one already finished).
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
    let resource = pressure.resource();
    let unrequested = match pressure {
        Pressure::Memory => UNREQUESTED_MEMORY,
        Pressure::Disk => UNREQUESTED_STORAGE,
    };
    let set_usage = annotations[usage_annotation(pressure)]
        .as_str()
        .and_then(quantity_bytes);
    let containers = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            let amount = |field: &str| {
                c["resources"][field][resource]
                    .as_str()
                    .and_then(quantity_bytes)
            };
            let (request, limit) = (amount("requests"), amount("limits"));
            let usage = set_usage
                .filter(|_| i == 0)
                .unwrap_or_else(|| simulated_usage(request, limit, unrequested));
            ContainerUse {
                name: c["name"].as_str().unwrap_or_default().to_owned(),
                // The API defaults a request to the limit when only a limit is set.
                request: request.or(limit).unwrap_or(0),
                usage,
            }
        })
        .collect();
    let priority = pod["spec"]["priority"]
        .as_i64()
        .and_then(|p| i32::try_from(p).ok())
        .unwrap_or(0);
    Some(Candidate {
        key,
        priority,
        containers,
    })
}

/// A quantity in bytes (None when malformed or negative).
fn quantity_bytes(text: &str) -> Option<u64> {
    // TEMPORARY until the fit branch's model::quantity lands.
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let factor: u64 = match suffix {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        _ => return None,
    };
    number.checked_mul(factor)
}
