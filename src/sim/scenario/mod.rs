//! Scenarios: the YAML description of a simulated cluster (node pools, node
//! overrides, DaemonSets with their revision history, image failure rules,
//! kubelet timings and a timeline of node events). The format is documented in
//! `assets/scenarios/README.md`.
//!
//! This module parses and validates; it builds no API objects (that is
//! [`crate::sim::generate`]) and runs nothing.

mod duration;
mod error;
mod validate;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Deserialize;

pub use error::ScenarioError;

use crate::input::limits::{InputError, MAX_SCENARIO_BYTES, MAX_SCENARIO_DEPTH, read_text};

/// The scenarios built into the binary, by name.
const EMBEDDED: &[(&str, &str)] = &[
    (
        "default",
        include_str!("../../../assets/scenarios/default.yaml"),
    ),
    (
        "small",
        include_str!("../../../assets/scenarios/small.yaml"),
    ),
    (
        "gitops",
        include_str!("../../../assets/scenarios/gitops.yaml"),
    ),
    (
        "capacity",
        include_str!("../../../assets/scenarios/capacity.yaml"),
    ),
];

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// A short name, shown in logs.
    pub name: String,
    /// What the scenario is for.
    #[serde(default)]
    pub description: String,
    /// RNG seed for kubelet jitter and pod names (overridden by `--seed`).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The label key that names a node's pool.
    #[serde(default = "default_pool_label")]
    pub pool_label: String,
    /// Kubelet and controller delays.
    #[serde(default)]
    pub timing: Timing,
    /// Node pools: groups of alike nodes.
    #[serde(default)]
    pub pools: Vec<Pool>,
    /// Per-node changes to what the pools generate.
    #[serde(default)]
    pub nodes: Vec<NodeOverride>,
    /// DaemonSets with their revision history.
    #[serde(default)]
    pub daemon_sets: Vec<DaemonSetSpec>,
    /// How given images behave on given nodes.
    #[serde(default)]
    pub images: Vec<ImageRule>,
    /// Things that happen to nodes over time.
    #[serde(default)]
    pub timeline: Vec<TimelineEntry>,
    /// A simulated GitOps controller putting back the spec of the DaemonSets
    /// it applied (`appliedBy` its manager) after others change it.
    #[serde(default)]
    pub self_heal: Option<SelfHeal>,
    /// PriorityClasses created at start, besides the two system ones.
    #[serde(default)]
    pub priority_classes: Vec<PriorityClassSpec>,
    /// Plain pods (owned by nothing) bound to the nodes of some pools.
    #[serde(default)]
    pub workloads: Vec<WorkloadSpec>,
}

/// A `scheduling.k8s.io/v1` PriorityClass.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriorityClassSpec {
    /// Name.
    pub name: String,
    /// The priority its pods get.
    pub value: i32,
    /// `PreemptLowerPriority` (default) or `Never`.
    #[serde(default)]
    pub preemption_policy: Option<String>,
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// Whether pods without a class get this one.
    #[serde(default)]
    pub global_default: bool,
}

/// Plain pods on the nodes of some pools, as other teams' workloads.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Name; pods are `<name>-<node>-<n>`.
    pub name: String,
    /// Namespace (default `default`).
    #[serde(default = "default_workload_namespace")]
    pub namespace: String,
    /// Pools whose nodes run it (empty: the `nodes` only).
    #[serde(default)]
    pub pools: Vec<String>,
    /// Single nodes that run it, besides the pools'.
    #[serde(default)]
    pub nodes: Vec<String>,
    /// Pods per node (default 1).
    #[serde(default = "default_per_node")]
    pub per_node: usize,
    /// The container image.
    pub image: String,
    /// `resources.requests` (`cpu: 500m`, `memory: 1Gi`, `nvidia.com/gpu: 1`).
    #[serde(default)]
    pub requests: Option<BTreeMap<String, String>>,
    /// `resources.limits`.
    #[serde(default)]
    pub limits: Option<BTreeMap<String, String>>,
    /// Container ports bound on the node (`hostPort`, TCP).
    #[serde(default)]
    pub host_ports: Vec<u16>,
    /// `spec.priorityClassName`.
    #[serde(default)]
    pub priority_class_name: Option<String>,
}

