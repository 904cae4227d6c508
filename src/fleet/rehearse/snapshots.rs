//! A rehearsal's fleet: one dump per context in a directory, each loaded
//! into its own embedded cluster (store, DaemonSet controller, scheduler,
//! simulated kubelets under the scenario's rules) and reached through an
//! in-process client.
//!
//! The dump of context `CTX` is the directory entry named `CTX` plus one of
//! the suffixes `-f` files carry (`CTX.json`, `CTX.yaml`, `CTX.tar.gz`, …),
//! or a directory named `CTX` (a must-gather, a `kubectl cluster-info dump
//! --output-directory`). Whatever `-f` accepts elsewhere is accepted here.
//! A character a file name cannot hold is written `%XX` (`/` as `%2F`, as in
//! `arn:aws:eks:eu-west-1:1234:cluster%2Fprod`). Hidden entries are skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::sim::embedded::{EmbeddedOptions, SimError, Simulation};

/// The suffixes a dump's file name may end in, longest first (`.tar.gz`
/// before `.gz` would matter if both were here).
const SUFFIXES: [&str; 11] = [
    ".tar.gz", ".tar.xz", ".json", ".yaml", ".yml", ".txt", ".log", ".tgz", ".txz", ".tar", ".zip",
];

/// How long a member's DaemonSet controller gathers changes before a sync:
/// on the paused clock a sync takes no time, so without a window every pod
/// transition would sync a DaemonSet of every node (most of a large
/// rehearsal's CPU). A status written up to this late changes no run's
/// decision by more than this (the run waits for Ready and soak, in seconds).
const SYNC_WINDOW: std::time::Duration = std::time::Duration::from_millis(500);

/// How often a member's kubelets notice a container's change: upstream's
/// PLEG relist period (`pkg/kubelet/pleg`, one second). The pods of a batch
/// then change at shared whole seconds, so the run's follower and the
/// controller decide once per second, not once per pod transition.
const KUBELET_RELIST: std::time::Duration = std::time::Duration::from_secs(1);

/// How many past changes a member's store keeps for watches to replay.
/// Every watcher of a member is in-process and reads as the changes come
/// (the run's follower, the controller, the scheduler, the kubelets), at
/// most a few hundred behind while one batch's writes land; the default
/// 10,000 kept every old version of the pods a rollout replaced alive
/// (~20 MB a 1,000-node member); one batch of 50 pods writes a few
/// hundred. Further behind, a watcher gets 410 Gone
/// and lists again, as from any API server.
const HISTORY: usize = 1_000;

/// Why a rehearsal's snapshots cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotsError {
    /// The directory cannot be read.
    #[error("cannot read the snapshot directory {dir}: {source}")]
    Unreadable {
        /// The directory.
        dir: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Two entries name the same context.
    #[error("two snapshots for context {context}: {first} and {second}; keep one")]
    Twice {
        /// The context.
        context: String,
        /// One entry.
        first: String,
        /// The other.
        second: String,
    },
    /// Contexts of the plan have no dump.
    #[error(
        "no snapshot in {dir} for context(s) {}: add CONTEXT.json (or any form -f takes) for each, or exclude them in the plan",
        contexts.join(", ")
    )]
    Missing {
        /// The directory.
        dir: String,
        /// The contexts without one.
        contexts: Vec<String>,
    },
    /// A dump did not load into an embedded cluster.
    #[error("the snapshot of {context} ({path}) cannot be loaded: {source}")]
    Load {
        /// The context.
        context: String,
        /// Its dump.
        path: String,
        /// Why (boxed: the embedded cluster's error is large).
        #[source]
        source: Box<SimError>,
    },
}

/// The dumps found in a directory, by context.
#[derive(Debug, Default)]
pub struct Snapshots {
    /// The directory, for messages.
    pub dir: String,
    by_context: BTreeMap<String, PathBuf>,
}

impl Snapshots {
    /// Finds the dump of every context in `dir`.
    pub fn find(dir: &Path) -> Result<Snapshots, SnapshotsError> {
        let shown = dir.display().to_string();
        let unreadable = |source| SnapshotsError::Unreadable {
            dir: shown.clone(),
            source,
        };
        let mut by_context: BTreeMap<String, PathBuf> = BTreeMap::new();
        for entry in std::fs::read_dir(dir).map_err(unreadable)? {
            let entry = entry.map_err(unreadable)?;
            let is_dir = entry.file_type().map_err(unreadable)?.is_dir();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(context) = context_of(&name, is_dir) else {
                continue;
            };
            let path = entry.path();
            if let Some(first) = by_context.get(&context) {
                let mut pair = [first.display().to_string(), path.display().to_string()];
                pair.sort();
                let [first, second] = pair;
                return Err(SnapshotsError::Twice {
                    context,
                    first,
                    second,
                });
            }
            by_context.insert(context, path);
        }
        Ok(Snapshots {
            dir: shown,
            by_context,
        })
    }

