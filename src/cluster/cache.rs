//! The console's cache of cluster state: slim objects from the watch streams,
//! indexed by node, the per-stream connection state, and the set of things
//! that changed since the reader last looked.
//!
//! Synchronous and clock-free: the watch task applies each watcher event with
//! the time it saw it; the console takes the change set and pulls what it
//! needs. This module does no I/O and decides nothing about what to show.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use kube::runtime::watcher;

use super::node_pods::NodePods;
use super::status::{StreamKind, StreamStatus};
use super::store::{Applied, EventStore, KindStore, ObjectKey, map_event};
use super::usage::{NodeUsage, UsageChange, UsageStore};
use crate::model::{
    ControllerRevision, DaemonSet, Event, Node, Pod, Target, UsagePod, slim_metadata,
};

/// Whether a relist changed so many of `total` objects that recomputing
/// every row is cheaper than naming each (the first list changes them all).
fn many(changed: usize, total: usize) -> bool {
    changed > total / 2
}

/// One watcher event of any of the watched kinds (the merged stream's item).
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "each item is moved once from the stream into the cache; boxing would allocate per node and pod event"
)]
pub enum WatchUpdate {
    /// A node event.
    Node(watcher::Event<Node>),
    /// A DaemonSet event.
    DaemonSet(watcher::Event<DaemonSet>),
    /// A pod event (the target DaemonSet's pods).
    Pod(watcher::Event<Pod>),
    /// A ControllerRevision event (the target's).
    Revision(watcher::Event<ControllerRevision>),
    /// An event about one of the target's pods.
    PodEvent(watcher::Event<Event>),
    /// An event about a node.
    NodeEvent(watcher::Event<Event>),
    /// A pod of any namespace, as what it takes from its node.
    Usage(watcher::Event<UsagePod>),
    /// A stream failed; the watcher retries with backoff.
    Error(StreamKind, String),
    /// A bookmark arrived: the stream is alive and caught up.
    Alive(StreamKind),
    /// The list being loaded will hold about this many objects.
    Expecting(StreamKind, u64),
    /// Nothing arrived for this long (past the expected bookmark interval);
    /// the watch is being restarted.
    Stalled(StreamKind, std::time::Duration),
    /// The server answered 429; the stream retries after this long.
    Throttled(StreamKind, std::time::Duration),
    /// The server went backwards or was replaced (said in words); everything
    /// is re-listed.
    ServerChanged(StreamKind, String),
    /// The server forbids this user the kind (403, in words): the stream
    /// stopped for good and the view goes without it.
    Forbidden(StreamKind, String),
}

/// What changed since the reader last took the change set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent change markers, each read on its own"
)]
pub struct Changes {
    /// Every node row must be recomputed (a relist, the DaemonSet or its revisions changed).
    pub all_nodes: bool,
    /// Nodes whose node object, pods or events changed.
    pub nodes: HashSet<ObjectKey>,
    /// Some DaemonSet changed (the target's header, or the picker list).
    pub daemonsets: bool,
    /// The ControllerRevisions changed.
    pub revisions: bool,
    /// A stream's connection state changed.
    pub streams: bool,
}

impl Changes {
    /// Whether anything changed at all.
    pub fn is_empty(&self) -> bool {
        !self.all_nodes
            && self.nodes.is_empty()
            && !self.daemonsets
            && !self.revisions
            && !self.streams
    }
}

/// The cache the watch task writes and the console reads.
#[derive(Debug, Default)]
pub struct Cache {
    nodes: KindStore<Node>,
    daemonsets: KindStore<DaemonSet>,
    pods: KindStore<Pod>,
    revisions: KindStore<ControllerRevision>,
    pod_events: EventStore,
    node_events: EventStore,
    /// Every counted pod of the cluster by node, with totals (fit's input).
    usage: UsageStore,
    /// Node name to the keys of the pods bound to it.
    pods_by_node: NodePods,
    streams: BTreeMap<StreamKind, StreamStatus>,
    changes: Changes,
    /// The last "the server changed" notice and when.
    notice: Option<(String, jiff::Timestamp)>,
    /// Why every stream must re-list (taken by the watch task).
    relist: Option<String>,
    /// Object events applied so far (what a benchmark reports as absorbed).
    applied: u64,
}

