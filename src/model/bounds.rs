//! The sizes the Kubernetes API allows for the fields rollcall reads, and the
//! check that a decoded object keeps to them. An object past them cannot have
//! come from an API server; a 10 MB node name or 100,000 tolerations would
//! only make every later step (matching, sorting, drawing a column as wide as
//! the name) cost minutes. Limits are apimachinery's validation constants
//! (`k8s.io/apimachinery/pkg/util/validation`), except where noted. Pure.

use std::fmt;

use k8s_openapi::api::core::v1::PodSpec as TemplateSpec;

use super::decode::Object;
use super::{ControllerRevision, DaemonSet, Event, Node, Pod};

/// Object names: a DNS-1123 subdomain (`DNS1123SubdomainMaxLength`); node
/// names and `spec.nodeName` too.
pub const MAX_NAME: usize = 253;
/// Namespaces: a DNS-1123 label (`DNS1123LabelMaxLength`).
pub const MAX_NAMESPACE: usize = 63;
/// Label, taint and toleration keys: a qualified name, a DNS subdomain prefix
/// (253) plus `/` plus a name of at most 63 (`qualifiedNameMaxLength`).
pub const MAX_LABEL_KEY: usize = 253 + 1 + 63;
/// Label, taint and toleration values (`LabelValueMaxLength`).
pub const MAX_LABEL_VALUE: usize = 63;
/// Container images. The API sets no limit; an image reference is a name of
/// at most 255 (distribution's `NameTotalLengthMax`), a tag of at most 128
/// and a digest, so 1,024 leaves room.
pub const MAX_IMAGE: usize = 1024;
/// Tolerations, node-selector entries and node-affinity requirements (terms,
/// expressions, values) of one DaemonSet, and taints of one node. The API
/// sets no count, only the object's size (etcd's 1.5 MiB request limit);
/// real ones have a handful. Matching costs nodes × these, so past this the
/// object is refused rather than explained for minutes.
pub const MAX_TERMS: usize = 10_000;

/// A field past its limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Oversized {
    /// The field (`metadata.name`, `spec.template.spec.tolerations`).
    pub field: String,
    /// Its length in bytes, or its count of entries.
    pub size: usize,
    /// The limit.
    pub limit: usize,
    /// Whether `size` counts entries (else bytes).
    pub counts_entries: bool,
    /// Whether the limit is the API's own (else rollcall's, where the API
    /// sets none).
    pub by_kubernetes: bool,
}

impl fmt::Display for Oversized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (field, size, limit) = (&self.field, self.size, self.limit);
        match (self.counts_entries, self.by_kubernetes) {
            (true, _) => write!(
                f,
                "{field} has {size} entries, more than rollcall's limit of {limit}"
            ),
            (false, true) => write!(
                f,
                "{field} is {size} bytes long, more than the {limit} Kubernetes allows"
            ),
            (false, false) => write!(
                f,
                "{field} is {size} bytes long, more than rollcall's limit of {limit}"
            ),
        }
    }
}

/// Checks every field of `object` rollcall reads against its limit; the
/// first field past it is the error.
pub fn check(object: &Object) -> Result<(), Oversized> {
    match object {
        Object::Node(node) => check_node(node),
        Object::Pod(pod) => check_pod(pod),
        Object::DaemonSet(ds) => check_daemonset(ds),
        Object::Revision(revision) => check_revision(revision),
        Object::Event(event) => check_event(event),
    }
}

/// Collects the first field past its limit.
#[derive(Default)]
struct Checker {
    first: Option<Oversized>,
}

impl Checker {
    fn bytes(&mut self, field: impl FnOnce() -> String, text: Option<&str>, limit: usize) {
        let size = text.map_or(0, str::len);
        if self.first.is_none() && size > limit {
            self.first = Some(Oversized {
                field: field(),
                size,
                limit,
                counts_entries: false,
                // Every byte limit but the image's is the API's own.
                by_kubernetes: limit != MAX_IMAGE,
            });
        }
    }

    fn count(&mut self, field: &str, size: usize) {
        if self.first.is_none() && size > MAX_TERMS {
            self.first = Some(Oversized {
                field: field.to_owned(),
                size,
                limit: MAX_TERMS,
                counts_entries: true,
                by_kubernetes: false,
            });
        }
    }

