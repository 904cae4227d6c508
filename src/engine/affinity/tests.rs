//! nodeSelector and required node affinity, after upstream
//! `nodeaffinity.RequiredNodeAffinity.Match` and `LazyErrorNodeSelector`.

use super::{node_selector_reasons, required_affinity_reasons};
use crate::engine::eligibility::ReasonCode::{self, InvalidNodeAffinity, NodeAffinityMismatch};
use crate::engine::eligibility::fixtures::{expr, map, node, template, term};
use crate::model::Node;
use k8s_openapi::api::core::v1::NodeSelectorTerm;

fn worker() -> Node {
    node(
        "node-1",
        &[("zone", "a"), ("cores", "8"), ("gpu", ""), ("pool", "web")],
        &[],
    )
}

/// (name, terms, expected reasons as (code, message))
type Row = (
    &'static str,
    Vec<NodeSelectorTerm>,
    Vec<(ReasonCode, &'static str)>,
);

#[expect(
    clippy::too_many_lines,
    reason = "one row per case reads best as one table"
)]
fn rows() -> Vec<Row> {
    let mismatch = |m| (NodeAffinityMismatch, m);
    let invalid = |m| (InvalidNodeAffinity, m);
    vec![
        (
            "In matches",
            vec![term(&[expr("zone", "In", &["a", "b"])], &[])],
            vec![],
        ),
        (
            "In other value",
            vec![term(&[expr("zone", "In", &["b", "c"])], &[])],
            vec![mismatch("affinity term 1: zone In [b,c]")],
        ),
        (
            "In label missing",
            vec![term(&[expr("rack", "In", &["r1"])], &[])],
            vec![mismatch("affinity term 1: rack In [r1]")],
        ),
        (
            "NotIn listed value",
            vec![term(&[expr("zone", "NotIn", &["a", "b"])], &[])],
            vec![mismatch("affinity term 1: zone NotIn [a,b]")],
        ),
        (
            "NotIn holds when the label is missing (upstream Requirement.Matches)",
            vec![term(&[expr("rack", "NotIn", &["r1"])], &[])],
            vec![],
        ),
        (
            "Exists with an empty value",
            vec![term(&[expr("gpu", "Exists", &[])], &[])],
            vec![],
        ),
        (
            "Exists missing",
            vec![term(&[expr("rack", "Exists", &[])], &[])],
            vec![mismatch("affinity term 1: rack Exists")],
        ),
        (
            "DoesNotExist missing",
            vec![term(&[expr("rack", "DoesNotExist", &[])], &[])],
            vec![],
        ),
        (
            "DoesNotExist present",
            vec![term(&[expr("gpu", "DoesNotExist", &[])], &[])],
            vec![mismatch("affinity term 1: gpu DoesNotExist")],
        ),
        (
            "Gt greater",
            vec![term(&[expr("cores", "Gt", &["4"])], &[])],
            vec![],
        ),
        (
            "Gt equal is not greater",
            vec![term(&[expr("cores", "Gt", &["8"])], &[])],
            vec![mismatch("affinity term 1: cores Gt [8]")],
        ),
        (
            "Lt smaller",
            vec![term(&[expr("cores", "Lt", &["16"])], &[])],
            vec![],
        ),
        // ParseInt accepts a sign, but upstream NewRequirement also demands a valid label value.
        (
            "Lt with a signed value is invalid",
            vec![term(&[expr("cores", "Lt", &["-9"])], &[])],
            vec![(InvalidNodeAffinity, "")],
        ),
        (
            "Gt on a non-integer label does not match",
            vec![term(&[expr("zone", "Gt", &["1"])], &[])],
            vec![mismatch("affinity term 1: zone Gt [1]")],
        ),
        (
            "Gt on a missing label does not match",
            vec![term(&[expr("rack", "Gt", &["1"])], &[])],
            vec![mismatch("affinity term 1: rack Gt [1]")],
        ),
        (
            "Gt with a non-integer value is invalid",
            vec![term(&[expr("cores", "Gt", &["many"])], &[])],
            vec![invalid(
                "affinity term 1: cores Gt [many] is invalid (operator Gt needs an integer value, got \"many\")",
            )],
        ),
        (
            "Lt with two values is invalid",
            vec![term(&[expr("cores", "Lt", &["1", "2"])], &[])],
            vec![invalid(
                "affinity term 1: cores Lt [1,2] is invalid (operator Lt needs exactly one value, got 2)",
            )],
        ),
        (
            "In without values is invalid",
            vec![term(&[expr("zone", "In", &[])], &[])],
            vec![invalid(
                "affinity term 1: zone In is invalid (operator In needs at least one value, got 0)",
            )],
        ),
        (
            "Exists with values is invalid",
            vec![term(&[expr("zone", "Exists", &["a"])], &[])],
            vec![invalid(
                "affinity term 1: zone Exists [a] is invalid (operator Exists needs no values, got 1)",
            )],
        ),
        (
            "unknown operator is invalid",
            vec![term(&[expr("zone", "Equals", &["a"])], &[])],
            vec![invalid(
                "affinity term 1: zone Equals [a] is invalid (unknown operator \"Equals\")",
            )],
        ),
        (
            "a bad key is invalid",
            vec![term(&[expr("bad key", "Exists", &[])], &[])],
            vec![(InvalidNodeAffinity, "")],
        ),
        (
            "an invalid expression fails its whole term even when the others match",
            vec![term(
                &[expr("zone", "In", &["a"]), expr("cores", "Gt", &["x"])],
                &[],
            )],
            vec![(InvalidNodeAffinity, "")],
        ),
        (
            "expressions are AND'ed: the first failing one is named",
            vec![term(
                &[
                    expr("zone", "In", &["a"]),
                    expr("pool", "In", &["db"]),
                    expr("rack", "Exists", &[]),
                ],
                &[],
            )],
            vec![mismatch("affinity term 1: pool In [db]")],
        ),
        (
            "terms are OR'ed: a later matching term is enough",
            vec![
                term(&[expr("zone", "In", &["b"])], &[]),
                term(&[expr("pool", "In", &["web"])], &[]),
            ],
            vec![],
        ),
        (
            "an invalid term does not stop a later matching one (upstream collects its error and goes on)",
            vec![
                term(&[expr("zone", "In", &[])], &[]),
                term(&[expr("zone", "In", &["a"])], &[]),
            ],
            vec![],
        ),
        (
            "every failing term is reported, numbered from 1",
            vec![
                term(&[expr("zone", "In", &["b"])], &[]),
                term(&[expr("pool", "NotIn", &["web"])], &[]),
            ],
            vec![
                mismatch("affinity term 1: zone In [b]"),
                mismatch("affinity term 2: pool NotIn [web]"),
            ],
        ),
        (
            "no terms at all matches nothing",
            vec![],
            vec![mismatch(
                "required node affinity has no terms, so it matches no node",
            )],
        ),
        (
            "an empty term matches nothing",
            vec![term(&[], &[])],
            vec![mismatch("affinity term 1: empty term matches no node")],
        ),
        (
            "an empty term is skipped, a later term can match",
            vec![term(&[], &[]), term(&[expr("zone", "In", &["a"])], &[])],
            vec![],
        ),
        (
            "matchFields In this node",
            vec![term(&[], &[expr("metadata.name", "In", &["node-1"])])],
            vec![],
        ),
        (
            "matchFields In another node",
            vec![term(&[], &[expr("metadata.name", "In", &["node-2"])])],
            vec![mismatch("affinity term 1: metadata.name In [node-2]")],
        ),
        (
            "matchFields NotIn this node",
            vec![term(&[], &[expr("metadata.name", "NotIn", &["node-1"])])],
            vec![mismatch("affinity term 1: metadata.name NotIn [node-1]")],
        ),
        (
            "matchFields NotIn another node",
            vec![term(&[], &[expr("metadata.name", "NotIn", &["node-2"])])],
            vec![],
        ),
        (
            "matchFields on another field is invalid",
            vec![term(&[], &[expr("metadata.uid", "In", &["x"])])],
            vec![(InvalidNodeAffinity, "")],
        ),
        (
            "matchFields with two values is invalid",
            vec![term(
                &[],
                &[expr("metadata.name", "In", &["node-1", "node-2"])],
            )],
            vec![(InvalidNodeAffinity, "")],
        ),
        (
            "matchFields Exists is invalid",
            vec![term(&[], &[expr("metadata.name", "Exists", &[])])],
            vec![(InvalidNodeAffinity, "")],
        ),
        (
            "expressions and fields of one term are AND'ed",
            vec![term(
                &[expr("zone", "In", &["a"])],
                &[expr("metadata.name", "In", &["node-2"])],
            )],
            vec![mismatch("affinity term 1: metadata.name In [node-2]")],
        ),
    ]
}

