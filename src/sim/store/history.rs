//! The change history: a bounded window of recent events, shared by `Arc`
//! between every subscriber. Watches replay from it (a resourceVersion older
//! than the window is `Gone`, which the HTTP layer turns into a 410 ERROR
//! event), and live subscribers read from it too, so fanning one change out to
//! N watchers shares the one object. An event keeps no watch line of its own:
//! each watcher splices one as it sends (a copy of a few KB, freed once
//! sent); a line kept with every event doubled what the history holds (at
//! 65,000 nodes ~6 KB more an event, 100,000 events under churn).

use std::collections::VecDeque;
use std::sync::Arc;

use super::object::StoredObject;
use crate::sim::resources::ResourceKind;

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed (including a pod marked for graceful deletion).
    Modified,
    /// Removed; the object is its last state with the deletion's resourceVersion.
    Deleted,
}

impl EventType {
    /// The watch `type` string (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change to the store. Immutable and shared.
#[derive(Debug)]
pub struct StoreEvent {
    /// The kind of the changed object.
    pub kind: ResourceKind,
    /// Added, modified or deleted.
    pub event_type: EventType,
    /// The object after the change (for deletes, its last state).
    pub object: Arc<StoredObject>,
    /// The object before the change (`None` for creates), so a filtered
    /// watch can tell an object that stopped matching from one it never saw.
    pub previous: Option<Arc<StoredObject>>,
    /// The resourceVersion of the change (equals the object's).
    pub resource_version: u64,
}

impl StoreEvent {
    /// A new event.
    pub fn new(
        kind: ResourceKind,
        event_type: EventType,
        object: Arc<StoredObject>,
        previous: Option<Arc<StoredObject>>,
    ) -> StoreEvent {
        StoreEvent {
            kind,
            event_type,
            previous,
            resource_version: object.resource_version,
            object,
        }
    }
}

/// The bounded event window.
#[derive(Debug)]
pub struct History {
    events: VecDeque<Arc<StoreEvent>>,
    limit: usize,
    /// Changes at or below this resourceVersion can no longer be replayed.
    compacted_through: u64,
}

impl History {
    /// An empty window holding at most `limit` events.
    pub fn new(limit: usize) -> History {
        History {
            events: VecDeque::new(),
            limit: limit.max(1),
            compacted_through: 0,
        }
    }

    /// Appends an event, dropping the oldest beyond the limit.
    pub fn push(&mut self, event: Arc<StoreEvent>) {
        if self.events.len() >= self.limit
            && let Some(dropped) = self.events.pop_front()
        {
            self.compacted_through = dropped.resource_version;
        }
        self.events.push_back(event);
    }

    /// Changes how many events the window holds, dropping the oldest beyond it.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.max(1);
        while self.events.len() > self.limit
            && let Some(dropped) = self.events.pop_front()
        {
            self.compacted_through = dropped.resource_version;
        }
    }

    /// Forgets every event up to `resource_version` (tests use this to force 410s).
    pub fn compact_through(&mut self, resource_version: u64) {
        while self
            .events
            .front()
            .is_some_and(|e| e.resource_version <= resource_version)
        {
            self.events.pop_front();
        }
        self.compacted_through = self.compacted_through.max(resource_version);
    }

    /// The oldest resourceVersion a watch may start from and still see every
    /// later change.
    pub fn oldest_replayable(&self) -> u64 {
        self.compacted_through
    }

    /// Events with a resourceVersion above `after`, or `None` when some of
    /// them were already dropped (the caller is too far behind: Gone).
    pub fn since(&self, after: u64) -> Option<Vec<Arc<StoreEvent>>> {
        if after < self.compacted_through {
            return None;
        }
        let start = self.events.partition_point(|e| e.resource_version <= after);
        Some(self.events.range(start..).cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(rv: u64) -> Arc<StoreEvent> {
        let obj = json!({"metadata":{"name":"n","resourceVersion":rv.to_string()}});
        let stored = StoredObject::from_value(ResourceKind::Node, &obj).unwrap();
        Arc::new(StoreEvent::new(
            ResourceKind::Node,
            EventType::Added,
            Arc::new(stored),
            None,
        ))
    }

    #[test]
    fn replays_after_a_version_and_reports_gone_beyond_the_window() {
        let mut history = History::new(3);
        for rv in 1..=5 {
            history.push(event(rv));
        }
        assert_eq!(history.oldest_replayable(), 2);
        let rvs =
            |v: Vec<Arc<StoreEvent>>| v.iter().map(|e| e.resource_version).collect::<Vec<_>>();
        assert_eq!(rvs(history.since(2).unwrap()), vec![3, 4, 5]);
        assert_eq!(rvs(history.since(5).unwrap()), Vec::<u64>::new());
        assert!(history.since(1).is_none());
        history.set_limit(2);
        assert!(history.since(2).is_none());
        assert_eq!(rvs(history.since(3).unwrap()), vec![4, 5]);
        history.compact_through(5);
        assert!(history.since(4).is_none());
        assert!(history.since(5).unwrap().is_empty());
    }
}
