//! The grid's order: which rows pass the filter, in which groups, sorted how.
//! Rebuilt from the row cache only when membership or an ordering field
//! changed, or the user changed sort, group or filter; a few changed rows are
//! moved in place instead (`index_update.rs`). Pure.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use compact_str::CompactString;

use crate::cluster::cache::Cache;
use crate::engine::selector::Selector;

use crate::rows::{NodeRow, RowCache};

/// Sort orders, cycled with `s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// Node name (numbers in names compare as numbers).
    #[default]
    Name,
    /// Revision, oldest first, nodes without a pod last.
    Revision,
    /// Worst state first.
    State,
    /// Pod age, oldest first.
    Age,
}

impl SortKey {
    /// The next order.
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::Name => Self::Revision,
            Self::Revision => Self::State,
            Self::State => Self::Age,
            Self::Age => Self::Name,
        }
    }

    /// Label for the status line.
    pub fn label(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::Revision => "revision",
            Self::State => "state",
            Self::Age => "age",
        }
    }
}

/// Groupings, cycled with `o`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupKey {
    /// One flat list.
    #[default]
    None,
    /// By the revision the node's pod runs.
    Revision,
    /// By pool and zone labels.
    PoolZone,
    /// By state.
    State,
}

impl GroupKey {
    /// The next grouping.
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::None => Self::Revision,
            Self::Revision => Self::PoolZone,
            Self::PoolZone => Self::State,
            Self::State => Self::None,
        }
    }

    /// Label for the status line.
    pub fn label(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Revision => "revision",
            Self::PoolZone => "pool/zone",
            Self::State => "state",
        }
    }
}

/// The grid filter.
#[derive(Clone, Debug, Default)]
pub enum Filter {
    /// Every node.
    #[default]
    None,
    /// Node names containing this text (lowercase).
    Substring(String),
    /// Nodes whose labels match a kubectl-style selector.
    Labels(Selector),
}

impl Filter {
    /// Parses what the user typed: a label selector when it has selector
    /// syntax (`=`, `!`, `(`), else a name substring.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Self::None);
        }
        if text.contains(['=', '!', '(']) {
            return Selector::parse(text)
                .map(Self::Labels)
                .map_err(|err| format!("bad label selector {text:?}: {err}"));
        }
        Ok(Self::Substring(text.to_lowercase()))
    }

    /// Whether a filter is set.
    pub fn is_active(&self) -> bool {
        !matches!(self, Self::None)
    }

    /// Whether a node's row passes.
    pub(super) fn keeps(&self, row: &NodeRow, cache: &Cache) -> bool {
        match self {
            Self::None => true,
            Self::Substring(text) => row.name().to_lowercase().contains(text.as_str()),
            Self::Labels(selector) => selector.matches(cache.node(row.name()).map(|n| &n.labels)),
        }
    }
}

/// One line of the grid: a group heading or a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A group heading with the number of nodes in the group.
    Heading {
        /// What the group has in common.
        label: String,
        /// Nodes in it.
        count: usize,
    },
    /// A node row, by node name (inline up to 24 bytes: no allocation per row).
    Row(CompactString),
}

/// The ordered grid lines and where the node rows are among them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GridIndex {
    /// Headings and rows, in display order.
    pub entries: Vec<Entry>,
    /// Positions in `entries` of node rows (what the selection moves over).
    pub rows: Vec<usize>,
}

impl GridIndex {
    /// Builds the order from the rows. Rows are visited in the cached natural
    /// name order and stably sorted by small integer keys, so names are never
    /// compared here (at 65,000 nodes that is what keeps a re-sort cheap).
    pub fn build(
        rows: &RowCache,
        cache: &Cache,
        sort: SortKey,
        group: GroupKey,
        filter: &Filter,
    ) -> Self {
        let mut groups: BTreeMap<(i64, String), u32> = BTreeMap::new();
        let mut kept: Vec<(u32, i64, &str)> = Vec::with_capacity(rows.len());
        let mut labels: Vec<String> = Vec::new();
        for row in rows.in_name_order().filter(|row| filter.keeps(row, cache)) {
            let (rank, label) = group_of(row, group);
            let next = u32::try_from(labels.len()).unwrap_or(u32::MAX);
            let id = *groups.entry(rank).or_insert_with(|| {
                labels.push(label);
                next
            });
            kept.push((id, sort_value(row, sort), row.name()));
        }
        // Group ids in rank order, so groups sort by rank, not by first appearance.
        let mut group_order = vec![0_u32; labels.len()];
        for (position, id) in groups.values().enumerate() {
            group_order[*id as usize] = u32::try_from(position).unwrap_or(u32::MAX);
        }
        kept.sort_by_key(|&(id, value, _)| (group_order[id as usize], value));
        let mut index = Self::default();
        let mut current = None;
        for (position, &(id, _, name)) in kept.iter().enumerate() {
            if group != GroupKey::None && current != Some(id) {
                let count = kept[position..]
                    .iter()
                    .take_while(|(g, _, _)| *g == id)
                    .count();
                index.entries.push(Entry::Heading {
                    label: labels[id as usize].clone(),
                    count,
                });
                current = Some(id);
            }
            index.rows.push(index.entries.len());
            index.entries.push(Entry::Row(name.into()));
        }
        index
    }