impl Cache {
    /// An empty cache with no stream started.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one watcher event seen at `now`.
    pub fn apply(&mut self, update: WatchUpdate, now: jiff::Timestamp) {
        let object = matches!(
            update,
            WatchUpdate::Node(_)
                | WatchUpdate::DaemonSet(_)
                | WatchUpdate::Pod(_)
                | WatchUpdate::Revision(_)
                | WatchUpdate::PodEvent(_)
                | WatchUpdate::NodeEvent(_)
                | WatchUpdate::Usage(_)
        );
        self.applied += u64::from(object);
        match update {
            WatchUpdate::Node(event) => self.apply_node(event, now),
            WatchUpdate::DaemonSet(event) => self.apply_daemonset(event, now),
            WatchUpdate::Pod(event) => self.apply_pod(event, now),
            WatchUpdate::Revision(event) => self.apply_revision(event, now),
            WatchUpdate::PodEvent(event) => self.apply_event(StreamKind::PodEvents, event, now),
            WatchUpdate::NodeEvent(event) => self.apply_event(StreamKind::NodeEvents, event, now),
            WatchUpdate::Usage(event) => self.apply_usage(event, now),
            WatchUpdate::Error(kind, message) => {
                self.streams.entry(kind).or_default().failed(message, now);
                self.changes.streams = true;
            }
            WatchUpdate::Alive(kind) => {
                if self.streams.entry(kind).or_default().alive() {
                    self.changes.streams = true;
                }
            }
            WatchUpdate::Expecting(kind, total) => {
                self.streams.entry(kind).or_default().expecting(total);
                self.changes.streams = true;
            }
            WatchUpdate::Stalled(kind, silent_for) => {
                let last = now.checked_sub(silent_for).unwrap_or(now);
                let message = format!(
                    "no data for {}s, watch stalled, restarting",
                    silent_for.as_secs()
                );
                self.streams.entry(kind).or_default().stalled(message, last);
                self.changes.streams = true;
            }
            WatchUpdate::Throttled(kind, retry_in) => {
                let retry_at = now.checked_add(retry_in).unwrap_or(now);
                self.streams
                    .entry(kind)
                    .or_default()
                    .throttled(retry_at, now);
                self.changes.streams = true;
            }
            WatchUpdate::ServerChanged(_, message) => self.server_changed(message, now),
            WatchUpdate::Forbidden(kind, message) => {
                self.streams.entry(kind).or_default().forbid(message);
                self.changes.streams = true;
                // Without nodes, the rows come from the pods' node names;
                // without usage, every row's fit becomes unknown.
                self.changes.all_nodes |= matches!(kind, StreamKind::Nodes | StreamKind::NodeUsage);
            }
        }
    }

    /// Whether the server forbids this user the kind (its stream stopped).
    pub fn forbidden(&self, kind: StreamKind) -> bool {
        self.streams
            .get(&kind)
            .is_some_and(|status| status.forbidden().is_some())
    }

    /// The kinds the server forbids this user, in the console's order.
    pub fn forbidden_kinds(&self) -> Vec<StreamKind> {
        self.streams
            .iter()
            .filter(|(_, status)| status.forbidden().is_some())
            .map(|(kind, _)| *kind)
            .collect()
    }

    /// Names of the nodes the target's pods are bound to (the rows when nodes
    /// cannot be read).
    pub fn pod_node_names(&self) -> impl Iterator<Item = &str> {
        self.pods_by_node.nodes()
    }

    /// Records that the server changed identity or went backwards: every
    /// stream must re-list, and the console says so.
    fn server_changed(&mut self, message: String, now: jiff::Timestamp) {
        // Everything held came from the old server: stale until re-listed.
        for status in self.streams.values_mut() {
            status.failed("the server changed, relisting".into(), now);
        }
        self.relist = Some(message.clone());
        self.notice = Some((message, now));
        self.changes.streams = true;
    }

    /// Why every stream must re-list now, if it must (the watch task takes it).
    pub fn take_relist(&mut self) -> Option<String> {
        self.relist.take()
    }

    /// The last "the server changed" notice and when it was noticed.
    pub fn notice(&self) -> Option<(&str, jiff::Timestamp)> {
        self.notice.as_ref().map(|(text, at)| (text.as_str(), *at))
    }

    /// Marks a stream as started (its initial list is being fetched).
    pub fn stream_started(&mut self, kind: StreamKind) {
        self.streams.insert(kind, StreamStatus::default());
        self.changes.streams = true;
    }

    /// Forgets the target's streams and objects (another DaemonSet was picked).
    pub fn reset_target(&mut self) {
        self.pods = KindStore::default();
        self.revisions = KindStore::default();
        self.pod_events = EventStore::default();
        self.pods_by_node.clear();
        for kind in [
            StreamKind::Pods,
            StreamKind::Revisions,
            StreamKind::PodEvents,
        ] {
            self.streams.remove(&kind);
        }
        self.changes.all_nodes = true;
        self.changes.revisions = true;
        self.changes.streams = true;
    }

