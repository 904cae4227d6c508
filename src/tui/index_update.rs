//! Keeping the grid's order up to date one changed row at a time: the row
//! leaves its place (and its group heading, when it was the last of its
//! group) and is put back where a full [`GridIndex::build`] would put it,
//! found by binary search over the ordered rows. Pure; the property test
//! below checks it against a full rebuild.

use std::cmp::Ordering;

use crate::cluster::cache::Cache;

use super::index::{
    Entry, Filter, GridIndex, GroupKey, SortKey, group_of, natural_cmp, sort_value,
};
use crate::rows::{NodeRow, RowCache};

/// Above this many changed rows a full rebuild is cheaper than moving each
/// row (each move shifts the entries after it).
pub const INCREMENTAL_LIMIT: usize = 64;

/// How a row compares in the grid's order: group rank, sort value, name.
struct OrderKey<'a> {
    rank: (i64, String),
    label: String,
    value: i64,
    name: &'a str,
}

impl<'a> OrderKey<'a> {
    fn of(row: &'a NodeRow, sort: SortKey, group: GroupKey) -> Self {
        let (rank, label) = group_of(row, group);
        OrderKey {
            rank,
            label,
            value: sort_value(row, sort),
            name: row.name(),
        }
    }

    fn cmp(&self, other: &OrderKey<'_>) -> Ordering {
        self.rank
            .cmp(&other.rank)
            .then(self.value.cmp(&other.value))
            .then_with(|| natural_cmp(self.name, other.name))
            .then_with(|| self.name.cmp(other.name))
    }
}

