//! The watch task: list-then-watch streams ([`super::stream`], with stall
//! detection and visible throttling) for nodes, DaemonSets and, once a target
//! DaemonSet is known, its pods, ControllerRevisions and the events of its
//! pods and of nodes, and every pod of the cluster as node usage (what fit
//! reads; optional: a user who may not list pods cluster-wide goes without;
//! deferred under the fleet matrix until that cluster's console opens, see
//! [`spawn_without_usage`]), merged into one stream and applied to the [`Cache`] by
//! this one writer. When the server changed under us (state went backwards,
//! a DaemonSet replaced without a delete) every stream is restarted, so
//! everything is re-listed. After each change it sends a payload-free
//! notification; readers pull from the cache. Never polls, never writes to the API.
//!
//! Every stream shares the server's bookmark [`Rhythm`]: assumed from the
//! server's kind (one `GET /version` at start, and again after the server
//! changed) until a stream learns it, then kept for as long as the server is
//! the same, so a silence right after start is caught as soon as a later one.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::StreamExt;
use futures::stream::{BoxStream, SelectAll};
use kube::runtime::watcher;
use tokio::sync::{Notify, mpsc};

use super::cache::{Cache, WatchUpdate};
use super::request::{Object, collection_url};
use super::rhythm::Rhythm;
use super::server_kind;
use super::status::StreamKind;
use super::stream::{self, Selector, Signal, StreamConfig};
use crate::model::{DaemonSet, UsagePod};

/// The cache plus the change notification, shared by the writer and readers.
#[derive(Debug, Default)]
pub struct Shared {
    cache: Mutex<Cache>,
    notify: Notify,
}

impl Shared {
    /// Locks the cache (a poisoned lock still holds consistent data: every
    /// mutation is a plain map update).
    pub fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the next change notification (changes coalesce into one wake-up).
    pub async fn changed(&self) {
        self.notify.notified().await;
    }

    /// Wakes the reader.
    pub fn notify(&self) {
        self.notify.notify_one();
    }

    /// Applies one update seen at `now` and wakes the reader: the writer's step.
    pub fn apply(&self, update: WatchUpdate, now: jiff::Timestamp) {
        self.lock().apply(update, now);
        self.notify();
    }
}

/// The DaemonSet the console is focused on (the one identity, [`crate::model::Target`]).
pub use crate::model::Target;

/// The running watch task; dropping it stops the watches.
#[derive(Debug)]
pub struct WatchHandle {
    /// The cache the task writes.
    pub shared: Arc<Shared>,
    targets: mpsc::UnboundedSender<Target>,
    usage: UsageSwitch,
    task: tokio::task::JoinHandle<()>,
}

impl WatchHandle {
    /// Focuses the watches on another DaemonSet.
    pub fn set_target(&self, target: Target) {
        // The task only ends when this handle drops, so a send cannot fail while we hold it.
        let _ = self.targets.send(target);
    }

    /// The switch that starts the node-usage stream of a watch spawned
    /// without it (a no-op on one that has it).
    pub fn usage_switch(&self) -> UsageSwitch {
        self.usage.clone()
    }
}

/// Starts a watch's node-usage stream (every pod of the cluster, for fit)
/// when it was spawned without it; cheap to clone, kept by whoever opens
/// the cluster's console.
#[derive(Clone, Debug)]
pub struct UsageSwitch(Arc<tokio::sync::watch::Sender<bool>>);

impl UsageSwitch {
    /// Starts the stream (once the node list is in); it then runs for as
    /// long as the watch does.
    pub fn start(&self) {
        self.0.send_replace(true);
    }