    fn meta(&mut self, name: Option<&str>, namespace: Option<&str>) {
        self.bytes(|| "metadata.name".to_owned(), name, MAX_NAME);
        self.bytes(|| "metadata.namespace".to_owned(), namespace, MAX_NAMESPACE);
    }

    fn labels<'a>(&mut self, field: &str, pairs: impl Iterator<Item = (&'a str, &'a str)>) {
        for (key, value) in pairs {
            if self.first.is_some() {
                return;
            }
            self.bytes(|| format!("{field} key"), Some(key), MAX_LABEL_KEY);
            self.bytes(|| format!("{field}[{key}]"), Some(value), MAX_LABEL_VALUE);
        }
    }

    fn done(self) -> Result<(), Oversized> {
        self.first.map_or(Ok(()), Err)
    }
}

fn check_node(node: &Node) -> Result<(), Oversized> {
    let mut check = Checker::default();
    check.meta(node.metadata.name.as_deref(), None);
    check.labels("metadata.labels", node.labels.iter());
    check.count("spec.taints", node.spec.taints.len());
    for taint in &node.spec.taints {
        check.bytes(
            || "spec.taints key".to_owned(),
            Some(&taint.key),
            MAX_LABEL_KEY,
        );
        check.bytes(
            || format!("spec.taints[{}] value", taint.key),
            taint.value.as_deref(),
            MAX_LABEL_VALUE,
        );
    }
    check.done()
}

fn check_pod(pod: &Pod) -> Result<(), Oversized> {
    let mut check = Checker::default();
    check.meta(
        pod.metadata.name.as_deref(),
        pod.metadata.namespace.as_deref(),
    );
    check.labels("metadata.labels", pod.labels.iter());
    check.bytes(|| "spec.nodeName".to_owned(), pod.node_name(), MAX_NAME);
    for container in &pod.spec.containers {
        check.bytes(
            || format!("spec.containers[{}].image", container.name),
            container.image.as_deref(),
            MAX_IMAGE,
        );
    }
    check.done()
}

fn check_daemonset(ds: &DaemonSet) -> Result<(), Oversized> {
    let mut check = Checker::default();
    let meta = &ds.metadata;
    check.meta(meta.name.as_deref(), meta.namespace.as_deref());
    let Some(spec) = &ds.spec else {
        return check.done();
    };
    let selector = spec.selector.match_labels.iter().flatten();
    check.labels(
        "spec.selector.matchLabels",
        selector.map(|(k, v)| (k.as_str(), v.as_str())),
    );
    if let Some(labels) = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref())
    {
        check.labels(
            "spec.template.metadata.labels",
            labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
    }
    if let Some(template) = &spec.template.spec {
        check_template(&mut check, template);
    }
    check.done()
}

/// The pod template's fields that eligibility reads.
fn check_template(check: &mut Checker, spec: &TemplateSpec) {
    const AT: &str = "spec.template.spec";
    check.bytes(
        || format!("{AT}.nodeName"),
        spec.node_name.as_deref(),
        MAX_NAME,
    );
    let node_selector = spec.node_selector.iter().flatten();
    check.count(&format!("{AT}.nodeSelector"), node_selector.clone().count());
    check.labels(
        &format!("{AT}.nodeSelector"),
        node_selector.map(|(k, v)| (k.as_str(), v.as_str())),
    );
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    check.count(&format!("{AT}.tolerations"), tolerations.len());
    for toleration in tolerations {
        let key = toleration.key.as_deref();
        check.bytes(|| format!("{AT}.tolerations key"), key, MAX_LABEL_KEY);
        check.bytes(
            || format!("{AT}.tolerations[{}] value", key.unwrap_or_default()),
            toleration.value.as_deref(),
            MAX_LABEL_VALUE,
        );
    }
    let terms = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|s| s.node_selector_terms.as_slice())
        .unwrap_or_default();
    let mut requirements = terms.len();
    for term in terms {
        let expressions = term.match_expressions.iter().flatten();
        let fields = term.match_fields.iter().flatten();
        for requirement in expressions.chain(fields) {
            let values = requirement.values.as_deref().unwrap_or_default();
            requirements = requirements.saturating_add(1 + values.len());
            check.bytes(
                || format!("{AT}.affinity node selector key"),
                Some(&requirement.key),
                MAX_LABEL_KEY,
            );
            for value in values {
                // A matchFields value is a node name, longer than a label value.
                check.bytes(
                    || format!("{AT}.affinity node selector [{}] value", requirement.key),
                    Some(value),
                    MAX_NAME,
                );
            }
        }
    }
    check.count(
        &format!("{AT}.affinity node selector terms, expressions and values"),
        requirements,
    );
    for container in spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
    {
        check.bytes(
            || format!("{AT}.containers[{}].image", container.name),
            container.image.as_deref(),
            MAX_IMAGE,
        );
    }
}

