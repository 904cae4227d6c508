//! The update strategies build their result from the client's object, keeping
//! what equals the stored one; these properties check that the result is
//! exactly what copying from the stored object gives.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{reset_field, status_write};

/// Small JSON trees whose top-level fields often coincide between two draws.
fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u8..3).prop_map(|n| json!(n)),
        "[ab]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[ab]", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A top-level object over a few field names, status among them.
fn object() -> impl Strategy<Value = Value> {
    let field = prop_oneof![Just("metadata"), Just("spec"), Just("status"), Just("kind")];
    prop::collection::btree_map(field, tree(), 0..4).prop_map(|m| {
        Value::Object(
            m.into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<Map<_, _>>(),
        )
    })
}

/// `new` is either unrelated to `old` or `old` with a few fields edited, as
/// a client that read the object sends it.
fn old_and_new() -> impl Strategy<Value = (Value, Value)> {
    (object(), object(), any::<bool>()).prop_map(|(old, other, derived)| {
        if !derived {
            return (old, other);
        }
        let mut new = old.clone();
        if let (Some(new_map), Some(edits)) = (new.as_object_mut(), other.as_object()) {
            for (field, value) in edits {
                new_map.insert(field.clone(), value.clone());
            }
        }
        (old, new)
    })
}

proptest! {
    #[test]
    fn a_status_write_equals_the_stored_object_with_the_new_status(
        (old, new) in old_and_new()
    ) {
        let mut expected = old.clone();
        expected["status"] = new.get("status").cloned().unwrap_or_else(|| json!({}));
        prop_assert_eq!(status_write(&old, new), expected);
    }

    #[test]
    fn a_reset_field_equals_the_stored_field(
        (old, mut new) in old_and_new()
    ) {
        let (Some(old_map), Some(new_map)) = (old.as_object(), new.as_object_mut()) else {
            return Ok(());
        };
        let mut expected = new_map.clone();
        match old_map.get("status") {
            Some(status) => drop(expected.insert("status".to_owned(), status.clone())),
            None => drop(expected.remove("status")),
        }
        reset_field(new_map, old_map, "status");
        prop_assert_eq!(&*new_map, &expected);
    }
}