fn default_workload_namespace() -> String {
    "default".to_owned()
}
fn default_per_node() -> usize {
    1
}

/// A simulated GitOps self-heal (Argo CD's `selfHeal: true`): a few seconds
/// after another field manager changes the update strategy or the template
/// of a DaemonSet it applied, it writes back the spec as of start.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelfHeal {
    /// The field manager it writes as (and whose DaemonSets it heals).
    #[serde(default = "default_self_heal_manager")]
    pub manager: String,
    /// How long after a change it puts the spec back.
    #[serde(with = "duration", default = "default_self_heal_delay")]
    pub delay: Duration,
}

fn default_self_heal_manager() -> String {
    "argocd-controller".to_owned()
}

fn default_self_heal_delay() -> Duration {
    Duration::from_secs(3)
}

fn default_pool_label() -> String {
    "node-pool".to_owned()
}

/// Kubelet and controller delays (each a humantime string such as `800ms`, `2s`, `1m`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Timing {
    /// Pod created → bound to its node (`Scheduled`).
    #[serde(with = "duration")]
    pub schedule: Duration,
    /// Bound → image pull starts (`Pulling`).
    #[serde(with = "duration")]
    pub pull_start: Duration,
    /// Pulling → pulled (`Pulled`).
    #[serde(with = "duration")]
    pub pull: Duration,
    /// Pulled → container created (`Created`).
    #[serde(with = "duration")]
    pub create: Duration,
    /// Created → started, phase Running (`Started`).
    #[serde(with = "duration")]
    pub start: Duration,
    /// Started → Ready (the readiness probe's first success).
    #[serde(with = "duration")]
    pub ready: Duration,
    /// How long a crash-looping container runs before it exits.
    #[serde(with = "duration")]
    pub crash_after: Duration,
    /// The first restart back-off; it doubles per restart up to `backoffMax`.
    #[serde(with = "duration")]
    pub backoff: Duration,
    /// The back-off ceiling (upstream: 5 minutes).
    #[serde(with = "duration")]
    pub backoff_max: Duration,
    /// How long a deleted pod takes to stop (capped by its grace period).
    #[serde(with = "duration")]
    pub terminate: Duration,
    /// Random spread added to each delay, as a fraction of it (0.0 – 1.0).
    pub jitter: f64,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            schedule: Duration::from_millis(300),
            pull_start: Duration::from_millis(300),
            pull: Duration::from_secs(2),
            create: Duration::from_millis(400),
            start: Duration::from_millis(400),
            ready: Duration::from_secs(3),
            crash_after: Duration::from_secs(4),
            backoff: Duration::from_secs(10),
            backoff_max: Duration::from_secs(300),
            terminate: Duration::from_secs(3),
            jitter: 0.3,
        }
    }
}

