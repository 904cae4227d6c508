//! The kubelet fleet's state: what every simulated kubelet knows about its
//! node and the pods bound to it, the per-pod lifecycle stage, and one timer
//! heap for all of them (one task serves every node, so 65,000 nodes cost
//! 65,000 small records, not 65,000 tasks). Pods are indexed by node so a
//! node event touches only that node's pods.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::Value;
use tokio::time::Instant;

use super::clock::SimClock;
use super::pressure::{self, Pressure};
use crate::sim::controller::events::EventRecorder;
use crate::sim::offload::Offload;
use crate::sim::scenario::Scenario;
use crate::sim::store::Store;

/// A pod's namespace and name.
pub type PodKey = (String, String);

/// Where a pod is in its life, as far as the kubelet drives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Bound; the kubelet has not started it yet.
    Bound,
    /// The pod sandbox could not be created; the kubelet retries.
    SandboxFailed,
    /// Pulling the image.
    Pulling,
    /// The pull failed (ErrImagePull); the back-off comes next.
    PullFailed,
    /// Waiting out an image pull back-off.
    PullBackOff,
    /// Image present; creating the container.
    Creating,
    /// Container created; starting it.
    Starting,
    /// Running, readiness not yet passed (or never, for NeverReady).
    Started,
    /// Running and Ready.
    Ready,
    /// Exited; waiting out a CrashLoopBackOff.
    CrashBackOff,
    /// Deleted; stopping containers.
    Terminating,
    /// Succeeded or Failed; nothing more to do.
    Done,
}

/// One pod's lifecycle record.
#[derive(Clone, Debug)]
pub struct PodLife {
    /// The pod's uid (writes check it, so a re-created namesake is never touched).
    pub uid: String,
    /// The node it is bound to.
    pub node: Option<String>,
    /// Its first container's image (rules are keyed by image).
    pub image: String,
    /// Its first container's name (events name it).
    pub container: String,
    /// Where it is.
    pub stage: Stage,
    /// Container restarts so far.
    pub restarts: u32,
    /// Failed pulls so far.
    pub pull_failures: u32,
    /// Failed pod sandbox creations so far.
    pub sandbox_failures: u32,
    /// The token of the pending timer; older timers for this pod are stale.
    pub token: u64,
    /// When the current pull started (for the Pulled message).
    pub pull_started: Option<Instant>,
    /// The pulled image's digest, reported once the container runs: the
    /// kubelet's `imageID` comes from the runtime's container, so a pull
    /// alone changes nothing in the pod's status (and writes nothing).
    pub pulled_digest: Option<String>,
    /// Grace period for termination.
    pub grace: Duration,
}

/// What the fleet knows about a node.
#[derive(Clone, Debug, Default)]
pub struct NodeInfo {
    /// The Ready condition is True.
    pub ready: bool,
    /// InternalIP.
    pub ip: String,
    /// The pool label's value.
    pub pool: Option<String>,
    /// UID, for events.
    pub uid: String,
    /// The pressure annotations' values (memory, disk), when they ask for it.
    pub pressure: [Option<Box<str>>; 2],
}

/// Tuning the fleet reads.
#[derive(Clone, Debug)]
pub struct KubeletOptions {
    /// The scenario (timings, image rules, pools, timeline).
    pub scenario: Arc<Scenario>,
    /// Time multiplier: 2.0 runs every delay twice as fast.
    pub speed: f64,
    /// RNG seed.
    pub seed: u64,
    /// How often the kubelets notice a container's change, as upstream's
    /// PLEG relists the runtime (every second): a step due between two
    /// relists is taken at the next, on whole multiples of this period of
    /// wall time. `None`, the default: each step at its own instant. A
    /// rehearsal sets it, so the many pods of a batch move at shared
    /// instants and every watcher decides once per instant, not per pod.
    pub relist: Option<Duration>,
    /// Where the kubelets' steps run (see [`Offload`]).
    pub offload: Offload,
}

