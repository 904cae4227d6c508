//! Compact label sets for objects held by the thousand (nodes).
//!
//! Most nodes of a cluster carry the same label pairs (pool, zone, instance
//! type, OS, ...), so the pairs are interned: one shared pair per distinct key
//! and value (their strings interned too), and a node holds one sorted slice
//! of thin pointers instead of a map of owned strings (about 0.2 KB instead of
//! 2 KB for 13 labels). Pairs and strings no label set uses any more are
//! dropped from the interner as it grows.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use compact_str::CompactString;

use super::interned::{self, Interned, LabelPairs};

/// Anything labels can be looked up in: an API object's label map or [`Labels`].
pub trait LabelSet {
    /// The value of a label, if present.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelSet for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl LabelSet for Labels {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
}

/// Label pairs sorted by key, each shared with every other set that has it;
/// a set that other objects carry too is itself shared (a DaemonSet's pods
/// carry one set per revision: 130,000 pods, a handful of sets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labels(LabelPairs);

/// The empty set, shared (an `Arc` of nothing still takes a block).
static NO_LABELS: LazyLock<LabelPairs> = LazyLock::new(|| Arc::from(Vec::new()));

impl Default for Labels {
    fn default() -> Self {
        Labels(Arc::clone(&NO_LABELS))
    }
}

impl Labels {
    /// The value of a label.
    pub fn get(&self, key: &str) -> Option<&str> {
        let at = self.0.binary_search_by(|p| (*p.key).cmp(key)).ok()?;
        Some(&self.0[at].value)
    }

    /// The pairs, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|p| (&*p.key, &*p.value))
    }

    /// How many labels.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no label.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The labels as the API's map (`None` when empty).
    pub fn to_map(&self) -> Option<BTreeMap<String, String>> {
        (!self.is_empty()).then(|| {
            self.iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Self {
        if map.is_empty() {
            return Labels::default();
        }
        let mut interner = interned::lock();
        let pairs = map
            .iter()
            .map(|(k, v)| {
                let key = interner.intern(k);
                interner.pair(key, v)
            })
            .collect();
        Labels(interner.set(pairs))
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for Labels {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(pairs: I) -> Self {
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect::<BTreeMap<_, _>>()
            .into()
    }
}

impl serde::Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for Labels {
    /// Interns straight from the decoder's text: no map and no owned string
    /// per label is built on the way (`null` is an empty set, as the API means it).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PairsVisitor;
        impl<'de> serde::de::Visitor<'de> for PairsVisitor {
            type Value = Labels;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of label keys to values")
            }
            fn visit_unit<E>(self) -> Result<Labels, E> {
                Ok(Labels::default())
            }
            fn visit_none<E>(self) -> Result<Labels, E> {
                Ok(Labels::default())
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Labels, D::Error> {
                d.deserialize_map(self)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Labels, A::Error> {
                let mut pairs: Vec<(Interned, CompactString)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<Interned, CompactString>()? {
                    pairs.push((key, value));
                }
                // The API sends keys sorted; a dump written by hand may not.
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
                // Of a key given twice, the last value counts (as in a map).
                pairs.dedup_by(|later, earlier| {
                    let same = later.0 == earlier.0;
                    if same {
                        std::mem::swap(&mut later.1, &mut earlier.1);
                    }
                    same
                });
                if pairs.is_empty() {
                    return Ok(Labels::default());
                }
                let mut interner = interned::lock();
                let pairs = pairs
                    .into_iter()
                    .map(|(key, value)| interner.pair(key, &value))
                    .collect();
                Ok(Labels(interner.set(pairs)))
            }
        }
        deserializer.deserialize_option(PairsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::eligibility::fixtures::map;

    #[test]
    fn lookups_and_order_match_the_map() {
        let source = map(&[("zone", "a"), ("app", "x"), ("pool", "p1"), ("k", "")]);
        let labels = Labels::from(source.clone());
        for key in ["zone", "app", "pool", "k", "missing", ""] {
            assert_eq!(labels.get(key), source.label(key), "{key}");
        }
        let pairs: Vec<_> = labels.iter().collect();
        let expected: Vec<_> = source
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(pairs, expected);
        assert_eq!(labels.to_map(), Some(source));
        assert_eq!(Labels::default().to_map(), None);
    }

    #[test]
    fn equal_strings_are_shared_between_sets() {
        let a = Labels::from(map(&[("pool", "shared-pool-name")]));
        let b = Labels::from(map(&[("pool", "shared-pool-name")]));
        assert!(Arc::ptr_eq(&a.0[0], &b.0[0]));
        let c = Labels::from(map(&[("pool", "other-pool-name")]));
        assert!(a.0[0].key.same(&c.0[0].key));
    }

    #[test]
    fn objects_with_the_same_labels_share_one_set() {
        let pod = [
            ("app", "share-test-agent"),
            ("pod-template-hash", "share-test-abc"),
        ];
        let sets: Vec<Labels> = (0..4).map(|_| pod.into_iter().collect()).collect();
        // The first two sets' pairs were new or held by one set; from the
        // third on the set is shared.
        assert!(!Arc::ptr_eq(&sets[1].0, &sets[2].0));
        assert!(Arc::ptr_eq(&sets[2].0, &sets[3].0));
        let decoded: Labels = serde_json::from_str(
            r#"{"pod-template-hash":"share-test-abc","app":"share-test-agent"}"#,
        )
        .unwrap();
        assert!(Arc::ptr_eq(&decoded.0, &sets[2].0));
        assert_eq!(decoded, sets[0]);
        let node = |host| Labels::from_iter([("app", "share-test-agent"), ("host", host)]);
        let (a, b) = (node("share-test-a"), node("share-test-b"));
        assert_ne!(a, b);
        assert_eq!(a.get("app"), b.get("app"));
        // A node decoded again (its previous version still held) is not
        // taken for a set others carry: it is not kept in the set table.
        let again = node("share-test-a");
        assert_eq!(again, a);
        assert!(!Arc::ptr_eq(&again.0, &a.0));
        let interner = interned::lock();
        assert!(
            !interner.holds_set(&again.0) && !interner.holds_set(&a.0),
            "a node's own set is not in the set table"
        );
        drop(interner);
        let empty: Labels = serde_json::from_str("{}").unwrap();
        assert!(empty.is_empty() && empty == Labels::default());
    }

    #[test]
    fn a_node_keeps_the_api_shape_on_the_wire() {
        let json = serde_json::json!({
            "metadata": {"name": "n1", "labels": {"zone": "a", "pool": "gpu"}},
            "spec": {"unschedulable": true},
            "status": {}
        });
        let node: crate::model::Node = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(node.label("pool"), Some("gpu"));
        assert_eq!(node.labels.len(), 2);
        assert_eq!(serde_json::to_value(&node).unwrap(), json);
        let bare: crate::model::Node =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "n2"}})).unwrap();
        assert!(bare.labels.is_empty());
        assert_eq!(
            serde_json::to_value(&bare).unwrap()["metadata"].get("labels"),
            None
        );
    }
}
