//! What a load returns: the snapshot, the warnings and the counts gathered on
//! the way, and (for the embedded cluster) the nodes and pods whole. Pure data.

use serde_json::Value;

use crate::input::error::SnapshotWarning;
use crate::input::summary::LoadSummary;
use crate::model::Snapshot;

/// A snapshot together with what was skipped or replaced while loading it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadedSnapshot {
    /// The objects.
    pub snapshot: Snapshot,
    /// Replaced duplicates, list items without a kind, excluded objects and
    /// ignored fields, files skipped for a reason of note.
    pub warnings: Vec<SnapshotWarning>,
    /// What was read, skipped and excluded, counted (for the stderr summary).
    pub summary: LoadSummary,
    /// With [`crate::input::SnapshotLoader::keep_whole`]: the nodes and pods
    /// as read, whole (managed fields dropped), in the order of
    /// `snapshot.nodes` and `snapshot.pods` — what the embedded cluster loads.
    pub whole: Option<WholeObjects>,
}

/// Nodes and pods with every field the API gave (tolerations, affinity, host
/// IPs, ...), without `kind`/`apiVersion`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WholeObjects {
    /// One per `snapshot.nodes` entry.
    pub nodes: Vec<Value>,
    /// One per `snapshot.pods` entry.
    pub pods: Vec<Value>,
}
