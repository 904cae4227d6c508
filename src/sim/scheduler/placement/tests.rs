use serde_json::{Value, json};

use super::*;
use crate::engine::fit::{NODE_AFFINITY_MISMATCH, NODE_UNSCHEDULABLE};
use crate::engine::fixtures::node;

fn placement(spec: &Value) -> Placement {
    serde_json::from_value(spec.clone()).expect("placement")
}

fn pinned_to(names: &[&str]) -> Value {
    json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": names}]}]}}}})
}

#[test]
fn placement_filters_in_upstream_order_with_upstream_words() {
    let cordon_toleration = json!({"tolerations": [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]});
    let cases = [
        ("nothing against", json!({}), node("n1").build(), None),
        (
            "cordoned node",
            json!({}),
            node("n1").cordoned().build(),
            Some(NODE_UNSCHEDULABLE.into()),
        ),
        (
            "cordoned node, cordon tolerated (daemon pods)",
            cordon_toleration,
            node("n1").cordoned().build(),
            None,
        ),
        (
            "untolerated NoSchedule taint, named as upstream's filter does",
            json!({}),
            node("n1").taint("dedicated", "gpu", "NoSchedule").build(),
            Some("node(s) had untolerated taint {dedicated: gpu}".into()),
        ),
        (
            "PreferNoSchedule never filters",
            json!({}),
            node("n1").taint("soft", "", "PreferNoSchedule").build(),
            None,
        ),
        (
            "taint checked before affinity (upstream plugin order)",
            json!({"nodeSelector": {"disk": "ssd"}}),
            node("n1").taint("dedicated", "", "NoExecute").build(),
            Some("node(s) had untolerated taint {dedicated: }".into()),
        ),
        (
            "nodeSelector label missing",
            json!({"nodeSelector": {"disk": "ssd"}}),
            node("n1").build(),
            Some(NODE_AFFINITY_MISMATCH.into()),
        ),
        (
            "matchFields names another node",
            pinned_to(&["n2"]),
            node("n1").build(),
            Some(NODE_AFFINITY_MISMATCH.into()),
        ),
        (
            "matchFields names this node",
            pinned_to(&["n1"]),
            node("n1").build(),
            None,
        ),
    ];
    for (name, spec, node, expected) in cases {
        assert_eq!(placement(&spec).rejection(&node), expected, "{name}");
    }
}

#[test]
fn prefilter_narrows_only_when_every_term_names_nodes() {
    let two_terms = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b", "a"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}]}}}});
    let one_open_term = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]}}}});
    let intersected = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
            {"key": "metadata.name", "operator": "In", "values": ["b", "c"]}]}]}}}});
    let cases = [
        ("daemon pod: its node", pinned_to(&["n7"]), Some(vec!["n7"])),
        ("no affinity: every node", json!({}), None),
        (
            "union over terms, sorted",
            two_terms,
            Some(vec!["a", "b", "c"]),
        ),
        ("a term without names opens every node", one_open_term, None),
        (
            "names within a term intersect",
            intersected,
            Some(vec!["b"]),
        ),
    ];
    for (name, spec, expected) in cases {
        let expected = expected.map(|names| names.into_iter().map(str::to_owned).collect());
        assert_eq!(placement(&spec).named_nodes(), expected, "{name}");
    }
}
