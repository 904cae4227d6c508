//! Preflight fit per node: will the pod of the revision a rollout moves to
//! fit on the node, and whom would it preempt. One rule for the console's
//! rows, `status` and `explain -f`, on top of the engine's
//! [`crate::engine::fit::fit`].
//!
//! What is asked, per node (`None`: nothing to ask, or unknown):
//!
//! - only of a node that should run a daemon pod and whose newest live
//!   daemon pod is not already on the update revision (a node on it has
//!   nothing to move; a node not eligible gets no pod);
//! - the demand is the update revision's template through the model's
//!   demand rule (`PodDemand::of_template`), with its priority by
//!   [`template_priority`];
//! - against the node's `allocatable` and the pods counted there (every pod
//!   of every namespace bound to it, not `Succeeded`/`Failed`: the node usage
//!   stream), without the DaemonSet's old pods on the node when the old pod
//!   goes first (OnDelete, and RollingUpdate with `maxSurge` 0: the
//!   controller creates the replacement once the old one is gone), or
//!   alongside them (RollingUpdate with `maxSurge` > 0: upstream surges the
//!   new pod next to the old one);
//! - unknown (`None`) when usage is unknown: the user may not list pods in
//!   all namespaces, or the list has not completed.
//!
//! Pure: plain data in, plain data out.

use k8s_openapi::api::core::v1::PodSpec as TemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::cluster::usage::NodeUsage;
use crate::engine::coverage::{NodeCoverage, PodCoverage};
use crate::engine::fit::{BoundPod, Fit, NodeUse, PodDemand, fit};
use crate::engine::rolling::{UpdateStrategy, update_strategy};
use crate::model::{DaemonSet, Node, Pod};

pub use crate::engine::priority::{SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL};

/// What every node of one DaemonSet is asked: the update revision's pod.
#[derive(Clone, Debug, PartialEq)]
pub struct FitTarget {
    /// What the new pod asks of a node.
    pub demand: PodDemand,
    /// RollingUpdate with `maxSurge` > 0: the new pod runs beside the old.
    pub surge: bool,
    /// The DaemonSet's namespace (its pods').
    pub namespace: String,
}

impl FitTarget {
    /// The target of `ds` (its template is the update revision's);
    /// `own_pods`: the DaemonSet's pods, for a priority class only they
    /// show. `None` without a template.
    pub fn of<'a>(ds: &DaemonSet, own_pods: impl IntoIterator<Item = &'a Pod>) -> Option<Self> {
        let spec = ds.spec.as_ref()?.template.spec.as_ref()?;
        let surge = match update_strategy(ds) {
            UpdateStrategy::RollingUpdate { max_surge, .. } => max_surge_is_set(&max_surge),
            UpdateStrategy::OnDelete => false,
        };
        Some(FitTarget {
            demand: PodDemand::of_template(spec, template_priority(spec, own_pods)),
            surge,
            namespace: ds.metadata.namespace.clone().unwrap_or_default(),
        })
    }
}

/// The priority a pod of `spec` gets at admission, when the template does
/// not say it (`spec.priority`): the built-in classes' values for
/// `system-node-critical` and `system-cluster-critical`; for another class,
/// the priority seen on a pod of the DaemonSet with that class (the API
/// server resolved it at their admission; rollcall does not read
/// PriorityClasses); `None` (0) when no pod shows it.
pub fn template_priority<'a>(
    spec: &TemplateSpec,
    own_pods: impl IntoIterator<Item = &'a Pod>,
) -> Option<i32> {
    if spec.priority.is_some() {
        return None;
    }
    let class = spec.priority_class_name.as_deref()?;
    crate::engine::priority::system_class_priority(class).or_else(|| {
        own_pods
            .into_iter()
            .filter(|p| p.spec.priority_class_name.as_deref() == Some(class))
            .find_map(|p| p.spec.priority)
    })
}

/// Whether `maxSurge` lets the new pod start beside the old one: a count
/// above 0, or a percentage above 0 (upstream scales it rounding up, so any
/// positive share of at least one node is one pod).
fn max_surge_is_set(max_surge: &IntOrString) -> bool {
    match max_surge {
        IntOrString::Int(count) => *count > 0,
        IntOrString::String(text) => text
            .trim()
            .strip_suffix('%')
            .and_then(|n| n.parse::<i32>().ok())
            .is_some_and(|n| n > 0),
    }
}

/// The fit of `target` on `node` (see the module doc); `usage`: `None`
/// when usage is unknown, `Some(None)` when no pod counts there.
pub fn node_fit(
    target: &FitTarget,
    node: &Node,
    coverage: &NodeCoverage,
    usage: Option<Option<&NodeUsage>>,
) -> Option<Fit> {
    let newest_live = coverage.pods.iter().rev().find(|p| !p.terminating);
    if newest_live.is_some_and(|p| p.updated) {
        return None;
    }
    judged(target, node, coverage, usage?, |p| !p.updated)
}