    /// Where a node is among the selectable rows.
    pub fn position_of(&self, node: &str) -> Option<usize> {
        self.rows
            .iter()
            .position(|&at| matches!(&self.entries[at], Entry::Row(name) if name == node))
    }

    /// The node at a selectable position.
    pub fn node_at(&self, position: usize) -> Option<&str> {
        match self.entries.get(*self.rows.get(position)?)? {
            Entry::Row(name) => Some(name),
            Entry::Heading { .. } => None,
        }
    }
}

/// A row's group: its rank (what groups sort by) and its heading.
pub(super) fn group_of(row: &NodeRow, group: GroupKey) -> ((i64, String), String) {
    match group {
        GroupKey::None => ((0, String::new()), String::new()),
        GroupKey::Revision => match row.pod().map(|p| (p.revision, p.updated)) {
            Some((Some(number), true)) => (
                (-number, String::new()),
                format!("revision {number} (current)"),
            ),
            Some((Some(number), false)) => ((-number, String::new()), format!("revision {number}")),
            Some((None, _)) => ((i64::MAX - 1, String::new()), "unknown revision".to_owned()),
            None => ((i64::MAX, String::new()), "no pod".to_owned()),
        },
        GroupKey::PoolZone => {
            let pool = row.pool.as_deref().unwrap_or("-");
            let zone = row.zone.as_deref().unwrap_or("-");
            let label = format!("pool {pool} · zone {zone}");
            ((0, label.clone()), label)
        }
        GroupKey::State => (
            (row.state as i64, String::new()),
            row.state.label().to_owned(),
        ),
    }
}

/// A row's value for a sort order (ties keep name order: the sort is stable).
pub(super) fn sort_value(row: &NodeRow, sort: SortKey) -> i64 {
    match sort {
        SortKey::Name => 0,
        // Oldest revision first; nodes without a pod (or revision) last.
        SortKey::Revision => row.pod().and_then(|p| p.revision).unwrap_or(i64::MAX),
        SortKey::State => row.state as i64,
        // Oldest pod first; nodes without a pod last.
        SortKey::Age => row
            .pod()
            .and_then(|p| p.created)
            .map_or(i64::MAX, |created| created.timestamp().as_second()),
    }
}

/// Compares names with runs of digits as numbers (`node-2` before `node-10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let db = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (trim_zeros(&a[..da]), trim_zeros(&b[..db]));
                let order = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
                if order != Ordering::Equal {
                    return order;
                }
                a = &a[da..];
                b = &b[db..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let start = digits.iter().take_while(|&&c| c == b'0').count();
    &digits[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_of_names() {
        let mut names = vec!["node-10", "node-2", "node-1", "alpha", "node-02a"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, ["alpha", "node-1", "node-2", "node-02a", "node-10"]);
    }

    #[test]
    fn natural_key_orders_like_natural_cmp() {
        use crate::rows::natural_key;
        let names = [
            "node-10", "node-2", "node-1", "alpha", "node-02a", "a9b", "a10", "x",
        ];
        for a in names {
            for b in names {
                assert_eq!(
                    natural_key(a).cmp(&natural_key(b)),
                    natural_cmp(a, b),
                    "{a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn filter_parses_selector_or_substring() {
        assert!(matches!(Filter::parse(""), Ok(Filter::None)));
        assert!(matches!(Filter::parse("GPU"), Ok(Filter::Substring(s)) if s == "gpu"));
        assert!(matches!(Filter::parse("pool=gpu"), Ok(Filter::Labels(_))));
        assert!(Filter::parse("pool in (a").is_err());
    }
}
