//! Shared strings for text that repeats across objects held by the thousand:
//! label keys and values, condition types and messages, phases, images,
//! container names. One shared copy per distinct string, process-wide; an
//! object holds a thin pointer (8 bytes, where an `Arc<str>` takes 16: a
//! node's four conditions hold sixteen of them). Strings no object uses any
//! more are dropped from the interner as it grows.

use std::collections::HashSet;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use compact_str::CompactString;

use super::Owner;

/// A string shared with every other equal [`Interned`] string.
///
/// The text sits behind a second pointer (`Box<str>`) so the handle is thin;
/// the extra hop is paid once per distinct string, not per object.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Interned(pub(super) Arc<Box<str>>);

impl Interned {
    /// The shared copy of `text`.
    pub fn new(text: &str) -> Self {
        lock().intern(text)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` are the same shared copy.
    #[cfg(test)]
    pub(super) fn same(&self, other: &Interned) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for Interned {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Interned {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Interned {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Interned {
    fn from(text: &str) -> Self {
        Interned::new(text)
    }
}

impl From<String> for Interned {
    fn from(text: String) -> Self {
        Interned::new(&text)
    }
}

impl PartialEq<str> for Interned {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Interned {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Interned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Interned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl serde::Serialize for Interned {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Interned {
    /// Looks the decoder's text up without copying it when it is known.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl serde::de::Visitor<'_> for TextVisitor {
            type Value = Interned;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, text: &str) -> Result<Interned, E> {
                Ok(Interned::new(text))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

static INTERNER: LazyLock<Mutex<Interner>> = LazyLock::new(Mutex::default);

pub(super) fn lock() -> std::sync::MutexGuard<'static, Interner> {
    INTERNER.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Default)]
pub(super) struct Interner {
    /// foldhash: the strings are short and the decoder looks every one up.
    strings: HashSet<Interned, foldhash::fast::RandomState>,
    /// Size after the last prune; the next prune waits until it doubles.
    kept: usize,
    /// Label pairs, by their interned key's address and their value.
    pairs: hashbrown::HashTable<Arc<Pair>>,
    /// Pair count after the last prune.
    pairs_kept: usize,
    /// Label sets that other objects carry too (a DaemonSet's pods), by
    /// their pairs' addresses.
    sets: hashbrown::HashTable<LabelPairs>,
    /// Set count after the last prune.
    sets_kept: usize,
    /// Owner reference lists (every pod of a DaemonSet names the same one).
    owners: hashbrown::HashTable<Arc<[Owner]>>,
    /// Owner list count after the last prune.
    owners_kept: usize,
    /// Hashes pairs and sets.
    hasher: foldhash::fast::RandomState,
}

/// The pairs of one label set, sorted by key.
pub(super) type LabelPairs = Arc<[Arc<Pair>]>;

/// A label pair, shared by every label set that has it: most nodes of a
/// pool carry the same dozen pairs, so a set holds thin pointers. The value
/// is the pair's own (inline up to 24 bytes), not interned: a value is
/// shared through its pair already, and values unique to a node (its
/// hostname, a label rewritten under churn) would each have cost a string
/// block and a table slot more, ~60 bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Pair {
    pub(super) key: Interned,
    pub(super) value: CompactString,
}

impl Interner {
    pub(super) fn intern(&mut self, text: &str) -> Interned {
        if let Some(shared) = self.strings.get(text) {
            return shared.clone();
        }
        self.prune_if_grown();
        let shared = Interned(Arc::new(Box::from(text)));
        self.strings.insert(shared.clone());
        shared
    }

    /// The shared pair of an interned key and a value.
    pub(super) fn pair(&mut self, key: Interned, value: &str) -> Arc<Pair> {
        let hash = pair_hash(&self.hasher, &key, value);
        // Interned keys are equal exactly when their addresses are.
        let same = |pair: &Arc<Pair>| Arc::ptr_eq(&pair.key.0, &key.0) && pair.value == value;
        if let Some(shared) = self.pairs.find(hash, same) {
            return Arc::clone(shared);
        }
        if pairs_due_for_prune(self.pairs.len(), self.pairs_kept) {
            // A pruned pair releases its key for the next string prune.
            self.pairs.retain(|pair| Arc::strong_count(pair) > 1);
            self.pairs_kept = self.pairs.len();
        }
        let shared = Arc::new(Pair {
            key,
            value: value.into(),
        });
        let hasher = &self.hasher;
        self.pairs.insert_unique(hash, Arc::clone(&shared), |pair| {
            pair_hash(hasher, &pair.key, &pair.value)
        });
        shared
    }

    /// The shared set of `pairs` when every pair is carried by another set
    /// too (the pods of a DaemonSet revision share one). A set with a pair
    /// of its own (a node's hostname) is not looked for: no other set can
    /// equal it, and its table slot would cost more than sharing saves.
    pub(super) fn set(&mut self, pairs: Vec<Arc<Pair>>) -> LabelPairs {
        // The pair table and `pairs` hold one each; a third may be the
        // previous version of the same object (a node decoded again under
        // churn: its hostname pair is then held three times, and every
        // version of every node went into the table, kept there until the
        // next prune); a fourth is another object. So only sets whose every
        // pair two other sets hold are looked for: a revision's pods share
        // from the third pod on. Counts move under other threads' drops: a
        // wrong guess only shares or does not share an equal set.
        if !pairs.iter().all(|pair| Arc::strong_count(pair) > 3) {
            return pairs.into();
        }
        let hash = set_hash(&self.hasher, &pairs);
        let same = |held: &LabelPairs| {
            held.len() == pairs.len() && held.iter().zip(&pairs).all(|(a, b)| Arc::ptr_eq(a, b))
        };
        if let Some(shared) = self.sets.find(hash, same) {
            return Arc::clone(shared);
        }
        if self.sets.len() > 2 * self.sets_kept.max(1024) {
            self.sets.retain(|set| Arc::strong_count(set) > 1);
            self.sets_kept = self.sets.len();
        }
        let shared: LabelPairs = pairs.into();
        let hasher = &self.hasher;
        self.sets
            .insert_unique(hash, Arc::clone(&shared), |set| set_hash(hasher, set));
        shared
    }

    /// The shared list equal to `owners`. Lists no object holds any more
    /// are dropped once the table has doubled.
    pub(super) fn owners(&mut self, owners: Vec<Owner>) -> Arc<[Owner]> {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(&owners);
        if let Some(shared) = self.owners.find(hash, |held| **held == *owners) {
            return Arc::clone(shared);
        }
        if self.owners.len() > 2 * self.owners_kept.max(1024) {
            self.owners.retain(|held| Arc::strong_count(held) > 1);
            self.owners_kept = self.owners.len();
        }
        let shared: Arc<[Owner]> = owners.into();
        let hasher = &self.hasher;
        self.owners
            .insert_unique(hash, Arc::clone(&shared), |held| hasher.hash_one(&**held));
        shared
    }

    /// Whether `set` is in the table of shared sets.
    #[cfg(test)]
    pub(super) fn holds_set(&self, set: &LabelPairs) -> bool {
        self.sets.iter().any(|held| Arc::ptr_eq(held, set))
    }

    /// Drops the strings only the interner holds, once it has doubled.
    fn prune_if_grown(&mut self) {
        if self.strings.len() > 2 * self.kept.max(4096) {
            self.strings.retain(|s| Arc::strong_count(&s.0) > 1);
            self.kept = self.strings.len();
        }
    }
}

/// Whether the pair table, `kept` pairs after its last prune, has grown
/// enough to prune again: by a quarter. Pairs die all the time where label
/// values are the nodes' own (a label rewritten under churn leaves its old
/// pair to the table alone): at 65,000 nodes waiting for the table to double
/// held ~225,000 dead pairs, 13 MB, after five minutes of churn; a quarter
/// bounds them to ~3 MB for a scan of the table every ~56,000 new pairs.
fn pairs_due_for_prune(len: usize, kept: usize) -> bool {
    len > kept + (kept / 4).max(4096)
}

/// A pair's hash: its key's address and its value.
fn pair_hash(hasher: &foldhash::fast::RandomState, key: &Interned, value: &str) -> u64 {
    use std::hash::BuildHasher;
    hasher.hash_one((Arc::as_ptr(&key.0) as usize, value))
}

/// A label set's hash: its pairs' addresses (equal pairs are one pair).
fn set_hash(hasher: &foldhash::fast::RandomState, pairs: &[Arc<Pair>]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut state = hasher.build_hasher();
    for pair in pairs {
        state.write_usize(Arc::as_ptr(pair) as usize);
    }
    state.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_share_one_allocation_and_compare_as_text() {
        let a: Interned = serde_json::from_str("\"KubeletReady\"").unwrap();
        let b = Interned::from(String::from("KubeletReady"));
        assert!(a.same(&b));
        assert_eq!(a, "KubeletReady");
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"KubeletReady\"");
        // Escaped text is decoded before it is interned.
        let c: Interned = serde_json::from_str("\"Kubelet\\u0052eady\"").unwrap();
        assert!(a.same(&c));
    }

    #[test]
    fn dead_pairs_are_pruned_once_the_table_grew_by_a_quarter() {
        let key = Interned::new("rollcall.test/churned-label");
        let live: Vec<Arc<Pair>> = (0..40_000)
            .map(|i| lock().pair(key.clone(), &format!("live-{i}")))
            .collect();
        // A label rewritten over and over: each old value's pair dies.
        for i in 0..100_000 {
            drop(lock().pair(key.clone(), &format!("rewritten-{i}")));
        }
        // At most a quarter more than the live pairs (other tests may hold a
        // few thousand of their own meanwhile); waiting for the table to
        // double ended this run holding 74,500.
        let held = lock().pairs.len();
        assert!(held < 65_000, "{held} pairs held for {} live", live.len());
        assert!(!pairs_due_for_prune(50_000, 40_000));
        assert!(pairs_due_for_prune(50_001, 40_000));
        assert!(pairs_due_for_prune(4_097, 0));
    }

    #[test]
    fn unused_strings_are_pruned_once_the_interner_doubled() {
        let kept = Interned::new("kept-across-prunes");
        for i in 0..20_000 {
            let _ = Interned::new(&format!("transient-{i}"));
        }
        let interner = lock();
        assert!(
            interner.strings.len() < 20_000,
            "transient strings were pruned"
        );
        assert!(interner.strings.contains("kept-across-prunes"));
        drop(interner);
        drop(kept);
    }
}
