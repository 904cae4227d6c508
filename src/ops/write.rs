//! The closed set of writes rollcall makes, and the one executor that runs them.
//!
//! Every change to the cluster is a [`Write`] value: delete one pod by UID,
//! patch the rollout-state annotations, switch the update strategy (pause and
//! resume), patch the template from a ControllerRevision (rollback). The
//! [`Executor`] runs one at a time, journals each result (fsync) before
//! reporting it, and refuses everything in read-only mode. Deletes are never
//! resent: the executor is given a client without kube's retry layer (which
//! would resend a DELETE after a 429/503/504), and a delete whose answer was
//! lost is resolved by reading the pod back, never guessed. The UID
//! precondition stays as the second guard. The console
//! drives it through [`spawn_effects`]; headless commands call [`Executor::run`].

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Pod as ApiPod;
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::model::Target;
use crate::ops::error::{Attempt, OpsError, from_kube};
use crate::ops::journal::{Journal, JournalEntry};
use crate::ops::journal_action::JournalAction;
use crate::ops::state::{RolloutState, state_patch};
use crate::ops::write_gate::WriteGate;

/// The field manager rollcall writes under.
pub const FIELD_MANAGER: &str = "rollcall";

/// One change to the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// Delete the daemon pod with exactly this UID (a UID precondition: if the
    /// pod was replaced meanwhile, the server answers 409 and nothing is deleted).
    DeletePod {
        /// Namespace.
        namespace: String,
        /// Pod name.
        name: String,
        /// The UID that must still match.
        uid: String,
    },
    /// Merge-patch the `rollcall.dev/...` annotations that differ between
    /// `before` and `after`, optionally only if the DaemonSet still has `resource_version`.
    PatchState {
        /// Namespace.
        namespace: String,
        /// DaemonSet name.
        name: String,
        /// The state as read.
        before: RolloutState,
        /// The state to store.
        after: RolloutState,
        /// The resourceVersion the state was computed from.
        resource_version: Option<String>,
    },
    /// Replace `spec.updateStrategy` and store the state in one merge patch,
    /// only if the DaemonSet is unchanged since it was read (pause, resume).
    PatchStrategy {
        /// Namespace.
        namespace: String,
        /// DaemonSet name.
        name: String,
        /// The complete new `spec.updateStrategy`.
        strategy: Value,
        /// The state as read.
        before: RolloutState,
        /// The state to store with it.
        after: RolloutState,
        /// The resourceVersion the decision was made from.
        resource_version: String,
    },
    /// Strategic-merge-patch the DaemonSet with a ControllerRevision's data
    /// (`{"spec":{"template":{"$patch":"replace",...}}}`), as `kubectl rollout undo`.
    PatchTemplate {
        /// Namespace.
        namespace: String,
        /// DaemonSet name.
        name: String,
        /// The revision's `data`, verbatim.
        data: Value,
    },
}

impl Write {
    /// The verb, resource and object, for messages and error mapping.
    pub fn attempt(&self) -> Attempt {
        match self {
            Self::DeletePod {
                namespace, name, ..
            } => Attempt {
                verb: "delete",
                resource: "pods",
                name: format!("{namespace}/{name}"),
            },
            Self::PatchState {
                namespace, name, ..
            }
            | Self::PatchStrategy {
                namespace, name, ..
            }
            | Self::PatchTemplate {
                namespace, name, ..
            } => Attempt {
                verb: "patch",
                resource: "daemonsets.apps",
                name: format!("{namespace}/{name}"),
            },
        }
    }

    /// The request this write sends: method, path and patch type (`merge`,
    /// `strategic merge`; `None` for a delete).
    pub fn request(&self) -> (&'static str, String, Option<&'static str>) {
        match self {
            Self::DeletePod {
                namespace, name, ..
            } => (
                "DELETE",
                format!("/api/v1/namespaces/{namespace}/pods/{name}"),
                None,
            ),
            Self::PatchState {
                namespace, name, ..
            }
            | Self::PatchStrategy {
                namespace, name, ..
            } => (
                "PATCH",
                format!("/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"),
                Some("merge"),
            ),
            Self::PatchTemplate {
                namespace, name, ..
            } => (
                "PATCH",
                format!("/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"),
                Some("strategic merge"),
            ),
        }
    }

