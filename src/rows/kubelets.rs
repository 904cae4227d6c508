//! The kubelet minor versions of the DaemonSet's nodes, counted as rows come
//! and go, so the console's header can say when a rollout crosses a version
//! skew (a known cause of sandbox failures) without scanning every row per
//! frame. Which nodes lag behind is worked out only when there is a skew,
//! by [`crate::ops::status_kubelets::kubelet_skew`], the same words `status`
//! prints.

use std::collections::BTreeMap;

use super::NodeRow;
use crate::ops::status_kubelets::{KubeletSkew, kubelet_skew};

/// A kubelet's `(major, minor)`.
pub type KubeletMinor = (u16, u16);

/// Rows per kubelet minor, over the DaemonSet's nodes (eligible, or running
/// its pod: the nodes `status` counts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KubeletTally {
    rows: BTreeMap<KubeletMinor, usize>,
}

impl KubeletTally {
    /// The tally of `rows`.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a NodeRow>) -> Self {
        let mut tally = Self::default();
        for row in rows {
            tally.add(row);
        }
        tally
    }

    /// Counts `row` (nothing when it is not one of the DaemonSet's nodes or
    /// reports no version).
    pub fn add(&mut self, row: &NodeRow) {
        if let Some(minor) = row.counted_kubelet() {
            *self.rows.entry(minor).or_default() += 1;
        }
    }

    /// Uncounts `row`, as [`KubeletTally::add`] counted it.
    pub fn remove(&mut self, row: &NodeRow) {
        if let Some(minor) = row.counted_kubelet()
            && let Some(count) = self.rows.get_mut(&minor)
        {
            *count -= 1;
            if *count == 0 {
                self.rows.remove(&minor);
            }
        }
    }

    /// Whether the DaemonSet's nodes run more than one kubelet minor.
    pub fn skewed(&self) -> bool {
        self.rows.len() > 1
    }

    /// The skew among `rows` with the nodes behind the newest minor named;
    /// `None` without a skew (a scan of the rows only then).
    pub fn skew<'a>(&self, rows: impl Iterator<Item = &'a NodeRow>) -> Option<KubeletSkew> {
        if !self.skewed() {
            return None;
        }
        let named: Vec<(&str, String)> = rows
            .filter_map(|row| {
                row.counted_kubelet()
                    .map(|(major, minor)| (row.name(), format!("v{major}.{minor}")))
            })
            .collect();
        kubelet_skew(
            named
                .iter()
                .map(|(name, minor)| (*name, Some(minor.as_str()))),
        )
    }
}

impl NodeRow {
    /// The kubelet minor this row counts for: its node's, when the node is
    /// one of the DaemonSet's (eligible, or running its pod).
    pub fn counted_kubelet(&self) -> Option<KubeletMinor> {
        let ours = self.coverage.verdict.should_run || !self.coverage.pods.is_empty();
        self.kubelet_minor.filter(|_| ours)
    }
}
