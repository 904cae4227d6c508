//! DaemonSets from a scenario, with the ControllerRevisions of their history
//! and the daemon pods a settled cluster already runs: pods sit at the
//! scenario's `podsAt` revision on every node the engine says should run
//! one, Running and Ready since a while ago — except where an image rule
//! applies, where they start Pending and the kubelets play the failure out.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::{
    DaemonSetSpec as K8sDaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet,
};
use k8s_openapi::api::core::v1::{
    Container, EnvVar, HTTPGetAction, PodSpec, PodTemplateSpec, Probe,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use rand::{Rng, rngs::StdRng};
use serde_json::{Value, json};

use super::nodes::uuid;
use crate::engine::eligibility::node_should_run_daemon_pod;
use crate::engine::revision::template_hash;
use crate::model::{DaemonSet, Node, ObjectMeta};
use crate::sim::controller::history::revision_object;
use crate::sim::controller::pod::{DaemonPodTemplate, TEMPLATE_GENERATION_ANNOTATION};
use crate::sim::kubelet::clock::rfc3339;
use crate::sim::kubelet::pod_status;
use crate::sim::scenario::{DaemonSetSpec, RevisionSpec, Scenario, StrategyKind};

/// The annotation `kubectl rollout history` shows as CHANGE-CAUSE.
pub const CHANGE_CAUSE_ANNOTATION: &str = "kubernetes.io/change-cause";

/// One DaemonSet's objects.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    /// The DaemonSet (at its last revision).
    pub daemon_set: Value,
    /// Its ControllerRevisions, oldest first.
    pub revisions: Vec<Value>,
    /// Its pods.
    pub pods: Vec<Value>,
}

/// The pod template of one revision.
pub fn template(spec: &DaemonSetSpec, revision: &RevisionSpec) -> PodTemplateSpec {
    let container_name = spec.container.clone().unwrap_or_else(|| spec.name.clone());
    let env: Vec<EnvVar> = revision
        .env
        .iter()
        .map(|(name, value)| EnvVar {
            name: name.clone(),
            value: Some(value.clone()),
            value_from: None,
        })
        .collect();
    let container = Container {
        name: container_name,
        image: Some(revision.image.clone()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        env: (!env.is_empty()).then_some(env),
        resources: Some(super::needs::resources(
            revision.requests.as_ref().unwrap_or(&default_requests()),
            revision.limits.as_ref().unwrap_or(&default_limits()),
        )),
        ports: super::needs::host_ports(&revision.host_ports),
        readiness_probe: Some(Probe {
            http_get: Some(HTTPGetAction {
                path: Some("/healthz".to_owned()),
                port: IntOrString::Int(8080),
                scheme: Some("HTTP".to_owned()),
                ..HTTPGetAction::default()
            }),
            period_seconds: Some(10),
            success_threshold: Some(1),
            failure_threshold: Some(3),
            timeout_seconds: Some(1),
            ..Probe::default()
        }),
        termination_message_path: Some("/dev/termination-log".to_owned()),
        termination_message_policy: Some("File".to_owned()),
        ..Container::default()
    };
    let mut node_selector = spec.node_selector.clone();
    node_selector
        .entry("kubernetes.io/os".to_owned())
        .or_insert_with(|| "linux".to_owned());
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(selector_labels(spec)),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![container],
            dns_policy: Some("ClusterFirst".to_owned()),
            host_network: spec.host_network.then_some(true),
            node_selector: Some(node_selector),
            priority_class_name: Some(
                revision
                    .priority_class_name
                    .clone()
                    .unwrap_or_else(|| "system-node-critical".to_owned()),
            ),
            restart_policy: Some("Always".to_owned()),
            scheduler_name: Some("default-scheduler".to_owned()),
            service_account_name: Some(spec.name.clone()),
            termination_grace_period_seconds: Some(30),
            tolerations: (!spec.tolerations.is_empty()).then(|| spec.tolerations.clone()),
            ..PodSpec::default()
        }),
    }
}

/// What a revision requests when the scenario does not say.
fn default_requests() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("cpu".to_owned(), "50m".to_owned()),
        ("memory".to_owned(), "64Mi".to_owned()),
    ])
}

/// A revision's limits when the scenario does not say.
fn default_limits() -> BTreeMap<String, String> {
    BTreeMap::from([("memory".to_owned(), "256Mi".to_owned())])
}

fn selector_labels(spec: &DaemonSetSpec) -> BTreeMap<String, String> {
    BTreeMap::from([("app.kubernetes.io/name".to_owned(), spec.name.clone())])
}