/// A group of alike nodes.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pool {
    /// Pool name; also the pool label's value.
    pub name: String,
    /// How many nodes.
    pub count: usize,
    /// Node name prefix (default `<name>-`); nodes are `<prefix><NN>`.
    #[serde(default)]
    pub prefix: Option<String>,
    /// Value of `node.kubernetes.io/instance-type`.
    #[serde(default = "default_instance_type")]
    pub instance_type: String,
    /// `kubernetes.io/arch`: `amd64` or `arm64`.
    #[serde(default = "default_arch")]
    pub arch: String,
    /// Zones the nodes are spread over, round-robin.
    #[serde(default)]
    pub zones: Vec<String>,
    /// Extra labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Taints every node of the pool carries.
    #[serde(default)]
    pub taints: Vec<Taint>,
    /// CPU cores per node.
    #[serde(default = "default_cpu")]
    pub cpu: u32,
    /// Memory per node, in GiB.
    #[serde(default = "default_memory")]
    pub memory_gib: u32,
    /// Age of the nodes at start (default 30 days).
    #[serde(default, with = "duration::option")]
    pub age: Option<Duration>,
    /// The kubelet's `--max-pods`: capacity and allocatable `pods` (default 110).
    #[serde(default = "default_max_pods")]
    pub pods: u32,
    /// The node's root filesystem in GiB: `ephemeral-storage` capacity
    /// (default 100; allocatable is 90 % of it less 1 GiB reserved).
    #[serde(default = "default_ephemeral_storage")]
    pub ephemeral_storage_gib: u32,
    /// Extended resources a device plugin advertises per node
    /// (`nvidia.com/gpu: 4`), in capacity and allocatable alike.
    #[serde(default)]
    pub extended_resources: BTreeMap<String, u32>,
    /// `status.nodeInfo.kubeletVersion` (default the server's, `v1.32.4`).
    #[serde(default)]
    pub kubelet_version: Option<String>,
}

fn default_max_pods() -> u32 {
    110
}
fn default_ephemeral_storage() -> u32 {
    100
}

fn default_instance_type() -> String {
    "m6i.xlarge".to_owned()
}
fn default_arch() -> String {
    "amd64".to_owned()
}
fn default_cpu() -> u32 {
    4
}
fn default_memory() -> u32 {
    16
}

/// Changes to one generated node.
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent yes/no facts the scenario YAML spells out one by one"
)]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeOverride {
    /// The node's generated name.
    pub name: String,
    /// Cordoned (`spec.unschedulable`) from the start.
    #[serde(default)]
    pub cordoned: bool,
    /// NotReady from the start (with the node lifecycle taints).
    #[serde(default)]
    pub not_ready: bool,
    /// Extra labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Extra taints.
    #[serde(default)]
    pub taints: Vec<Taint>,
    /// The node's kubelet version, instead of its pool's.
    #[serde(default)]
    pub kubelet_version: Option<String>,
    /// Under memory pressure from the start: the node carries the
    /// `sim.rollcall.dev/memory-pressure: "true"` annotation its simulated
    /// kubelet reads.
    #[serde(default)]
    pub memory_pressure: bool,
    /// Under disk pressure from the start (`sim.rollcall.dev/disk-pressure`).
    #[serde(default)]
    pub disk_pressure: bool,
}

/// A DaemonSet and the revisions it went through.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DaemonSetSpec {
    /// Name.
    pub name: String,
    /// Namespace (default `kube-system`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// `OnDelete` or `RollingUpdate` (default).
    #[serde(default)]
    pub update_strategy: StrategyKind,
    /// RollingUpdate `maxUnavailable` (int or percent, default 1).
    #[serde(default)]
    pub max_unavailable: Option<IntOrString>,
    /// RollingUpdate `maxSurge` (int or percent, default 0).
    #[serde(default)]
    pub max_surge: Option<IntOrString>,
    /// `spec.minReadySeconds`.
    #[serde(default)]
    pub min_ready_seconds: i32,
    /// `spec.template.spec.nodeSelector`.
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    /// `spec.template.spec.tolerations`.
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    /// `spec.template.spec.hostNetwork`.
    #[serde(default)]
    pub host_network: bool,
    /// Container name (default: the DaemonSet name).
    #[serde(default)]
    pub container: Option<String>,
    /// Templates oldest first; the last is the DaemonSet's current template.
    pub revisions: Vec<RevisionSpec>,
    /// The revision (1-based index into `revisions`) the pods run at start
    /// (default: the last). Lower means an update is waiting to roll out.
    #[serde(default)]
    pub pods_at: Option<usize>,
    /// Extra `metadata.labels` of the DaemonSet.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Extra `metadata.annotations` of the DaemonSet.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// The field manager that applied the DaemonSet (server-side apply of
    /// every field, as `argocd-controller` or `kustomize-controller` do),
    /// recorded in `metadata.managedFields`.
    #[serde(default)]
    pub applied_by: Option<String>,
}

