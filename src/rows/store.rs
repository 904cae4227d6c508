//! How the row cache holds its rows compactly: dense in a vector, with one
//! copy of each node's name (the table of positions hashes the name inside
//! the row), and one shared copy of the strings that repeat across nodes
//! (revision hash, phase, problem, pool, zone, taints). Pure data
//! structures; no I/O.

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;

use super::NodeRow;

/// The rows, dense in a vector, found by name through a table of their
/// positions (4 bytes a slot, keyed by the name inside the row: no second
/// copy of it). A hash set of whole rows left half its slots empty at the
/// size of a row (~10 MB at 65,000 nodes); boxed rows cost every whole-row
/// pass a pointer chase. Here whole-row passes walk the vector.
#[derive(Clone, Default)]
pub(super) struct RowSet {
    rows: Vec<NodeRow>,
    positions: HashTable<u32>,
    hasher: foldhash::fast::FixedState,
}

impl std::fmt::Debug for RowSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.rows).finish()
    }
}

impl RowSet {
    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    fn position(&self, node: &str) -> Option<usize> {
        let rows = &self.rows;
        self.positions
            .find(self.hash(node), |&at| rows[at as usize].name() == node)
            .map(|&at| at as usize)
    }

    /// The row of `node`.
    pub(super) fn get(&self, node: &str) -> Option<&NodeRow> {
        self.position(node).map(|at| &self.rows[at])
    }

    /// An empty set with room for `rows` rows.
    pub(super) fn with_capacity(rows: usize) -> Self {
        let mut set = RowSet::default();
        set.rows.reserve_exact(rows);
        set
    }

    /// Inserts `row`, returning the row it replaces (same node name).
    pub(super) fn insert(&mut self, row: NodeRow) -> Option<NodeRow> {
        if let Some(at) = self.position(row.name()) {
            return Some(std::mem::replace(&mut self.rows[at], row));
        }
        let at = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
        let hash = self.hash(row.name());
        self.rows.push(row);
        let (rows, hasher) = (&self.rows, &self.hasher);
        self.positions
            .insert_unique(hash, at, |&p| hasher.hash_one(rows[p as usize].name()));
        None
    }

    /// Removes the row of `node` (the last row moves into its place).
    pub(super) fn remove(&mut self, node: &str) -> Option<NodeRow> {
        let hash = self.hash(node);
        let rows = &self.rows;
        let entry = self
            .positions
            .find_entry(hash, |&at| rows[at as usize].name() == node)
            .ok()?;
        let (at, _) = entry.remove();
        let removed = self.rows.swap_remove(at as usize);
        if let Some(moved) = self.rows.get(at as usize) {
            let last = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
            let moved_hash = self.hash(moved.name());
            if let Some(slot) = self.positions.find_mut(moved_hash, |&p| p == last) {
                *slot = at;
            }
        }
        Some(removed)
    }

    /// Whether `node` has a row.
    pub(super) fn contains(&self, node: &str) -> bool {
        self.position(node).is_some()
    }

    /// Every row, in no particular order.
    pub(super) fn values(&self) -> impl Iterator<Item = &NodeRow> {
        self.rows.iter()
    }

    /// How many rows.
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

impl FromIterator<NodeRow> for RowSet {
    fn from_iter<I: IntoIterator<Item = NodeRow>>(rows: I) -> Self {
        let rows = rows.into_iter();
        let mut set = RowSet::with_capacity(rows.size_hint().0);
        for row in rows {
            set.insert(row);
        }
        set
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
    use crate::engine::coverage::NodeCoverage;
    use crate::engine::eligibility::NodeVerdict;
    use crate::rows::RowState;
    use proptest::prelude::*;

    fn row(name: &str, cordoned: bool) -> NodeRow {
        NodeRow {
            coverage: NodeCoverage {
                node: name.into(),
                verdict: NodeVerdict::eligible(),
                pods: Vec::new(),
            },
            state: RowState::Missing,
            node_ready: None,
            cordoned,
            taints: Box::default(),
            pool: None,
            zone: None,
            group_key: None,
            control_plane: false,
            kubelet_minor: None,
            event: None,
            fit: None,
        }
    }

    proptest! {
        /// Inserts, replacements and removals (each removal moves the last
        /// row into the gap) leave the set equal to a plain map's answer.
        #[test]
        fn the_dense_row_set_answers_as_a_map(
            steps in proptest::collection::vec((0u8..3, 0u8..24, any::<bool>()), 0..200)
        ) {
            let mut set = RowSet::default();
            let mut model = std::collections::BTreeMap::new();
            for (op, node, flag) in steps {
                let name = format!("node-{node}");
                if op == 0 {
                    let removed = set.remove(&name).map(|r| r.cordoned);
                    prop_assert_eq!(removed, model.remove(&name));
                } else {
                    let replaced = set.insert(row(&name, flag)).map(|r| r.cordoned);
                    prop_assert_eq!(replaced, model.insert(name, flag));
                }
                prop_assert_eq!(set.len(), model.len());
                for node in 0..24 {
                    let name = format!("node-{node}");
                    prop_assert_eq!(set.get(&name).map(|r| r.cordoned), model.get(&name).copied());
                    prop_assert_eq!(set.contains(&name), model.contains_key(&name));
                }
                let mut names: Vec<&str> = set.values().map(NodeRow::name).collect();
                names.sort_unstable();
                let expected: Vec<&str> = model.keys().map(String::as_str).collect();
                prop_assert_eq!(names, expected);
            }
        }
    }

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
