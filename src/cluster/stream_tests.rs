//! A stream's bounds on paused time, against a scripted server: the silence
//! bound before the bookmark rhythm is learnt (from the server's kind and the
//! watch's own timeout), the rhythm kept across reconnects, a bound re-armed
//! when the kind becomes known, and a server's Retry-After held to whether it
//! came as a header or in a Status.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use kube::runtime::watcher;
use tokio::time::Instant;

use super::request;
use super::retry_after;
use super::rhythm::Rhythm;
use super::server_kind::ServerKind;
use super::stream::{Selector, Signal, StreamConfig, spawn};
use crate::model::Node;

const LIST: &str = r#"{"kind":"NodeList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","resourceVersion":"5"}}]}"#;
const BOOKMARK: &str = r#"{"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"5"}}}"#;

/// What one request is answered with.
#[derive(Clone)]
enum Answer {
    /// The node list.
    List,
    /// A watch: `lines` after their delays, then silence for good.
    Watch(Vec<(Duration, &'static str)>),
    /// 429 with `Retry-After` and a plain-text body, as kube-apiserver's
    /// max-inflight and Priority and Fairness filters answer.
    Throttled(&'static str),
}

/// The requests a scripted server saw: when, and whether each was a watch.
type Seen = Arc<Mutex<Vec<(Instant, bool)>>>;

/// A server answering lists and watches from `lists` and `watches` in
/// order (the last of each repeats), through the client's Retry-After layer.
fn scripted(lists: Vec<Answer>, watches: Vec<Answer>, seen: Seen) -> kube::Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let watch = request
            .uri()
            .query()
            .unwrap_or_default()
            .contains("watch=true");
        let answers = if watch { &watches } else { &lists };
        let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
        let count = seen.iter().filter(|(_, w)| *w == watch).count();
        seen.push((Instant::now(), watch));
        let answer = answers[count.min(answers.len() - 1)].clone();
        async move { respond(answer) }
    });
    let service = tower::ServiceBuilder::new()
        .layer(retry_after::Layer)
        .service(service);
    kube::Client::new(service, "default")
}

fn respond(answer: Answer) -> Result<http::Response<axum::body::Body>, tower::BoxError> {
    let response = http::Response::builder();
    let response =
        match answer {
            Answer::List => response
                .header("content-type", "application/json")
                .body(axum::body::Body::from(LIST)),
            Answer::Watch(lines) => {
                let lines = futures::stream::iter(lines).then(|(delay, line)| async move {
                    tokio::time::sleep(delay).await;
                    Ok::<_, std::io::Error>(Bytes::from(format!("{line}\n")))
                });
                response.header("content-type", "application/json").body(
                    axum::body::Body::from_stream(lines.chain(futures::stream::pending())),
                )
            }
            Answer::Throttled(seconds) => response
                .status(429)
                .header("retry-after", seconds)
                .header("content-type", "text/plain; charset=utf-8")
                .body(axum::body::Body::from(
                    "Too many requests, please try again later.\n",
                )),
        };
    response.map_err(tower::BoxError::from)
}

/// The signals of a node stream with their times, until `last` says stop
/// (or an hour of paused time passes).
async fn follow(
    client: kube::Client,
    config: StreamConfig,
    rhythm: Rhythm,
    last: impl Fn(&[(Instant, String)]) -> bool,
) -> Vec<(Instant, String)> {
    let mut signals = std::pin::pin!(spawn::<Node>(
        "nodes",
        client,
        request::collection_url::<Node>(None),
        Selector::default(),
        config,
        rhythm
    ));
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(3600), async {
        while let Some(signal) = signals.next().await {
            let text = match signal {
                Signal::Event(watcher::Event::InitDone) => "listed".to_owned(),
                Signal::Event(_) => continue,
                Signal::Stalled { silent_for } => format!("stalled {}", silent_for.as_secs()),
                Signal::Alive => "alive".to_owned(),
                Signal::Throttled { retry_in } => format!("throttled {}", retry_in.as_secs()),
                other => format!("{other:?}"),
            };
            seen.push((Instant::now(), text));
            if last(&seen) {
                return;
            }
        }
    })
    .await;
    seen
}

fn stalls(seen: &[(Instant, String)]) -> usize {
    seen.iter()
        .filter(|(_, s)| s.starts_with("stalled"))
        .count()
}

/// Seconds from the first `from` to the first `to` after it.
fn between(seen: &[(Instant, String)], from: &str, to: &str) -> Duration {
    let start = seen.iter().position(|(_, s)| s == from).expect(from);
    let end = seen[start..]
        .iter()
        .find(|(_, s)| s.starts_with(to))
        .expect(to);
    end.0 - seen[start].0
}

fn silent() -> Answer {
    Answer::Watch(Vec::new())
}