fn default_namespace() -> String {
    "kube-system".to_owned()
}

/// `spec.updateStrategy.type`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum StrategyKind {
    /// The controller replaces pods itself within the budgets.
    #[default]
    RollingUpdate,
    /// A pod is replaced only after someone deletes it.
    OnDelete,
}

impl StrategyKind {
    /// The API string.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::RollingUpdate => "RollingUpdate",
            StrategyKind::OnDelete => "OnDelete",
        }
    }
}

/// One template of a DaemonSet's history.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevisionSpec {
    /// The container image.
    pub image: String,
    /// The `kubernetes.io/change-cause` annotation (`rollout history` shows it).
    #[serde(default)]
    pub change_cause: Option<String>,
    /// Container environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    // Requests and limits default to 50m CPU and 64Mi requested, 256Mi
    // memory limit; the priority class to `system-node-critical`.
    /// `resources.requests` (`cpu: 500m`, `memory: 1Gi`, `nvidia.com/gpu: 1`).
    #[serde(default)]
    pub requests: Option<BTreeMap<String, String>>,
    /// `resources.limits`.
    #[serde(default)]
    pub limits: Option<BTreeMap<String, String>>,
    /// Container ports bound on the node (`hostPort`, TCP).
    #[serde(default)]
    pub host_ports: Vec<u16>,
    /// `spec.priorityClassName`.
    #[serde(default)]
    pub priority_class_name: Option<String>,
}

/// How an image behaves on some nodes.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageRule {
    /// The exact image reference the rule applies to.
    pub image: String,
    /// What goes wrong.
    pub failure: Failure,
    /// Pools the rule applies to (empty: every pool).
    #[serde(default)]
    pub pools: Vec<String>,
    /// Nodes the rule applies to (empty: every node of the pools).
    #[serde(default)]
    pub nodes: Vec<String>,
    /// Exit code of a crashing container (default 1).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Message shown for the failure (default: a realistic one).
    #[serde(default)]
    pub message: Option<String>,
}

/// A failure an image rule injects.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum Failure {
    /// The pull fails: ErrImagePull, then ImagePullBackOff.
    ImagePullBackOff,
    /// The container starts, then exits: CrashLoopBackOff with growing back-off.
    CrashLoopBackOff,
    /// The container runs but never passes its readiness probe.
    NeverReady,
    /// The kubelet cannot create the pod sandbox (CNI setup fails): the pod
    /// stays Pending in ContainerCreating with `FailedCreatePodSandBox` events.
    FailedCreatePodSandBox,
}

/// Something that happens to nodes at a point in time.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimelineEntry {
    /// Time after start.
    #[serde(with = "duration")]
    pub at: Duration,
    /// What happens.
    pub action: TimelineAction,
    /// The node it happens to (all actions but `join`).
    #[serde(default)]
    pub node: Option<String>,
    /// The pool new nodes join (`join`).
    #[serde(default)]
    pub pool: Option<String>,
    /// How many nodes join (`join`, default 1).
    #[serde(default)]
    pub count: Option<usize>,
}

/// The timeline actions.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum TimelineAction {
    /// The kubelet stops posting status: Ready Unknown, unreachable taints.
    NotReady,
    /// The kubelet is back: Ready True, taints removed.
    Ready,
    /// New nodes join a pool.
    Join,
    /// The node is deleted (its pods are garbage-collected).
    Leave,
    /// `spec.unschedulable: true`.
    Cordon,
    /// `spec.unschedulable` cleared.
    Uncordon,
}