    /// Whether the stream was asked for.
    pub fn started(&self) -> bool {
        *self.0.borrow()
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the watch task: nodes and DaemonSets (in `namespace`, or all
/// namespaces when `None`) at once; the target's streams once it is set and its
/// DaemonSet has been seen (its selector decides which pods to watch).
///
/// Give it a client without kube's automatic retries
/// (`Connection::watch_client`) so throttling and 5xx show in the status.
pub fn spawn(
    client: kube::Client,
    namespace: Option<String>,
    target: Option<Target>,
) -> WatchHandle {
    spawn_with(client, namespace, target, StreamConfig::default())
}

/// [`spawn`] without the node-usage stream until its
/// [`WatchHandle::usage_switch`] is started: the fleet matrix's watch (its
/// rows never read fit; every pod of every cluster would be the largest
/// list and one more connection per cluster), switched on when the
/// cluster's console opens, so its fit and usage come in then.
pub fn spawn_without_usage(
    client: kube::Client,
    namespace: Option<String>,
    target: Option<Target>,
) -> WatchHandle {
    start(client, namespace, target, StreamConfig::default(), false)
}

/// [`spawn`] with explicit stream timings (tests use short ones).
pub fn spawn_with(
    client: kube::Client,
    namespace: Option<String>,
    target: Option<Target>,
    config: StreamConfig,
) -> WatchHandle {
    start(client, namespace, target, config, true)
}

/// Starts the task, the node-usage stream at once or when switched on.
fn start(
    client: kube::Client,
    namespace: Option<String>,
    target: Option<Target>,
    config: StreamConfig,
    usage_at_once: bool,
) -> WatchHandle {
    let shared = Arc::new(Shared::default());
    let (targets, target_rx) = mpsc::unbounded_channel();
    if let Some(target) = target {
        let _ = targets.send(target);
    }
    let (usage, usage_wanted) = tokio::sync::watch::channel(usage_at_once);
    let streams = Streams {
        client,
        config,
        rhythm: Rhythm::default(),
    };
    let task = tokio::spawn(run(
        streams,
        Arc::clone(&shared),
        namespace,
        target_rx,
        usage_wanted,
    ));
    WatchHandle {
        shared,
        targets,
        usage: UsageSwitch(Arc::new(usage)),
        task,
    }
}

type UpdateStream = BoxStream<'static, WatchUpdate>;

/// What every stream is built from.
struct Streams {
    client: kube::Client,
    config: StreamConfig,
    /// The server's bookmark rhythm, shared by every stream.
    rhythm: Rhythm,
}

/// How long the server's kind may take to say itself before its streams go
/// on assuming a kube-apiserver's rhythm.
const KIND_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Asks the server what it is, in the background, and sets the rhythm its
/// streams assume accordingly (a waiting stream re-arms its bound).
fn learn_kind(streams: &Streams) -> tokio::task::JoinHandle<()> {
    let client = streams.client.clone();
    let rhythm = streams.rhythm.clone();
    tokio::spawn(async move {
        let kind = server_kind::detect(&client, KIND_WITHIN).await;
        tracing::info!(
            ?kind,
            interval_secs = kind.bookmark_interval().as_secs_f32(),
            "server kind"
        );
        rhythm.assume(kind);
    })
}

/// Aborts the kind probe when the watch task ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn run(
    streams: Streams,
    shared: Arc<Shared>,
    namespace: Option<String>,
    mut target_rx: mpsc::UnboundedReceiver<Target>,
    mut usage_wanted: tokio::sync::watch::Receiver<bool>,
) {
    let client = &streams;
    let mut _kind = AbortOnDrop(learn_kind(client));
    let mut base: SelectAll<UpdateStream> = SelectAll::new();
    base.push(node_stream(client));
    base.push(daemonset_stream(client, namespace.as_deref()));
    {
        let mut cache = shared.lock();
        cache.stream_started(StreamKind::Nodes);
        cache.stream_started(StreamKind::DaemonSets);
    }
    // Every pod of the cluster is the largest list and nothing waits for it:
    // it starts once the node list is in, so over a slow link the lists a
    // first view needs get the bandwidth first.
    let mut usage_started = false;
    let mut targeted: SelectAll<UpdateStream> = SelectAll::new();
    let mut target: Option<Target> = None;
    let mut target_started = false;
    loop {
        let update = tokio::select! {
            Some(update) = base.next() => update,
            Some(update) = targeted.next(), if !targeted.is_empty() => update,
            Ok(()) = usage_wanted.changed(), if !usage_started => {
                if *usage_wanted.borrow_and_update() && nodes_listed(&shared) {
                    start_usage(client, &shared, &mut base);
                    usage_started = true;
                    shared.notify();
                }
                continue;
            }
            next = target_rx.recv() => {
                let Some(next) = next else { return };
                tracing::info!(target = %next.key(), "focusing on daemonset");
                targeted = SelectAll::new();
                target_started = false;
                target = Some(next);
                shared.lock().reset_target();
                start_targeted(client, &shared, target.as_ref(), &mut targeted, &mut target_started, true);
                shared.notify();
                continue;
            }
        };
        // Whatever else the streams already hold is applied under the same
        // lock, with one wake-up: under churn the reader takes the lock once
        // per batch, not once per event.
        let mut batch = vec![update];
        while batch.len() < BATCH {
            let ready = match ready_now(&mut base).await {
                Some(update) => Some(update),
                None if !targeted.is_empty() => ready_now(&mut targeted).await,
                None => None,
            };
            let Some(update) = ready else { break };
            batch.push(update);
        }
        let relist = apply_batch(&shared, batch, crate::clock::now());
        if let Some(reason) = &relist {
            // Every stream starts over with a list; the old data stays on
            // screen, marked as re-listing, until each list completes.
            tracing::warn!(%reason, "server changed: relisting every stream");
            // A new server: its rhythm is learnt afresh, its kind asked again.
            client.rhythm.forget();
            _kind = AbortOnDrop(learn_kind(client));
            base = SelectAll::new();
            base.push(node_stream(client));
            base.push(daemonset_stream(client, namespace.as_deref()));
            usage_started = false;
            targeted = SelectAll::new();
            target_started = false;
        }
        if !usage_started && *usage_wanted.borrow() && nodes_listed(&shared) {
            start_usage(client, &shared, &mut base);
            usage_started = true;
        }
        if !target_started {
            start_targeted(
                client,
                &shared,
                target.as_ref(),
                &mut targeted,
                &mut target_started,
                relist.is_none(),
            );
        }
        shared.notify();
    }
}

/// At most this many updates are applied under one lock (the reader waits
/// for the lock at most this long: a few milliseconds).
pub const BATCH: usize = 512;

/// The next update a stream already holds, without waiting for one.
async fn ready_now(streams: &mut SelectAll<UpdateStream>) -> Option<WatchUpdate> {
    std::future::poll_fn(|cx| match streams.poll_next_unpin(cx) {
        std::task::Poll::Ready(update) => std::task::Poll::Ready(update),
        std::task::Poll::Pending => std::task::Poll::Ready(None),
    })
    .await
}

/// Applies `batch` in order under one lock (the caller wakes the reader).
/// Stops at an update after which everything must be re-listed (the rest
/// came from the streams being replaced) and returns why.
fn apply_batch(shared: &Shared, batch: Vec<WatchUpdate>, now: jiff::Timestamp) -> Option<String> {
    let mut cache = shared.lock();
    let mut relist = None;
    for update in batch {
        if let WatchUpdate::Error(kind, message) = &update {
            tracing::warn!(stream = kind.label(), error = %message, "watch failed, retrying");
        }
        cache.apply(update, now);
        relist = cache.take_relist();
        if relist.is_some() {
            break;
        }
    }
    relist
}

/// Starts the pod, revision and event streams once the target DaemonSet is in
/// the cache; `fresh` resets their status (a new target), otherwise a restart
/// keeps it (the data on screen is re-listed, not gone).
fn start_targeted(
    client: &Streams,
    shared: &Shared,
    target: Option<&Target>,
    streams: &mut SelectAll<UpdateStream>,
    started: &mut bool,
    fresh: bool,
) {
    let Some(target) = target else { return };
    let mut cache = shared.lock();
    let Some(selector) = cache
        .daemonset(target)
        .and_then(|ds| ds.spec.as_ref())
        .map(|spec| spec.selector.clone())
    else {
        return;
    };
    let labels = match kube::core::Selector::try_from(selector) {
        Ok(selector) => selector.to_string(),
        Err(err) => {
            cache.apply(
                WatchUpdate::Error(StreamKind::Pods, format!("daemonset selector: {err}")),
                crate::clock::now(),
            );
            *started = true;
            return;
        }
    };
    let ns = target.namespace.as_str();
    let by_labels = Selector {
        labels: Some(labels),
        fields: None,
    };
    streams.push(typed_stream(
        client,
        Some(ns),
        by_labels.clone(),
        StreamKind::Pods,
        WatchUpdate::Pod,
    ));
    // The controller lists revisions by the DaemonSet's selector too.
    streams.push(typed_stream(
        client,
        Some(ns),
        by_labels,
        StreamKind::Revisions,
        WatchUpdate::Revision,
    ));
    streams.push(typed_stream(
        client,
        Some(ns),
        fields("involvedObject.kind=Pod"),
        StreamKind::PodEvents,
        WatchUpdate::PodEvent,
    ));
    if fresh {
        for kind in [
            StreamKind::Pods,
            StreamKind::Revisions,
            StreamKind::PodEvents,
        ] {
            cache.stream_started(kind);
        }
    }
    *started = true;
}

fn fields(selector: &str) -> Selector {
    Selector {
        labels: None,
        fields: Some(selector.to_owned()),
    }
}

fn node_stream(client: &Streams) -> UpdateStream {
    let nodes = typed_stream(
        client,
        None,
        Selector::default(),
        StreamKind::Nodes,
        WatchUpdate::Node,
    );
    // Node events live in whichever namespace the reporter chose (usually
    // `default`), so they are watched across namespaces, filtered by kind.
    let events = typed_stream(
        client,
        None,
        fields("involvedObject.kind=Node"),
        StreamKind::NodeEvents,
        WatchUpdate::NodeEvent,
    );
    futures::stream::select(nodes, events).boxed()
}

/// Adds the node-usage stream to `base`.
fn start_usage(client: &Streams, shared: &Shared, base: &mut SelectAll<UpdateStream>) {
    base.push(usage_stream(client));
    shared.lock().stream_started(StreamKind::NodeUsage);
}

/// Whether the node list is in (the usage stream's cue to start).
fn nodes_listed(shared: &Shared) -> bool {
    shared
        .lock()
        .streams()
        .get(&StreamKind::Nodes)
        .is_some_and(super::status::StreamStatus::settled)
}

/// Every pod of the cluster, decoded as what it takes from its node.
fn usage_stream(client: &Streams) -> UpdateStream {
    typed_stream::<UsagePod>(
        client,
        None,
        Selector::default(),
        StreamKind::NodeUsage,
        WatchUpdate::Usage,
    )
}

fn daemonset_stream(client: &Streams, namespace: Option<&str>) -> UpdateStream {
    typed_stream::<DaemonSet>(
        client,
        namespace,
        Selector::default(),
        StreamKind::DaemonSets,
        WatchUpdate::DaemonSet,
    )
}

/// One list-then-watch stream, its signals turned into the merged item type.
fn typed_stream<K>(
    streams: &Streams,
    namespace: Option<&str>,
    selector: Selector,
    kind: StreamKind,
    wrap: fn(watcher::Event<K>) -> WatchUpdate,
) -> UpdateStream
where
    K: Object,
{
    let url = collection_url::<K>(namespace);
    stream::spawn(
        kind.label(),
        streams.client.clone(),
        url,
        selector,
        streams.config,
        streams.rhythm.clone(),
    )
    .map(move |signal| match signal {
        Signal::Event(event) => wrap(event),
        Signal::Alive => WatchUpdate::Alive(kind),
        Signal::Expecting(total) => WatchUpdate::Expecting(kind, total),
        Signal::Failed(message) => WatchUpdate::Error(kind, message),
        Signal::Stalled { silent_for } => WatchUpdate::Stalled(kind, silent_for),
        Signal::Throttled { retry_in } => WatchUpdate::Throttled(kind, retry_in),
        Signal::ServerChanged(message) => WatchUpdate::ServerChanged(kind, message),
        Signal::Forbidden(message) => WatchUpdate::Forbidden(kind, message),
    })
    .boxed()
}
