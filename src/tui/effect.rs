//! What a part of the console hands back to the event loop: the [`Effect`]
//! to run outside the UI (quit, refocus the watches, rollout writes, a log
//! fetch, a fresh read of a node's pods) and whether a component took an action ([`Handled`]). Plain values;
//! sits below the app and its components so each can return them.

use super::logs_request::LogsRequest;
use crate::model::Target;
use crate::ops::write::WriteRequest;

/// What the event loop must do after an action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Leave the console.
    Quit,
    /// Watch another DaemonSet.
    SetTarget(Target),
    /// Run these numbered rollout writes on the effects task (confirmed by the user).
    Writes(Vec<(u64, WriteRequest)>),
    /// Fetch a pod's log on the effects side (the answer opens in the logs overlay).
    FetchLogs(LogsRequest),
    /// Read the pods on `node` afresh, past the watch, into the cache (a
    /// gate about to fail the node for a timeout); the answer comes back as
    /// the ops component's fresh-read event.
    ReadPodsOn {
        /// The DaemonSet whose namespace is read.
        target: Target,
        /// The node.
        node: String,
    },
}

/// What a part of the console (the rollout keys, the logs overlay) did with an action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handled {
    /// Not its action: the console handles it as usual.
    Passed,
    /// Taken, with the effect for the event loop, if any.
    Took(Option<Effect>),
}
