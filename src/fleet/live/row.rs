//! One cluster's row of the live matrix, observed from that cluster's watch
//! cache: how it is reached (`live`, `stale 12s`, `not found`, …) and what
//! `rollcall --context C status DS` reports for it, reduced to the cells
//! the matrix shows. The report is built by the same function `status`
//! uses ([`Read::of`] over a [`Snapshot`] copied from the cache), so a row
//! and the command never disagree. Pure: the caller passes `now`.

use crate::cluster::cache::Cache;
use crate::cluster::status::StreamKind;
use crate::fleet::connection::ConnectionState;
use crate::fleet::report::{Failure, IdentityNodes, Read, Row, identity_nodes};
use crate::fleet::template::TemplateIdentity;
use crate::model::Target;
use crate::ops::snapshot::Snapshot;
use crate::ops::state::Mode;
use crate::ops::status::StatusReport;

/// The streams whose staleness makes a row stale: what its cells come from.
pub const ROW_STREAMS: [StreamKind; 4] = [
    StreamKind::Nodes,
    StreamKind::DaemonSets,
    StreamKind::Pods,
    StreamKind::Revisions,
];

/// How the matrix reached one cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Connecting (an exec plugin may be waiting for its turn).
    Connecting,
    /// Connected; the first lists are loading (a stream that fails before
    /// its first list completed is still loading, not stale: there is no
    /// data to be stale).
    Loading {
        /// Since when (the watch started).
        since: jiff::Timestamp,
    },
    /// Every stream the row reads is up to date.
    Live,
    /// A stream failed or went quiet: the cells are as of `since`.
    Stale {
        /// Since when the data is stale.
        since: jiff::Timestamp,
        /// The stream's error, in words.
        why: String,
    },
    /// The cluster could not be read (or the DaemonSet is not there):
    /// the one word and the error's own words.
    Failed {
        /// The word.
        state: ConnectionState,
        /// The error.
        message: String,
    },
}

impl Link {
    /// A failure to connect or resolve, as a link.
    pub fn failed(failure: Failure) -> Link {
        Link::Failed {
            state: failure.connection,
            message: failure.message,
        }
    }

    /// The connection cell: `live`, `stale 12s`, `auth: exec plugin timed
    /// out`, `unreachable: connection refused`, `not found`.
    pub fn text(&self, now: jiff::Timestamp) -> String {
        match self {
            Link::Connecting => "connecting".to_owned(),
            Link::Loading { since } => {
                let seconds = now.duration_since(*since).as_secs().max(0);
                format!("loading {seconds}s")
            }
            Link::Live => "live".to_owned(),
            Link::Stale { since, .. } => {
                let seconds = now.duration_since(*since).as_secs().max(0);
                format!("stale {seconds}s")
            }
            Link::Failed {
                state: ConnectionState::NotFound,
                ..
            } => "not found".to_owned(),
            Link::Failed {
                state: ConnectionState::Forbidden,
                ..
            } => "forbidden".to_owned(),
            Link::Failed { state, message } => format!("{}: {}", state.word(), short(message)),
        }
    }

    /// The word of `fleet status -o json` for this link.
    pub fn state(&self) -> ConnectionState {
        match self {
            Link::Connecting | Link::Loading { .. } | Link::Live => ConnectionState::Live,
            Link::Stale { .. } => ConnectionState::Stale,
            Link::Failed { state, .. } => *state,
        }
    }

    /// Whether the row's cells are current.
    pub fn is_live(&self) -> bool {
        matches!(self, Link::Live)
    }
}

/// An error's gist for a cell: its last clause (`… : connection refused`).
fn short(message: &str) -> &str {
    message
        .rsplit(": ")
        .find(|part| !part.trim().is_empty())
        .unwrap_or(message)
        .trim()
}

/// How long a cluster's first lists may take: from `since` (its watch
/// started), within `within` (`--request-timeout`); past that, a cluster
/// that never completed them is unreachable, not loading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstList {
    /// When the watch started.
    pub since: jiff::Timestamp,
    /// The bound.
    pub within: std::time::Duration,
}

impl FirstList {
    /// When the bound runs out.
    pub fn deadline(&self) -> jiff::Timestamp {
        jiff::SignedDuration::try_from(self.within)
            .ok()
            .and_then(|within| self.since.checked_add(within).ok())
            .unwrap_or(jiff::Timestamp::MAX)
    }
}

/// What the matrix shows of a cluster it has read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterView {
    /// Strategy, counts, state word and top problem, as `fleet status` has them.
    pub row: Row,
    /// Who holds the rollout: `paused by ana: node-3 failed`, `auto by bo`,
    /// else the state word.
    pub rollout: String,
    /// The GitOps tool that owns the spec, in words.
    pub owner: Option<String>,
    /// The current template's identity.
    pub template: TemplateIdentity,
    /// Nodes per template identity of the pod they run, newest revision first.
    pub identities: Vec<IdentityNodes>,
}

impl ClusterView {
    /// The cells of one cluster's read.
    pub fn of(read: &Read) -> ClusterView {
        let report = &read.status;
        ClusterView {
            row: Row::of(report),
            rollout: rollout_text(report),
            owner: report
                .owner
                .as_ref()
                .map(crate::engine::owner::SpecOwner::describe),
            template: read.template.clone(),
            // A revision no node runs says nothing about the cluster.
            identities: identity_nodes(&report.summary.revisions, &read.revisions)
                .into_iter()
                .filter(|identity| identity.nodes > 0)
                .collect(),
        }
    }
}

