//! The placement filters of upstream's default profile that run before the
//! resource ones, in its order, each with its upstream reason (the words are
//! the fit engine's, which formats the FailedScheduling message):
//! NodeUnschedulable (`node(s) were unschedulable`), TaintToleration
//! (`node(s) had untolerated taint {key: value}`) and NodeAffinity (`node(s)
//! didn't match Pod's node affinity/selector`), plus NodeAffinity's PreFilter, which narrows a pod
//! whose required terms all name nodes by `matchFields metadata.name` to
//! those nodes (a daemon pod to its one node).
//!
//! The rules themselves are the engine's (`engine::affinity`,
//! `engine::taints`); this module only asks them and words the answer as
//! the scheduler does. All three rejections are unresolvable: preempting
//! pods cannot change them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, PodSpec, Toleration};
use serde::Deserialize;

use crate::engine::affinity::{
    METADATA_NAME_FIELD, node_selector_reasons, required_affinity_reasons,
};
use crate::engine::fit::{NODE_AFFINITY_MISMATCH, NODE_UNSCHEDULABLE, untolerated_taint};
use crate::engine::taints::{NO_SCHEDULE, TAINT_UNSCHEDULABLE, tolerates, untolerated_taints};
use crate::model::{Node, Taint};

/// The parts of a pod's spec the placement filters read: nodeSelector,
/// affinity, tolerations (as a `PodSpec`, the engine's input), and the
/// scheduler it names.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    spec: PodSpec,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePlacement {
    #[serde(default)]
    node_selector: Option<BTreeMap<String, String>>,
    #[serde(default)]
    affinity: Option<Affinity>,
    #[serde(default)]
    tolerations: Option<Vec<Toleration>>,
    #[serde(default)]
    scheduler_name: Option<String>,
}

impl<'de> Deserialize<'de> for Placement {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = WirePlacement::deserialize(deserializer)?;
        Ok(Placement {
            spec: PodSpec {
                node_selector: wire.node_selector,
                affinity: wire.affinity,
                tolerations: wire.tolerations,
                scheduler_name: wire.scheduler_name,
                ..PodSpec::default()
            },
        })
    }
}

impl Placement {
    /// `spec.schedulerName`.
    pub fn scheduler_name(&self) -> Option<&str> {
        self.spec.scheduler_name.as_deref()
    }

    /// The pod's tolerations.
    pub fn tolerations(&self) -> &[Toleration] {
        self.spec.tolerations.as_deref().unwrap_or_default()
    }

    /// The first placement filter `node` fails, as upstream words it; `None`
    /// when it passes all three.
    pub fn rejection(&self, node: &Node) -> Option<Cow<'static, str>> {
        if node.spec.unschedulable && !self.tolerates_cordon() {
            return Some(NODE_UNSCHEDULABLE.into());
        }
        if let Some(taint) = untolerated_taints(&node.spec.taints, self.tolerations()).first() {
            return Some(untolerated_taint(&taint.key, taint.value()).into());
        }
        let selector = self.spec.node_selector.as_ref();
        if !node_selector_reasons(selector, Some(&node.labels)).is_empty()
            || !required_affinity_reasons(&self.spec, node).is_empty()
        {
            return Some(NODE_AFFINITY_MISMATCH.into());
        }
        None
    }

    /// NodeUnschedulable lets a pod that tolerates the cordon taint through.
    fn tolerates_cordon(&self) -> bool {
        let cordon = Taint::new(TAINT_UNSCHEDULABLE, "", NO_SCHEDULE);
        self.tolerations().iter().any(|t| tolerates(t, &cordon))
    }

    /// NodeAffinity's PreFilter: the only nodes worth filtering when every
    /// required term names nodes with `metadata.name In` (the union over the
    /// terms, each term's names intersected), or `None` for all nodes.
    pub fn named_nodes(&self) -> Option<Vec<String>> {
        let terms = &self
            .spec
            .affinity
            .as_ref()?
            .node_affinity
            .as_ref()?
            .required_during_scheduling_ignored_during_execution
            .as_ref()?
            .node_selector_terms;
        if terms.is_empty() {
            return None;
        }
        let mut union: Vec<String> = Vec::new();
        for term in terms {
            let mut names: Option<Vec<String>> = None;
            for field in term.match_fields.iter().flatten() {
                if field.key != METADATA_NAME_FIELD || field.operator != "In" {
                    continue;
                }
                let values = field.values.clone().unwrap_or_default();
                names = Some(match names {
                    None => values,
                    Some(kept) => kept.into_iter().filter(|n| values.contains(n)).collect(),
                });
            }
            // A term that names no node can match any node.
            union.extend(names?);
        }
        union.sort();
        union.dedup();
        Some(union)
    }
}

#[cfg(test)]
mod tests;
