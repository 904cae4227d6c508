//! A limit several runs share (a fleet run's failure budget, counted in nodes
//! at risk across clusters). The executor reserves room for a whole batch
//! before its first delete — a batch is all or nothing, so two runs never
//! each hold half of what both need — and says when the batches it deleted
//! passed their gate. A stop comes through the run's
//! [`crate::ops::interrupt::Interrupt`], never through here.

/// What the executor asks before a batch's deletes and tells after.
pub trait SharedBudget: Send + Sync {
    /// Reserves room for `nodes` more nodes at risk; `false`: not now (the
    /// executor asks again after a while, or stops if interrupted).
    fn try_reserve(&self, nodes: usize) -> bool;
    /// Every node this run deleted so far passed its gate (a next batch was
    /// chosen, or the run completed): what they held is free again.
    fn settled(&self);
    /// `nodes` of the batch just reserved were not deleted (a delete
    /// refused, unreachable, or never sent after one failed): nothing was
    /// put at risk on them, so their room is free again.
    fn unreserve(&self, nodes: usize);
}
