//! The console's roster audit (`--roster FILE`): the audit report kept beside
//! the stores and the grid order it adds; how it marks the grid, the header
//! and the detail pane is in `roster/view.rs`.
//!
//! A comparison from scratch is pure but costs about a second at 65,000
//! nodes in a debug build, so it never runs on the draw path or per watch
//! event: it runs at start, after a relist or a change of the DaemonSet's
//! spec, on a snapshot of the cache, on its own thread, at most once a
//! second (`App::roster_tick`, fewer when the snapshot copy is slow). Watch
//! events about a few nodes update the report in place, per changed node
//! (`audit::incremental`), at the cost of those nodes. Roster nodes absent
//! from the cluster get grid rows of their own so a missing node stays
//! visible. Decides nothing about
//! eligibility (the engine's) nor about what counts as a problem (the audit's).

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

mod view;

use super::index::{Entry, Filter, GridIndex, GroupKey, natural_cmp};
use crate::audit::incremental::update_nodes;
use crate::audit::{AuditReport, InputError, NodeAuditStatus, Roster, compare};
use crate::cluster::cache::{Cache, Changes};
use crate::cluster::status::{StreamKind, StreamStatus};
use crate::cluster::store::ObjectKey;
use crate::model::{DaemonSet, Node, Pod, Target};

/// Shortest time between the starts of two comparisons.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// The snapshot copy holds the cache lock (the watch task waits meanwhile):
/// comparisons are spaced at least this many copy-times apart, so the copy
/// takes at most a tenth of the lock's time even on a huge cluster.
const COPY_SHARE: u32 = 10;

/// The streams a comparison needs complete (before that, every node would look missing).
const NEEDED_STREAMS: [StreamKind; 3] =
    [StreamKind::Nodes, StreamKind::Pods, StreamKind::DaemonSets];

/// What a comparison reads, taken out of the cache so the lock is not held
/// while it runs: the stores' own objects, shared (a pointer each, no copy).
pub struct Snapshot {
    ds: DaemonSet,
    nodes: Vec<Arc<Node>>,
    pods: Vec<Arc<Pod>>,
}

impl Snapshot {
    /// Takes the target DaemonSet (a copy), every node and the pods of the
    /// DaemonSet's namespace (owned pods live there; both shared); `None` until
    /// the lists are complete.
    pub fn take(cache: &Cache, target: Option<&Target>) -> Option<Self> {
        let synced = NEEDED_STREAMS
            .iter()
            .all(|kind| cache.streams().get(kind).is_some_and(StreamStatus::synced));
        if !synced {
            return None;
        }
        let ds = cache.daemonset(target?)?.clone();
        let namespace = ds.metadata.namespace.clone().unwrap_or_default();
        Some(Self {
            nodes: cache.shared_nodes().cloned().collect(),
            pods: cache
                .shared_pods()
                .filter(|p| p.namespace() == namespace)
                .cloned()
                .collect(),
            ds,
        })
    }
}

/// The roster, the latest report and the comparison in flight.
pub struct RosterState {
    roster: Roster,
    report: Option<AuditReport>,
    error: Option<String>,
    /// Roster nodes with no node of that name in the cluster, in natural order.
    absent: Vec<String>,
    /// Nodes, pods or the DaemonSet changed since the last comparison started.
    stale: bool,
    /// The target the report is about.
    target: Option<Target>,
    last_start: Option<Instant>,
    /// How long the last snapshot copy took.
    last_copy: Duration,
    job: Option<Receiver<Result<AuditReport, InputError>>>,
}

impl RosterState {
    /// A state for `roster` with no report yet.
    pub fn new(roster: Roster) -> Self {
        Self {
            roster,
            report: None,
            error: None,
            absent: Vec::new(),
            stale: true,
            target: None,
            last_start: None,
            last_copy: Duration::ZERO,
            job: None,
        }
    }

    /// Brings the report up to date with `changes`: per changed node, in
    /// place, at the cost of those nodes ([`update_nodes`]), when the report
    /// is current; else (every node changed, the DaemonSet's spec, the
    /// target, a comparison still running) marks it stale for a comparison
    /// from scratch. A DaemonSet's status alone changes nothing it reports.
    pub fn note_changes(&mut self, changes: &Changes, cache: &Cache, target: Option<&Target>) {
        if changes.nodes.is_empty() && !changes.all_nodes {
            return;
        }
        let current = !self.stale && self.job.is_none() && self.target.as_ref() == target;
        let ds = target.and_then(|key| cache.daemonset(key));
        let (Some(report), Some(ds), false) =
            (self.report.as_mut(), ds, changes.all_nodes || !current)
        else {
            self.stale = true;
            return;
        };
        let nodes = changes.nodes.iter().map(ObjectKey::as_str);
        if update_nodes(report, ds, nodes, |n| cache.node(n), |n| cache.pods_on(n)).is_err() {
            // The comparison from scratch says what is wrong.
            self.stale = true;
            return;
        }
        for node in &changes.nodes {
            let absent = report
                .details
                .node_identity_mismatch
                .get(node.as_str())
                .is_some_and(|m| m.cluster_uid.is_none());
            match self
                .absent
                .binary_search_by(|probe| natural_cmp(probe, node))
            {
                Ok(at) if !absent => {
                    self.absent.remove(at);
                }
                Err(at) if absent => self.absent.insert(at, node.to_string()),
                _ => {}
            }
        }
    }

