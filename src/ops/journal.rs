//! The action journal: one JSON line per action (time, context, user, DaemonSet,
//! node, pod UID, revision from → to, result), appended and fsynced before the
//! action is reported done, so a crash never loses a write that happened.
//!
//! Owns the file format and the default location; never decides anything.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ops::error::OpsError;
use crate::ops::journal_action::JournalAction;

/// One journal line. Keys are camelCase like every JSON rollcall writes;
/// lines written before 0.3 (`pod_uid`, `revision_from`, `revision_to`) still read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalEntry {
    /// When the action finished (RFC 3339).
    pub time: String,
    /// The kubeconfig context.
    pub context: String,
    /// Who acted (`user@host`).
    pub user: String,
    /// `NAMESPACE/NAME` of the DaemonSet.
    pub daemonset: String,
    /// The action (`advance`, `auto-advance`, `pause`, `auto-pause`, …).
    pub action: JournalAction,
    /// The node acted on, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The pod deleted, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// Its UID (the delete precondition).
    #[serde(default, alias = "pod_uid", skip_serializing_if = "Option::is_none")]
    pub pod_uid: Option<String>,
    /// The revision the node or DaemonSet ran before.
    #[serde(
        default,
        alias = "revision_from",
        skip_serializing_if = "Option::is_none"
    )]
    pub revision_from: Option<i64>,
    /// The revision it moves to.
    #[serde(
        default,
        alias = "revision_to",
        skip_serializing_if = "Option::is_none"
    )]
    pub revision_to: Option<i64>,
    /// `ok` or `error`.
    pub result: String,
    /// The error or a short note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The journal file.
#[derive(Clone, Debug)]
pub struct Journal {
    path: PathBuf,
    /// Keeps nothing ([`Journal::off`]).
    off: bool,
}

impl Journal {
    /// A journal at `path` (created with its directory on first write).
    pub fn new(path: PathBuf) -> Self {
        Self { path, off: false }
    }

    /// A journal that keeps nothing: a rehearsal's writes go to simulated
    /// clusters, and only `--journal FILE` asks for their lines.
    pub fn off() -> Self {
        Self {
            path: PathBuf::new(),
            off: true,
        }
    }

    /// The journal at `--journal FILE` or the default location.
    pub fn from_flag(flag: Option<&Path>) -> Result<Self, OpsError> {
        match flag {
            Some(path) => Ok(Self::new(path.to_owned())),
            None => default_path(
                std::env::var_os("XDG_STATE_HOME").as_deref(),
                std::env::var_os("HOME").as_deref(),
            )
            .map(Self::new)
            .ok_or_else(|| {
                OpsError::Invalid(
                    "no journal location: set XDG_STATE_HOME or HOME, or pass --journal FILE"
                        .to_owned(),
                )
            }),
        }
    }

    /// Where the lines go.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line and fsyncs it before returning.
    pub fn append(&self, entry: &JournalEntry) -> Result<(), OpsError> {
        self.try_append(entry).map_err(|source| OpsError::Journal {
            path: self.path.display().to_string(),
            source,
        })
    }

    fn try_append(&self, entry: &JournalEntry) -> std::io::Result<()> {
        if self.off {
            return Ok(());
        }
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut line = serde_json::to_vec(entry)?;
        line.push(b'\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        // One write call per line: with O_APPEND, concurrent consoles never interleave
        // inside a line.
        file.write_all(&line)?;
        file.sync_all()
    }

    /// Reads every line back (for tests and `rollcall history`-style tools).
    pub fn read_all(&self) -> Result<Vec<JournalEntry>, OpsError> {
        if self.off {
            return Ok(Vec::new());
        }
        let text = std::fs::read_to_string(&self.path).map_err(|source| OpsError::Journal {
            path: self.path.display().to_string(),
            source,
        })?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l).map_err(|e| OpsError::Journal {
                    path: self.path.display().to_string(),
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                })
            })
            .collect()
    }
}

/// `$XDG_STATE_HOME/rollcall/journal.jsonl`, else `~/.local/state/rollcall/journal.jsonl`
/// (the XDG base directory default for state). Relative XDG paths are ignored, as the
/// specification requires.
pub fn default_path(
    xdg_state_home: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    let base = xdg_state_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| PathBuf::from(h).join(".local").join("state")))?;
    Some(base.join("rollcall").join("journal.jsonl"))
}

/// The local user and host, as far as the environment says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalUser {
    /// `$USER`, else `$LOGNAME`.
    pub user: Option<String>,
    /// The host name.
    pub host: Option<String>,
}

impl LocalUser {
    /// Read from the environment and `/proc`.
    pub fn of_env() -> Self {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|u| !u.is_empty());
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .filter(|h| !h.is_empty());
        Self { user, host }
    }
}

/// Who acts through `connection`, in words: the Kubernetes identity (the
/// server's answer to a SelfSubjectReview, else the kubeconfig's user) with
/// the local user and host ([`actor_of`]).
pub async fn actor(connection: &crate::cluster::connect::Connection) -> String {
    let kube = match crate::cluster::identity::server_username(&connection.client).await {
        Some(name) => Some(name),
        None => connection.user.clone(),
    };
    actor_of(kube.as_deref(), &LocalUser::of_env())
}