    /// The write as one line for a dry run: the request (method, path, patch
    /// type) and its body, as it would be sent.
    pub fn describe_request(&self) -> String {
        let (method, path, kind) = self.request();
        let kind = kind.map(|k| format!(" ({k})")).unwrap_or_default();
        format!("{method} {path}{kind} {}", self.body())
    }

    /// The request body this write sends (for tests and `--dry-run`-style display).
    pub fn body(&self) -> Value {
        match self {
            Self::DeletePod { uid, .. } => json!({ "preconditions": { "uid": uid } }),
            Self::PatchState {
                before,
                after,
                resource_version,
                ..
            } => state_patch(before, after, resource_version.as_deref()),
            Self::PatchStrategy {
                strategy,
                before,
                after,
                resource_version,
                ..
            } => {
                let mut patch = state_patch(before, after, Some(resource_version));
                patch["spec"] = json!({ "updateStrategy": strategy });
                patch
            }
            Self::PatchTemplate { data, .. } => data.clone(),
        }
    }
}

/// What the journal line should say about a write besides its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The action.
    pub action: JournalAction,
    /// The DaemonSet (`NAMESPACE/NAME` in the journal).
    pub daemonset: Target,
    /// The node, if the write is about one.
    pub node: Option<String>,
    /// The pod name, if any.
    pub pod: Option<String>,
    /// Revision before.
    pub revision_from: Option<i64>,
    /// Revision after.
    pub revision_to: Option<i64>,
    /// A note for the journal line (e.g. the auto-pause reason).
    pub note: Option<String>,
}

impl Record {
    /// `action` on `daemonset`, with nothing else to say yet.
    pub fn new(action: JournalAction, daemonset: Target) -> Self {
        Self {
            action,
            daemonset,
            node: None,
            pod: None,
            revision_from: None,
            revision_to: None,
            note: None,
        }
    }
}

/// A write plus what to journal about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest {
    /// The change.
    pub write: Write,
    /// The journal fields.
    pub record: Record,
}

impl WriteRequest {
    /// A write of rollcall's rollout state (`rollcall.dev/*`; only the keys
    /// that change are sent), journalled as `action`.
    pub fn state(
        snapshot: &crate::ops::snapshot::Snapshot<'_>,
        before: RolloutState,
        after: RolloutState,
        action: JournalAction,
        node: Option<String>,
    ) -> Self {
        let target = snapshot.target();
        WriteRequest {
            write: Write::PatchState {
                namespace: target.namespace.clone(),
                name: target.name.clone(),
                before,
                after,
                resource_version: None,
            },
            record: Record {
                node,
                ..Record::new(action, target)
            },
        }
    }
}

/// What a successful write did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The pod was deleted (or is terminating).
    PodDeleted,
    /// The DaemonSet was patched; its new resourceVersion.
    DaemonSetPatched {
        /// The resourceVersion after the patch.
        resource_version: Option<String>,
    },
}

/// The result of one write as reported to the console.
#[derive(Debug)]
pub struct WriteEvent {
    /// The caller's id for the request.
    pub id: u64,
    /// The request.
    pub request: WriteRequest,
    /// What happened; a journal failure after a successful write is reported
    /// as [`OpsError::Journal`] in `journal_error`, not here.
    pub result: Result<Outcome, OpsError>,
    /// Set when the journal line could not be written.
    pub journal_error: Option<OpsError>,
}

/// Why a write was not sent after its run's gate closed.
pub const GATE_CLOSED: &str = "not sent: rollcall is exiting (interrupted twice)";

