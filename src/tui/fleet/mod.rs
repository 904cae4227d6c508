//! The fleet console (`rollcall fleet [DAEMONSET]`): the live matrix of one
//! DaemonSet across clusters, the list to choose a DaemonSet from, and the
//! way into one cluster's own console. The TUI side only: what reaches it
//! are [`FleetEvent`]s (a cluster's link, its observed row, its warm watch,
//! a console ready to open); what it asks for are [`FleetRequest`]s. The
//! `fleet` command's live half connects, watches and builds rows;
//! this module never does I/O.

pub mod auto;
mod auto_keys;
pub mod draw;
pub mod picker;
pub mod run;
pub mod view;

#[cfg(test)]
mod auto_tests;
#[cfg(test)]
mod tests;

use crate::cluster::watch::WatchHandle;
use crate::fleet::live::row::{Link, Observation};
use crate::model::Target;
use crate::tui::run::Nested;

/// What the fleet side tells the screen.
pub enum FleetEvent {
    /// Cluster `index` is reached this way now (connecting failed, …).
    Link {
        /// The cluster, by its position among the contexts.
        index: usize,
        /// How it is reached.
        link: Link,
    },
    /// Cluster `index` is connected; its server says whether it is
    /// rollcall's embedded cluster (`/version`), so the title says
    /// SIMULATED whatever the contexts are called.
    Connected {
        /// The cluster.
        index: usize,
        /// Whether its server is the embedded cluster.
        simulated: bool,
    },
    /// A new look at cluster `index`'s cache.
    Observed {
        /// The cluster.
        index: usize,
        /// What its row shows (boxed: it is most of the channel's traffic
        /// and ten times the other events' size).
        observation: Box<Observation>,
    },
    /// Cluster `index`'s watches run: the screen keeps them for its console.
    Attached {
        /// The cluster.
        index: usize,
        /// Its watch task (dropping it stops the watches).
        watch: WatchHandle,
        /// Set to `true` while the cluster's own console is open: its row
        /// builder stands aside (the console is then the cache's reader).
        hold: tokio::sync::watch::Sender<bool>,
    },
    /// Cluster `index`'s DaemonSets, for the list (or why there are none).
    Listed {
        /// The cluster.
        index: usize,
        /// Its DaemonSets.
        answer: Result<Vec<Target>, String>,
    },
    /// The console asked for with [`FleetRequest::Open`] is ready (or why not).
    Console {
        /// The cluster.
        index: usize,
        /// Its rollout operations and log fetcher, wired to its connection.
        console: Result<Box<Nested>, String>,
    },
    /// A step of the fleet run asked for with [`FleetRequest::Auto`], in words.
    AutoStep(String),
    /// That run ended, and how.
    AutoEnded(String),
}

/// What the screen asks of the fleet side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FleetRequest {
    /// Watch this DaemonSet (`namespace/name`) in every cluster.
    Choose(String),
    /// Wire cluster `index`'s console (answered by [`FleetEvent::Console`]).
    Open(usize),
    /// Auto-advance the DaemonSet across these contexts as one wave, each
    /// cluster with `policy` (answered by [`FleetEvent::AutoStep`]s and
    /// [`FleetEvent::AutoEnded`]).
    Auto {
        /// The DaemonSet, as the matrix has it.
        daemonset: String,
        /// The clusters, as shown.
        contexts: Vec<String>,
        /// Batch, soak, Ready timeout.
        policy: crate::ops::auto::AutoPolicy,
    },
    /// Halt that run: every cluster stops after its current step, paused.
    HaltAuto,
}
