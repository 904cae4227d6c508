//! The blocker's inputs summed over rows, kept incrementally: each node's
//! share (eligible, outdated, and why it is stuck, unavailable or surging)
//! is added when its row appears and taken away when it changes or goes, so
//! the console asks for the blocker at the cost of the nodes that block, not
//! of the cluster. [`super::rollout_blocker_with`] sums every row the same
//! way, so the console and the headless commands give one answer.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;

use compact_str::CompactString;
use jiff::Timestamp;

use super::{BlockingNode, why_unavailable};
use crate::engine::coverage::{NodeCoverage, PodCoverage};

/// Whether a node holding a slot of the rolling budget is on its way to
/// available, so the slot frees by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Course {
    /// It will not get there alone: its node is NotReady or its pod failing.
    Stalled,
    /// On its way: a Ready pod waiting out `minReadySeconds`, an old pod
    /// terminating on a Ready node, a pod the controller is about to create.
    Moving,
    /// Starting (Pending, not yet Ready): on its way until this instant
    /// ([`crate::engine::health::READY_TIMEOUT`] after its Ready condition
    /// last changed, or after its creation), stalled from then on.
    StartingUntil(Timestamp),
}

impl Course {
    /// Whether the slot is stalled at `now`.
    pub fn is_stalled(self, now: Timestamp) -> bool {
        match self {
            Self::Stalled => true,
            Self::Moving => false,
            Self::StartingUntil(deadline) => deadline <= now,
        }
    }
}

/// A node holding a slot: why, and whether it is on its way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Why its pod is not available, in words: a fixed phrase ("pod not
    /// Ready") but for a failing pod's reason. Under churn half the nodes of
    /// a 65,000-node fleet held one, each phrase a heap copy of its own.
    pub why: Cow<'static, str>,
    /// Whether it gets there by itself.
    pub course: Course,
}

impl Holder {
    /// Whether it is a Ready pod waiting out `minReadySeconds`.
    pub fn is_waiting_min_ready(&self) -> bool {
        self.why == super::WAITING_MIN_READY
    }

    /// The reason as of `now`: a start that ran out of time says so.
    fn why_at(&self, now: Timestamp) -> String {
        match self.course {
            Course::StartingUntil(deadline) if deadline <= now => format!(
                "{} for over {}",
                self.why,
                humantime::format_duration(crate::engine::health::READY_TIMEOUT)
            ),
            _ => self.why.clone().into_owned(),
        }
    }
}

/// One node's part in the blocker's inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Share {
    /// Should run a daemon pod.
    eligible: bool,
    /// Eligible, with a live pod on an old revision.
    outdated: bool,
    /// Not Ready with a pod stuck terminating: why.
    stuck: Option<String>,
    /// Eligible, its newest live pod not available.
    unavailable: Option<Holder>,
    /// Eligible, a surge slot held by a new pod not yet available.
    surging: Option<Holder>,
}

impl Share {
    /// The share of one node's coverage (`ready`: its Ready condition).
    pub fn of(row: &NodeCoverage, ready: Option<bool>) -> Self {
        let eligible = row.verdict.should_run;
        let stuck = (ready == Some(false))
            .then(|| row.pods.iter().find(|p| p.terminating))
            .flatten()
            .map(|p| format!("pod {} terminating on a NotReady node", p.name));
        if !eligible {
            return Self {
                stuck,
                ..Self::default()
            };
        }
        let live = || row.pods.iter().filter(|p| !p.terminating);
        let newest: Option<&PodCoverage> = live().next_back();
        let surging = (live().count() > 1 && live().any(|p| p.updated && !p.available))
            .then(|| why_unavailable(row.pods.iter().rev().find(|p| p.updated), None));
        Self {
            eligible,
            outdated: live().any(|p| !p.updated),
            stuck,
            unavailable: (!newest.is_some_and(|p| p.available))
                .then(|| why_unavailable(newest, ready)),
            surging,
        }
    }
}

/// The shares of every row, summed; node lists in name order (names inline:
/// a node name of up to 24 bytes takes no heap block).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockerTally {
    /// Nodes that should run a daemon pod (the rolling budget's `desired`).
    pub(super) eligible: usize,
    /// Eligible nodes with a live pod on an old revision.
    pub(super) outdated: usize,
    pub(super) stuck: BTreeMap<CompactString, String>,
    pub(super) unavailable: BTreeMap<CompactString, Holder>,
    pub(super) surging: BTreeMap<CompactString, Holder>,
    /// When starting holders run out of time, with how many at each instant:
    /// the blocker may change then with no change to any row.
    deadlines: BTreeMap<Timestamp, usize>,
}

impl BlockerTally {
    /// Adds the share of `node`.
    pub fn add(&mut self, node: &str, share: Share) {
        self.eligible += usize::from(share.eligible);
        self.outdated += usize::from(share.outdated);
        if let Some(why) = share.stuck {
            self.stuck.insert(node.into(), why);
        }
        for (list, holder) in [
            (&mut self.unavailable, share.unavailable),
            (&mut self.surging, share.surging),
        ] {
            if let Some(holder) = holder {
                if let Course::StartingUntil(at) = holder.course {
                    *self.deadlines.entry(at).or_default() += 1;
                }
                list.insert(node.into(), holder);
            }
        }
    }

    /// Takes away the share of `node` (as it was added).
    pub fn remove(&mut self, node: &str, share: &Share) {
        self.eligible -= usize::from(share.eligible);
        self.outdated -= usize::from(share.outdated);
        self.stuck.remove(node);
        for list in [&mut self.unavailable, &mut self.surging] {
            if let Some(Holder {
                course: Course::StartingUntil(at),
                ..
            }) = list.remove(node)
                && let Some(count) = self.deadlines.get_mut(&at)
            {
                *count -= 1;
                if *count == 0 {
                    self.deadlines.remove(&at);
                }
            }
        }
    }

    /// The first instant after `now` at which a starting holder runs out of
    /// time (the blocker may then change with no change to any row).
    pub fn next_deadline(&self, now: Timestamp) -> Option<Timestamp> {
        self.deadlines
            .range((Bound::Excluded(now), Bound::Unbounded))
            .next()
            .map(|(at, _)| *at)
    }

    /// The sum over `rows`.
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a NodeCoverage, Option<bool>)>) -> Self {
        let mut tally = Self::default();
        for (row, ready) in rows {
            tally.add(&row.node, Share::of(row, ready));
        }
        tally
    }
}

/// A node list of the tally as blocker nodes.
pub(super) fn nodes(list: &BTreeMap<CompactString, String>) -> Vec<BlockingNode> {
    list.iter()
        .map(|(node, why)| BlockingNode {
            node: node.to_string(),
            why: why.clone(),
        })
        .collect()
}

/// The holders as blocker nodes, their reasons as of `now`; only those for
/// which `keep` holds.
pub(super) fn holders(
    list: &BTreeMap<CompactString, Holder>,
    now: Timestamp,
    keep: impl Fn(&Holder) -> bool,
) -> Vec<BlockingNode> {
    list.iter()
        .filter(|(_, holder)| keep(holder))
        .map(|(node, holder)| BlockingNode {
            node: node.to_string(),
            why: holder.why_at(now),
        })
        .collect()
}