/// The typed DaemonSet at revision `number` (1-based) of its history.
pub fn daemon_set_at(
    spec: &DaemonSetSpec,
    number: usize,
    uid: &str,
    created: Timestamp,
) -> DaemonSet {
    let revision = &spec.revisions[number - 1];
    let mut annotations = BTreeMap::from([(
        TEMPLATE_GENERATION_ANNOTATION.to_owned(),
        number.to_string(),
    )]);
    if let Some(cause) = &revision.change_cause {
        annotations.insert(CHANGE_CAUSE_ANNOTATION.to_owned(), cause.clone());
    }
    let strategy = match spec.update_strategy {
        StrategyKind::OnDelete => DaemonSetUpdateStrategy {
            type_: Some("OnDelete".to_owned()),
            rolling_update: None,
        },
        StrategyKind::RollingUpdate => DaemonSetUpdateStrategy {
            type_: Some("RollingUpdate".to_owned()),
            rolling_update: Some(RollingUpdateDaemonSet {
                max_unavailable: Some(spec.max_unavailable.clone().unwrap_or(IntOrString::Int(1))),
                max_surge: Some(spec.max_surge.clone().unwrap_or(IntOrString::Int(0))),
            }),
        },
    };
    DaemonSet {
        metadata: ObjectMeta {
            name: Some(spec.name.clone()),
            namespace: Some(spec.namespace.clone()),
            uid: Some(uid.to_owned()),
            generation: Some(i64::try_from(number).unwrap_or(1)),
            creation_timestamp: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                created,
            )),
            labels: Some(selector_labels(spec)),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        spec: Some(K8sDaemonSetSpec {
            min_ready_seconds: (spec.min_ready_seconds > 0).then_some(spec.min_ready_seconds),
            revision_history_limit: Some(10),
            selector: LabelSelector {
                match_labels: Some(selector_labels(spec)),
                match_expressions: None,
            },
            template: template(spec, revision),
            update_strategy: Some(strategy),
        }),
        status: None,
    }
}

/// Builds every DaemonSet of `scenario` with its history and pods over
/// `nodes` (each with its InternalIP).
pub fn workloads(
    scenario: &Scenario,
    nodes: &[(Node, String)],
    now: Timestamp,
    rng: &mut StdRng,
) -> Vec<Workload> {
    let mut out: Vec<Workload> = Vec::new();
    let collect = |object: Generated| {
        match (object, out.last_mut()) {
            (Generated::DaemonSet(ds), _) => out.push(Workload {
                daemon_set: ds,
                ..Workload::default()
            }),
            (Generated::Revision(cr), Some(last)) => last.revisions.push(cr),
            (Generated::Pod(pod), Some(last)) => last.pods.push(pod),
            // Revisions and pods always follow their DaemonSet.
            (_, None) => {}
        }
        Ok::<(), std::convert::Infallible>(())
    };
    let Ok(()) = generate(scenario, nodes, now, rng, collect);
    out
}

/// One generated object. Each DaemonSet comes first, then its revisions
/// (oldest first), then its pods.
#[derive(Clone, Debug)]
pub enum Generated {
    /// A DaemonSet (at its last revision).
    DaemonSet(Value),
    /// One of its ControllerRevisions.
    Revision(Value),
    /// One of its pods.
    Pod(Value),
}

/// As [`workloads`], handing each object to `emit` as soon as it is built,
/// so that a large cluster is never held twice (as values and as stored
/// objects). Stops at the first error `emit` returns.
pub fn generate<E>(
    scenario: &Scenario,
    nodes: &[(Node, String)],
    now: Timestamp,
    rng: &mut StdRng,
    mut emit: impl FnMut(Generated) -> Result<(), E>,
) -> Result<(), E> {
    for spec in &scenario.daemon_sets {
        workload(scenario, spec, nodes, (now, &mut *rng), &mut emit)?;
    }
    Ok(())
}

fn workload<E>(
    scenario: &Scenario,
    spec: &DaemonSetSpec,
    nodes: &[(Node, String)],
    (now, rng): (Timestamp, &mut StdRng),
    emit: &mut impl FnMut(Generated) -> Result<(), E>,
) -> Result<(), E> {
    let uid = uuid(rng);
    let count = spec.revisions.len();
    // Revision i was made (count - i + 1) days ago; the DaemonSet with the first.
    let made = |number: usize| {
        now - SignedDuration::from_hours(24 * i64::try_from(count - number + 1).unwrap_or(1))
    };
    let at = |number: usize| daemon_set_at(spec, number, &uid, made(1));
    let mut revisions = Vec::new();
    for number in 1..=count {
        let ds = at(number);
        let template = ds
            .spec
            .as_ref()
            .map(|s| s.template.clone())
            .unwrap_or_default();
        let hash = template_hash(&template, None);
        let mut cr = revision_object(
            &ds,
            &format!("{}-{hash}", spec.name),
            &hash,
            i64::try_from(number).unwrap_or(1),
        );
        cr["metadata"]["uid"] = json!(uuid(rng));
        cr["metadata"]["creationTimestamp"] = json!(rfc3339(made(number)));
        revisions.push(cr);
    }
    let current = at(count);
    let mut daemon_set = serde_json::to_value(&current).unwrap_or(Value::Null);
    daemon_set["apiVersion"] = json!("apps/v1");
    daemon_set["kind"] = json!("DaemonSet");
    emit(Generated::DaemonSet(daemon_set))?;
    for revision in revisions {
        emit(Generated::Revision(revision))?;
    }
    let pods_at = spec.pods_at.unwrap_or(count);
    let pod_ds = at(pods_at);
    let pod_template = pod_ds
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let pod_hash = template_hash(&pod_template, None);
    let daemon_pod = DaemonPodTemplate::new(&pod_ds, &pod_hash);
    let image = &spec.revisions[pods_at - 1].image;
    let mut seen = std::collections::HashSet::new();
    for (node, ip) in nodes
        .iter()
        .filter(|(node, _)| node_should_run_daemon_pod(&before_outage(node), &current).should_run)
    {
        let fails = scenario_image_fails(scenario, image, node);
        let mut pod = settled_pod(
            (&daemon_pod, &spec.name),
            (node, ip),
            made(pods_at),
            !fails,
            rng,
        );
        unique_name(&mut pod, &mut seen, &spec.name, rng);
        emit(Generated::Pod(pod))?;
    }
    Ok(())
}