impl Scenario {
    /// Loads a built-in scenario by name, or else a file by path.
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        if let Some((_, text)) = EMBEDDED.iter().find(|(name, _)| *name == name_or_path) {
            return Scenario::parse(&format!("<built-in {name_or_path}>"), text);
        }
        let path = Path::new(name_or_path);
        if !path.exists() && !name_or_path.contains(['/', '.']) {
            return Err(ScenarioError::UnknownName {
                name: name_or_path.to_owned(),
                known: Scenario::builtin_names().join(", "),
            });
        }
        let text = read_text(path, "a scenario", MAX_SCENARIO_BYTES).map_err(|err| match err {
            InputError::Io { source, .. } => ScenarioError::Read {
                file: path.display().to_string(),
                source,
            },
            other => ScenarioError::Input(other),
        })?;
        Scenario::parse(&path.display().to_string(), &text)
    }

    /// The names of the built-in scenarios.
    pub fn builtin_names() -> Vec<&'static str> {
        EMBEDDED.iter().map(|(name, _)| *name).collect()
    }

    /// Parses and validates scenario YAML; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        check_nesting(text).map_err(|problem| problem.in_file(file))?;
        let scenario: Scenario =
            serde_norway::from_str(text).map_err(|err| ScenarioError::syntax(file, &err))?;
        validate::validate(&scenario, text).map_err(|problem| problem.in_file(file))?;
        Ok(scenario)
    }

    /// An empty scenario: no nodes, no DaemonSets (for `--nodes` and snapshots).
    pub fn empty() -> Scenario {
        Scenario {
            name: "empty".to_owned(),
            description: String::new(),
            seed: None,
            pool_label: default_pool_label(),
            timing: Timing::default(),
            pools: Vec::new(),
            nodes: Vec::new(),
            daemon_sets: Vec::new(),
            images: Vec::new(),
            timeline: Vec::new(),
            self_heal: None,
            priority_classes: Vec::new(),
            workloads: Vec::new(),
        }
    }

    /// The pool a generated node name belongs to, by prefix.
    pub fn pool_of_node(&self, node: &str) -> Option<&Pool> {
        self.pools
            .iter()
            .find(|pool| node_index(&pool.node_prefix(), node).is_some())
    }
}

impl Pool {
    /// The node name prefix.
    pub fn node_prefix(&self) -> String {
        self.prefix
            .clone()
            .unwrap_or_else(|| format!("{}-", self.name))
    }

    /// The name of the `index`th node (1-based), zero-padded to two digits.
    pub fn node_name(&self, index: usize) -> String {
        format!("{}{index:02}", self.node_prefix())
    }
}

/// The 1-based index of `node` in a pool with `prefix`, if it is one of its names.
/// Most flow collections (`[`, `{`) a scenario may open in all: deep flow
/// nesting makes the YAML parser's time grow with the square of the depth.
const MAX_FLOW_OPENERS: usize = 4096;

/// Refuses YAML nested deeper than [`MAX_SCENARIO_DEPTH`] flow collections
/// before the parser sees it (a 100,000-deep `[[[...` took minutes). Counts
/// brackets without reading quotes, so a bracket in a string counts too; the
/// cap on openers in all bounds what closing brackets in strings could hide.
/// Block nesting is bounded by indentation and the file size limit.
fn check_nesting(text: &str) -> Result<(), error::Problem> {
    let mut depth = 0_usize;
    let mut openers = 0_usize;
    for (line_index, line) in text.lines().enumerate() {
        for c in line.chars() {
            match c {
                '[' | '{' => {
                    depth += 1;
                    openers += 1;
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => continue,
            }
            let message = if depth > MAX_SCENARIO_DEPTH {
                format!("nested deeper than the limit of {MAX_SCENARIO_DEPTH} levels")
            } else if openers > MAX_FLOW_OPENERS {
                format!("more than the limit of {MAX_FLOW_OPENERS} flow collections ([ or {{)")
            } else {
                continue;
            };
            return Err(error::Problem {
                line: Some(line_index + 1),
                message,
            });
        }
    }
    Ok(())
}

fn node_index(prefix: &str, node: &str) -> Option<usize> {
    node.strip_prefix(prefix)
        .filter(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|rest| rest.parse().ok())
}

#[cfg(test)]
mod tests;