/// Who acts, for the journal and the `paused-by` annotation: the Kubernetes
/// identity (`kube`: the server's name for the client, else the kubeconfig's
/// user) and the local `user@host`, as much as is known — `unknown@host`
/// only when nothing better is.
pub fn actor_of(kube: Option<&str>, local: &LocalUser) -> String {
    let (user, host) = (local.user.as_deref(), local.host.as_deref());
    match kube.filter(|k| !k.is_empty()) {
        Some(kube) => match (user, host) {
            (Some(user), Some(host)) => format!("{kube} ({user}@{host})"),
            (Some(user), None) => format!("{kube} ({user})"),
            (None, Some(host)) => format!("{kube} (on {host})"),
            (None, None) => kube.to_owned(),
        },
        None => match (user, host) {
            (Some(user), Some(host)) => format!("{user}@{host}"),
            (Some(user), None) => user.to_owned(),
            (None, Some(host)) => format!("unknown@{host}"),
            (None, None) => "unknown".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    /// Issue 33: a pause or run is attributed to the Kubernetes identity
    /// and the local user as far as they are known; `unknown@host` only when
    /// nothing better is.
    #[test]
    fn the_actor_says_who_as_far_as_is_known() {
        let local = |user: Option<&str>, host: Option<&str>| LocalUser {
            user: user.map(str::to_owned),
            host: host.map(str::to_owned),
        };
        let cases = [
            (
                Some("ana@example.com"),
                local(Some("ana"), Some("jump")),
                "ana@example.com (ana@jump)",
            ),
            (
                Some("system:admin"),
                local(None, Some("vm")),
                "system:admin (on vm)",
            ),
            (Some("kind-admin"), local(None, None), "kind-admin"),
            (
                Some("kind-admin"),
                local(Some("ana"), None),
                "kind-admin (ana)",
            ),
            (None, local(Some("ana"), Some("jump")), "ana@jump"),
            (None, local(None, Some("vm")), "unknown@vm"),
            (Some(""), local(None, Some("vm")), "unknown@vm"),
            (None, local(None, None), "unknown"),
        ];
        for (kube, local, want) in cases {
            assert_eq!(actor_of(kube, &local), want, "{kube:?} {local:?}");
        }
    }

    #[test]
    fn default_path_follows_xdg() {
        let cases = [
            (
                "xdg wins",
                Some("/state"),
                Some("/home/a"),
                Some("/state/rollcall/journal.jsonl"),
            ),
            (
                "relative xdg ignored",
                Some("rel"),
                Some("/home/a"),
                Some("/home/a/.local/state/rollcall/journal.jsonl"),
            ),
            (
                "home fallback",
                None,
                Some("/home/a"),
                Some("/home/a/.local/state/rollcall/journal.jsonl"),
            ),
            ("nothing", None, None, None),
        ];
        for (name, xdg, home, want) in cases {
            let got = default_path(xdg.map(OsStr::new), home.map(OsStr::new));
            assert_eq!(got, want.map(PathBuf::from), "{name}");
        }
    }

    #[test]
    fn an_off_journal_writes_nowhere() {
        let journal = Journal::off();
        journal.append(&JournalEntry::default()).unwrap();
        assert!(journal.read_all().unwrap().is_empty());
    }

    #[test]
    fn appends_one_json_line_per_entry() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("deep").join("journal.jsonl"));
        let first = JournalEntry {
            time: "2026-11-29T13:00:00Z".into(),
            context: "prod".into(),
            user: "ana@laptop".into(),
            daemonset: "kube-system/agent".into(),
            action: JournalAction::Advance,
            node: Some("node-1".into()),
            pod: Some("agent-x".into()),
            pod_uid: Some("uid-1".into()),
            revision_from: Some(1),
            revision_to: Some(2),
            result: "ok".into(),
            message: None,
        };
        let second = JournalEntry {
            action: JournalAction::Pause,
            node: None,
            pod: None,
            pod_uid: None,
            result: "error".into(),
            message: Some("forbidden: no".into()),
            ..first.clone()
        };
        journal.append(&first).unwrap();
        journal.append(&second).unwrap();
        let text = std::fs::read_to_string(journal.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let raw: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(raw["podUid"], "uid-1");
        assert_eq!(raw["revisionFrom"], 1);
        assert_eq!(raw["revisionTo"], 2);
        assert!(!lines[1].contains("podUid"), "{}", lines[1]);
        assert_eq!(journal.read_all().unwrap(), vec![first, second]);
    }

    #[test]
    fn lines_of_older_versions_read_back() {
        let old = r#"{"time":"t","context":"c","user":"u","daemonset":"ns/a","action":"auto-stop","pod_uid":"x","revision_from":1,"revision_to":2,"result":"ok"}"#;
        let entry: JournalEntry = serde_json::from_str(old).unwrap();
        assert_eq!(entry.action, JournalAction::AutoStopped);
        assert_eq!(entry.pod_uid.as_deref(), Some("x"));
        assert_eq!((entry.revision_from, entry.revision_to), (Some(1), Some(2)));
    }

    #[test]
    fn unwritable_path_is_a_journal_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        let journal = Journal::new(blocker.join("journal.jsonl"));
        let err = journal.append(&JournalEntry::default()).unwrap_err();
        assert!(matches!(err, OpsError::Journal { .. }), "{err:?}");
    }
}