    /// The contexts that have a dump, sorted.
    pub fn contexts(&self) -> Vec<String> {
        self.by_context.keys().cloned().collect()
    }

    /// The dump of `context`.
    pub fn path(&self, context: &str) -> Option<&Path> {
        self.by_context.get(context).map(PathBuf::as_path)
    }

    /// Refuses, naming them, the `contexts` without a dump.
    pub fn require<'a>(
        &self,
        contexts: impl IntoIterator<Item = &'a String>,
    ) -> Result<(), SnapshotsError> {
        let missing: Vec<String> = contexts
            .into_iter()
            .filter(|c| !self.by_context.contains_key(*c))
            .cloned()
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(SnapshotsError::Missing {
            dir: self.dir.clone(),
            contexts: missing,
        })
    }
}

/// The context a directory entry is the dump of: its name without the
/// suffix, `%XX` decoded; `None` for a hidden entry or a file whose name
/// ends in no dump suffix.
fn context_of(name: &str, is_dir: bool) -> Option<String> {
    if name.starts_with('.') {
        return None;
    }
    let stem = if is_dir {
        name
    } else {
        let suffix = SUFFIXES
            .iter()
            .find(|s| name.len() > s.len() && name.to_ascii_lowercase().ends_with(*s))?;
        &name[..name.len() - suffix.len()]
    };
    Some(percent_decoded(stem))
}

/// `%2F` → `/`; a `%` not followed by two hex digits stays as it is.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One member of the rehearsed fleet: its embedded cluster and a client of it.
#[derive(Debug)]
pub struct Member {
    /// The context it stands for.
    pub context: String,
    /// The embedded cluster loaded from the context's dump.
    pub simulation: Simulation,
}

impl Member {
    /// Loads `context`'s dump into an embedded cluster running under
    /// `scenario`'s timings and failure rules (none named: no failures, the
    /// default timings) with `seed`; its controller, scheduler and kubelets
    /// start on the current runtime.
    pub fn start(
        context: &str,
        path: &Path,
        scenario: Option<&str>,
        seed: u64,
    ) -> Result<Member, SnapshotsError> {
        let options = EmbeddedOptions {
            scenario: scenario.map(str::to_owned),
            snapshot: vec![path.to_path_buf()],
            seed: Some(seed),
            sync_window: SYNC_WINDOW,
            // As every API server: a member's Events go an hour (simulated)
            // after their last write, so a long rehearsal keeps only recent ones.
            event_ttl: Some(crate::sim::event_ttl::UPSTREAM_EVENT_TTL),
            kubelet_relist: Some(KUBELET_RELIST),
            // The members' work of one simulated instant on every core.
            offload: crate::sim::offload::Offload::Blocking,
            ..EmbeddedOptions::default()
        };
        let simulation = Simulation::start(&options).map_err(|source| SnapshotsError::Load {
            context: context.to_owned(),
            path: path.display().to_string(),
            source: Box::new(source),
        })?;
        simulation.store.set_history_limit(HISTORY);
        Ok(Member {
            context: context.to_owned(),
            simulation,
        })
    }

    /// A client of this member's API, answered in-process.
    pub fn client(&self) -> kube::Client {
        crate::sim::in_process::client(&self.simulation.store, "default")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_give_contexts() {
        let cases = [
            ("prod-eu-1.json", false, Some("prod-eu-1")),
            ("prod-eu-1.YAML", false, Some("prod-eu-1")),
            ("prod.eu.tar.gz", false, Some("prod.eu")),
            ("bundle.tgz", false, Some("bundle")),
            ("must-gather", true, Some("must-gather")),
            ("cluster%2Fprod.json", false, Some("cluster/prod")),
            ("odd%zz.json", false, Some("odd%zz")),
            ("README.md", false, None),
            (".hidden.json", false, None),
            (".json", false, None),
        ];
        for (name, is_dir, context) in cases {
            assert_eq!(context_of(name, is_dir).as_deref(), context, "{name}");
        }
    }

    #[test]
    fn a_directory_names_missing_and_doubled_contexts() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.json", "b.yaml", "notes.md"] {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        std::fs::create_dir(dir.path().join("c")).unwrap();
        let found = Snapshots::find(dir.path()).unwrap();
        assert_eq!(found.contexts(), ["a", "b", "c"]);
        let wanted = ["a".to_owned(), "d".to_owned(), "e".to_owned()];
        let missing = found.require(&wanted).unwrap_err().to_string();
        assert!(missing.contains("context(s) d, e"), "{missing}");
        std::fs::write(dir.path().join("a.yaml"), "{}").unwrap();
        let twice = Snapshots::find(dir.path()).unwrap_err().to_string();
        assert!(twice.contains("two snapshots for context a"), "{twice}");
    }
}