/// Runs writes: single flight, no retries, journaled.
#[derive(Clone)]
pub struct Executor {
    client: kube::Client,
    journal: Journal,
    read_only: bool,
    context: String,
    actor: String,
    /// In a dry run, the writes that would have been sent, in order (nothing is
    /// sent or journaled).
    dry_run: Option<DryRun>,
    /// The gate each write passes until its journal line is written (a run
    /// that must exit waits there for it).
    gate: Option<WriteGate>,
}

/// The writes a dry-run executor was asked to make, shared with its clones.
#[derive(Clone, Debug, Default)]
pub struct DryRun {
    planned: std::sync::Arc<std::sync::Mutex<Vec<WriteRequest>>>,
    first: std::sync::Arc<tokio::sync::Notify>,
}

impl DryRun {
    /// The writes recorded so far, in order.
    pub fn planned(&self) -> Vec<WriteRequest> {
        self.planned
            .lock()
            .map(|planned| planned.clone())
            .unwrap_or_default()
    }

    /// Resolves once a pod delete has been recorded (the first step a dry run
    /// of a multi-step flow can show; what follows depends on the cluster reacting).
    pub async fn first_delete(&self) {
        self.first.notified().await;
    }

    fn record(&self, request: &WriteRequest) {
        if let Ok(mut planned) = self.planned.lock() {
            planned.push(request.clone());
        }
        if matches!(request.write, Write::DeletePod { .. }) {
            self.first.notify_one();
        }
    }
}

impl Executor {
    /// An executor writing through `client`, journaling to `journal`.
    pub fn new(
        client: kube::Client,
        journal: Journal,
        read_only: bool,
        context: String,
        actor: String,
    ) -> Self {
        Self {
            client,
            journal,
            read_only,
            context,
            actor,
            dry_run: None,
            gate: None,
        }
    }

