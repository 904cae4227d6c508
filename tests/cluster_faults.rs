//! The fault matrix: the console's cluster layer (the same watch task and
//! cache the console draws from) against the embedded cluster behind
//! `sim --fault` faults — stalled watches, a TCP freeze, 429 with a long
//! Retry-After, bursts of 503 and 500, 410 Gone, cut watches, a slow link,
//! and a server restarted with new state (versions forward, versions
//! backwards, a new CA).
//!
//! Each case samples, every 50 ms, whether the cache's model (nodes and the
//! target's pods, by resourceVersion) equals the server's own state (read
//! straight from its store: the strictest "plain list") and whether the status
//! says live. It asserts that the status is never "live" while the model has
//! been wrong for longer than the detection bound, measures and prints the time
//! from the end of the fault until model and truth agree under a live status,
//! and asserts a bound on it. Faults last a few seconds; bookmarks come every
//! 500 ms so a stall is detectable within 2 s. Two cases run as the console
//! does (its client, its stream timings): a header-only 429 (kube-apiserver's
//! Priority and Fairness answer) and a stall before the bookmark rhythm was
//! learnt.

use std::collections::BTreeMap;
use std::time::Duration;

use rollcall::cluster::status::{StreamKind, StreamState};
use rollcall::cluster::stream::StreamConfig;
use rollcall::cluster::watch::{self, Target, WatchHandle};
use rollcall::sim::embedded::{EmbeddedOptions, Simulation};
use rollcall::sim::fault::{self, Faults};
use rollcall::sim::resources::ResourceKind;
use rollcall::sim::server::{ServeOptions, ServerHandle, serve};
use rollcall::sim::store::Store;
use rollcall::sim::tls::TlsMaterial;
use serde_json::{Value, json};
use tokio::time::Instant;

const NAMESPACE: &str = "kube-system";
const TARGET: &str = "node-agent";
const BOOKMARKS: Duration = Duration::from_millis(500);
/// Stall detection: twice the bookmark gap plus a second, plus a sampling margin.
const GRACE: Duration = Duration::from_secs(3);
const SAMPLE: Duration = Duration::from_millis(50);

fn stream_config() -> StreamConfig {
    StreamConfig {
        list_stall: Duration::from_secs(3),
        idle_floor: Duration::from_secs(1),
        idle_ceiling: Duration::from_secs(2),
        backoff_max: Duration::from_secs(1),
        page_size: 500,
        watch_timeout: 60,
    }
}

/// Objects by name to their resourceVersion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Model {
    nodes: BTreeMap<String, String>,
    pods: BTreeMap<String, String>,
}