/// The rollout cell: who paused and why, who drives a run, else the state word.
fn rollout_text(report: &StatusReport) -> String {
    let state = &report.rollout;
    if let Some(pause) = &state.pause {
        return match &pause.reason {
            Some(reason) => format!("paused by {}: {reason}", pause.by),
            None => format!("paused by {}", pause.by),
        };
    }
    match (state.mode, &state.updated_by) {
        (Mode::Auto | Mode::RollingBack, Some(by)) => format!("{} by {by}", report.state),
        _ => report.state.clone(),
    }
}

/// What one look at a cluster's cache gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// How it is reached.
    pub link: Link,
    /// Its cells, when the DaemonSet is there and its report could be
    /// built (kept while stale: the last known truth, marked so).
    pub view: Option<ClusterView>,
}

/// Looks at `target` in a cluster's cache at `now`: the link from its
/// streams' states (as the console's status line judges them, the first
/// lists bounded by `first`), the cells from the same report `rollcall
/// status` builds.
pub fn observe(
    cache: &Cache,
    target: &Target,
    first: &FirstList,
    now: jiff::Timestamp,
) -> Observation {
    let (link, snapshot) = look(cache, target, first, now);
    Observation {
        link,
        view: snapshot.and_then(|snapshot| view_of(&snapshot, now)),
    }
}

/// The cheap half of [`observe`], done under the cache's lock: the link,
/// and the target copied out (pointers to the cache's nodes and pods) once
/// its lists are in.
pub fn look(
    cache: &Cache,
    target: &Target,
    first: &FirstList,
    now: jiff::Timestamp,
) -> (Link, Option<Snapshot<'static>>) {
    let snapshot = Snapshot::from_cache(cache, target).filter(|_| settled(cache));
    (link_of(cache, target, first, now), snapshot)
}

/// The costly half of [`observe`], done off the lock: the status report
/// and the cells of it.
pub fn view_of(snapshot: &Snapshot<'_>, now: jiff::Timestamp) -> Option<ClusterView> {
    Read::of(snapshot, now)
        .ok()
        .map(|read| ClusterView::of(&read))
}

/// Whether the lists the row reads are in (else a report would undercount).
fn settled(cache: &Cache) -> bool {
    ROW_STREAMS.iter().all(|kind| {
        cache
            .streams()
            .get(kind)
            .is_some_and(crate::cluster::status::StreamStatus::settled)
    })
}

fn link_of(cache: &Cache, target: &Target, first: &FirstList, now: jiff::Timestamp) -> Link {
    let streams = cache.streams();
    if let Some(message) = streams
        .get(&StreamKind::DaemonSets)
        .and_then(|s| s.forbidden())
    {
        return Link::Failed {
            state: ConnectionState::Forbidden,
            message: message.to_owned(),
        };
    }
    if !settled(cache) {
        return first_lists(cache, target, first, now);
    }
    if let Some((kind, since)) = cache.stale_since(&ROW_STREAMS) {
        let why = match streams
            .get(&kind)
            .map(crate::cluster::status::StreamStatus::state)
        {
            Some(crate::cluster::status::StreamState::Reconnecting { error, .. }) => {
                format!("{}: {error}", kind.label())
            }
            _ => format!("{}: no news", kind.label()),
        };
        return Link::Stale { since, why };
    }
    let daemonsets_in = streams
        .get(&StreamKind::DaemonSets)
        .is_some_and(crate::cluster::status::StreamStatus::synced);
    if daemonsets_in && cache.daemonset(target).is_none() {
        return Link::Failed {
            state: ConnectionState::NotFound,
            message: format!("daemonset {} not found", target.key()),
        };
    }
    Link::Live
}

/// The link of a cluster whose first lists are not all in: not found once
/// the DaemonSets are listed without it, unreachable once `first` ran out
/// (with the error a stream met, if any), else loading.
fn first_lists(cache: &Cache, target: &Target, first: &FirstList, now: jiff::Timestamp) -> Link {
    let streams = cache.streams();
    let daemonsets_in = streams
        .get(&StreamKind::DaemonSets)
        .is_some_and(crate::cluster::status::StreamStatus::synced);
    if daemonsets_in && cache.daemonset(target).is_none() {
        return Link::Failed {
            state: ConnectionState::NotFound,
            message: format!("daemonset {} not found", target.key()),
        };
    }
    if now < first.deadline() {
        return Link::Loading { since: first.since };
    }
    let unlisted: Vec<&str> = ROW_STREAMS
        .iter()
        .filter(|kind| {
            !streams
                .get(kind)
                .is_some_and(crate::cluster::status::StreamStatus::settled)
        })
        .map(|kind| kind.label())
        .collect();
    let error = ROW_STREAMS.iter().find_map(|kind| {
        match streams
            .get(kind)
            .map(crate::cluster::status::StreamStatus::state)
        {
            Some(crate::cluster::status::StreamState::Reconnecting { error, .. }) => {
                Some(format!("{}: {error}", kind.label()))
            }
            Some(crate::cluster::status::StreamState::Throttled { .. }) => {
                Some(format!("{}: throttled (429)", kind.label()))
            }
            _ => None,
        }
    });
    let within = first.within.as_secs();
    Link::Failed {
        state: ConnectionState::Unreachable,
        message: match error {
            Some(error) => format!(
                "first list of {} not in within {within}s: {error}",
                unlisted.join(", ")
            ),
            None => format!(
                "first list of {} not in within {within}s: no answer",
                unlisted.join(", ")
            ),
        },
    }
}