    /// The same executor with every write passing `gate`: counted in flight
    /// until journalled, refused once the gate is closed.
    #[must_use]
    pub fn with_gate(mut self, gate: WriteGate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The same executor in dry-run mode: every write is recorded (see
    /// [`Executor::dry_run`]) and answered as if it had succeeded; nothing is
    /// sent to the cluster and nothing is journaled. Overrides read-only.
    #[must_use]
    pub fn into_dry_run(mut self) -> Self {
        self.read_only = false;
        self.dry_run = Some(DryRun::default());
        self
    }

    /// The recorded writes when this is a dry run.
    pub fn dry_run(&self) -> Option<&DryRun> {
        self.dry_run.as_ref()
    }

    /// Whether writes are refused.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The journal this executor appends to.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The user recorded in the journal and annotations.
    pub fn actor(&self) -> &str {
        &self.actor
    }

    /// Journals something noticed rather than done (a GitOps controller
    /// reverting a pause or rollback), once: when a line with the same
    /// DaemonSet, action and message is already in the journal, nothing is
    /// written. Not a cluster write, so read-only mode allows it. Returns
    /// whether a line was written.
    pub fn note_once(&self, record: &Record) -> Result<bool, OpsError> {
        let entry = JournalEntry {
            time: crate::clock::now().to_string(),
            context: self.context.clone(),
            user: self.actor.clone(),
            daemonset: record.daemonset.key(),
            action: record.action,
            node: record.node.clone(),
            result: "ok".to_owned(),
            message: record.note.clone(),
            ..JournalEntry::default()
        };
        // A journal not written yet has no lines.
        let seen = self.journal.read_all().unwrap_or_default().iter().any(|e| {
            e.daemonset == entry.daemonset && e.action == entry.action && e.message == entry.message
        });
        if seen {
            return Ok(false);
        }
        self.journal.append(&entry)?;
        Ok(true)
    }

    /// Runs one write, journals it (fsync), returns the result. A journal failure
    /// after a successful write is returned as the error only when the write
    /// itself succeeded and nothing else is left to report it.
    pub async fn run(&self, request: &WriteRequest) -> Result<Outcome, OpsError> {
        let (result, journal_error) = self.run_journaled(request).await;
        match (result, journal_error) {
            (Err(err), _) => Err(err),
            (Ok(_), Some(journal_err)) => Err(journal_err),
            (Ok(outcome), None) => Ok(outcome),
        }
    }

    async fn run_journaled(
        &self,
        request: &WriteRequest,
    ) -> (Result<Outcome, OpsError>, Option<OpsError>) {
        if let Some(dry_run) = &self.dry_run {
            dry_run.record(request);
            let outcome = match request.write {
                Write::DeletePod { .. } => Outcome::PodDeleted,
                _ => Outcome::DaemonSetPatched {
                    resource_version: None,
                },
            };
            return (Ok(outcome), None);
        }
        if self.read_only {
            let action = request.record.action.to_string();
            return (Err(OpsError::ReadOnly { action }), None);
        }
        // Held until the journal line is written (dropped at the return).
        let _pass = match self.gate.as_ref().map(WriteGate::enter) {
            Some(None) => return (Err(OpsError::Invalid(GATE_CLOSED.to_owned())), None),
            Some(Some(pass)) => Some(pass),
            None => None,
        };
        let mut result = execute(&self.client, &request.write).await;
        let mut request = std::borrow::Cow::Borrowed(request);
        if let (
            Err(err),
            Write::DeletePod {
                namespace,
                name,
                uid,
            },
        ) = (&result, &request.write)
            && err.is_transient()
            && pod_is_deleted(&self.client, namespace, name, uid).await
        {
            result = Ok(Outcome::PodDeleted);
            request.to_mut().record.note = Some("deleted (reply lost)".to_owned());
        }
        let entry = self.entry(&request, &result);
        (result, self.journal.append(&entry).err())
    }

    fn entry(&self, request: &WriteRequest, result: &Result<Outcome, OpsError>) -> JournalEntry {
        let pod_uid = match &request.write {
            Write::DeletePod { uid, .. } => Some(uid.clone()),
            _ => None,
        };
        JournalEntry {
            time: crate::clock::now().to_string(),
            context: self.context.clone(),
            user: self.actor.clone(),
            daemonset: request.record.daemonset.key(),
            action: request.record.action,
            node: request.record.node.clone(),
            pod: request.record.pod.clone(),
            pod_uid,
            revision_from: request.record.revision_from,
            revision_to: request.record.revision_to,
            result: if result.is_ok() { "ok" } else { "error" }.to_owned(),
            message: match result {
                Ok(_) => request.record.note.clone(),
                Err(err) => Some(err.to_string()),
            },
        }
    }
}

/// Whether the pod with `uid` is gone or terminating, read back after a delete
/// whose answer was lost. A read that fails too leaves the outcome unknown
/// (`false`: the delete is reported as failed, and the watch shows the truth).
async fn pod_is_deleted(client: &kube::Client, namespace: &str, name: &str, uid: &str) -> bool {
    // The upstream type: kube's typed `Api` needs its `ObjectMeta`.
    let pods: Api<ApiPod> = Api::namespaced(client.clone(), namespace);
    match pods.get_opt(name).await {
        Ok(None) => true,
        Ok(Some(pod)) => {
            pod.metadata.uid.as_deref().unwrap_or_default() != uid
                || pod.metadata.deletion_timestamp.is_some()
        }
        Err(_) => false,
    }
}

/// Sends one write to the API server (see the module comment on retries).
pub async fn execute(client: &kube::Client, write: &Write) -> Result<Outcome, OpsError> {
    let attempt = write.attempt();
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    match write {
        Write::DeletePod {
            namespace,
            name,
            uid,
        } => {
            let pods: Api<ApiPod> = Api::namespaced(client.clone(), namespace);
            let delete = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: Some(uid.clone()),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            pods.delete(name, &delete)
                .await
                .map_err(|e| from_kube(&e, &attempt))?;
            Ok(Outcome::PodDeleted)
        }
        Write::PatchState {
            namespace, name, ..
        }
        | Write::PatchStrategy {
            namespace, name, ..
        } => {
            let api: Api<DaemonSet> = Api::namespaced(client.clone(), namespace);
            let ds = api
                .patch(name, &params, &Patch::Merge(write.body()))
                .await
                .map_err(|e| from_kube(&e, &attempt))?;
            Ok(Outcome::DaemonSetPatched {
                resource_version: ds.metadata.resource_version,
            })
        }
        Write::PatchTemplate {
            namespace,
            name,
            data,
        } => {
            let api: Api<DaemonSet> = Api::namespaced(client.clone(), namespace);
            let ds = api
                .patch(name, &params, &Patch::Strategic(data))
                .await
                .map_err(|e| from_kube(&e, &attempt))?;
            Ok(Outcome::DaemonSetPatched {
                resource_version: ds.metadata.resource_version,
            })
        }
    }
}

/// Starts the effects task: it takes `(id, request)` pairs in order, runs them
/// one at a time, and sends each [`WriteEvent`] back. Ends when the sender is dropped.
pub fn spawn_effects(
    executor: Executor,
    events: mpsc::UnboundedSender<WriteEvent>,
) -> mpsc::UnboundedSender<(u64, WriteRequest)> {
    let (tx, mut rx) = mpsc::unbounded_channel::<(u64, WriteRequest)>();
    tokio::spawn(async move {
        while let Some((id, request)) = rx.recv().await {
            let (result, journal_error) = executor.run_journaled(&request).await;
            let event = WriteEvent {
                id,
                request,
                result,
                journal_error,
            };
            if events.send(event).is_err() {
                break;
            }
        }
    });
    tx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_carries_uid_precondition() {
        let write = Write::DeletePod {
            namespace: "ns".into(),
            name: "agent-x".into(),
            uid: "u-1".into(),
        };
        assert_eq!(write.body(), json!({"preconditions":{"uid":"u-1"}}));
        assert_eq!(write.attempt().describe(), "delete pods ns/agent-x");
    }

    #[test]
    fn strategy_patch_has_spec_and_annotations_and_precondition() {
        let write = Write::PatchStrategy {
            namespace: "ns".into(),
            name: "agent".into(),
            strategy: json!({"type":"OnDelete","rollingUpdate":null}),
            before: RolloutState::default(),
            after: RolloutState {
                mode: crate::ops::state::Mode::Auto,
                ..RolloutState::default()
            },
            resource_version: "7".into(),
        };
        let body = write.body();
        assert_eq!(
            body["spec"],
            json!({"updateStrategy":{"type":"OnDelete","rollingUpdate":null}})
        );
        assert_eq!(body["metadata"]["resourceVersion"], "7");
        assert!(body["metadata"]["annotations"].is_object());
        assert!(
            body["spec"].get("template").is_none(),
            "pause must never touch the template"
        );
    }
}

#[cfg(test)]
mod executor_tests {
    use super::*;

    fn test_target() -> Target {
        Target {
            namespace: "ns".into(),
            name: "ds".into(),
        }
    }

    #[tokio::test]
    async fn dry_run_records_and_sends_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("j.jsonl"));
        // Port 9 (discard) on loopback: a request, if sent, would fail as unreachable.
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let executor =
            Executor::new(client, journal.clone(), true, "ctx".into(), "ana".into()).into_dry_run();
        assert!(!executor.read_only());
        let request = WriteRequest {
            write: Write::DeletePod {
                namespace: "ns".into(),
                name: "p".into(),
                uid: "u".into(),
            },
            record: Record::new(JournalAction::Advance, test_target()),
        };
        assert_eq!(executor.run(&request).await.unwrap(), Outcome::PodDeleted);
        let dry_run = executor.dry_run().unwrap();
        dry_run.first_delete().await;
        assert_eq!(dry_run.planned(), std::slice::from_ref(&request));
        assert_eq!(
            request.write.describe_request(),
            r#"DELETE /api/v1/namespaces/ns/pods/p {"preconditions":{"uid":"u"}}"#
        );
        assert!(!journal.path().exists());
    }