fn name_and_version(object: &Value) -> (String, String) {
    let meta = &object["metadata"];
    (
        meta["name"].as_str().unwrap_or_default().to_owned(),
        meta["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// The server's state, straight from its store.
fn truth(store: &Store) -> Model {
    let selector = store
        .get(ResourceKind::DaemonSet, NAMESPACE, TARGET)
        .map_or(Value::Null, |ds| {
            ds["spec"]["selector"]["matchLabels"].clone()
        });
    let matches = |pod: &Value| {
        selector.as_object().is_some_and(|labels| {
            labels
                .iter()
                .all(|(k, v)| pod["metadata"]["labels"][k] == *v)
        })
    };
    Model {
        nodes: store
            .list(ResourceKind::Node, None)
            .0
            .iter()
            .map(name_and_version)
            .collect(),
        pods: store
            .list(ResourceKind::Pod, Some(NAMESPACE))
            .0
            .iter()
            .filter(|p| matches(p))
            .map(name_and_version)
            .collect(),
    }
}

/// What the console would draw from, and whether its status line says live.
fn seen(handle: &WatchHandle) -> (Model, bool, String) {
    let cache = handle.shared.lock();
    let meta = |m: &rollcall::model::Meta| {
        (
            m.name.as_deref().unwrap_or_default().to_owned(),
            m.resource_version.as_deref().unwrap_or_default().to_owned(),
        )
    };
    let model = Model {
        nodes: cache.nodes().map(|n| meta(&n.metadata)).collect(),
        pods: cache.pods().map(|p| meta(&p.metadata)).collect(),
    };
    let required = [
        StreamKind::Nodes,
        StreamKind::DaemonSets,
        StreamKind::Pods,
        StreamKind::Revisions,
    ];
    let states: Vec<(StreamKind, Option<StreamState>)> = required
        .iter()
        .map(|k| {
            (
                *k,
                cache
                    .streams()
                    .get(k)
                    .map(rollcall::cluster::status::StreamStatus::state),
            )
        })
        .collect();
    let live = states
        .iter()
        .all(|(_, s)| matches!(s, Some(StreamState::Live)));
    let text = states
        .iter()
        .filter(|(_, s)| !matches!(s, Some(StreamState::Live)))
        .map(|(k, s)| format!("{}: {s:?}", k.label()))
        .chain(cache.notice().map(|(n, _)| n.to_owned()))
        .collect::<Vec<_>>()
        .join("; ");
    (model, live, text)
}

struct Cluster {
    simulation: Simulation,
    server: ServerHandle,
    faults: Faults,
}

async fn start(
    first_resource_version: u64,
    seed: u64,
    listen: Option<std::net::SocketAddr>,
    tls: Option<TlsMaterial>,
    token: Option<String>,
) -> Cluster {
    let options = EmbeddedOptions {
        scenario: Some("small".to_owned()),
        seed: Some(seed),
        first_resource_version,
        ..EmbeddedOptions::default()
    };
    let mut serve_options = ServeOptions {
        tls,
        token,
        ..ServeOptions::default()
    };
    if let Some(listen) = listen {
        serve_options.listen = listen;
    }
    start_with(&options, serve_options).await
}

/// The simulation of `options`, served with `serve_options` plus the
/// matrix's bookmarks and a fault plan to install.
async fn start_with(options: &EmbeddedOptions, serve_options: ServeOptions) -> Cluster {
    let simulation = Simulation::start(options).expect("simulation starts");
    let faults = Faults::none();
    let serve_options = ServeOptions {
        bookmark_interval: BOOKMARKS,
        faults: faults.clone(),
        ..serve_options
    };
    let server = serve(simulation.store.clone(), serve_options)
        .await
        .expect("server starts");
    Cluster {
        simulation,
        server,
        faults,
    }
}

/// A client as `Connection::watch_client`: no silent retries inside a request.
fn watch_client(server: &ServerHandle) -> kube::Client {
    let mut config = server.kube_config();
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}

fn target() -> Target {
    Target {
        namespace: NAMESPACE.to_owned(),
        name: TARGET.to_owned(),
    }
}

fn watch_cluster(server: &ServerHandle) -> WatchHandle {
    watch::spawn_with(
        watch_client(server),
        Some(NAMESPACE.to_owned()),
        Some(target()),
        stream_config(),
    )
}

async fn wait_synced(handle: &WatchHandle, store: &Store, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (model, live, text) = seen(handle);
        if live && model == truth(store) && !model.pods.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: no live, correct model within 20s: {text}"
        );
        tokio::time::sleep(SAMPLE).await;
    }
}

/// A change the console must show: a node label and a pod annotation.
fn change(store: &Store, mark: &str) {
    let node = store.list(ResourceKind::Node, None).0[0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    store
        .patch_merge(
            ResourceKind::Node,
            "",
            &node,
            &json!({"metadata": {"labels": {"rehearsal": mark}}}),
        )
        .expect("label node");
    let pods = truth(store).pods;
    let pod = pods.keys().next().expect("a pod").clone();
    store
        .patch_merge(
            ResourceKind::Pod,
            NAMESPACE,
            &pod,
            &json!({"metadata": {"annotations": {"rehearsal": mark}}}),
        )
        .expect("annotate pod");
}

struct Sample {
    at: Duration,
    equal: bool,
    live: bool,
    text: String,
}

/// Samples from `origin` until the model is right and live at least `settle`
/// after `fault_end`, or until `fault_end + bound`.
async fn sample(
    handle: &WatchHandle,
    store: impl Fn() -> Model,
    origin: Instant,
    fault_end: Duration,
    bound: Duration,
) -> Vec<Sample> {
    let mut samples = Vec::new();
    loop {
        let (model, live, text) = seen(handle);
        let at = origin.elapsed();
        let equal = model == store();
        if std::env::var_os("FAULT_DEBUG").is_some() {
            eprintln!("{at:?} equal={equal} live={live} {text}");
        }
        samples.push(Sample {
            at,
            equal,
            live,
            text,
        });
        let settled = samples
            .iter()
            .rev()
            .take_while(|s| s.equal && s.live && s.at >= fault_end)
            .count();
        if settled >= 10 || at > fault_end + bound {
            return samples;
        }
        tokio::time::sleep(SAMPLE).await;
    }
}

/// Checks the samples; returns the convergence time after the fault's end.
fn judge(case: &str, samples: &[Sample], fault_end: Duration, bound: Duration) -> Duration {
    let mut wrong_since: Option<Duration> = None;
    for s in samples {
        if s.equal {
            wrong_since = None;
            continue;
        }
        let since = *wrong_since.get_or_insert(s.at);
        assert!(
            !(s.live && s.at.saturating_sub(since) > GRACE),
            "{case}: status live at {:?} while the model has been wrong since {since:?}",
            s.at
        );
    }
    let converged = samples
        .iter()
        .rposition(|s| !(s.equal && s.live))
        .map_or(Duration::ZERO, |i| {
            samples.get(i + 1).map_or(Duration::MAX, |s| s.at)
        });
    let after_end = converged.saturating_sub(fault_end);
    let stale_shown = samples.iter().filter(|s| !s.live).count();
    let last = samples.last().map(|s| s.text.clone()).unwrap_or_default();
    println!(
        "{case}: converged {} ms after the fault ended (not live in {stale_shown} of {} samples)",
        after_end.as_millis(),
        samples.len()
    );
    assert!(
        after_end <= bound,
        "{case}: not converged within {bound:?} after the fault ended; last status: {last}"
    );
    after_end
}

/// One fault case: sync, fault at once, change the cluster during the fault,
/// measure convergence after it.
async fn fault_case(case: &str, spec: &str, length: Duration, bound: Duration) -> Vec<Sample> {
    let cluster = start(0, 1, None, None, None).await;
    let handle = watch_cluster(&cluster.server);
    let store = cluster.simulation.store.clone();
    wait_synced(&handle, &store, case).await;
    cluster
        .faults
        .install(fault::parse(spec).expect("fault spec"));
    let origin = Instant::now();
    let changer = {
        let store = store.clone();
        let mark = case.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            change(&store, &mark);
        })
    };
    let samples = sample(&handle, || truth(&store), origin, length, bound).await;
    changer.await.expect("change applied");
    judge(case, &samples, length, bound);
    drop(handle);
    cluster.server.shutdown().await;
    cluster.simulation.shutdown().await;
    samples
}