    /// Runs a comparison now, on the calling thread (tests, and small clusters).
    pub fn recompute_now(&mut self, cache: &Cache, target: Option<&Target>) {
        self.retarget(target);
        if let Some(snapshot) = Snapshot::take(cache, target) {
            self.stale = false;
            let result = run(&self.roster, &snapshot);
            self.apply(result);
        }
    }

    /// Collects a finished comparison and starts a new one when the report is
    /// stale and the last start is at least [`MIN_INTERVAL`] ago (longer when
    /// the snapshot copy is slow, see `COPY_SHARE`). Returns whether the
    /// report changed.
    pub fn poll(&mut self, cache: &Cache, target: Option<&Target>, now: Instant) -> bool {
        let mut changed = self.retarget(target);
        if let Some(job) = &self.job {
            match job.try_recv() {
                Ok(result) => {
                    self.job = None;
                    self.apply(result);
                    changed = true;
                }
                Err(TryRecvError::Empty) => return changed,
                Err(TryRecvError::Disconnected) => {
                    self.job = None;
                    self.error = Some("the roster comparison stopped unexpectedly".to_owned());
                    changed = true;
                }
            }
        }
        let gap = MIN_INTERVAL.max(self.last_copy * COPY_SHARE);
        let due = self
            .last_start
            .is_none_or(|at| now.saturating_duration_since(at) >= gap);
        if !(self.stale && due) {
            return changed;
        }
        let copying = Instant::now();
        if let Some(snapshot) = Snapshot::take(cache, target) {
            self.last_copy = copying.elapsed();
            self.stale = false;
            self.last_start = Some(now);
            self.job = Some(spawn(self.roster.clone(), snapshot));
        }
        changed
    }

    /// Forgets the report when the target changed; returns whether one was shown.
    fn retarget(&mut self, target: Option<&Target>) -> bool {
        if self.target.as_ref() == target {
            return false;
        }
        let had_report = self.report.is_some() || self.error.is_some();
        self.target = target.cloned();
        self.report = None;
        self.error = None;
        self.absent.clear();
        self.stale = true;
        // A comparison in flight is about the old target: drop its result.
        self.job = None;
        had_report
    }

    fn apply(&mut self, result: Result<AuditReport, InputError>) {
        match result {
            Ok(report) => {
                let mut absent: Vec<String> = report
                    .details
                    .node_identity_mismatch
                    .iter()
                    .filter(|(_, m)| m.cluster_uid.is_none())
                    .map(|(name, _)| name.clone())
                    .collect();
                absent.sort_by(|a, b| natural_cmp(a, b));
                self.absent = absent;
                self.report = Some(report);
                self.error = None;
            }
            Err(err) => {
                self.report = None;
                self.absent.clear();
                self.error = Some(format!("roster audit failed: {err}"));
            }
        }
    }

    /// The latest report, if a comparison finished.
    pub fn report(&self) -> Option<&AuditReport> {
        self.report.as_ref()
    }

    /// Roster nodes absent from the cluster, in natural order.
    pub fn absent(&self) -> &[String] {
        &self.absent
    }

    /// Whether `node` is on the roster but absent from the cluster.
    pub fn is_absent(&self, node: &str) -> bool {
        self.absent
            .binary_search_by(|probe| natural_cmp(probe, node))
            .is_ok()
    }

    /// What the latest report says about `node`.
    pub fn status(&self, node: &str) -> Option<NodeAuditStatus> {
        self.report.as_ref().map(|r| r.node_status(node))
    }

    /// The grid order with the absent roster nodes in front (under their own
    /// heading when the grid is grouped); a label filter hides them (they have
    /// no labels), a name filter applies as to any row.
    pub fn extend_index(&self, index: GridIndex, group: GroupKey, filter: &Filter) -> GridIndex {
        let shown: Vec<&String> = self
            .absent
            .iter()
            .filter(|name| match filter {
                Filter::None => true,
                Filter::Substring(text) => name.to_lowercase().contains(text.as_str()),
                Filter::Labels(_) => false,
            })
            .collect();
        if shown.is_empty() {
            return index;
        }
        let mut out = GridIndex::default();
        if group != GroupKey::None {
            out.entries.push(Entry::Heading {
                label: "roster nodes absent from the cluster".to_owned(),
                count: shown.len(),
            });
        }
        for name in shown {
            out.rows.push(out.entries.len());
            out.entries.push(Entry::Row(name.as_str().into()));
        }
        let shift = out.entries.len();
        out.rows.extend(index.rows.iter().map(|at| at + shift));
        out.entries.extend(index.entries);
        out
    }
}

fn run(roster: &Roster, snapshot: &Snapshot) -> Result<AuditReport, InputError> {
    compare(roster, &snapshot.ds, &snapshot.nodes, &snapshot.pods)
}

/// Runs one comparison on its own thread; the receiver gets its result.
fn spawn(roster: Roster, snapshot: Snapshot) -> Receiver<Result<AuditReport, InputError>> {
    let (sender, receiver) = mpsc::channel();
    let work = move || {
        // The console may have quit or moved on: nobody to tell, nothing lost.
        let _ = sender.send(run(&roster, &snapshot));
    };
    if std::thread::Builder::new()
        .name("roster-audit".to_owned())
        .spawn(work)
        .is_err()
    {
        tracing::warn!("could not start the roster comparison thread");
    }
    receiver
}
