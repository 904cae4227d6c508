//! The live matrix's state: one row per cluster (its link and its last
//! cells), the fleet's reference template and each row's drift from it,
//! the fleet totals, and what the user chose to see (filter, sort,
//! selection). Pure: rows come in as observations, keys as calls; no clock
//! (ages are drawn against a `now` the caller passes).

use super::row::{ClusterView, Link, Observation};
use crate::fleet::drift::{Drift, drift, majority};
use crate::fleet::template::TemplateIdentity;

/// One cluster of the matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterRow {
    /// Its kubeconfig context.
    pub context: String,
    /// How it is reached.
    pub link: Link,
    /// Its last cells (kept while stale).
    pub view: Option<ClusterView>,
}

/// The orders `s` cycles through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// As the contexts were chosen.
    #[default]
    Context,
    /// Trouble first: unread, stale, not yet live; then drifted, then with problems.
    Trouble,
    /// Least updated (as a share of desired) first.
    Progress,
    /// By current template digest, then context.
    Template,
}

impl SortBy {
    /// The next order.
    #[must_use]
    pub fn next(self) -> SortBy {
        match self {
            SortBy::Context => SortBy::Trouble,
            SortBy::Trouble => SortBy::Progress,
            SortBy::Progress => SortBy::Template,
            SortBy::Template => SortBy::Context,
        }
    }

    /// In words, for the footer.
    pub fn label(self) -> &'static str {
        match self {
            SortBy::Context => "context",
            SortBy::Trouble => "trouble",
            SortBy::Progress => "progress",
            SortBy::Template => "template",
        }
    }
}

/// The fleet's totals over the rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatrixTotals {
    /// Clusters in the matrix.
    pub clusters: usize,
    /// Clusters whose link is live.
    pub live: usize,
    /// Clusters read once, stale now.
    pub stale: usize,
    /// Clusters not read (connecting, loading, failed, not found).
    pub other: usize,
    /// Clusters whose template differs from the reference.
    pub drifted: usize,
    /// Clusters whose status lists problems.
    pub with_problems: usize,
    /// Summed desired / updated / ready / available over the read clusters.
    pub desired: i64,
    /// Summed `updatedNumberScheduled`.
    pub updated: i64,
    /// Summed `numberReady`.
    pub ready: i64,
    /// Summed `numberAvailable`.
    pub available: i64,
}

/// The matrix.
#[derive(Clone, Debug, Default)]
pub struct Matrix {
    /// The DaemonSet, as asked.
    pub daemonset: String,
    /// One row per cluster, in the order the contexts were chosen.
    pub rows: Vec<ClusterRow>,
    /// `--reference`: the context whose template the others are compared with.
    pub reference: Option<String>,
    /// The order shown.
    pub sort: SortBy,
    /// The applied filter (a context name part or a digest prefix).
    pub filter: String,
    /// The filter being typed after `/`.
    pub filter_input: Option<String>,
    /// The selected row, as a position among the visible ones.
    pub selected: usize,
}

impl Matrix {
    /// A matrix of `contexts`, each connecting.
    pub fn new(daemonset: String, contexts: Vec<String>, reference: Option<String>) -> Matrix {
        Matrix {
            daemonset,
            rows: contexts
                .into_iter()
                .map(|context| ClusterRow {
                    context,
                    link: Link::Connecting,
                    view: None,
                })
                .collect(),
            reference,
            ..Matrix::default()
        }
    }

    /// A new link for cluster `index` (a failure drops its cells: they
    /// would claim a truth the matrix no longer has a source for).
    pub fn set_link(&mut self, index: usize, link: Link) {
        if let Some(row) = self.rows.get_mut(index) {
            if matches!(link, Link::Failed { .. }) {
                row.view = None;
            }
            row.link = link;
        }
    }

    /// A new look at cluster `index`; cells it could not build keep the
    /// last ones while the link is stale.
    pub fn observe(&mut self, index: usize, observation: Observation) {
        let Some(row) = self.rows.get_mut(index) else {
            return;
        };
        let keep = matches!(observation.link, Link::Stale { .. }) && observation.view.is_none();
        if !keep {
            row.view = observation.view;
        }
        if matches!(observation.link, Link::Failed { .. }) {
            row.view = None;
        }
        row.link = observation.link;
    }

    /// The template the others are compared with: `--reference`'s, else
    /// the one most clusters run.
    pub fn reference_identity(&self) -> Option<&TemplateIdentity> {
        match &self.reference {
            Some(context) => self
                .rows
                .iter()
                .find(|row| &row.context == context)
                .and_then(|row| row.view.as_ref())
                .map(|view| &view.template),
            None => majority(
                self.rows
                    .iter()
                    .filter_map(|row| row.view.as_ref().map(|v| &v.template)),
            ),
        }
    }