/// A watch silent from the start is restarted after the bound assumed from
/// the server's kind: 11 s on the embedded cluster's 5 s bookmarks, a
/// kube-apiserver's 75 s, and never later than the watch's own timeout.
#[tokio::test(start_paused = true)]
async fn a_silence_before_any_bookmark_is_bounded_by_the_servers_kind() {
    let embedded = ServerKind::Embedded {
        bookmark_interval: Duration::from_secs(5),
    };
    let short_watch = StreamConfig {
        watch_timeout: 20,
        ..StreamConfig::default()
    };
    let cases = [
        (
            "embedded, 5 s bookmarks",
            embedded,
            StreamConfig::default(),
            11,
        ),
        (
            "kube-apiserver",
            ServerKind::Kubernetes,
            StreamConfig::default(),
            75,
        ),
        (
            "a 20 s watch, plus grace",
            ServerKind::Kubernetes,
            short_watch,
            25,
        ),
    ];
    for (case, kind, config, bound) in cases {
        let seen = Seen::default();
        let client = scripted(vec![Answer::List], vec![silent()], seen);
        let signals = follow(client, config, Rhythm::of(kind), |s| stalls(s) == 1).await;
        assert_eq!(
            between(&signals, "listed", "stalled"),
            Duration::from_secs(bound),
            "{case}: {signals:?}"
        );
        assert!(
            signals.iter().all(|(_, s)| s != "alive"),
            "{case}: {signals:?}"
        );
    }
}

/// Two bookmarks 2 s apart teach the rhythm; the watch then goes silent and
/// is restarted 5 s after the last bookmark; the next watch is silent from
/// the start and is restarted 5 s after its list too: the rhythm learnt
/// before the reconnect still holds (not the assumed 75 s).
#[tokio::test(start_paused = true)]
async fn the_learnt_rhythm_is_kept_across_reconnects() {
    let seen = Seen::default();
    let second = Duration::from_secs(2);
    let first_watch = Answer::Watch(vec![(second, BOOKMARK), (second, BOOKMARK)]);
    let client = scripted(vec![Answer::List], vec![first_watch, silent()], seen);
    let rhythm = Rhythm::default();
    let signals = follow(client, StreamConfig::default(), rhythm.clone(), |s| {
        stalls(s) == 2
    })
    .await;
    let texts: Vec<&str> = signals.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        texts,
        [
            "listed",
            "alive",
            "alive",
            "stalled 5",
            "listed",
            "stalled 5"
        ],
        "{signals:?}"
    );
    let last_bookmark = signals[2].0;
    assert_eq!(signals[3].0 - last_bookmark, Duration::from_secs(5));
    assert_eq!(signals[5].0 - signals[4].0, Duration::from_secs(5));
    assert!(rhythm.learnt());
    assert_eq!(rhythm.interval(), second);
}

/// A watch waiting on the assumed 75 s hears that the server is the
/// embedded cluster with 1 s bookmarks: it re-arms, and the silence it has
/// already kept counts.
#[tokio::test(start_paused = true)]
async fn a_waiting_watch_takes_the_servers_kind_when_it_becomes_known() {
    let seen = Seen::default();
    let client = scripted(vec![Answer::List], vec![silent()], seen);
    let rhythm = Rhythm::default();
    let told = rhythm.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        told.assume(ServerKind::Embedded {
            bookmark_interval: Duration::from_secs(1),
        });
    });
    let signals = follow(client, StreamConfig::default(), rhythm, |s| stalls(s) == 1).await;
    // 2 × 1 s + 1 s = 3 s, counted from the list, not from when it was told.
    assert_eq!(
        between(&signals, "listed", "stalled"),
        Duration::from_secs(3),
        "{signals:?}"
    );
}

/// `Retry-After: 30` on a 429 with a plain-text body, as kube-apiserver's
/// Priority and Fairness sends it: the stream says it waits 30 s (up to a
/// fifth more), and asks again no sooner.
#[tokio::test(start_paused = true)]
async fn a_header_only_429_holds_the_stream_for_its_retry_after() {
    let seen = Seen::default();
    let client = scripted(
        vec![Answer::Throttled("30"), Answer::List],
        vec![silent()],
        seen.clone(),
    );
    let signals = follow(client, StreamConfig::default(), Rhythm::default(), |s| {
        s.iter().any(|(_, text)| text == "listed")
    })
    .await;
    let throttled = signals
        .iter()
        .find_map(|(_, s)| s.strip_prefix("throttled "))
        .and_then(|s| s.parse::<u64>().ok())
        .expect("the stream says it is throttled");
    assert!((30..=36).contains(&throttled), "{signals:?}");
    let lists: Vec<Instant> = seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|(_, watch)| !watch)
        .map(|(at, _)| *at)
        .collect();
    assert_eq!(lists.len(), 2, "one try, then one after the wait");
    let waited = lists[1] - lists[0];
    assert!(
        waited >= Duration::from_secs(30) && waited <= Duration::from_secs(36),
        "asked again after {waited:?}"
    );
}
