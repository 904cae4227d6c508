use super::*;
use crate::engine::fixtures::{daemonset, pod, revision_of};
use std::collections::BTreeSet;

#[test]
fn current_is_the_revision_matching_the_template() {
    let old = daemonset("agent:1").build();
    let new = daemonset("agent:2").build();
    let revisions = vec![revision_of(&new, "hnew", 2), revision_of(&old, "hold", 1)];
    let index = RevisionIndex::new(&new, &revisions);
    let current = index.current().expect("current");
    assert_eq!((current.hash.as_str(), current.number), ("hnew", 2));
    assert!(index.current_matches_template());
    assert_eq!(index.number_for_hash("hold"), Some(1));
    assert_eq!(index.previous().map(|r| r.number), Some(1));
    let numbers: Vec<i64> = index.list().iter().map(|r| r.number).collect();
    assert_eq!(numbers, vec![1, 2]);
}

#[test]
fn rolled_back_template_makes_the_older_revision_current() {
    // Upstream constructHistory would renumber the matching revision to
    // max+1; until it does, Match alone decides which one is current.
    let old = daemonset("agent:1").build();
    let new = daemonset("agent:2").build();
    let revisions = vec![revision_of(&old, "hold", 1), revision_of(&new, "hnew", 2)];
    let index = RevisionIndex::new(&old, &revisions);
    assert_eq!(index.current().map(|r| r.hash.as_str()), Some("hold"));
}

#[test]
fn unmatched_template_falls_back_to_highest_revision() {
    let v1 = daemonset("agent:1").build();
    let v2 = daemonset("agent:2").build();
    let v3 = daemonset("agent:3").build();
    let revisions = vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)];
    let index = RevisionIndex::new(&v3, &revisions);
    assert_eq!(index.current().map(|r| r.number), Some(2));
    assert!(!index.current_matches_template());
}

#[test]
fn go_nulls_in_stored_data_still_match() {
    let ds = daemonset("agent:1").build();
    let mut rev = revision_of(&ds, "h1", 1);
    if let Some(data) = rev.data.as_mut() {
        data.0["spec"]["template"]["metadata"]["creationTimestamp"] = Value::Null;
    }
    let index = RevisionIndex::new(&ds, &[rev]);
    assert!(index.current_matches_template());
}

#[test]
fn revisions_of_other_owners_are_ignored() {
    let ds = daemonset("agent:1").build();
    let mut foreign = revision_of(&ds, "h1", 1);
    foreign.metadata.owner_references = None;
    let index = RevisionIndex::new(&ds, &[foreign]);
    assert!(index.current().is_none());
    assert!(!index.is_current_hash("h1"));
}

#[test]
fn pod_updated_follows_is_pod_updated() {
    let ds = daemonset("agent:2")
        .annotation(TEMPLATE_GENERATION_ANNOTATION, "7")
        .build();
    let index = RevisionIndex::new(&ds, &[revision_of(&ds, "hnew", 2)]);
    let cases = vec![
        ("hash matches", pod("p", "n", "hnew").build(), true),
        ("old hash", pod("p", "n", "hold").build(), false),
        (
            "no hash label",
            pod("p", "n", "x").without_hash().build(),
            false,
        ),
        (
            "legacy generation label matches",
            pod("p", "n", "hold")
                .label(TEMPLATE_GENERATION_LABEL, "7")
                .build(),
            true,
        ),
        (
            "legacy generation label differs",
            pod("p", "n", "hold")
                .label(TEMPLATE_GENERATION_LABEL, "6")
                .build(),
            false,
        ),
    ];
    for (name, p, expected) in cases {
        assert_eq!(index.is_pod_updated(&p), expected, "{name}");
    }
}

