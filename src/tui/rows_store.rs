//! How the row cache holds its rows compactly: one copy of each node's name
//! (the set is keyed by the name inside the row), and one shared copy of the
//! strings that repeat across nodes (revision hash, phase, problem, pool,
//! zone, taints). Pure data structures; no I/O.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::rows::NodeRow;

/// A row keyed by its node's name (no second copy of the name as a key).
#[derive(Clone, Debug)]
struct Keyed(NodeRow);

impl Borrow<str> for Keyed {
    fn borrow(&self) -> &str {
        self.0.name()
    }
}

impl Hash for Keyed {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // As `str` hashes, so that a lookup by `&str` finds the row.
        self.0.name().hash(state);
    }
}

impl PartialEq for Keyed {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for Keyed {}

/// The rows, one per node name.
#[derive(Clone, Debug, Default)]
pub(super) struct RowSet(HashSet<Keyed>);

impl RowSet {
    /// The row of `node`.
    pub(super) fn get(&self, node: &str) -> Option<&NodeRow> {
        self.0.get(node).map(|keyed| &keyed.0)
    }

    /// Puts `row` in (replacing the row of the same node, returned).
    pub(super) fn insert(&mut self, row: NodeRow) -> Option<NodeRow> {
        self.0.replace(Keyed(row)).map(|keyed| keyed.0)
    }

    /// Takes the row of `node` out.
    pub(super) fn remove(&mut self, node: &str) -> Option<NodeRow> {
        self.0.take(node).map(|keyed| keyed.0)
    }

    /// Whether `node` has a row.
    pub(super) fn contains(&self, node: &str) -> bool {
        self.0.contains(node)
    }

    /// All rows, unordered.
    pub(super) fn values(&self) -> impl Iterator<Item = &NodeRow> {
        self.0.iter().map(|keyed| &keyed.0)
    }

    /// How many rows.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is none.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<NodeRow> for RowSet {
    fn from_iter<I: IntoIterator<Item = NodeRow>>(rows: I) -> Self {
        Self(rows.into_iter().map(Keyed).collect())
    }
}

/// One shared copy of each string that repeats across rows. Strings no row
/// uses any more are dropped when the table has doubled since it was last
/// pruned, so it stays the size of what the rows hold.
#[derive(Clone, Debug, Default)]
pub(super) struct Strings {
    set: HashSet<Arc<str>>,
    /// Size after the last prune.
    kept: usize,
}

/// Below this many strings the table is never pruned.
const PRUNE_FLOOR: usize = 256;

impl Strings {
    /// The shared copy of `text`.
    pub(super) fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.set.get(text) {
            return Arc::clone(shared);
        }
        if self.set.len() >= (2 * self.kept).max(PRUNE_FLOOR) {
            self.prune();
        }
        let shared: Arc<str> = Arc::from(text);
        self.set.insert(Arc::clone(&shared));
        shared
    }

    /// Replaces `text` by its shared copy.
    pub(super) fn share(&mut self, text: &mut Option<Arc<str>>) {
        if let Some(own) = text.as_mut() {
            *own = self.get(own);
        }
    }

    /// Drops the strings only this table holds.
    fn prune(&mut self) {
        self.set.retain(|shared| Arc::strong_count(shared) > 1);
        self.kept = self.set.len();
    }

    /// How many distinct strings are held.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.set.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_per_string_and_unused_ones_are_dropped() {
        let mut strings = Strings::default();
        let a = strings.get("Running");
        let b = strings.get("Running");
        assert!(Arc::ptr_eq(&a, &b));
        let mut owned = Some(Arc::from("Running"));
        strings.share(&mut owned);
        assert!(owned.as_ref().is_some_and(|o| Arc::ptr_eq(o, &a)));
        drop((a, b, owned));
        // Past the floor, strings nobody holds go before the table grows.
        let held: Vec<Arc<str>> = (0..PRUNE_FLOOR)
            .map(|i| strings.get(&format!("h{i}")))
            .collect();
        let _ = strings.get("one more");
        assert_eq!(strings.len(), PRUNE_FLOOR + 1, "the unused string was kept");
        drop(held);
    }
}
