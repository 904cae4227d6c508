//! A node's class — what it is built from: OS image, kernel, container
//! runtime, architecture, instance type, read from the node itself
//! (`status.nodeInfo`, the `node.kubernetes.io/instance-type` label). A
//! failure on one class in two different clusters points at the class, not
//! at either cluster: [`ClassFailures`] counts failures by class across the
//! fleet and says when a run must stop, naming the class. Pure.

use std::collections::BTreeMap;
use std::fmt;

use crate::model::Node;

/// The label a cloud's node controller sets to the instance type.
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";

/// What a node is built from; an empty field is one the node does not report.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeClass {
    /// `status.nodeInfo.osImage`.
    pub os_image: String,
    /// `status.nodeInfo.kernelVersion`.
    pub kernel_version: String,
    /// `status.nodeInfo.containerRuntimeVersion`.
    pub container_runtime: String,
    /// `status.nodeInfo.architecture`.
    pub architecture: String,
    /// The `node.kubernetes.io/instance-type` label.
    pub instance_type: String,
}

impl NodeClass {
    /// The class of `node`.
    pub fn of(node: &Node) -> NodeClass {
        let info = &node.status.node_info;
        let text = |field: &Option<crate::model::Interned>| {
            field.as_deref().unwrap_or_default().to_owned()
        };
        NodeClass {
            os_image: text(&info.os_image),
            kernel_version: text(&info.kernel_version),
            container_runtime: text(&info.container_runtime_version),
            architecture: text(&info.architecture),
            instance_type: node
                .label(INSTANCE_TYPE_LABEL)
                .unwrap_or_default()
                .to_owned(),
        }
    }

    /// Whether the node reported nothing a class is made of (two such nodes
    /// share no known cause).
    pub fn is_unknown(&self) -> bool {
        *self == NodeClass::default()
    }
}

impl fmt::Display for NodeClass {
    /// `os Amazon Linux 2023, kernel 6.1.112, runtime containerd://1.7.23,
    /// arch amd64, instance type m6i.large` (the fields known).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = [
            ("os", &self.os_image),
            ("kernel", &self.kernel_version),
            ("runtime", &self.container_runtime),
            ("arch", &self.architecture),
            ("instance type", &self.instance_type),
        ];
        let known: Vec<String> = fields
            .iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(name, value)| format!("{name} {value}"))
            .collect();
        f.write_str(&known.join(", "))
    }
}

/// One failed node.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Failure {
    context: String,
    node: String,
    reason: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} node {} ({})", self.context, self.node, self.reason)
    }
}

/// Failed nodes by class, fleet-wide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassFailures {
    by_class: BTreeMap<NodeClass, Vec<Failure>>,
}

impl ClassFailures {
    /// Records that `node` of `class` failed in `context` for `reason`. When
    /// the class has now failed in two different clusters, the reason the
    /// run stops, naming the class and both failures. A node reporting no
    /// class is not counted.
    pub fn failed(
        &mut self,
        class: &NodeClass,
        context: &str,
        node: &str,
        reason: &str,
    ) -> Option<String> {
        if class.is_unknown() {
            return None;
        }
        let failures = self.by_class.entry(class.clone()).or_default();
        failures.push(Failure {
            context: context.to_owned(),
            node: node.to_owned(),
            reason: reason.to_owned(),
        });
        let first = failures.first()?;
        let other = failures.iter().find(|f| f.context != first.context)?;
        Some(format!(
            "node class [{class}] failed in two clusters: {first}, {other}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(os: &str, arch: &str) -> NodeClass {
        NodeClass {
            os_image: os.to_owned(),
            kernel_version: "6.1.112".to_owned(),
            container_runtime: "containerd://1.7.23".to_owned(),
            architecture: arch.to_owned(),
            instance_type: "m6i.large".to_owned(),
        }
    }

    /// A named case: failures (class, context, node) in order, and the stop
    /// the last one gives.
    type Case = (
        &'static str,
        Vec<(NodeClass, &'static str, &'static str)>,
        Option<&'static str>,
    );

    #[test]
    fn cases() {
        let al = || class("Amazon Linux 2023", "amd64");
        let arm = || class("Amazon Linux 2023", "arm64");
        // (name, failures in order, the stop the last one gives)
        let table: Vec<Case> = vec![
            (
                "one failure stops nothing",
                vec![(al(), "eu-1", "n1")],
                None,
            ),
            (
                "two in one cluster are that cluster's, not the class's",
                vec![(al(), "eu-1", "n1"), (al(), "eu-1", "n2")],
                None,
            ),
            (
                "two classes in two clusters share nothing",
                vec![(al(), "eu-1", "n1"), (arm(), "us-1", "n7")],
                None,
            ),
            (
                "one class in two clusters stops the run naming it",
                vec![
                    (al(), "eu-1", "n1"),
                    (al(), "eu-1", "n2"),
                    (al(), "us-1", "n7"),
                ],
                Some(
                    "node class [os Amazon Linux 2023, kernel 6.1.112, runtime \
                     containerd://1.7.23, arch amd64, instance type m6i.large] failed in two \
                     clusters: eu-1 node n1 (CrashLoopBackOff), us-1 node n7 (CrashLoopBackOff)",
                ),
            ),
            (
                "nodes that report no class are not one class",
                vec![
                    (NodeClass::default(), "eu-1", "n1"),
                    (NodeClass::default(), "us-1", "n7"),
                ],
                None,
            ),
        ];
        for (name, failures, want) in table {
            let mut counted = ClassFailures::default();
            let mut last = None;
            for (class, context, node) in failures {
                last = counted.failed(&class, context, node, "CrashLoopBackOff");
            }
            assert_eq!(last.as_deref(), want, "{name}");
        }
    }

    #[test]
    fn a_class_is_read_from_the_node_and_says_only_what_it_knows() {
        let node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "n1", "labels": {INSTANCE_TYPE_LABEL: "m6g.large"}},
            "status": {"nodeInfo": {"architecture": "arm64", "osImage": "Bottlerocket 1.20",
                "kernelVersion": "6.1.90", "containerRuntimeVersion": "containerd://1.6.31",
                "kubeletVersion": "v1.30.1", "machineID": "x"}},
        }))
        .expect("a node");
        let class = NodeClass::of(&node);
        assert_eq!(
            class.to_string(),
            "os Bottlerocket 1.20, kernel 6.1.90, runtime containerd://1.6.31, arch arm64, \
             instance type m6g.large"
        );
        let bare: Node = serde_json::from_value(serde_json::json!({"metadata": {"name": "n2"},
            "status": {"nodeInfo": {"architecture": "amd64"}}}))
        .expect("a node");
        assert_eq!(NodeClass::of(&bare).to_string(), "arch amd64");
    }
}