#[test]
fn template_hash_is_stable_safe_and_sensitive() {
    let t1 = daemonset("agent:1").build().spec.expect("spec").template;
    let t2 = daemonset("agent:2").build().spec.expect("spec").template;
    let h1 = template_hash(&t1, None);
    assert_eq!(h1, template_hash(&t1.clone(), None));
    assert_ne!(h1, template_hash(&t2, None));
    assert_ne!(h1, template_hash(&t1, Some(1)));
    assert!(!h1.is_empty());
    assert!(h1.bytes().all(|b| SAFE_ALPHABET.contains(&b)), "{h1}");
}

#[test]
fn revision_data_wraps_template_with_replace_directive() {
    let t = daemonset("agent:1").build().spec.expect("spec").template;
    let data = revision_data(&t);
    assert_eq!(data["spec"]["template"]["$patch"], "replace");
    assert_eq!(
        data["spec"]["template"]["spec"]["containers"][0]["image"],
        "agent:1"
    );
}

#[test]
fn next_number_and_pruning_follow_construct_and_cleanup_history() {
    let v = |image: &str| daemonset(image).build();
    let current = v("agent:4");
    let revisions = vec![
        revision_of(&v("agent:1"), "h1", 1),
        revision_of(&v("agent:2"), "h2", 2),
        revision_of(&v("agent:3"), "h3", 3),
        revision_of(&current, "h4", 4),
    ];
    let index = RevisionIndex::new(&current, &revisions);
    assert_eq!(
        index.next_number(),
        4,
        "current already highest keeps its number"
    );
    let live: BTreeSet<String> = ["h1".to_owned()].into_iter().collect();
    let prune = |limit| {
        index
            .to_prune(limit, &live)
            .iter()
            .map(|r| r.hash.clone())
            .collect::<Vec<_>>()
    };
    // Three old revisions, keep one: two go, oldest first, but h1 is still in use.
    assert_eq!(prune(1), vec!["h2", "h3"]);
    assert_eq!(prune(2), vec!["h2"]);
    assert!(prune(3).is_empty());
    // A rollback to agent:2 makes revision 2 current; it is renumbered to 5.
    let rolled_back = RevisionIndex::new(&v("agent:2"), &revisions);
    assert_eq!(rolled_back.next_number(), 5);
    // A template no revision holds yet: all are old.
    assert_eq!(
        RevisionIndex::new(&v("agent:9"), &revisions).next_number(),
        5
    );
}

#[test]
fn previous_is_second_highest_as_kubectl_find_history() {
    let v = |image: &str| daemonset(image).build();
    let revisions = vec![
        revision_of(&v("agent:1"), "h1", 1),
        revision_of(&v("agent:2"), "h2", 2),
    ];
    assert_eq!(
        RevisionIndex::new(&v("agent:2"), &revisions)
            .previous()
            .map(|r| r.number),
        Some(1)
    );
    assert!(
        RevisionIndex::new(&v("agent:2"), &revisions[1..])
            .previous()
            .is_none()
    );
}

#[test]
fn empty_objects_and_lists_do_not_break_match() {
    let ds = daemonset("agent:1").build();
    let mut rev = revision_of(&ds, "h1", 1);
    if let Some(data) = rev.data.as_mut() {
        data.0["spec"]["template"]["spec"]["containers"][0]["resources"] = serde_json::json!({});
        data.0["spec"]["template"]["spec"]["containers"][0]["args"] = serde_json::json!([]);
    }
    assert!(RevisionIndex::new(&ds, &[rev]).current_matches_template());
}

/// Small JSON trees rich in what `comparable` drops: nulls, `{}`, `[]`.
fn json_tree() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        Just(serde_json::json!({})),
        Just(serde_json::json!([])),
        (0..3i64).prop_map(Value::from),
        "[ab]".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[abc]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    /// Comparing in place answers as comparing the copies `comparable` makes.
    #[test]
    fn comparing_in_place_answers_as_comparing_copies(a in json_tree(), b in json_tree()) {
        let expected = comparable(a.clone()) == comparable(b.clone());
        proptest::prop_assert_eq!(same_when_comparable(&a, &b), expected);
        proptest::prop_assert!(same_when_comparable(&a, &a));
    }
}