/// The node as it was before it became unreachable: a pod placed then is
/// still there (the lifecycle taints stop new pods, not running ones).
fn before_outage(node: &Node) -> Node {
    let mut healthy = node.clone();
    healthy.spec.taints.retain(|t| {
        !matches!(
            t.key.as_str(),
            "node.kubernetes.io/unreachable" | "node.kubernetes.io/not-ready"
        )
    });
    healthy
}

/// Five random characters from the upstream name alphabet collide by
/// chance in large clusters (as generateName would retry): draw again.
fn unique_name(
    pod: &mut Value,
    seen: &mut std::collections::HashSet<String>,
    ds_name: &str,
    rng: &mut StdRng,
) {
    while !seen.insert(
        pod["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    ) {
        pod["metadata"]["name"] = json!(format!("{ds_name}-{}", name_suffix(rng)));
    }
}

fn name_suffix(rng: &mut StdRng) -> String {
    (0..5)
        .map(|_| char::from(b"bcdfghjklmnpqrstvwxz2456789"[rng.random_range(0..27)]))
        .collect()
}

fn scenario_image_fails(scenario: &Scenario, image: &str, node: &Node) -> bool {
    crate::sim::kubelet::rules::rule_for(
        scenario,
        image,
        node.name(),
        node.label(&scenario.pool_label),
    )
    .is_some()
}

/// A daemon pod bound to `node`: Running and Ready since shortly after
/// `since` when `settled`, else freshly created (the kubelet takes over).
fn settled_pod(
    (template, ds_name): (&DaemonPodTemplate, &str),
    (node, host_ip): (&Node, &str),
    since: Timestamp,
    settled: bool,
    rng: &mut StdRng,
) -> Value {
    let mut pod = template.for_node(node.name());
    let suffix = name_suffix(rng);
    let name = format!("{ds_name}-{suffix}");
    pod["metadata"]["name"] = json!(name);
    pod["metadata"]["uid"] = json!(uuid(rng));
    pod["spec"]["nodeName"] = json!(node.name());
    if !settled {
        return pod;
    }
    let node_created = node
        .metadata
        .creation_timestamp
        .map_or(since, crate::model::Stamp::timestamp);
    let created = since.max(node_created) + SignedDuration::from_secs(rng.random_range(5..600));
    let at = |seconds: i64| rfc3339(created + SignedDuration::from_secs(seconds));
    pod["metadata"]["creationTimestamp"] = json!(at(0));
    pod_status::scheduled(&mut pod, node.name(), &at(0));
    pod_status::accepted(&mut pod, host_ip, &at(1));
    pod_status::pulled(
        &mut pod,
        &format!(
            "sha256:{:016x}{:016x}{:016x}{:016x}",
            rng.random::<u64>(),
            rng.random::<u64>(),
            rng.random::<u64>(),
            rng.random::<u64>()
        ),
    );
    let pod_ip = format!(
        "100.{}.{}.{}",
        rng.random_range(64..128),
        rng.random_range(0..=255),
        rng.random_range(2..=254)
    );
    pod_status::running(
        &mut pod,
        &pod_ip,
        &format!(
            "{:016x}{:016x}{:016x}{:016x}",
            rng.random::<u64>(),
            rng.random::<u64>(),
            rng.random::<u64>(),
            rng.random::<u64>()
        ),
        &at(4),
    );
    pod_status::ready(&mut pod, &at(9));
    if !node.is_ready() {
        // The node lifecycle controller marks pods on an unreachable node not ready.
        pod_status::set_condition(
            &mut pod,
            "Ready",
            "False",
            None,
            None,
            &rfc3339(node_unready_since(node).unwrap_or(created)),
        );
    }
    pod
}

fn node_unready_since(node: &Node) -> Option<Timestamp> {
    node.condition("Ready")?
        .last_transition_time
        .map(crate::model::Stamp::timestamp)
}
