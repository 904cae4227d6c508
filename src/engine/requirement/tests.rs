//! Key and value validation (upstream `IsQualifiedName`, `IsValidLabelValue`) and
//! requirement matching.

use super::{Operator, Requirement, validate_key, validate_value};
use crate::engine::eligibility::fixtures::map;

#[test]
fn key_validation_table() {
    let rows = [
        ("simple", "zone", true),
        ("prefixed", "topology.kubernetes.io/zone", true),
        ("dots dashes underscores inside", "a.b-c_d", true),
        ("63 characters", &"a".repeat(63)[..], true),
        ("64 characters", &"a".repeat(64)[..], false),
        ("empty", "", false),
        ("leading dash", "-zone", false),
        ("trailing dot", "zone.", false),
        ("space", "my zone", false),
        ("empty prefix", "/zone", false),
        ("empty name", "example.com/", false),
        ("uppercase prefix", "Example.com/zone", false),
        ("two slashes", "a/b/c", false),
    ];
    for (name, key, valid) in rows {
        assert_eq!(validate_key(key).is_ok(), valid, "{name}: {key:?}");
    }
}

#[test]
fn value_validation_table() {
    let rows = [
        ("empty is allowed", "", true),
        ("word", "gpu", true),
        ("mixed", "A.b-c_9", true),
        ("63 characters", &"v".repeat(63)[..], true),
        ("64 characters", &"v".repeat(64)[..], false),
        ("leading sign", "-1", false),
        ("slash", "a/b", false),
    ];
    for (name, value, valid) in rows {
        assert_eq!(validate_value(value).is_ok(), valid, "{name}: {value:?}");
    }
}

#[test]
fn value_counts_are_checked() {
    let values = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert!(Requirement::new("k", Operator::In, values(&[])).is_err());
    assert!(Requirement::new("k", Operator::Equals, values(&["a", "b"])).is_err());
    assert!(Requirement::new("k", Operator::Exists, values(&["a"])).is_err());
    assert!(Requirement::new("k", Operator::Gt, values(&["1", "2"])).is_err());
    assert!(Requirement::new("k", Operator::Lt, values(&["x"])).is_err());
    assert!(Requirement::new("k", Operator::Lt, values(&["10"])).is_ok());
}

#[test]
fn matching_table() {
    let labels = map(&[("n", "10"), ("word", "x")]);
    let rows: &[(&str, &str, Operator, &[&str], bool)] = &[
        ("Equals", "word", Operator::Equals, &["x"], true),
        (
            "NotEquals on equal",
            "word",
            Operator::NotEquals,
            &["x"],
            false,
        ),
        (
            "NotEquals on missing",
            "zone",
            Operator::NotEquals,
            &["x"],
            true,
        ),
        ("In missing", "zone", Operator::In, &["x"], false),
        ("Gt", "n", Operator::Gt, &["9"], true),
        ("Gt equal", "n", Operator::Gt, &["10"], false),
        ("Lt", "n", Operator::Lt, &["11"], true),
        ("Lt non-integer label", "word", Operator::Lt, &["11"], false),
    ];
    for (name, key, operator, values, expected) in rows {
        let values = values.iter().map(|v| (*v).to_owned()).collect();
        let requirement = Requirement::new(key, *operator, values).unwrap();
        assert_eq!(requirement.matches(Some(&labels)), *expected, "{name}");
    }
}