fn check_revision(revision: &ControllerRevision) -> Result<(), Oversized> {
    let mut check = Checker::default();
    let meta = &revision.metadata;
    check.meta(meta.name.as_deref(), meta.namespace.as_deref());
    check.done()
}

fn check_event(event: &Event) -> Result<(), Oversized> {
    let mut check = Checker::default();
    check.meta(
        event.metadata.name.as_deref(),
        event.metadata.namespace.as_deref(),
    );
    check.done()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(kind: &str, json: serde_json::Value) -> Object {
        let serde_json::Value::Object(map) = json else {
            panic!("not a map")
        };
        crate::model::decode::decode_object(kind, map)
            .expect("decodes")
            .expect("a kind rollcall reads")
            .object
    }

    fn long(n: usize) -> String {
        "a".repeat(n)
    }

    fn tolerations(n: usize) -> serde_json::Value {
        (0..n)
            .map(|i| serde_json::json!({"key": format!("k{i}"), "operator": "Exists"}))
            .collect()
    }

    #[test]
    fn fields_past_the_api_limits_are_named() {
        use serde_json::json;
        let ds = |spec: serde_json::Value| {
            json!({"metadata": {"name": "agent", "namespace": "kube-system"},
                "spec": {"selector": {}, "template": {"spec": spec}}})
        };
        let cases: [(&str, &str, serde_json::Value, Option<&str>); 11] = [
            (
                "node at the limit",
                "Node",
                json!({"metadata": {"name": long(253)}}),
                None,
            ),
            (
                "node name past 253",
                "Node",
                json!({"metadata": {"name": long(254)}}),
                Some("metadata.name is 254 bytes long, more than the 253 Kubernetes allows"),
            ),
            (
                "label value past 63",
                "Node",
                json!({"metadata": {"name": "n", "labels": {"zone": long(64)}}}),
                Some("metadata.labels[zone] is 64 bytes long, more than the 63"),
            ),
            (
                "label key at 317",
                "Node",
                json!({"metadata": {"name": "n", "labels": {long(317): "v"}}}),
                None,
            ),
            (
                "label key past 317",
                "Node",
                json!({"metadata": {"name": "n", "labels": {long(318): "v"}}}),
                Some("metadata.labels key is 318 bytes long"),
            ),
            (
                "pod nodeName",
                "Pod",
                json!({"metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": long(10_000)}}),
                Some("spec.nodeName is 10000 bytes long"),
            ),
            (
                "namespace past 63",
                "Pod",
                json!({"metadata": {"name": "p", "namespace": long(64)}}),
                Some("metadata.namespace is 64 bytes long"),
            ),
            (
                "image",
                "Pod",
                json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": long(2000)}]}}),
                Some("spec.containers[c].image is 2000 bytes long"),
            ),
            (
                "tolerations at the limit",
                "DaemonSet",
                ds(json!({"containers": [], "tolerations": tolerations(MAX_TERMS)})),
                None,
            ),
            (
                "tolerations past the limit",
                "DaemonSet",
                ds(json!({"containers": [], "tolerations": tolerations(MAX_TERMS + 1)})),
                Some(
                    "spec.template.spec.tolerations has 10001 entries, more than rollcall's limit of 10000",
                ),
            ),
            (
                "affinity values past the limit",
                "DaemonSet",
                ds(json!({"containers": [], "affinity": {"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In",
                            "values": (0..MAX_TERMS).map(|i| i.to_string()).collect::<Vec<_>>()}]}]}}}})),
                Some("affinity node selector terms, expressions and values has 10002 entries"),
            ),
        ];
        for (name, kind, json, expected) in cases {
            let result = check(&object(kind, json));
            match (result, expected) {
                (Ok(()), None) => {}
                (Err(oversized), Some(words)) => {
                    assert!(oversized.to_string().contains(words), "{name}: {oversized}");
                }
                (other, _) => panic!("{name}: {other:?}"),
            }
        }
    }
}