fn any_status(samples: &[Sample], needle: &str) -> bool {
    samples.iter().any(|s| s.text.contains(needle))
}

/// The change (at 300 ms) reached the model while the fault still held:
/// proof the silent stream was noticed and replaced, not waited out.
fn recovered_during(samples: &[Sample], fault_end: Duration) -> Option<Duration> {
    let wrong = samples.iter().position(|s| !s.equal)?;
    samples[wrong..]
        .iter()
        .find(|s| s.equal && s.at < fault_end)
        .map(|s| s.at)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_watches_are_detected_restarted_and_shown_stale() {
    // Stalled streams never deliver again: only a restart brings the change.
    let samples = fault_case(
        "stall-watches",
        "stall-watches=0s+5s",
        Duration::from_secs(5),
        Duration::from_secs(6),
    )
    .await;
    let recovered = recovered_during(&samples, Duration::from_secs(5));
    println!("stall-watches: the change reached the model at {recovered:?}, during the stall");
    assert!(
        recovered.is_some_and(|at| at < Duration::from_secs(4)),
        "the stalled watch was restarted within the bound"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_freeze_shows_stale_and_recovers() {
    // Requests hang until the freeze ends: the stall is detected and shown
    // for the rest of the freeze (the relist cannot complete).
    let samples = fault_case(
        "freeze",
        "freeze=0s+4s",
        Duration::from_secs(4),
        Duration::from_secs(6),
    )
    .await;
    assert!(any_status(&samples, "stalled"), "the freeze was shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttling_with_a_long_retry_after_is_shown_with_the_wait() {
    // Retry-After 5 s against a 1 s fault: the stream honours the server's
    // wait and says so ("throttled, retrying in …").
    let samples = fault_case(
        "throttle",
        "throttle:5=0s+1s",
        Duration::from_secs(1),
        Duration::from_secs(8),
    )
    .await;
    assert!(
        any_status(&samples, "Throttled"),
        "the throttling was shown"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_503_burst_shows_stale_and_converges_quickly() {
    let samples = fault_case(
        "503",
        "5xx:503=0s+3s",
        Duration::from_secs(3),
        Duration::from_secs(5),
    )
    .await;
    assert!(any_status(&samples, "503"), "the 503s were shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_burst_shows_stale_and_converges_quickly() {
    let samples = fault_case(
        "500",
        "5xx:500=0s+3s",
        Duration::from_secs(3),
        Duration::from_secs(5),
    )
    .await;
    assert!(any_status(&samples, "500"), "the 500s were shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gone_relists_without_a_false_alarm() {
    fault_case(
        "gone",
        "gone=0s+2s",
        Duration::from_secs(2),
        Duration::from_secs(5),
    )
    .await;
}

/// The required streams' states, from the cache.
fn states(handle: &WatchHandle) -> Vec<(StreamKind, Option<StreamState>)> {
    let cache = handle.shared.lock();
    [
        StreamKind::Nodes,
        StreamKind::DaemonSets,
        StreamKind::Pods,
        StreamKind::Revisions,
    ]
    .iter()
    .map(|k| {
        (
            *k,
            cache
                .streams()
                .get(k)
                .map(rollcall::cluster::status::StreamStatus::state),
        )
    })
    .collect()
}

/// The console's own client (with its reading of Retry-After) on `server`.
fn console_client(server: &ServerHandle) -> kube::Client {
    rollcall::cluster::connect::connection_from_config(
        server.kube_config(),
        "sim".into(),
        None,
        rollcall::cluster::wire::Wire::Auto,
        rollcall::cluster::compression::Compression::Auto,
    )
    .expect("connection")
    .watch_client
}

/// kube-apiserver's Priority and Fairness answers 429 with the wait only in
/// `Retry-After` and a plain-text body. Against `Retry-After: 3` for half a
/// second, the streams say they are throttled for 3 s and come back no
/// sooner (they used to come back after one second, having read no wait);
/// then, positively, they are live again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_only_retry_after_holds_every_stream_for_its_wait() {
    let cluster = start(0, 1, None, None, None).await;
    let handle = watch::spawn_with(
        console_client(&cluster.server),
        Some(NAMESPACE.to_owned()),
        Some(target()),
        stream_config(),
    );
    let store = cluster.simulation.store.clone();
    wait_synced(&handle, &store, "throttle-apf").await;
    cluster
        .faults
        .install(fault::parse("throttle-apf:3=0s+500ms").expect("fault spec"));
    let origin = Instant::now();
    let mut waits = Vec::new();
    let mut live_again = None;
    while origin.elapsed() < Duration::from_secs(15) {
        let states = states(&handle);
        for (_, state) in &states {
            if let Some(StreamState::Throttled { retry_at, since }) = state {
                let wait = retry_at.duration_since(*since);
                if !waits.contains(&wait) {
                    waits.push(wait);
                }
            }
        }
        let live = states
            .iter()
            .all(|(_, s)| matches!(s, Some(StreamState::Live)));
        if live && !waits.is_empty() {
            live_again = Some(origin.elapsed());
            break;
        }
        tokio::time::sleep(SAMPLE).await;
    }
    let back = live_again.expect("the streams are live again after the wait");
    println!("throttle-apf: throttled with waits {waits:?}; live again after {back:?}");
    assert!(
        waits
            .iter()
            .all(|w| w.as_secs_f64() >= 2.9 && w.as_secs_f64() <= 4.0),
        "every stream waits what the header asks (3 s, up to a fifth more): {waits:?}"
    );
    assert!(
        back >= Duration::from_secs(3),
        "back before the server's wait: {back:?}"
    );
    drop(handle);
    cluster.server.shutdown().await;
    cluster.simulation.shutdown().await;
}

/// Every watch goes silent 3 s after start, before two bookmarks (2 s apart)
/// could teach the rhythm: the console assumes the embedded cluster's own
/// interval (from `/version`: 2 s, so a bound of 5 s) rather than a
/// kube-apiserver's minute, stops saying live within that bound, restarts
/// the watches, and converges once the stall is over. With the default
/// stream timings, as the console runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_right_after_start_is_noticed_within_the_assumed_rhythm() {
    let options = EmbeddedOptions {
        scenario: Some("small".to_owned()),
        seed: Some(1),
        ..EmbeddedOptions::default()
    };
    let simulation = Simulation::start(&options).expect("simulation starts");
    let faults = Faults::none();
    let server = serve(
        simulation.store.clone(),
        ServeOptions {
            bookmark_interval: Duration::from_secs(2),
            faults: faults.clone(),
            ..ServeOptions::default()
        },
    )
    .await
    .expect("server starts");
    let stall_at = Duration::from_secs(3);
    let stall_for = Duration::from_secs(8);
    faults.install(vec![fault::Fault {
        kind: fault::FaultKind::StallWatches,
        start: stall_at,
        length: stall_for,
    }]);
    let origin = Instant::now();
    let handle = watch::spawn(
        console_client(&server),
        Some(NAMESPACE.to_owned()),
        Some(target()),
    );
    let store = simulation.store.clone();
    wait_synced(&handle, &store, "before the stall").await;
    let changer = {
        let store = store.clone();
        tokio::spawn(async move {
            tokio::time::sleep(
                (stall_at + Duration::from_secs(1)).saturating_sub(origin.elapsed()),
            )
            .await;
            change(&store, "stalled-early");
        })
    };
    // The bound: 2 × 2 s + 1 s after the last delivery (at the latest, the
    // stall's start); a second more for sampling and a loaded machine.
    let bound = Duration::from_secs(5);
    let slack = Duration::from_secs(1);
    let end = stall_at + stall_for;
    let samples = sample(
        &handle,
        || truth(&store),
        origin,
        end,
        Duration::from_secs(15),
    )
    .await;
    changer.await.expect("change applied");
    // Live is never shown for longer than the bound over a model gone wrong
    // (the change made during the stall, not delivered by the silent watch).
    let mut wrong_since = None;
    for s in &samples {
        if s.equal {
            wrong_since = None;
            continue;
        }
        let since = *wrong_since.get_or_insert(s.at);
        assert!(
            !(s.live && s.at.saturating_sub(since) > bound + slack),
            "live at {:?} while the model has been wrong since {since:?}: {}",
            s.at,
            s.text
        );
    }
    // The silent watches were noticed and replaced within the bound: the
    // change reached the model while the stall still held.
    let changed_at = stall_at + Duration::from_secs(1);
    let recovered = recovered_during(&samples, end).expect("the stall was noticed during it");
    println!(
        "stall after start: the change made {} ms into the stall reached the model after {} ms (bound {} ms)",
        changed_at.saturating_sub(stall_at).as_millis(),
        recovered.saturating_sub(changed_at).as_millis(),
        bound.as_millis()
    );
    assert!(
        recovered <= stall_at + bound + slack,
        "the stall began at {stall_at:?}; the change arrived at {recovered:?}"
    );
    // And once the stall is over, the view converges and stays live.
    let last = samples.last().expect("samples");
    assert!(
        last.equal && last.live && last.at >= end,
        "not converged after the stall: {}",
        last.text
    );
    println!(
        "stall after start: converged {} ms after the stall ended",
        samples
            .iter()
            .rposition(|s| !(s.equal && s.live))
            .and_then(|i| samples.get(i + 1))
            .map_or(0, |s| s.at.saturating_sub(end).as_millis())
    );
    drop(handle);
    server.shutdown().await;
    simulation.shutdown().await;
}

/// A list whose continuation expired (410, as after a compaction) is
/// finished in one request, as client-go's pager does (`FullListIfExpired`).
/// Starting over page by page expired again on every try: at 65,000 nodes
/// under churn the console never finished loading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_list_continuation_is_finished_in_one_request() {
    let cluster = start(0, 1, None, None, None).await;
    let store = cluster.simulation.store.clone();
    // Continuations expire from the start, for longer than the check below.
    cluster
        .faults
        .install(fault::parse("gone=8s").expect("fault spec"));
    let handle = watch::spawn_with(
        watch_client(&cluster.server),
        Some(NAMESPACE.to_owned()),
        Some(target()),
        // Every list needs a continuation.
        StreamConfig {
            page_size: 2,
            ..stream_config()
        },
    );
    let truth = truth(&store);
    assert!(
        truth.nodes.len() > 2 && truth.pods.len() > 2,
        "more than a page"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (model, _, text) = seen(&handle);
        if model == truth {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no complete model while list continuations expire: {text}"
        );
        tokio::time::sleep(SAMPLE).await;
    }
    drop(handle);
    cluster.server.shutdown().await;
    cluster.simulation.shutdown().await;
}

/// Generated nodes (their images make 8 KB each: enough bytes that one TLS
/// record, 16 KB, crosses the link in a fraction of the stall bound) behind
/// a link on which the node and pod lists alone take `seconds`.
async fn slow_link_cluster(nodes: usize, seconds: usize) -> Cluster {
    let options = EmbeddedOptions {
        nodes: Some(nodes),
        ..EmbeddedOptions::default()
    };
    let cluster = start_with(&options, ServeOptions::default()).await;
    let store = &cluster.simulation.store;
    let listed = |kind, namespace| {
        serde_json::to_vec(&store.list(kind, namespace).0).map_or(0, |bytes| bytes.len())
    };
    let bytes = listed(ResourceKind::Node, None) + listed(ResourceKind::Pod, Some(NAMESPACE));
    let rate = u64::try_from(bytes / seconds).expect("small");
    cluster.faults.install(vec![fault::Fault {
        kind: fault::FaultKind::Bandwidth(rate),
        start: Duration::ZERO,
        length: Duration::from_secs(60),
    }]);
    cluster
}

/// Over a slow link (the `bandwidth` fault) the first lists take longer
/// than the stall bound (3 s here), yet bytes keep coming: the console loads
/// them, and says "loading", never "stalled". A bound on the whole list
/// abandoned it at 3 s and started over, for ever (at 65,000 nodes, 520 MB of
/// nodes over a 20 Mbit/s VPN take three and a half minutes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_link_loads_without_a_false_stall() {
    // Generated nodes carry images (8 KB each): enough bytes that one TLS
    // record (16 KB) crosses the link in a fraction of the stall bound.
    let cluster = slow_link_cluster(300, 6).await;
    let store = cluster.simulation.store.clone();
    let origin = Instant::now();
    let handle = watch_cluster(&cluster.server);
    let samples = sample(
        &handle,
        || truth(&store),
        origin,
        Duration::ZERO,
        Duration::from_secs(20),
    )
    .await;
    let loaded = judge(
        "bandwidth",
        &samples,
        Duration::ZERO,
        Duration::from_secs(20),
    );
    assert!(
        loaded >= Duration::from_secs(4),
        "the link was slow enough that the load outlasted the 3 s stall bound ({loaded:?})"
    );
    for s in &samples {
        assert!(
            !(s.text.contains("stalled") || s.text.contains("Reconnecting")),
            "no false alarm while bytes keep coming, at {:?}: {}",
            s.at,
            s.text
        );
    }
    drop(handle);
    cluster.server.shutdown().await;
    cluster.simulation.shutdown().await;
}

/// A load of `slow_link_cluster(1200, 14)` outlasted the progress interval
/// and said how far the (server-counted) node list had come.
fn assert_progress_said(loaded: Duration, said: &[String]) {
    use rollcall::ops::follow::PROGRESS_EVERY;
    println!("loaded in {loaded:?}, said: {said:?}");
    assert!(
        loaded > PROGRESS_EVERY,
        "the load outlasted the interval ({loaded:?})"
    );
    assert!(
        said.iter().any(|line| {
            line.starts_with("still loading the cluster: nodes ") && line.contains(" of 1200 (")
        }),
        "the progress was said: {said:?}"
    );
}

/// A headless command loading a large cluster over a slow link says every
/// 10 s how far the lists have come (nodes counted by the server), instead
/// of minutes of silence, then decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_over_a_slow_link_says_how_far_the_lists_are() {
    use rollcall::ops::follow::Follower;
    // Three pages of nodes: the server counts what remains after the first.
    let cluster = slow_link_cluster(1200, 14).await;
    let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = std::sync::Arc::clone(&said);
    let started = Instant::now();
    let follower = Follower::start(watch_client(&cluster.server), &target()).with_notices(
        std::sync::Arc::new(move |text: &str| {
            sink.lock().expect("notices").push(text.to_owned());
        }),
    );
    let snapshot = tokio::time::timeout(Duration::from_secs(40), follower.snapshot())
        .await
        .expect("a snapshot once the lists are in")
        .expect("the daemonset");
    assert_eq!(snapshot.target().name, TARGET);
    let loaded = started.elapsed();
    let said = said.lock().expect("notices").clone();
    assert_progress_said(loaded, &said);
    assert!(
        !said
            .iter()
            .any(|line| line.starts_with("waiting for the cluster")),
        "no failure while bytes kept coming: {said:?}"
    );
    drop(follower);
    cluster.server.shutdown().await;
    cluster.simulation.shutdown().await;
}

/// A one-shot command (`status`, `advance`, `history`) loading over a slow
/// link says every 10 s how far its lists have come, then answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_load_over_a_slow_link_says_how_far_the_lists_are() {
    use rollcall::ops::snapshot::{Snapshot, Target as OpsTarget};
    let cluster = slow_link_cluster(1200, 14).await;
    let said = std::sync::Mutex::new(Vec::<String>::new());
    let started = Instant::now();
    let target = OpsTarget {
        namespace: NAMESPACE.to_owned(),
        name: TARGET.to_owned(),
    };
    let snapshot = Snapshot::load_saying(&watch_client(&cluster.server), &target, |text| {
        said.lock().expect("notices").push(text.to_owned());
    })
    .await
    .expect("the snapshot");
    let loaded = started.elapsed();
    assert_eq!(snapshot.target().name, TARGET);
    assert_progress_said(loaded, &said.into_inner().expect("notices"));
    cluster.server.shutdown().await;
    cluster.simulation.shutdown().await;
}

/// A headless command's follower waiting for its first lists through a
/// burst of 500s says so (once per new answer), then hands out its snapshot
/// when the burst ends; before, such a command was silent for as long as
/// the burst lasted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_says_why_it_waits_then_follows() {
    use rollcall::ops::follow::Follower;
    let cluster = start(0, 1, None, None, None).await;
    cluster
        .faults
        .install(fault::parse("5xx:500=2s").expect("fault spec"));
    let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = std::sync::Arc::clone(&said);
    let follower = Follower::start(watch_client(&cluster.server), &target()).with_notices(
        std::sync::Arc::new(move |text: &str| {
            sink.lock().expect("notices").push(text.to_owned());
        }),
    );
    let snapshot = tokio::time::timeout(Duration::from_secs(20), follower.snapshot())
        .await
        .expect("a snapshot once the burst ended")
        .expect("the daemonset");
    assert_eq!(snapshot.target().name, TARGET);
    let said = said.lock().expect("notices").clone();
    assert!(
        said.iter()
            .any(|line| line.starts_with("waiting for the cluster") && line.contains("500")),
        "the wait was said: {said:?}"
    );
    let distinct: std::collections::BTreeSet<&String> = said.iter().collect();
    assert_eq!(
        distinct.len(),
        said.len(),
        "each failure said once: {said:?}"
    );
    drop(follower);
    cluster.server.shutdown().await;
    cluster.simulation.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_watches_reconnect() {
    fault_case(
        "drop-watches",
        "drop-watches=0s+3s",
        Duration::from_secs(3),
        Duration::from_secs(5),
    )
    .await;
}

/// Restarts the server on the same address with another state; returns the
/// samples and the new cluster.
async fn restart_case(
    case: &str,
    first_rv: (u64, u64),
    same_ca: bool,
    bound: Duration,
) -> (Vec<Sample>, Cluster) {
    let old = start(first_rv.0, 1, None, None, None).await;
    let handle = watch_cluster(&old.server);
    wait_synced(&handle, &old.simulation.store, case).await;
    let addr = old.server.addr;
    let tls = same_ca.then(|| old.server.tls());
    let token = Some(old.server.token.clone());
    let origin = Instant::now();
    old.server.shutdown().await;
    old.simulation.shutdown().await;
    // Another seed: other UIDs and pod names; one more change on top.
    let new = start(first_rv.1, 7, Some(addr), tls, token).await;
    change(&new.simulation.store, case);
    let store = new.simulation.store.clone();
    let samples = sample(&handle, || truth(&store), origin, Duration::ZERO, bound).await;
    if same_ca {
        judge(case, &samples, Duration::ZERO, bound);
    }
    drop(handle);
    (samples, new)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_versions_ahead_relists_without_phantoms() {
    // As `rollcall sim` does: the new server starts above the old one's versions.
    let (_, new) = restart_case(
        "restart, versions forward",
        (0, 1_000_000),
        true,
        Duration::from_secs(8),
    )
    .await;
    new.server.shutdown().await;
    new.simulation.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_versions_behind_is_noticed_and_relisted() {
    // Another server whose versions are below ours: "Too large resource
    // version" on the watch, the server-changed notice, and a full relist.
    let (samples, new) = restart_case(
        "restart, versions backwards",
        (1_000_000, 0),
        true,
        Duration::from_secs(10),
    )
    .await;
    assert!(
        any_status(&samples, "restarted or replaced"),
        "the change of server was said"
    );
    new.server.shutdown().await;
    new.simulation.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_ca_is_reported_as_a_changed_certificate() {
    let (samples, new) =
        restart_case("restart, new CA", (0, 0), false, Duration::from_secs(3)).await;
    assert!(
        samples.iter().all(|s| !s.live || s.at < GRACE),
        "never live once the old server is gone"
    );
    assert!(
        any_status(&samples, "certificate changed"),
        "says the certificate changed: {}",
        samples.last().map(|s| s.text.as_str()).unwrap_or_default()
    );
    new.server.shutdown().await;
    new.simulation.shutdown().await;
}

mod common;

/// `rollcall sim --fault` itself: the CLI parses the spec and the server
/// answers with the injected fault, then recovers; its versions start above
/// any earlier run's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollcall_sim_fault_flag_injects_and_recovers() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = std::process::Command::new(common::rollcall_bin())
        .args(["sim", "--scenario", "small", "--bookmark-interval", "1"])
        .args(["--fault", "5xx:500=0s+3s"])
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start rollcall sim");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let started = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|line| line.starts_with("kubeconfig:"));
    assert!(started, "rollcall sim printed its kubeconfig");
    let origin = Instant::now();
    let loaded = kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig");
    let mut config =
        kube::Config::from_custom_kubeconfig(loaded, &kube::config::KubeConfigOptions::default())
            .await
            .expect("config");
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("client");
    let nodes: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(client);
    let during = nodes.list(&kube::api::ListParams::default()).await;
    let code = match &during {
        Err(kube::Error::Api(status)) => status.code,
        other => panic!("expected the injected 500, got {other:?}"),
    };
    assert_eq!(code, 500);
    assert!(
        origin.elapsed() < Duration::from_secs(3),
        "still in the window"
    );
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(origin.elapsed())).await;
    let after = nodes
        .list(&kube::api::ListParams::default())
        .await
        .expect("the list works after the window");
    assert_eq!(after.items.len(), 5);
    let version: u64 = after
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .expect("numeric resourceVersion");
    assert!(
        version > 1_000_000_000_000_000,
        "versions start above any earlier run (microseconds since the epoch): {version}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
