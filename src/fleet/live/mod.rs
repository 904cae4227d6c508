//! The live matrix (`rollcall fleet [DAEMONSET]`): each cluster is the
//! console's own watch cache ([`crate::cluster::watch`]), observed as a row
//! built by the same report `rollcall status` prints ([`row`]), followed as
//! the cache changes ([`follow`]); the [`matrix`] holds the rows, the
//! reference template, the totals and what the user chose to see. The
//! matrix and rows are pure; only [`follow`] waits on a cache.

pub mod follow;
pub mod matrix;
pub mod row;
pub mod turns;

#[cfg(test)]
mod tests;
