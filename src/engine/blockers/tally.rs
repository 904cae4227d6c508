//! The blocker's inputs summed over rows, kept incrementally: each node's
//! share (eligible, outdated, and why it is stuck, unavailable or surging)
//! is added when its row appears and taken away when it changes or goes, so
//! the console asks for the blocker at the cost of the nodes that block, not
//! of the cluster. [`super::rollout_blocker_with`] sums every row the same
//! way, so the console and the headless commands give one answer.

use std::collections::BTreeMap;

use super::{BlockingNode, why_unavailable};
use crate::engine::coverage::{NodeCoverage, PodCoverage};

/// One node's part in the blocker's inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Share {
    /// Should run a daemon pod.
    eligible: bool,
    /// Eligible, with a live pod on an old revision.
    outdated: bool,
    /// Not Ready with a pod stuck terminating: why.
    stuck: Option<String>,
    /// Eligible, its newest live pod not available: why.
    unavailable: Option<String>,
    /// Eligible, a surge slot held by a new pod not yet available: why.
    surging: Option<String>,
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

/// The shares of every row, summed; node lists in name order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockerTally {
    /// Nodes that should run a daemon pod (the rolling budget's `desired`).
    pub(super) eligible: usize,
    /// Eligible nodes with a live pod on an old revision.
    pub(super) outdated: usize,
    pub(super) stuck: BTreeMap<String, String>,
    pub(super) unavailable: BTreeMap<String, String>,
    pub(super) surging: BTreeMap<String, String>,
}

impl BlockerTally {
    /// Adds the share of `node`.
    pub fn add(&mut self, node: &str, share: Share) {
        self.eligible += usize::from(share.eligible);
        self.outdated += usize::from(share.outdated);
        for (list, why) in [
            (&mut self.stuck, share.stuck),
            (&mut self.unavailable, share.unavailable),
            (&mut self.surging, share.surging),
        ] {
            if let Some(why) = why {
                list.insert(node.to_owned(), why);
            }
        }
    }

    /// Takes away the share of `node` (as it was added).
    pub fn remove(&mut self, node: &str, share: &Share) {
        self.eligible -= usize::from(share.eligible);
        self.outdated -= usize::from(share.outdated);
        for list in [&mut self.stuck, &mut self.unavailable, &mut self.surging] {
            list.remove(node);
        }
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
pub(super) fn nodes(list: &BTreeMap<String, String>) -> Vec<BlockingNode> {
    list.iter()
        .map(|(node, why)| BlockingNode {
            node: node.clone(),
            why: why.clone(),
        })
        .collect()
}