    #[tokio::test]
    async fn read_only_refuses_before_any_request_and_journals_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("j.jsonl"));
        // Port 9 (discard) on loopback: if a request were sent it would fail as unreachable.
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let executor = Executor::new(client, journal.clone(), true, "ctx".into(), "ana".into());
        let request = WriteRequest {
            write: Write::DeletePod {
                namespace: "ns".into(),
                name: "p".into(),
                uid: "u".into(),
            },
            record: Record::new(JournalAction::Advance, test_target()),
        };
        let err = executor.run(&request).await.unwrap_err();
        assert!(matches!(err, OpsError::ReadOnly { .. }), "{err:?}");
        assert!(!journal.path().exists());
    }

    fn delete_on(node: &str) -> WriteRequest {
        WriteRequest {
            write: Write::DeletePod {
                namespace: "ns".into(),
                name: "p".into(),
                uid: "u".into(),
            },
            record: Record {
                node: Some(node.into()),
                ..Record::new(JournalAction::Advance, test_target())
            },
        }
    }

    #[tokio::test]
    async fn a_closing_gate_waits_for_the_delete_in_flight_to_be_journalled_and_sends_no_more() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("j.jsonl"));
        // A server that takes the delete and answers only after a while
        // (by hanging up: the executor journals the error).
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (accepted, mut was_accepted) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let _ = accepted.send(()).await;
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    drop(socket);
                });
            }
        });
        let config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let gate = WriteGate::default();
        let executor = Executor::new(client, journal.clone(), false, "ctx".into(), "ana".into())
            .with_gate(gate.clone());
        let in_flight = {
            let executor = executor.clone();
            tokio::spawn(async move { executor.run(&delete_on("n1")).await })
        };
        was_accepted
            .recv()
            .await
            .expect("the delete reached the server");
        assert_eq!(gate.in_flight(), 1);
        assert!(
            journal.read_all().unwrap_or_default().is_empty(),
            "not answered yet"
        );
        let drained = gate
            .close_and_drain(std::time::Duration::from_secs(10))
            .await;
        assert!(drained, "the delete in flight ended within the patience");
        let lines = journal.read_all().unwrap();
        assert_eq!(
            lines.len(),
            1,
            "its journal line is written before the exit"
        );
        assert_eq!(lines[0].node.as_deref(), Some("n1"));
        in_flight.await.unwrap().unwrap_err();
        // The delete, and the read-back of a delete whose reply was lost.
        while was_accepted.try_recv().is_ok() {}
        let refused = executor.run(&delete_on("n2")).await.unwrap_err();
        assert_eq!(refused.to_string(), GATE_CLOSED);
        assert_eq!(
            journal.read_all().unwrap().len(),
            1,
            "nothing sent, nothing journalled"
        );
        assert!(
            was_accepted.try_recv().is_err(),
            "no second request reached the server"
        );
    }

    #[tokio::test]
    async fn unreachable_server_is_reported_and_journaled() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("j.jsonl"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let config = kube::Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let executor = Executor::new(client, journal.clone(), false, "ctx".into(), "ana".into());
        let request = WriteRequest {
            write: Write::DeletePod {
                namespace: "ns".into(),
                name: "p".into(),
                uid: "u".into(),
            },
            record: Record {
                node: Some("n1".into()),
                ..Record::new(JournalAction::Advance, test_target())
            },
        };
        let err = executor.run(&request).await.unwrap_err();
        assert!(matches!(err, OpsError::Unreachable { .. }), "{err:?}");
        let lines = journal.read_all().unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(
            (lines[0].result.as_str(), lines[0].pod_uid.as_deref()),
            ("error", Some("u"))
        );
    }
}