    /// How many object events (of any watched kind, list items included)
    /// have been applied.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The change set gathered so far (what the next [`Cache::take_changes`] returns).
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Takes the change set, leaving it empty.
    pub fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }

    /// The connection state of each started stream.
    pub fn streams(&self) -> &BTreeMap<StreamKind, StreamStatus> {
        &self.streams
    }

    /// The earliest "stale since" among `kinds` (and which stream), or `None`
    /// when all of them are fresh: what a gate checks before judging pods.
    pub fn stale_since(&self, kinds: &[StreamKind]) -> Option<(StreamKind, jiff::Timestamp)> {
        kinds
            .iter()
            .filter_map(|kind| {
                let since = self.streams.get(kind)?.stale_since()?;
                Some((*kind, since))
            })
            .min_by_key(|(_, since)| *since)
    }

    /// How many objects of a kind are held (or listed so far, during a list).
    pub fn count(&self, kind: StreamKind) -> usize {
        match kind {
            StreamKind::Nodes => self.nodes.len(),
            StreamKind::DaemonSets => self.daemonsets.len(),
            StreamKind::Pods => self.pods.len(),
            StreamKind::Revisions => self.revisions.len(),
            StreamKind::PodEvents => self.pod_events.store.len(),
            StreamKind::NodeEvents => self.node_events.store.len(),
            StreamKind::NodeUsage => self.usage.len(),
        }
    }

    /// While `kind` re-lists and the server counted the list: the share
    /// listed so far, in percent (the previous objects are shown meanwhile).
    pub fn relist_percent(&self, kind: StreamKind) -> Option<u64> {
        let so_far = match kind {
            StreamKind::Nodes => self.nodes.relisted_so_far(),
            StreamKind::DaemonSets => self.daemonsets.relisted_so_far(),
            StreamKind::Pods => self.pods.relisted_so_far(),
            StreamKind::Revisions => self.revisions.relisted_so_far(),
            StreamKind::PodEvents => self.pod_events.store.relisted_so_far(),
            StreamKind::NodeEvents => self.node_events.store.relisted_so_far(),
            StreamKind::NodeUsage => self.usage.relisted_so_far(),
        }? as u64;
        let total = self.streams.get(&kind)?.expected()?.max(so_far);
        Some(so_far * 100 / total.max(1))
    }

    /// How far the first list of `kind` has come, in words
    /// ([`super::status::progress_words`]).
    pub fn load_progress(&self, kind: StreamKind) -> String {
        let expected = self.streams.get(&kind).and_then(StreamStatus::expected);
        super::status::progress_words(self.count(kind) as u64, expected)
    }

    /// All nodes, unordered.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.objects.values().map(Arc::as_ref)
    }

    /// Every node, shared: a copy that outlives the lock costs a pointer each.
    pub fn shared_nodes(&self) -> impl Iterator<Item = &Arc<Node>> {
        self.nodes.objects.values()
    }

    /// Every pod, shared (see [`Cache::shared_nodes`]).
    pub fn shared_pods(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.pods.objects.values()
    }

    /// One node by name.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.objects.get(name).map(Arc::as_ref)
    }

    /// All DaemonSets in scope, unordered.
    pub fn daemonsets(&self) -> impl Iterator<Item = &DaemonSet> {
        self.daemonsets.objects.values().map(Arc::as_ref)
    }

    /// One DaemonSet.
    pub fn daemonset(&self, target: &Target) -> Option<&DaemonSet> {
        // The store's key, built inline for most names (no heap).
        let key = compact_str::format_compact!("{}/{}", target.namespace, target.name);
        self.daemonsets.objects.get(&key).map(Arc::as_ref)
    }

    /// The target's ControllerRevisions, unordered.
    pub fn revisions(&self) -> impl Iterator<Item = &ControllerRevision> {
        self.revisions.objects.values().map(Arc::as_ref)
    }

    /// The target's pods, unordered.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> {
        self.pods.objects.values().map(Arc::as_ref)
    }

    /// The target's pods bound to `node`, in key order.
    pub fn pods_on(&self, node: &str) -> Vec<&Pod> {
        self.pods_by_node.on(node).collect()
    }

    /// Whether fit can be judged: the node usage stream has listed once and
    /// is not forbidden (a stale one still says what it last knew).
    pub fn usage_known(&self) -> bool {
        self.streams
            .get(&StreamKind::NodeUsage)
            .is_some_and(|s| s.synced() && s.forbidden().is_none())
    }

    /// The pods counted against `node` and their summed requests; `None`
    /// when none is (or usage is unknown: see [`Cache::usage_known`]).
    pub fn usage_on(&self, node: &str) -> Option<&NodeUsage> {
        self.usage.on(node)
    }

    /// A copy of the usage index when usage is known (pointers and totals).
    pub fn usage_copy(&self) -> Option<super::usage::UsageByNode> {
        self.usage_known().then(|| self.usage.by_node())
    }

    /// The most recent events about a pod (`namespace/name`), newest first.
    pub fn pod_events(&self, pod_key: &str) -> Vec<&Event> {
        self.pod_events.for_object(pod_key)
    }

    /// The most recent events about a node, newest first.
    pub fn node_events(&self, node: &str) -> Vec<&Event> {
        self.node_events.for_object(node)
    }

    fn apply_node(&mut self, event: watcher::Event<Node>, now: jiff::Timestamp) {
        match self.nodes.apply(event) {
            Applied::One(key) => {
                self.changes.nodes.insert(key);
            }
            Applied::Replaced => {
                let relisted = self.nodes.take_relisted();
                if many(relisted.len(), self.nodes.objects.len()) {
                    self.changes.all_nodes = true;
                } else {
                    self.changes
                        .nodes
                        .extend(relisted.into_iter().map(|(key, _)| key));
                }
            }
            Applied::Buffered => {}
        }
        self.mark_received(StreamKind::Nodes, self.nodes.listing(), now);
    }

    fn apply_daemonset(&mut self, event: watcher::Event<DaemonSet>, now: jiff::Timestamp) {
        let event = map_event(event, |mut ds| {
            // DaemonSets are few, and their field managers say who owns the
            // spec and who last changed it (GitOps ownership and reverts).
            let managed = ds.metadata.managed_fields.take();
            slim_metadata(&mut ds.metadata);
            ds.metadata.managed_fields = managed;
            ds
        });
        // Rows depend on the spec (template, selector, minReadySeconds) and the
        // UID (ownership), not on the status the controller rewrites all the
        // time during a rollout: only a spec change recomputes every row.
        let before = match &event {
            watcher::Event::Apply(ds) | watcher::Event::Delete(ds) => Some(
                self.daemonsets
                    .objects
                    .get(&super::store::object_key(&ds.metadata))
                    .map(|old| (old.spec.clone(), old.metadata.uid.clone())),
            ),
            _ => None,
        };
        let replaced_uid = match (&event, &before) {
            (watcher::Event::Apply(ds), Some(Some((_, Some(old))))) => {
                ds.metadata.uid.as_ref().is_some_and(|uid| uid != old)
            }
            _ => false,
        };
        // Same name, another UID, and no delete seen in between: the server's
        // state was replaced under us (a restarted or different cluster).
        // Re-list everything rather than mix two worlds.
        let replaced = match &event {
            watcher::Event::Apply(ds) if replaced_uid => {
                Some(super::store::object_key(&ds.metadata))
            }
            _ => None,
        };
        let applied = self.daemonsets.apply(event);
        match (&applied, before) {
            (Applied::Buffered, _) => {}
            (Applied::Replaced, _) => {
                // A relist (after a dropped watch) that changed no spec or UID
                // leaves every row as it is.
                let relisted = self.daemonsets.take_relisted();
                self.changes.daemonsets |= !relisted.is_empty();
                let spec_changed = relisted.iter().any(|(key, old)| {
                    let new = self.daemonsets.objects.get(key);
                    new.map(|ds| (&ds.spec, &ds.metadata.uid))
                        != old.as_ref().map(|ds| (&ds.spec, &ds.metadata.uid))
                });
                self.changes.all_nodes |= spec_changed;
            }
            (Applied::One(key), Some(before)) => {
                self.changes.daemonsets = true;
                let after = self
                    .daemonsets
                    .objects
                    .get(key)
                    .map(|ds| (ds.spec.clone(), ds.metadata.uid.clone()));
                if before != after {
                    self.changes.all_nodes = true;
                }
            }
            _ => {
                self.changes.daemonsets = true;
                self.changes.all_nodes = true;
            }
        }
        self.mark_received(StreamKind::DaemonSets, self.daemonsets.listing(), now);
        if let Some(key) = replaced {
            self.server_changed(
                format!(
                    "daemonset {key} was replaced (new UID) without a delete: relisting everything"
                ),
                now,
            );
        }
    }

    fn apply_revision(&mut self, event: watcher::Event<ControllerRevision>, now: jiff::Timestamp) {
        let event = map_event(event, |mut rev| {
            slim_metadata(&mut rev.metadata);
            rev
        });
        let changed = match self.revisions.apply(event) {
            Applied::Buffered => false,
            Applied::One(_) => true,
            Applied::Replaced => !self.revisions.take_relisted().is_empty(),
        };
        if changed {
            self.changes.revisions = true;
            // Revision numbers and "updated" of every pod may change.
            self.changes.all_nodes = true;
        }
        self.mark_received(StreamKind::Revisions, self.revisions.listing(), now);
    }

    fn apply_pod(&mut self, event: watcher::Event<Pod>, now: jiff::Timestamp) {
        // The node the pod was on before this event, so a move or delete dirties it too.
        let previous_node = match &event {
            watcher::Event::Apply(pod) | watcher::Event::Delete(pod) => self
                .pods
                .objects
                .get(&super::store::object_key(&pod.metadata))
                .and_then(|old| old.target_node().map(str::to_owned)),
            _ => None,
        };
        match self.pods.apply(event) {
            Applied::One(key) => self.pod_moved(&key, previous_node.as_deref()),
            Applied::Replaced => {
                let relisted = self.pods.take_relisted();
                if many(relisted.len(), self.pods.objects.len()) {
                    self.pods_by_node = NodePods::build(&self.pods.objects);
                    self.changes.all_nodes = true;
                } else {
                    for (key, old) in relisted {
                        self.pod_moved(&key, old.as_ref().and_then(|p| p.target_node()));
                    }
                }
            }
            Applied::Buffered => {}
        }
        self.mark_received(StreamKind::Pods, self.pods.listing(), now);
    }

    /// Updates the node index for the pod `key` (on `previous` before) and
    /// marks the nodes it left and is on as changed.
    fn pod_moved(&mut self, key: &str, previous: Option<&str>) {
        if let Some(node) = previous {
            self.pods_by_node.remove(node, key);
            self.changes.nodes.insert(node.into());
        }
        if let Some(pod) = self.pods.objects.get(key) {
            if let Some(node) = pod.target_node() {
                self.changes.nodes.insert(node.into());
            }
            self.pods_by_node.insert(pod);
        }
    }

    fn apply_usage(&mut self, event: watcher::Event<UsagePod>, now: jiff::Timestamp) {
        match self.usage.apply(event) {
            UsageChange::None => {}
            UsageChange::Nodes(nodes) => self.changes.nodes.extend(nodes),
            UsageChange::All => self.changes.all_nodes = true,
        }
        self.mark_received(StreamKind::NodeUsage, self.usage.listing(), now);
    }

    fn apply_event(
        &mut self,
        kind: StreamKind,
        event: watcher::Event<Event>,
        now: jiff::Timestamp,
    ) {
        let events = if kind == StreamKind::NodeEvents {
            &mut self.node_events
        } else {
            &mut self.pod_events
        };
        // A relist touches only the objects with events before or after it:
        // those nodes' rows change, not every row.
        let before = matches!(event, watcher::Event::InitDone).then(|| events.objects());
        let applied = events.apply(event);
        let listing = events.store.listing();
        match applied {
            Applied::One(object) => self.event_object_changed(kind, &object),
            Applied::Replaced => {
                let after = self.events(kind).objects();
                for object in before.into_iter().flatten().chain(after) {
                    self.event_object_changed(kind, &object);
                }
            }
            Applied::Buffered => {}
        }
        self.mark_received(kind, listing, now);
    }

    fn events(&self, kind: StreamKind) -> &EventStore {
        if kind == StreamKind::NodeEvents {
            &self.node_events
        } else {
            &self.pod_events
        }
    }

    /// Marks the node whose row shows the events about `object` (a node, or
    /// a pod `namespace/name` of the target) as changed.
    fn event_object_changed(&mut self, kind: StreamKind, object: &str) {
        if kind == StreamKind::NodeEvents {
            self.changes.nodes.insert(object.into());
        } else if let Some(node) = self.pods.objects.get(object).and_then(|p| p.target_node()) {
            self.changes.nodes.insert(node.into());
        }
    }

    fn mark_received(&mut self, kind: StreamKind, listing: bool, now: jiff::Timestamp) {
        if self.streams.entry(kind).or_default().received(listing, now) {
            self.changes.streams = true;
        }
    }
}
