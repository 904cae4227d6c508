//! The daemon pod the controller creates for one node (upstream
//! `util.CreatePodTemplate` plus `ReplaceDaemonSetPodNodeNameNodeAffinity`):
//! the DaemonSet's template with the revision hash and template generation
//! labels, the default daemon tolerations, a required node affinity pinning it
//! to the node by `metadata.name`, the controller owner reference, and
//! `generateName: <ds>-` (the store picks the suffix).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec,
};
use serde_json::Value;

use crate::engine::taints::daemon_pod_tolerations;
use crate::model::{DaemonSet, ObjectMeta, OwnerReference, REVISION_HASH_LABEL};

/// The annotation carrying the DaemonSet's template generation.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";
/// The label carrying the template generation a pod was made from.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// The controller owner reference pointing at `ds`.
pub fn controller_ref(ds: &DaemonSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".to_owned(),
        kind: "DaemonSet".to_owned(),
        name: ds.metadata.name.clone().unwrap_or_default(),
        uid: ds.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The DaemonSet's template generation: the legacy annotation, else its generation.
pub fn template_generation(ds: &DaemonSet) -> i64 {
    ds.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(|g| g.parse().ok())
        .or(ds.metadata.generation)
        .unwrap_or(1)
}

/// The pods to create for `ds` at one revision: built once, stamped per node
/// with [`DaemonPodTemplate::for_node`] (building every pod from the typed
/// template cost 12% of the embedded cluster's start at 65,000 nodes).
pub struct DaemonPodTemplate(Value);

/// Where [`pin_to_node`] writes the node's name.
const PINNED_NODE: &str = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchFields/0/values/0";

impl DaemonPodTemplate {
    /// The pod of `ds` at revision `hash`, pinned to no node yet.
    pub fn new(ds: &DaemonSet, hash: &str) -> Self {
        let template = ds
            .spec
            .as_ref()
            .map(|spec| spec.template.clone())
            .unwrap_or_default();
        let template_meta = template.metadata.unwrap_or_default();
        let mut labels: BTreeMap<String, String> = template_meta.labels.unwrap_or_default();
        labels.insert(REVISION_HASH_LABEL.to_owned(), hash.to_owned());
        labels.insert(
            TEMPLATE_GENERATION_LABEL.to_owned(),
            template_generation(ds).to_string(),
        );
        let mut spec = template.spec.unwrap_or_default();
        spec.tolerations = Some(daemon_pod_tolerations(&spec));
        pin_to_node(&mut spec, "");
        let pod = Pod {
            metadata: ObjectMeta {
                generate_name: Some(format!("{}-", ds.metadata.name.as_deref().unwrap_or("ds"))),
                namespace: ds.metadata.namespace.clone(),
                labels: Some(labels),
                annotations: template_meta.annotations,
                owner_references: Some(vec![controller_ref(ds)]),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
            status: None,
        };
        let mut value = serde_json::to_value(&pod).unwrap_or(Value::Null);
        value["apiVersion"] = "v1".into();
        value["kind"] = "Pod".into();
        DaemonPodTemplate(value)
    }

    /// The pod to create on `node`.
    pub fn for_node(&self, node: &str) -> Value {
        let mut pod = self.0.clone();
        if let Some(pinned) = pod.pointer_mut(PINNED_NODE) {
            *pinned = node.into();
        }
        pod
    }
}

/// Replaces the required node affinity with one term matching the node by
/// name (upstream `ReplaceDaemonSetPodNodeNameNodeAffinity`: other required
/// terms are dropped, preferred terms and pod (anti-)affinity are kept).
fn pin_to_node(spec: &mut PodSpec, node: &str) {
    let term = NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(vec![NodeSelectorRequirement {
            key: "metadata.name".to_owned(),
            operator: "In".to_owned(),
            values: Some(vec![node.to_owned()]),
        }]),
    };
    let affinity = spec.affinity.get_or_insert_with(Affinity::default);
    let node_affinity = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(NodeSelector {
        node_selector_terms: vec![term],
    });
}

/// The node a pod is pinned to by the affinity this module writes (upstream
/// `GetTargetNodeName`'s fallback for pods not yet bound).
pub fn pinned_node(pod: &Value) -> Option<&str> {
    let terms = pod["spec"]["affinity"]["nodeAffinity"]
        ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .as_array()?;
    let [term] = terms.as_slice() else {
        return None;
    };
    let fields = term["matchFields"].as_array()?;
    fields.iter().find_map(|requirement| {
        let values = requirement["values"].as_array()?;
        match (
            requirement["key"].as_str(),
            requirement["operator"].as_str(),
            values.as_slice(),
        ) {
            (Some("metadata.name"), Some("In"), [only]) => only.as_str(),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DaemonSetSpec;
    use k8s_openapi::api::core::v1::{Container, PodTemplateSpec, Toleration};

    use super::*;

    fn ds() -> DaemonSet {
        let mut template_labels = BTreeMap::new();
        template_labels.insert("app".to_owned(), "agent".to_owned());
        DaemonSet {
            metadata: ObjectMeta {
                name: Some("agent".into()),
                namespace: Some("kube-system".into()),
                uid: Some("ds-uid".into()),
                generation: Some(3),
                annotations: Some(BTreeMap::from([(
                    TEMPLATE_GENERATION_ANNOTATION.to_owned(),
                    "2".to_owned(),
                )])),
                ..ObjectMeta::default()
            },
            spec: Some(DaemonSetSpec {
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(template_labels),
                        ..ObjectMeta::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "agent".into(),
                            image: Some("agent:1".into()),
                            ..Container::default()
                        }],
                        tolerations: Some(vec![Toleration {
                            key: Some("dedicated".into()),
                            operator: Some("Exists".into()),
                            ..Toleration::default()
                        }]),
                        ..PodSpec::default()
                    }),
                },
                ..DaemonSetSpec::default()
            }),
            status: None,
        }
    }

    #[test]
    fn pod_carries_labels_owner_tolerations_and_pin() {
        let pod = DaemonPodTemplate::new(&ds(), "abc123").for_node("node-7");
        assert_eq!(pod["metadata"]["generateName"], "agent-");
        assert_eq!(pod["metadata"]["labels"]["app"], "agent");
        assert_eq!(
            pod["metadata"]["labels"]["controller-revision-hash"],
            "abc123"
        );
        assert_eq!(pod["metadata"]["labels"]["pod-template-generation"], "2");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], "ds-uid");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["controller"], true);
        let tolerations = pod["spec"]["tolerations"].as_array().expect("tolerations");
        assert_eq!(
            tolerations[0]["key"], "dedicated",
            "template tolerations come first"
        );
        assert!(tolerations.iter().any(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoExecute"));
        assert_eq!(pinned_node(&pod), Some("node-7"));
        assert!(
            pod["spec"].get("nodeName").is_none(),
            "binding is the scheduler's job"
        );
    }

    #[test]
    fn one_template_stamps_each_node_without_changing_itself() {
        let template = DaemonPodTemplate::new(&ds(), "abc123");
        let first = template.for_node("node-1");
        let second = template.for_node("node-2");
        assert_eq!(pinned_node(&first), Some("node-1"));
        assert_eq!(pinned_node(&second), Some("node-2"));
        assert_eq!(
            first,
            template.for_node("node-1"),
            "stamping left the template as it was"
        );
        assert_eq!(first["metadata"], second["metadata"]);
    }

    #[test]
    fn pin_replaces_required_terms() {
        let mut ds = ds();
        let spec = ds
            .spec
            .as_mut()
            .and_then(|s| s.template.spec.as_mut())
            .expect("spec");
        pin_to_node(spec, "old");
        let pod = DaemonPodTemplate::new(&ds, "h").for_node("new");
        let terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            .as_array()
            .expect("terms");
        assert_eq!(terms.len(), 1);
        assert_eq!(pinned_node(&pod), Some("new"));
    }
}
