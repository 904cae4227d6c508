//! Which nodes an advance is about: the value `advance --node`/`--next` and
//! the console's `a`/`n` build, read by the plan (`snapshot`) and by the
//! choice of pods (`advance`). Plain data, a floor below both.

/// Which nodes to advance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdvanceTarget {
    /// These nodes (`--node`, or the node selected in the console).
    Nodes(Vec<String>),
    /// The next K nodes of the plan (`--next K`, the console's `n`).
    Next(usize),
}