/// From `wall` to the next whole multiple of `period` since the epoch
/// (zero on one).
fn until_multiple(wall: jiff::Timestamp, period: Duration) -> Duration {
    let period_ns = period.as_nanos().max(1);
    let since_epoch = u128::try_from(wall.as_nanosecond()).unwrap_or_default();
    let past = since_epoch % period_ns;
    if past == 0 {
        Duration::ZERO
    } else {
        Duration::from_nanos(u64::try_from(period_ns - past).unwrap_or(u64::MAX))
    }
}

/// The fleet.
#[derive(Debug)]
pub struct Fleet {
    pub(super) store: Store,
    pub(super) clock: SimClock,
    pub(super) options: KubeletOptions,
    pub(super) recorder: EventRecorder,
    pub(super) rng: StdRng,
    pub(super) nodes: HashMap<String, NodeInfo>,
    pub(super) pods: HashMap<PodKey, PodLife>,
    pub(super) pods_by_node: HashMap<String, HashSet<PodKey>>,
    timers: BinaryHeap<Reverse<(Instant, u64, PodKey)>>,
    next_token: u64,
    /// Eviction rounds under way, by node and pressure.
    pub(super) evictions: HashMap<(String, Pressure), EvictionRound>,
    eviction_timers: BinaryHeap<Reverse<(Instant, u64, String, Pressure)>>,
}

/// One spell of pressure on a node, as the eviction manager works it off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvictionRound {
    /// How much simulated usage must be reclaimed (None: one eviction).
    pub shortfall: Option<u64>,
    /// Simulated usage reclaimed so far.
    pub reclaimed: u64,
    /// The token of the round's pending timer.
    pub token: u64,
}

impl Fleet {
    /// An empty fleet.
    pub fn new(store: Store, clock: SimClock, options: KubeletOptions) -> Fleet {
        let recorder = EventRecorder::new(store.clone(), clock);
        let rng = StdRng::seed_from_u64(options.seed);
        Fleet {
            store,
            clock,
            options,
            recorder,
            rng,
            nodes: HashMap::new(),
            pods: HashMap::new(),
            pods_by_node: HashMap::new(),
            timers: BinaryHeap::new(),
            next_token: 0,
            evictions: HashMap::new(),
            eviction_timers: BinaryHeap::new(),
        }
    }

    /// A scenario delay with jitter, scaled by speed.
    pub fn delay(&mut self, base: Duration) -> Duration {
        let jitter = self.options.scenario.timing.jitter;
        let factor = if jitter > 0.0 {
            1.0 + self.rng.random_range(-jitter..=jitter)
        } else {
            1.0
        };
        base.mul_f64(factor.max(0.0) / self.options.speed.max(0.001))
    }

    /// Schedules the pod's next step after `after`, replacing any pending one.
    pub fn schedule(&mut self, key: &PodKey, after: Duration) {
        self.next_token += 1;
        let token = self.next_token;
        let at = self.at_relist(Instant::now() + after);
        if let Some(life) = self.pods.get_mut(key) {
            life.token = token;
            self.timers.push(Reverse((at, token, key.clone())));
        }
    }

    /// `at`, or with a relist period the first relist at or after it.
    fn at_relist(&self, at: Instant) -> Instant {
        match self.options.relist {
            Some(period) => at + until_multiple(self.clock.at(at), period),
            None => at,
        }
    }

    /// Drops the pod's pending step.
    pub fn cancel(&mut self, key: &PodKey) {
        if let Some(life) = self.pods.get_mut(key) {
            life.token = 0;
        }
    }

    /// Whether a timer (a pod's step or an eviction) is due by now.
    pub fn anything_due(&self) -> bool {
        self.next_deadline().is_some_and(|at| at <= Instant::now())
    }

    /// When the next timer (a pod's step or an eviction) is due.
    pub fn next_deadline(&self) -> Option<Instant> {
        let pod = self.timers.peek().map(|Reverse((at, _, _))| *at);
        let eviction = self.eviction_timers.peek().map(|Reverse((at, ..))| *at);
        pod.into_iter().chain(eviction).min()
    }

    /// Schedules the node's next eviction for `pressure` after `after`,
    /// replacing any pending one.
    pub fn schedule_eviction(&mut self, node: &str, pressure: Pressure, after: Duration) {
        self.next_token += 1;
        let token = self.next_token;
        if let Some(round) = self.evictions.get_mut(&(node.to_owned(), pressure)) {
            round.token = token;
            self.eviction_timers.push(Reverse((
                Instant::now() + after,
                token,
                node.to_owned(),
                pressure,
            )));
        }
    }