#[test]
fn required_affinity_table() {
    let node = worker();
    for (name, terms, expected) in rows() {
        let spec = template().required(terms).spec();
        let got: Vec<(ReasonCode, String)> = required_affinity_reasons(&spec, &node)
            .into_iter()
            .map(|r| (r.code, r.message))
            .collect();
        assert_eq!(got.len(), expected.len(), "{name}: {got:?}");
        for ((code, message), (want_code, want_message)) in got.iter().zip(&expected) {
            assert_eq!(code, want_code, "{name}");
            if !want_message.is_empty() {
                assert_eq!(message, want_message, "{name}");
            }
        }
    }
}

#[test]
fn no_required_affinity_means_no_reasons() {
    assert!(required_affinity_reasons(&template().spec(), &worker()).is_empty());
}

#[test]
fn reasons_name_their_term() {
    let spec = template()
        .required(vec![
            term(&[expr("zone", "In", &["b"])], &[]),
            term(&[expr("zone", "In", &["c"])], &[]),
        ])
        .spec();
    let terms: Vec<Option<usize>> = required_affinity_reasons(&spec, &worker())
        .iter()
        .map(|r| r.term)
        .collect();
    assert_eq!(terms, [Some(1), Some(2)]);
}

#[test]
fn match_fields_are_skipped_for_a_node_without_a_name() {
    // Upstream builds no field set for an unnamed node and then does not test fields.
    let spec = template()
        .required(vec![term(&[], &[expr("metadata.name", "In", &["node-2"])])])
        .spec();
    assert!(required_affinity_reasons(&spec, &node("", &[], &[])).is_empty());
}