    /// How row `index`'s template differs from the reference.
    pub fn drift_of(&self, index: usize, reference: Option<&TemplateIdentity>) -> Vec<Drift> {
        match (
            self.rows.get(index).and_then(|r| r.view.as_ref()),
            reference,
        ) {
            (Some(view), Some(reference)) => drift(&view.template, reference),
            _ => Vec::new(),
        }
    }

    /// The fleet's totals.
    pub fn totals(&self) -> MatrixTotals {
        let reference = self.reference_identity();
        let mut totals = MatrixTotals {
            clusters: self.rows.len(),
            ..MatrixTotals::default()
        };
        for (index, row) in self.rows.iter().enumerate() {
            match row.link {
                Link::Live => totals.live += 1,
                Link::Stale { .. } => totals.stale += 1,
                _ => totals.other += 1,
            }
            let Some(view) = &row.view else { continue };
            totals.drifted += usize::from(!self.drift_of(index, reference).is_empty());
            totals.with_problems += usize::from(view.row.problems > 0);
            let counts = &view.row.totals;
            totals.desired += i64::from(counts.desired);
            totals.updated += i64::from(counts.updated);
            totals.ready += i64::from(counts.ready);
            totals.available += i64::from(counts.available);
        }
        totals
    }

    /// The rows shown, as indexes into [`Matrix::rows`]: filtered, sorted.
    pub fn visible(&self) -> Vec<usize> {
        let needle = self.filter.to_lowercase();
        let mut shown: Vec<usize> = (0..self.rows.len())
            .filter(|&index| needle.is_empty() || self.matches(index, &needle))
            .collect();
        let reference = self.reference_identity();
        match self.sort {
            SortBy::Context => {}
            SortBy::Trouble => shown.sort_by_key(|&index| {
                let row = &self.rows[index];
                let problems = row.view.as_ref().map_or(0, |v| v.row.problems);
                let link = match row.link {
                    Link::Failed { .. } => 0,
                    Link::Stale { .. } => 1,
                    Link::Connecting | Link::Loading { .. } => 2,
                    Link::Live => 3,
                };
                (
                    link,
                    self.drift_of(index, reference).is_empty(),
                    problems == 0,
                    index,
                )
            }),
            SortBy::Progress => shown.sort_by_key(|&index| {
                // Per mille updated: unread clusters last.
                let share = self.rows[index].view.as_ref().map_or(i64::MAX, |v| {
                    let t = &v.row.totals;
                    i64::from(t.updated) * 1000 / i64::from(t.desired.max(1))
                });
                (share, index)
            }),
            SortBy::Template => shown.sort_by(|&a, &b| {
                let digest = |i: usize| {
                    self.rows[i]
                        .view
                        .as_ref()
                        .map(|v| v.template.digest.clone())
                };
                (digest(a).is_none(), digest(a), a).cmp(&(digest(b).is_none(), digest(b), b))
            }),
        }
        shown
    }

    /// Whether row `index` matches a lowercase filter: a part of its
    /// context, or the start of its template's or a running revision's digest.
    fn matches(&self, index: usize, needle: &str) -> bool {
        let row = &self.rows[index];
        if row.context.to_lowercase().contains(needle) {
            return true;
        }
        row.view.as_ref().is_some_and(|view| {
            view.template.digest.starts_with(needle)
                || view
                    .identities
                    .iter()
                    .any(|identity| identity.digest.starts_with(needle))
        })
    }

    /// The selected cluster's index into [`Matrix::rows`].
    pub fn selected_row(&self) -> Option<usize> {
        self.visible().get(self.selected).copied()
    }

    /// Moves the selection by `delta` rows, within the visible ones.
    pub fn move_by(&mut self, delta: isize) {
        let count = self.visible().len();
        if count == 0 {
            self.selected = 0;
            return;
        }
        let last = count - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// The next order, the selection kept on the same cluster.
    pub fn cycle_sort(&mut self) {
        let keep = self.selected_row();
        self.sort = self.sort.next();
        self.select_row(keep);
    }

    /// Applies the filter being typed (the selection kept when still shown).
    pub fn apply_filter(&mut self) {
        let keep = self.selected_row();
        if let Some(text) = self.filter_input.take() {
            text.trim().clone_into(&mut self.filter);
        }
        self.select_row(keep);
    }

    /// Clears the applied filter.
    pub fn clear_filter(&mut self) {
        let keep = self.selected_row();
        self.filter.clear();
        self.select_row(keep);
    }

    fn select_row(&mut self, row: Option<usize>) {
        let visible = self.visible();
        self.selected = row
            .and_then(|row| visible.iter().position(|&i| i == row))
            .unwrap_or(0);
    }
}
