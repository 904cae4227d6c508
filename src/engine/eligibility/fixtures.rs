//! Small builders for nodes, DaemonSets, taints, tolerations and affinity terms,
//! shared by the eligibility tests. Test-only.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec,
    PodTemplateSpec, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::model::{Node, Taint};

/// A node named `name` with `labels` and `taints`.
pub fn node(name: &str, labels: &[(&str, &str)], taints: &[Taint]) -> Node {
    let mut node = Node::default();
    node.metadata.name = Some(name.into());
    node.labels = labels.iter().copied().collect();
    node.spec.taints = taints.to_vec();
    node
}

/// A label map.
pub fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A taint; an empty value means none.
pub fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint::new(key, value, effect)
}

/// A toleration; empty strings mean "not set".
pub fn toleration(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
    let set = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    Toleration {
        key: set(key),
        operator: set(operator),
        value: set(value),
        effect: set(effect),
        toleration_seconds: None,
    }
}

/// A node selector requirement (`matchExpressions` or `matchFields` entry).
pub fn expr(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.to_owned(),
        operator: operator.to_owned(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect()),
    }
}

/// A term with expressions and fields (empty slices leave them unset).
pub fn term(
    expressions: &[NodeSelectorRequirement],
    fields: &[NodeSelectorRequirement],
) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: (!expressions.is_empty()).then(|| expressions.to_vec()),
        match_fields: (!fields.is_empty()).then(|| fields.to_vec()),
    }
}

/// A pod template spec builder for the DaemonSet under test.
#[derive(Clone, Debug, Default)]
pub struct Template {
    spec: PodSpec,
}

impl Template {
    /// `spec.nodeName`.
    pub fn node_name(mut self, name: &str) -> Self {
        self.spec.node_name = Some(name.to_owned());
        self
    }

    /// `spec.nodeSelector`.
    pub fn node_selector(mut self, pairs: &[(&str, &str)]) -> Self {
        self.spec.node_selector = Some(map(pairs));
        self
    }

    /// Appends to `spec.tolerations`.
    pub fn toleration(mut self, toleration: Toleration) -> Self {
        self.spec
            .tolerations
            .get_or_insert_with(Vec::new)
            .push(toleration);
        self
    }

    /// `spec.hostNetwork: true`.
    pub fn host_network(mut self) -> Self {
        self.spec.host_network = Some(true);
        self
    }

    /// Required node affinity with these terms.
    pub fn required(mut self, terms: Vec<NodeSelectorTerm>) -> Self {
        self.spec.affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: terms,
                }),
                ..NodeAffinity::default()
            }),
            ..Affinity::default()
        });
        self
    }

    /// The pod spec.
    pub fn spec(self) -> PodSpec {
        self.spec
    }

    /// A DaemonSet `default/agent` with this template.
    pub fn daemonset(self) -> DaemonSet {
        DaemonSet {
            metadata: ObjectMeta {
                name: Some("agent".to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            spec: Some(DaemonSetSpec {
                template: PodTemplateSpec {
                    metadata: None,
                    spec: Some(self.spec),
                },
                ..DaemonSetSpec::default()
            }),
            status: None,
        }
    }
}

/// An empty template.
pub fn template() -> Template {
    Template::default()
}