/// Label pairs of a table row.
type Labels<'a> = &'a [(&'a str, &'a str)];

#[test]
fn node_selector_table() {
    let labels = map(&[("disktype", "ssd"), ("zone", "a"), ("empty", "")]);
    let rows: &[(&str, Labels, &[&str])] = &[
        ("no selector", &[], &[]),
        (
            "all pairs present",
            &[("disktype", "ssd"), ("zone", "a")],
            &[],
        ),
        ("empty value must be empty", &[("empty", "")], &[]),
        (
            "missing label",
            &[("gpu", "true")],
            &["nodeSelector gpu=true: label missing"],
        ),
        (
            "other value",
            &[("zone", "b")],
            &["nodeSelector zone=b: label is a"],
        ),
        (
            "empty label where a value is wanted",
            &[("empty", "x")],
            &["nodeSelector empty=x: label is empty"],
        ),
        (
            "one reason per failing pair, in key order",
            &[("zone", "b"), ("disktype", "hdd"), ("gpu", "1")],
            &[
                "nodeSelector disktype=hdd: label is ssd",
                "nodeSelector gpu=1: label missing",
                "nodeSelector zone=b: label is a",
            ],
        ),
    ];
    for (name, selector, expected) in rows {
        let selector = map(selector);
        let got: Vec<String> = node_selector_reasons(Some(&selector), Some(&labels))
            .into_iter()
            .map(|r| r.message)
            .collect();
        assert_eq!(got, *expected, "{name}");
    }
    let got = node_selector_reasons(Some(&map(&[("a", "b")])), None::<&crate::model::Labels>);
    assert_eq!(got.len(), 1, "a node without labels misses every pair");
}
