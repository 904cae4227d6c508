//! Selector strings (upstream `labels.Parse`) and API label selectors
//! (`metav1.LabelSelectorAsSelector`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::{Selector, SelectorError, label_selector_matches};
use crate::engine::eligibility::fixtures::map;

#[test]
fn parse_and_display_table() {
    // (input, canonical display)
    let rows = [
        ("", ""),
        ("pool=gpu", "pool=gpu"),
        ("pool==gpu", "pool=gpu"),
        ("pool = gpu", "pool=gpu"),
        ("zone!=a", "zone!=a"),
        ("tier in (x,y)", "tier in (x,y)"),
        ("tier in ( x , y )", "tier in (x,y)"),
        ("tier notin (x)", "tier notin (x)"),
        ("!legacy", "!legacy"),
        ("env", "env"),
        ("cores>3", "cores>3"),
        ("cores < 16", "cores<16"),
        ("pool=", "pool="),
        ("example.com/pool=gpu", "example.com/pool=gpu"),
        (
            "pool=gpu,zone!=a,tier in (x,y),!legacy,env",
            "pool=gpu,zone!=a,tier in (x,y),!legacy,env",
        ),
    ];
    for (input, display) in rows {
        let selector = Selector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(selector.to_string(), display, "{input:?}");
        let again = Selector::parse(&selector.to_string()).unwrap();
        assert_eq!(again, selector, "{input:?} round trip");
    }
}

#[test]
fn parse_errors_table() {
    let rows = [
        ("trailing comma", "pool=gpu,"),
        ("operator without key", "=gpu"),
        ("in without parentheses", "tier in x"),
        ("unclosed list", "tier in (x,y"),
        ("empty in list", "tier in ()"),
        ("Gt with a word", "cores>many"),
        ("two words", "pool gpu"),
        ("bang alone", "!"),
        ("bad key", "-pool=gpu"),
        ("bad value", "pool=-gpu"),
        ("two equals", "a=b=c"),
    ];
    for (name, input) in rows {
        assert!(
            Selector::parse(input).is_err(),
            "{name}: {input:?} should not parse"
        );
    }
    let err = Selector::parse("pool gpu").unwrap_err();
    assert!(matches!(err, SelectorError::Syntax { at: 5, .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "cannot parse selector \"pool gpu\" at character 5: expected an operator after \"pool\" but found \"gpu\""
    );
}

/// Label pairs of a table row.
type Labels<'a> = &'a [(&'a str, &'a str)];

#[test]
fn matches_table() {
    let selector = Selector::parse("pool=gpu,zone!=a,tier in (x,y),!legacy,env").unwrap();
    let rows: &[(&str, Labels, bool)] = &[
        (
            "all hold",
            &[("pool", "gpu"), ("zone", "b"), ("tier", "x"), ("env", "")],
            true,
        ),
        (
            "zone missing satisfies !=",
            &[("pool", "gpu"), ("tier", "y"), ("env", "prod")],
            true,
        ),
        (
            "pool differs",
            &[("pool", "cpu"), ("tier", "x"), ("env", "")],
            false,
        ),
        (
            "zone equal",
            &[("pool", "gpu"), ("zone", "a"), ("tier", "x"), ("env", "")],
            false,
        ),
        (
            "tier not listed",
            &[("pool", "gpu"), ("tier", "z"), ("env", "")],
            false,
        ),
        (
            "legacy present",
            &[("pool", "gpu"), ("tier", "x"), ("env", ""), ("legacy", "1")],
            false,
        ),
        ("env missing", &[("pool", "gpu"), ("tier", "x")], false),
    ];
    for (name, labels, expected) in rows {
        assert_eq!(selector.matches(Some(&map(labels))), *expected, "{name}");
    }
    assert!(!selector.matches(None::<&BTreeMap<String, String>>));
    assert!(
        Selector::parse("")
            .unwrap()
            .matches(None::<&BTreeMap<String, String>>),
        "the empty selector matches everything"
    );
    let numeric = Selector::parse("cores>3").unwrap();
    assert!(numeric.matches(Some(&map(&[("cores", "4")]))));
    assert!(!numeric.matches(Some(&map(&[("cores", "3")]))));
    assert!(!numeric.matches(Some(&map(&[("cores", "four")]))));
}

fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.to_owned(),
        operator: operator.to_owned(),
        values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
    }
}

#[test]
fn label_selector_table() {
    let labels = map(&[("app", "agent"), ("tier", "node")]);
    let selector =
        |match_labels: &[(&str, &str)], expressions: Vec<LabelSelectorRequirement>| LabelSelector {
            match_labels: (!match_labels.is_empty()).then(|| map(match_labels)),
            match_expressions: (!expressions.is_empty()).then_some(expressions),
        };
    let rows = [
        (
            "empty selector matches everything",
            selector(&[], vec![]),
            true,
        ),
        (
            "matchLabels hold",
            selector(&[("app", "agent")], vec![]),
            true,
        ),
        (
            "matchLabels differ",
            selector(&[("app", "other")], vec![]),
            false,
        ),
        (
            "In",
            selector(&[], vec![requirement("tier", "In", &["node", "edge"])]),
            true,
        ),
        (
            "NotIn",
            selector(&[], vec![requirement("tier", "NotIn", &["node"])]),
            false,
        ),
        (
            "NotIn on a missing label",
            selector(&[], vec![requirement("zone", "NotIn", &["a"])]),
            true,
        ),
        (
            "Exists",
            selector(&[], vec![requirement("app", "Exists", &[])]),
            true,
        ),
        (
            "DoesNotExist",
            selector(&[], vec![requirement("app", "DoesNotExist", &[])]),
            false,
        ),
        (
            "labels AND expressions",
            selector(
                &[("app", "agent")],
                vec![requirement("tier", "In", &["edge"])],
            ),
            false,
        ),
        (
            "Gt is not a label selector operator",
            selector(&[], vec![requirement("tier", "Gt", &["1"])]),
            false,
        ),
        (
            "In without values is invalid",
            selector(&[], vec![requirement("tier", "In", &[])]),
            false,
        ),
        (
            "an invalid key matches nothing",
            selector(&[("bad key", "x")], vec![]),
            false,
        ),
    ];
    for (name, selector, expected) in rows {
        assert_eq!(
            label_selector_matches(&selector, Some(&labels)),
            expected,
            "{name}"
        );
    }
    assert!(label_selector_matches::<crate::model::Labels>(
        &LabelSelector::default(),
        None
    ));
}

proptest::proptest! {
    #[test]
    fn parsing_never_panics_and_display_round_trips(text in "[a-z0-9=!<>(), ./_-]{0,40}") {
        if let Ok(selector) = Selector::parse(&text) {
            let shown = selector.to_string();
            let again = Selector::parse(&shown);
            proptest::prop_assert_eq!(again.as_ref().ok(), Some(&selector), "{:?} -> {:?}", text, shown);
        }
    }
}
