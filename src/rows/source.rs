//! What the operations read of a row cache: the [`RowSource`] trait. Sits a
//! floor below both the row cache (which implements it) and the operations'
//! snapshot (which borrows rows through it), so neither reaches the other.

use crate::engine::coverage::NodeCoverage;
use crate::engine::revision::RevisionIndex;
use crate::engine::rollout::{KnownFacts, PlanOptions};

/// The coverage rows a console already keeps, one per node, up to date with
/// the cache it was refreshed from ([`super::RowCache`]).
pub trait RowSource {
    /// The row of `node`.
    fn row(&self, node: &str) -> Option<&NodeCoverage>;
    /// Every row, in any order.
    fn all(&self) -> Box<dyn Iterator<Item = &NodeCoverage> + '_>;
    /// The revision index the rows were computed with.
    fn index(&self) -> Option<&RevisionIndex>;
    /// Every row with its node's facts under `options`, from what the rows
    /// keep (no node lookups); `None` when `options` need more of the nodes
    /// than the rows keep.
    fn with_facts<'s>(
        &'s self,
        options: &'s PlanOptions,
    ) -> Option<Box<dyn Iterator<Item = KnownFacts<'s>> + 's>>;
}