/// The fit of `target` on a node whose daemon pods all make way for it,
/// whatever revision they run: a rollback's step, where the pods to move
/// are the update revision's. `None` when usage is unknown or the node
/// should run no pod.
pub fn replacement_fit(
    target: &FitTarget,
    node: &Node,
    coverage: &NodeCoverage,
    usage: Option<Option<&NodeUsage>>,
) -> Option<Fit> {
    judged(target, node, coverage, usage?, |_| true)
}

/// The fit on a node that should run the pod, once the daemon pods that
/// `replaced` picks are gone; `None` when the node should run no pod.
fn judged(
    target: &FitTarget,
    node: &Node,
    coverage: &NodeCoverage,
    usage: Option<&NodeUsage>,
    replaced: impl Fn(&PodCoverage) -> bool,
) -> Option<Fit> {
    if !coverage.verdict.should_run {
        return None;
    }
    let names = coverage
        .pods
        .iter()
        .filter(|p| replaced(p))
        .map(|p| p.name.as_str());
    Some(fit_replacing(target, node, usage, names))
}

/// The fit of `target` on `node` once the daemon pods named `replaced` are
/// gone (none are, on a surge: the new pod starts beside the old).
fn fit_replacing<'a>(
    target: &FitTarget,
    node: &Node,
    usage: Option<&NodeUsage>,
    replaced: impl Iterator<Item = &'a str>,
) -> Fit {
    // Usage pods are known by `namespace/name` (the usage stream keeps no
    // UIDs): so are the old daemon pods left out.
    let namespace = target.namespace.as_str();
    let without: Vec<String> = if target.surge {
        Vec::new()
    } else {
        replaced.map(|name| format!("{namespace}/{name}")).collect()
    };
    let without: Vec<&str> = without.iter().map(String::as_str).collect();
    let node_use = NodeUse {
        allocatable: (*node.status.allocatable).clone(),
        pods: usage
            .map(|u| u.pods.iter().map(|p| bound(p)).collect())
            .unwrap_or_default(),
    };
    fit(&target.demand, &node_use, &without)
}

