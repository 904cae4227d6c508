//! The watch task: kube-runtime watchers (with backoff) for nodes, DaemonSets
//! and, once a target DaemonSet is known, its pods, ControllerRevisions and the
//! events of its pods and of nodes, merged into one stream and applied to the
//! [`Cache`] by this one writer. After each change it sends a payload-free
//! notification; readers pull from the cache. Never polls, never writes to the API.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::stream::{BoxStream, SelectAll};
use futures::{StreamExt, TryStreamExt};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::{Notify, mpsc};

use super::cache::{Cache, WatchUpdate};
use super::status::StreamKind;
use crate::model::{ControllerRevision, DaemonSet, Event, Node, Pod};

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

/// The DaemonSet the console is focused on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl Target {
    /// `namespace/name`, the cache key.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The running watch task; dropping it stops the watches.
#[derive(Debug)]
pub struct WatchHandle {
    /// The cache the task writes.
    pub shared: Arc<Shared>,
    targets: mpsc::UnboundedSender<Target>,
    task: tokio::task::JoinHandle<()>,
}

impl WatchHandle {
    /// Focuses the watches on another DaemonSet.
    pub fn set_target(&self, target: Target) {
        // The task only ends when this handle drops, so a send cannot fail while we hold it.
        let _ = self.targets.send(target);
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
pub fn spawn(
    client: kube::Client,
    namespace: Option<String>,
    target: Option<Target>,
) -> WatchHandle {
    let shared = Arc::new(Shared::default());
    let (targets, target_rx) = mpsc::unbounded_channel();
    if let Some(target) = target {
        let _ = targets.send(target);
    }
    let task = tokio::spawn(run(client, Arc::clone(&shared), namespace, target_rx));
    WatchHandle {
        shared,
        targets,
        task,
    }
}

type UpdateStream = BoxStream<'static, WatchUpdate>;

async fn run(
    client: kube::Client,
    shared: Arc<Shared>,
    namespace: Option<String>,
    mut target_rx: mpsc::UnboundedReceiver<Target>,
) {
    let mut base: SelectAll<UpdateStream> = SelectAll::new();
    base.push(node_stream(&client));
    base.push(daemonset_stream(&client, namespace.as_deref()));
    {
        let mut cache = shared.lock();
        cache.stream_started(StreamKind::Nodes);
        cache.stream_started(StreamKind::DaemonSets);
    }
    let mut targeted: SelectAll<UpdateStream> = SelectAll::new();
    let mut target: Option<Target> = None;
    let mut target_started = false;
    loop {
        let update = tokio::select! {
            Some(update) = base.next() => update,
            Some(update) = targeted.next(), if !targeted.is_empty() => update,
            next = target_rx.recv() => {
                let Some(next) = next else { return };
                tracing::info!(target = %next.key(), "focusing on daemonset");
                targeted = SelectAll::new();
                target_started = false;
                target = Some(next);
                shared.lock().reset_target();
                start_targeted(&client, &shared, target.as_ref(), &mut targeted, &mut target_started);
                shared.notify();
                continue;
            }
        };
        if let WatchUpdate::Error(kind, message) = &update {
            tracing::warn!(stream = kind.label(), error = %message, "watch failed, retrying");
        }
        shared.apply(update, jiff::Timestamp::now());
        if !target_started {
            start_targeted(
                &client,
                &shared,
                target.as_ref(),
                &mut targeted,
                &mut target_started,
            );
        }
        shared.notify();
    }
}

/// Starts the pod, revision and event streams once the target DaemonSet is in the cache.
fn start_targeted(
    client: &kube::Client,
    shared: &Shared,
    target: Option<&Target>,
    streams: &mut SelectAll<UpdateStream>,
    started: &mut bool,
) {
    let Some(target) = target else { return };
    let mut cache = shared.lock();
    let Some(selector) = cache
        .daemonset(&target.key())
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
                jiff::Timestamp::now(),
            );
            *started = true;
            return;
        }
    };
    let ns = target.namespace.as_str();
    let config = watcher::Config::default().labels(&labels);
    streams.push(typed_stream(
        kube::Api::<Pod>::namespaced(client.clone(), ns),
        config.clone(),
        StreamKind::Pods,
        WatchUpdate::Pod,
    ));
    // The controller lists revisions by the DaemonSet's selector too.
    streams.push(typed_stream(
        kube::Api::<ControllerRevision>::namespaced(client.clone(), ns),
        config,
        StreamKind::Revisions,
        WatchUpdate::Revision,
    ));
    streams.push(typed_stream(
        kube::Api::<Event>::namespaced(client.clone(), ns),
        watcher::Config::default().fields("involvedObject.kind=Pod"),
        StreamKind::PodEvents,
        WatchUpdate::PodEvent,
    ));
    for kind in [
        StreamKind::Pods,
        StreamKind::Revisions,
        StreamKind::PodEvents,
    ] {
        cache.stream_started(kind);
    }
    *started = true;
}

fn node_stream(client: &kube::Client) -> UpdateStream {
    let nodes = typed_stream(
        kube::Api::<Node>::all(client.clone()),
        watcher::Config::default(),
        StreamKind::Nodes,
        WatchUpdate::Node,
    );
    // Node events live in whichever namespace the reporter chose (usually
    // `default`), so they are watched across namespaces, filtered by kind.
    let events = typed_stream(
        kube::Api::<Event>::all(client.clone()),
        watcher::Config::default().fields("involvedObject.kind=Node"),
        StreamKind::NodeEvents,
        WatchUpdate::NodeEvent,
    );
    futures::stream::select(nodes, events).boxed()
}

fn daemonset_stream(client: &kube::Client, namespace: Option<&str>) -> UpdateStream {
    let api = match namespace {
        Some(ns) => kube::Api::<DaemonSet>::namespaced(client.clone(), ns),
        None => kube::Api::<DaemonSet>::all(client.clone()),
    };
    typed_stream(
        api,
        watcher::Config::default(),
        StreamKind::DaemonSets,
        WatchUpdate::DaemonSet,
    )
}

/// watcher, then backoff, then into the merged item type; errors become
/// [`WatchUpdate::Error`] items and the watcher keeps retrying.
fn typed_stream<K>(
    api: kube::Api<K>,
    config: watcher::Config,
    kind: StreamKind,
    wrap: fn(watcher::Event<K>) -> WatchUpdate,
) -> UpdateStream
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    watcher(api, config)
        .default_backoff()
        .map_ok(wrap)
        .map(move |item| item.unwrap_or_else(|err| WatchUpdate::Error(kind, err.to_string())))
        .boxed()
}
