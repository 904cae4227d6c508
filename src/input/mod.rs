//! Input: everything rollcall reads from files, directories, archives and
//! stdin, up to the typed model. Snapshots (`-f`: `kubectl get -o json|yaml`
//! output, must-gathers, Sonobuoy results, support bundles, `kubectl
//! cluster-info dump`) go through [`load_paths`]; small inputs (rosters,
//! scenarios, kubeconfigs) through [`limits`].
//!
//! Every input is bounded by what it can be: a file is read through a counter
//! (8 GiB per file, whether a regular file, a FIFO, stdin or an archive
//! member; what the loader holds at once, 1 GiB), special files other than FIFOs are refused before a byte is read,
//! and a stream whose first bytes cannot start any format rollcall reads is
//! refused after a few KiB ([`source`]).
//!
//! Sits above [`crate::model`]: `input` uses `model` (the objects and their
//! decoding), `model` never uses `input`. Does no output: warnings and counts
//! are returned as data.

mod describe;
pub mod dump;
mod error;
pub mod limits;
mod load;
mod loaded;
mod loader;
pub mod source;
mod summary;

pub use describe::{describe, require_daemonsets};
pub use error::{SnapshotError, SnapshotWarning};
pub use load::{load_paths, load_paths_whole};
pub use loaded::{LoadedSnapshot, WholeObjects};
pub use loader::SnapshotLoader;
pub use source::STDIN_NAME;
pub use summary::LoadSummary;