    /// Pops every eviction due by now whose round is still current.
    pub fn due_evictions(&mut self) -> Vec<(String, Pressure)> {
        let now = Instant::now();
        let mut due = Vec::new();
        while let Some(Reverse((at, ..))) = self.eviction_timers.peek() {
            if *at > now {
                break;
            }
            if let Some(Reverse((_, token, node, pressure))) = self.eviction_timers.pop() {
                let key = (node, pressure);
                if self.evictions.get(&key).is_some_and(|r| r.token == token) {
                    due.push(key);
                }
            }
        }
        due
    }

    /// Pops every timer due by now that is still current.
    pub fn due(&mut self) -> Vec<PodKey> {
        let now = Instant::now();
        let mut due = Vec::new();
        while let Some(Reverse((at, token, _))) = self.timers.peek() {
            if *at > now {
                break;
            }
            let token = *token;
            if let Some(Reverse((_, _, key))) = self.timers.pop()
                && self.pods.get(&key).is_some_and(|life| life.token == token)
            {
                due.push(key);
            }
        }
        due
    }

    /// Files a pod under its node.
    pub fn index(&mut self, key: &PodKey, node: Option<&str>) {
        if let Some(node) = node {
            self.pods_by_node
                .entry(node.to_owned())
                .or_default()
                .insert(key.clone());
        }
    }

    /// Forgets a pod.
    pub fn forget(&mut self, key: &PodKey) {
        if let Some(life) = self.pods.remove(key)
            && let Some(node) = life.node
            && let Some(set) = self.pods_by_node.get_mut(&node)
        {
            set.remove(key);
            if set.is_empty() {
                self.pods_by_node.remove(&node);
            }
        }
    }

    /// The pods on a node.
    pub fn pods_on(&self, node: &str) -> Vec<PodKey> {
        self.pods_by_node
            .get(node)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Node facts from a node object.
    pub fn node_info(&self, node: &Value) -> NodeInfo {
        let ip = node["status"]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["type"] == "InternalIP")
            .and_then(|a| a["address"].as_str())
            .unwrap_or("10.0.0.1")
            .to_owned();
        NodeInfo {
            ready: super::node_status::is_ready(node),
            ip,
            pool: node["metadata"]["labels"][self.options.scenario.pool_label.as_str()]
                .as_str()
                .map(str::to_owned),
            uid: node["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            pressure: Pressure::ALL.map(|p| pressure::requested(node, p).map(Box::from)),
        }
    }

    /// A random pod IP from the cluster's pod range.
    pub fn pod_ip(&mut self) -> String {
        let (a, b, c) = (
            self.rng.random_range(64..128),
            self.rng.random_range(0..=255),
            self.rng.random_range(2..=254),
        );
        format!("100.{a}.{b}.{c}")
    }

    /// Random lowercase hex of `len` characters (container ids, digests).
    pub fn hex(&mut self, len: usize) -> String {
        let mut out = String::with_capacity(len);
        while out.len() < len {
            let _ = write!(out, "{:016x}", self.rng.random::<u64>());
        }
        out.truncate(len);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_waits_for_the_next_relist_on_whole_periods() {
        let at = |text: &str| text.parse::<jiff::Timestamp>().expect("timestamp");
        let second = Duration::from_secs(1);
        // Due between two relists: taken at the next.
        assert_eq!(
            until_multiple(at("2026-01-01T00:00:07.25Z"), second),
            Duration::from_millis(750)
        );
        // Due on one: taken then.
        assert_eq!(
            until_multiple(at("2026-01-01T00:00:07Z"), second),
            Duration::ZERO
        );
        assert_eq!(
            until_multiple(at("2026-01-01T00:00:07.001Z"), Duration::from_secs(10)),
            Duration::from_millis(2_999)
        );
        // A zero period cannot divide: every step at its own instant.
        assert_eq!(
            until_multiple(at("2026-01-01T00:00:07.5Z"), Duration::ZERO),
            Duration::ZERO
        );
    }
}