impl GridIndex {
    /// Moves each of the `changed` nodes' rows to where a full build with the
    /// same sort, group and filter would put it (removing rows that are gone
    /// or filtered out, adding rows that now pass). `rows` and `cache` are
    /// the state after the change; every other row must be unchanged.
    pub fn update<'n>(
        &mut self,
        rows: &RowCache,
        cache: &Cache,
        order: (SortKey, GroupKey),
        filter: &Filter,
        changed: impl IntoIterator<Item = &'n str>,
    ) {
        let (sort, group) = order;
        for name in changed {
            self.remove_row(name, group);
            if let Some(row) = rows.get(name).filter(|row| filter.keeps(row, cache)) {
                self.insert_row(&OrderKey::of(row, sort, group), rows, sort, group);
            }
        }
    }

    fn key_at<'r>(
        &self,
        position: usize,
        rows: &'r RowCache,
        sort: SortKey,
        group: GroupKey,
    ) -> Option<OrderKey<'r>> {
        match &self.entries[self.rows[position]] {
            Entry::Row(name) => rows.get(name).map(|row| OrderKey::of(row, sort, group)),
            Entry::Heading { .. } => None,
        }
    }

    fn remove_row(&mut self, name: &str, group: GroupKey) {
        let Some(position) = self.position_of(name) else {
            return;
        };
        let at = self.rows.remove(position);
        self.entries.remove(at);
        let mut shift = 1;
        if group != GroupKey::None
            && let Some(heading) = self.entries[..at]
                .iter()
                .rposition(|e| matches!(e, Entry::Heading { .. }))
            && let Entry::Heading { count, .. } = &mut self.entries[heading]
        {
            *count -= 1;
            if *count == 0 {
                self.entries.remove(heading);
                shift += 1;
            }
        }
        for later in &mut self.rows[position..] {
            *later -= shift;
        }
    }

    fn insert_row(&mut self, key: &OrderKey<'_>, rows: &RowCache, sort: SortKey, group: GroupKey) {
        let position = self.rows.partition_point(|&at| match &self.entries[at] {
            Entry::Row(name) => rows
                .get(name)
                .is_some_and(|row| OrderKey::of(row, sort, group).cmp(key) == Ordering::Less),
            Entry::Heading { .. } => true,
        });
        let same_group = |at: usize| {
            self.key_at(at, rows, sort, group)
                .is_some_and(|other| other.rank == key.rank)
        };
        let (at, added) = if group == GroupKey::None {
            (self.row_slot(position), 1)
        } else if position > 0 && same_group(position - 1) {
            self.count_in(self.rows[position - 1]);
            (self.rows[position - 1] + 1, 1)
        } else if position < self.rows.len() && same_group(position) {
            self.count_in(self.rows[position]);
            (self.rows[position], 1)
        } else {
            // A new group, just before the next group's heading.
            let heading = match self.rows.get(position) {
                Some(&next) => next - 1,
                None => self.entries.len(),
            };
            self.entries.insert(
                heading,
                Entry::Heading {
                    label: key.label.clone(),
                    count: 1,
                },
            );
            (heading + 1, 2)
        };
        self.entries.insert(at, Entry::Row(key.name.into()));
        for later in &mut self.rows[position..] {
            *later += added;
        }
        self.rows.insert(position, at);
    }

    /// Where a row goes in `entries` when it takes selectable `position`, without groups.
    fn row_slot(&self, position: usize) -> usize {
        self.rows
            .get(position)
            .copied()
            .unwrap_or(self.entries.len())
    }

    /// Counts one more row in the group of the row at entry `at`.
    fn count_in(&mut self, at: usize) {
        if let Some(heading) = self.entries[..at]
            .iter()
            .rposition(|e| matches!(e, Entry::Heading { .. }))
            && let Entry::Heading { count, .. } = &mut self.entries[heading]
        {
            *count += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::watcher;
    use proptest::prelude::*;

    use super::super::app::App;
    use super::super::fixtures::{grid_streams_started, list, now};
    use super::super::view_model::ConsoleInfo;
    use super::*;
    use crate::cluster::cache::WatchUpdate;
    use crate::engine::fixtures::{daemonset, node, pod, revision_of};
    use crate::model::{Node, Pod};

    const NODES: usize = 24;

    fn node_named(i: usize, pool: usize) -> Node {
        node(&format!("node-{i}"))
            .label("node-pool", &format!("pool-{pool}"))
            .label("topology.kubernetes.io/zone", &format!("zone-{}", i % 2))
            .build()
    }

    /// A pod on node `i`: revision (h1/h2), creation second and health from `shape`.
    fn pod_on(i: usize, shape: u8) -> Pod {
        let hash = if shape & 1 == 0 { "h1" } else { "h2" };
        let builder = pod(&format!("agent-{i}"), &format!("node-{i}"), hash)
            .created(100 + i64::from(shape % 3));
        match (shape >> 1) % 3 {
            0 => builder.ready_since(110).build(),
            1 => builder
                .phase("Running")
                .waiting("CrashLoopBackOff", i32::from(shape))
                .build(),
            _ => builder.phase("Pending").build(),
        }
    }

    fn cluster() -> Cache {
        let mut cache = grid_streams_started();
        let v1 = daemonset("registry.example/agent:v1").on_delete().build();
        let v2 = daemonset("registry.example/agent:v2").on_delete().build();
        list(
            &mut cache,
            WatchUpdate::Node,
            (0..NODES).map(|i| node_named(i, i % 3)).collect(),
        );
        list(&mut cache, WatchUpdate::DaemonSet, vec![v2.clone()]);
        list(
            &mut cache,
            WatchUpdate::Revision,
            vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)],
        );
        list(
            &mut cache,
            WatchUpdate::Pod,
            (0..NODES)
                .filter(|i| i % 5 != 0)
                .map(|i| pod_on(i, u8::try_from(i % 7).unwrap_or(0)))
                .collect(),
        );
        cache
    }

    /// One watch event: a pod changes shape, a pod goes away, or a node moves pool.
    #[derive(Clone, Debug)]
    enum Change {
        Pod(usize, u8),
        DeletePod(usize),
        Pool(usize, usize),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            (0..NODES, any::<u8>()).prop_map(|(i, s)| Change::Pod(i, s)),
            (0..NODES).prop_map(Change::DeletePod),
            (0..NODES, 0..4_usize).prop_map(|(i, p)| Change::Pool(i, p)),
        ]
    }

    fn apply(cache: &mut Cache, change: &Change) {
        let update = match change {
            Change::Pod(i, shape) => WatchUpdate::Pod(watcher::Event::Apply(pod_on(*i, *shape))),
            Change::DeletePod(i) => WatchUpdate::Pod(watcher::Event::Delete(pod_on(*i, 0))),
            Change::Pool(i, pool) => {
                WatchUpdate::Node(watcher::Event::Apply(node_named(*i, *pool)))
            }
        };
        cache.apply(update, now());
    }

    const SORTS: [SortKey; 4] = [
        SortKey::Name,
        SortKey::Revision,
        SortKey::State,
        SortKey::Age,
    ];
    const GROUPS: [GroupKey; 4] = [
        GroupKey::None,
        GroupKey::Revision,
        GroupKey::PoolZone,
        GroupKey::State,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// After every event, the order the console keeps equals a full rebuild,
        /// for every sort, grouping and kind of filter.
        #[test]
        fn incremental_order_equals_a_full_rebuild(
            sort in 0..4_usize,
            group in 0..4_usize,
            filter in prop_oneof![Just(""), Just("1"), Just("node-pool=pool-1")],
            changes in proptest::collection::vec(change(), 1..40),
        ) {
            let mut cache = cluster();
            let mut app = App::new(ConsoleInfo::default(), crate::model::Target::from_key("kube-system/agent"), (200, 60));
            app.refresh(&mut cache, now());
            app.ui.sort = SORTS[sort];
            app.ui.group = GROUPS[group];
            app.ui.filter = Filter::parse(filter).unwrap();
            app.rebuild_index(&cache);
            for change in &changes {
                apply(&mut cache, change);
                app.refresh(&mut cache, now());
                let rebuilt = GridIndex::build(&app.rows, &cache, app.ui.sort, app.ui.group, &app.ui.filter);
                prop_assert_eq!(&app.index, &rebuilt, "after {:?}", change);
            }
        }
    }
}