/// A usage pod as the engine counts it; its `uid` is its `namespace/name`
/// (what `without` names, see [`node_fit`]).
fn bound(pod: &crate::model::UsagePod) -> BoundPod {
    BoundPod {
        uid: format!("{}/{}", pod.namespace(), pod.name()),
        namespace: pod.namespace().to_owned(),
        name: pod.name().to_owned(),
        priority: pod.priority(),
        start_time: pod.start_time,
        requests: pod.requests().clone(),
        host_ports: pod.host_ports().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::usage::UsageStore;
    use crate::engine::eligibility::NodeVerdict;
    use crate::engine::fixtures::daemonset;
    use crate::model::{ResourceList, Shared};
    use k8s_openapi::api::core::v1::ResourceRequirements;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use serde_json::json;

    /// A DaemonSet whose template requests `cpu`, with `max_surge`.
    fn agent(cpu: &str, max_surge: i32) -> DaemonSet {
        let mut ds = daemonset("agent:v2")
            .rolling(IntOrString::Int(1), IntOrString::Int(max_surge))
            .build();
        if let Some(spec) = ds.spec.as_mut().and_then(|s| s.template.spec.as_mut()) {
            spec.containers[0].resources = Some(ResourceRequirements {
                requests: Some([("cpu".to_owned(), Quantity(cpu.into()))].into()),
                ..ResourceRequirements::default()
            });
        }
        ds
    }

    fn node_with_cpu(millis: i64) -> Node {
        let mut allocatable = ResourceList::default();
        allocatable.set("cpu", millis);
        allocatable.set("pods", 110);
        let mut node = crate::engine::fixtures::node("n1").build();
        node.status.allocatable = Shared::new(allocatable);
        node
    }

    /// Usage of `n1`: (namespace, name, cpu, priority) each.
    fn usage(pods: &[(&str, &str, &str, i32)]) -> crate::cluster::usage::UsageByNode {
        UsageStore::of_list(
            pods.iter()
                .map(|(ns, name, cpu, priority)| {
                    serde_json::from_value(json!({
                        "metadata": {"name": name, "namespace": ns, "resourceVersion": "1"},
                        "spec": {"nodeName": "n1", "priority": priority,
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
                        "status": {"phase": "Running"}
                    }))
                    .unwrap()
                })
                .collect(),
        )
    }

    fn row(pod: Option<(&str, bool)>, should_run: bool) -> NodeCoverage {
        let verdict = NodeVerdict {
            should_run,
            ..NodeVerdict::eligible()
        };
        NodeCoverage {
            node: "n1".into(),
            verdict,
            pods: pod
                .map(|(name, updated)| PodCoverage {
                    name: name.into(),
                    uid: format!("uid-{name}").into(),
                    hash: None,
                    revision: None,
                    updated,
                    phase: Some("Running".into()),
                    ready: true,
                    available: true,
                    terminating: false,
                    restarts: 0,
                    problem: None,
                    failure_detail: None,
                    created: None,
                    ready_since: None,
                })
                .into_iter()
                .collect(),
        }
    }

    /// (name, DaemonSet, row, usage, expected `(fits, first code, victims)`).
    type FitCase<'a> = (
        &'static str,
        DaemonSet,
        NodeCoverage,
        Option<&'a crate::cluster::usage::UsageByNode>,
        Option<(bool, Option<&'static str>, usize)>,
    );

    /// Upstream's NodeResourcesFit on the node's allocatable minus the
    /// requests of the pods bound there; the old daemon pod is gone first
    /// without surge (the controller recreates once it is deleted) and
    /// still there with surge.
    #[test]
    fn fit_per_node_table() {
        let node = node_with_cpu(1000);
        let busy = usage(&[
            ("kube-system", "agent-old", "300m", 0),
            ("shop", "web", "500m", 0),
        ]);
        let with_batch = usage(&[
            ("kube-system", "agent-old", "300m", 0),
            ("batch", "job", "600m", -10),
        ]);
        let empty = usage(&[]);
        let old = Some(("agent-old", false));
        // (name, ds, row, usage, expected: None | Some((fits, first code, preempts)))
        let cases: Vec<FitCase<'_>> = vec![
            (
                "fits once the old pod is gone",
                agent("400m", 0),
                row(old, true),
                Some(&busy),
                Some((true, None, 0)),
            ),
            (
                "surge: the old pod still counts",
                agent("400m", 1),
                row(old, true),
                Some(&busy),
                Some((false, Some("insufficientCpu"), 0)),
            ),
            (
                "too big even without the old pod",
                agent("600m", 0),
                row(old, true),
                Some(&busy),
                Some((false, Some("insufficientCpu"), 0)),
            ),
            (
                "preempts a lower-priority pod",
                agent("800m", 0),
                row(old, true),
                Some(&with_batch),
                Some((true, Some("insufficientCpu"), 1)),
            ),
            (
                "already on the update revision",
                agent("900m", 0),
                row(Some(("agent-new", true)), true),
                Some(&busy),
                None,
            ),
            (
                "not eligible",
                agent("900m", 0),
                row(None, false),
                Some(&busy),
                None,
            ),
            (
                "usage unknown",
                agent("900m", 0),
                row(old, true),
                None,
                None,
            ),
            (
                "a missing pod on an empty node",
                agent("900m", 0),
                row(None, true),
                Some(&empty),
                Some((true, None, 0)),
            ),
        ];
        for (name, ds, coverage, known, expected) in cases {
            let target = FitTarget::of(&ds, std::iter::empty()).expect("template");
            let got = node_fit(&target, &node, &coverage, known.map(|u| u.get("n1")));
            let got = got.map(|f| {
                let code = f.reasons.first().map(|r| {
                    serde_json::to_value(r.code)
                        .unwrap()
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                });
                (f.fits, code, f.preempts.len())
            });
            let expected =
                expected.map(|(fits, code, preempts)| (fits, code.map(str::to_owned), preempts));
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn a_rows_problem_code_is_its_failing_pods() {
        let mut coverage = row(Some(("agent-old", false)), true);
        let mut node_row = crate::rows::NodeRow {
            coverage: coverage.clone(),
            state: crate::rows::RowState::Old,
            node_ready: Some(true),
            cordoned: false,
            taints: Box::default(),
            pool: None,
            zone: None,
            group_key: None,
            control_plane: false,
            kubelet_minor: None,
            event: None,
            fit: None,
        };
        assert_eq!(node_row.problem_code(), None);
        coverage.pods[0].problem = Some("Unschedulable".into());
        node_row.coverage = coverage;
        assert_eq!(
            node_row.problem_code(),
            Some(crate::engine::health::ProblemCode::Unschedulable)
        );
    }

    #[test]
    fn priority_of_the_template_table() {
        let pod_with = |class: &str, priority: i32| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": "p"},
                "spec": {"priorityClassName": class, "priority": priority, "containers": []}}))
            .unwrap()
        };
        let seen = [pod_with("agents", 5000), pod_with("other", 7)];
        let spec = |class: Option<&str>, priority: Option<i32>| TemplateSpec {
            priority_class_name: class.map(str::to_owned),
            priority,
            ..TemplateSpec::default()
        };
        let cases = [
            ("own priority wins", spec(Some("agents"), Some(42)), None),
            (
                "system-node-critical",
                spec(Some("system-node-critical"), None),
                Some(SYSTEM_NODE_CRITICAL),
            ),
            (
                "system-cluster-critical",
                spec(Some("system-cluster-critical"), None),
                Some(SYSTEM_CLUSTER_CRITICAL),
            ),
            (
                "seen on the DaemonSet's pods",
                spec(Some("agents"), None),
                Some(5000),
            ),
            ("a class no pod shows", spec(Some("unseen"), None), None),
            ("no class", spec(None, None), None),
        ];
        for (name, spec, want) in cases {
            assert_eq!(template_priority(&spec, seen.iter()), want, "{name}");
        }
    }
}
