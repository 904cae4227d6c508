//! WATCH: a chunked stream of one-line JSON events fed from a store
//! subscription. Handles the resourceVersion forms (unset/"0": synthetic ADDED
//! for current objects; N: replay from the history window; too old: HTTP 200
//! plus an in-stream ERROR 410 Expired, which is what makes kube-rs re-list),
//! streaming lists (`sendInitialEvents` + the `k8s.io/initial-events-end`
//! bookmark), periodic bookmarks, `timeoutSeconds`, selector moves (an object
//! that stops matching is sent as DELETED), and Table-form events. Full-object
//! events reuse the line each store event serializes once for all watchers.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::{BufMut, Bytes, BytesMut};
use http::{Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::list::Filter;
use super::protobuf_out;
use super::status::ApiError;
use super::table::{self, IncludeObject};
use super::{ApiState, RequestInfo, ResourcePath, to_bytes};
use crate::model::protobuf::WATCH_MEDIA_TYPE;
use crate::sim::resources::ResourceKind;
use crate::sim::store::{EventType, Store, StoreError, StoreEvent, StoredObject, Subscription};

/// Upstream picks 30–60 minutes when `timeoutSeconds` is absent.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Longer requested timeouts are cut to a day (the clock arithmetic stays sane).
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// One watcher's settings.
struct Watcher {
    kind: ResourceKind,
    namespace: Option<String>,
    filter: Filter,
    table: Option<IncludeObject>,
    columns_sent: bool,
    /// Events as protobuf frames ([`protobuf_out`]) rather than JSON lines.
    protobuf: bool,
}

/// Answers a WATCH request with a streaming body.
pub fn watch(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
) -> Result<Response<Body>, ApiError> {
    let kind = path.kind;
    let filter = Filter::from_request(info, kind)?;
    let requested = requested_version(info)?;
    let timeout = timeout(info)?;
    let send_initial = info.query.flag("sendInitialEvents");
    let watcher = Watcher {
        kind,
        namespace: path.namespace.clone(),
        table: info
            .wants_table()
            .then(|| IncludeObject::parse(info.query.get("includeObject"))),
        columns_sent: false,
        protobuf: protobuf_out::wants_protobuf(info, kind),
        filter,
    };
    if watcher.protobuf && state.faults.refuses_protobuf() {
        return Err(protobuf_out::not_acceptable());
    }
    let content_type = if watcher.protobuf {
        WATCH_MEDIA_TYPE
    } else {
        "application/json"
    };
    let store = &state.store;
    // Unset or "0" (and streaming lists) start with the current objects;
    // otherwise replay from the requested version.
    let mut ahead = None;
    let (initial, subscription) = match requested {
        // A version this server has not reached (it restarted, or the client
        // saw another server): upstream waits up to 3 s for it, then answers
        // "Too large resource version" (504 Timeout) in the stream.
        Some(rv) if rv > store.resource_version() && !send_initial => {
            ahead = Some((rv, store.clone()));
            (None, store.subscribe_from(store.resource_version()))
        }
        Some(rv) if rv > 0 && !send_initial => (None, store.subscribe_from(rv)),
        _ => {
            let page = store.list_page(kind, path.namespace.as_deref(), None, usize::MAX, |o| {
                watcher.filter.matches(o)
            });
            (
                Some((page.items, page.resource_version)),
                store.subscribe_from(page.resource_version),
            )
        }
    };
    let stream = Stream {
        watcher,
        initial,
        initial_end_bookmark: send_initial,
        subscription,
        ahead,
        bookmarks: info
            .query
            .flag("allowWatchBookmarks")
            .then_some(state.bookmark_interval),
        timeout,
    };
    let (sender, receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(64);
    tokio::spawn(stream.run(sender));
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    Ok(response)
}

/// `resourceVersion` as a number; unparseable is a 400 (before streaming).
fn requested_version(info: &RequestInfo) -> Result<Option<u64>, ApiError> {
    info.query
        .non_empty("resourceVersion")
        .map(|text| {
            text.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {text}")))
        })
        .transpose()
}

/// `timeoutSeconds`, or the default.
fn timeout(info: &RequestInfo) -> Result<Duration, ApiError> {
    match info
        .query
        .non_empty("timeoutSeconds")
        .map(str::parse::<u64>)
    {
        Some(Ok(seconds)) => Ok(Duration::from_secs(seconds).min(MAX_TIMEOUT)),
        Some(Err(_)) => Err(ApiError::bad_request(
            "timeoutSeconds must be a non-negative integer",
        )),
        None => Ok(DEFAULT_TIMEOUT),
    }
}

/// Everything the streaming task owns.
struct Stream {
    watcher: Watcher,
    initial: Option<(Vec<Arc<StoredObject>>, u64)>,
    initial_end_bookmark: bool,
    subscription: Result<Subscription, StoreError>,
    /// The requested version when the store has not reached it yet.
    ahead: Option<(u64, Store)>,
    bookmarks: Option<Duration>,
    timeout: Duration,
}

type Sender = mpsc::Sender<Result<Bytes, std::io::Error>>;

impl Stream {
    async fn run(mut self, sender: Sender) {
        let deadline = tokio::time::sleep(self.timeout);
        tokio::pin!(deadline);
        if let Some((objects, rv)) = self.initial.take() {
            for object in &objects {
                let line = self.watcher.line(EventType::Added, object);
                if sender.send(Ok(line)).await.is_err() {
                    return;
                }
            }
            if self.initial_end_bookmark
                && sender
                    .send(Ok(self.watcher.bookmark(rv, true)))
                    .await
                    .is_err()
            {
                return;
            }
        }
        if let Some((wanted, store)) = self.ahead.take() {
            match wait_for_version(&store, wanted).await {
                Ok(()) => self.subscription = store.subscribe_from(wanted),
                Err(current) => {
                    let line = self
                        .watcher
                        .status_event(&too_large_status(wanted, current));
                    let _ = sender.send(Ok(line)).await;
                    return;
                }
            }
        }
        let mut subscription = match self.subscription {
            Ok(subscription) => subscription,
            Err(error) => {
                let _ = sender
                    .send(Ok(self.watcher.status_event(&error_status(&error))))
                    .await;
                return;
            }
        };
        // `interval` panics on a zero period; never tick faster than 10 ms.
        let period = self
            .bookmarks
            .unwrap_or(Duration::from_secs(3600))
            .max(Duration::from_millis(10));
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        loop {
            tokio::select! {
                () = &mut deadline => return,
                () = sender.closed() => return,
                _ = ticker.tick(), if self.bookmarks.is_some() => {
                    let line = self.watcher.bookmark(subscription.resource_version(), false);
                    if sender.send(Ok(line)).await.is_err() {
                        return;
                    }
                }
                batch = subscription.next_batch() => match batch {
                    Ok(events) => {
                        for event in &events {
                            let Some(line) = self.watcher.render(event) else { continue };
                            if sender.send(Ok(line)).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(error) => {
                        let _ = sender.send(Ok(self.watcher.status_event(&error_status(&error)))).await;
                        return;
                    }
                },
            }
        }
    }
}

impl Watcher {
    fn in_scope(&self, object: &StoredObject) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| object.key.namespace == ns)
            && self.filter.matches(object)
    }

    /// The line for a store event, or `None` when this watcher must not see it.
    fn render(&mut self, event: &StoreEvent) -> Option<Bytes> {
        if event.kind != self.kind {
            return None;
        }
        let now = self.in_scope(&event.object);
        let before = event.previous.as_ref().is_some_and(|p| self.in_scope(p));
        let event_type = match (event.event_type, before, now) {
            (EventType::Deleted, _, _) if before || now => EventType::Deleted,
            (EventType::Added, _, true) | (EventType::Modified, false, true) => EventType::Added,
            (EventType::Modified, true, true) => EventType::Modified,
            (EventType::Modified, true, false) => EventType::Deleted,
            _ => return None,
        };
        Some(self.line(event_type, &event.object))
    }

    fn line(&mut self, event_type: EventType, object: &StoredObject) -> Bytes {
        match self.table {
            None if self.protobuf => {
                protobuf_out::object_frame(event_type.as_str(), self.kind, object)
            }
            None => splice_event(event_type.as_str(), &object.json),
            Some(include) => {
                let row = table::row(self.kind, &object.value(), include, crate::clock::now());
                let metadata = json!({"resourceVersion": object.resource_version.to_string()});
                let table = table::table(self.kind, vec![row], !self.columns_sent, metadata);
                self.columns_sent = true;
                splice_event(event_type.as_str(), &to_bytes(&table))
            }
        }
    }

    fn bookmark(&self, rv: u64, initial_events_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": rv.to_string(), "creationTimestamp": null});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({"kind": self.kind.kind(), "apiVersion": self.kind.api_version(), "metadata": metadata});
        if self.protobuf {
            return protobuf_out::json_frame(
                "BOOKMARK",
                self.kind.api_version(),
                self.kind.kind(),
                &object,
            );
        }
        splice_event("BOOKMARK", &to_bytes(&object))
    }

    /// An ERROR event carrying `status`.
    fn status_event(&self, status: &Value) -> Bytes {
        if self.protobuf {
            return protobuf_out::json_frame("ERROR", "v1", "Status", status);
        }
        splice_event("ERROR", &to_bytes(status))
    }
}

fn splice_event(event_type: &str, object: &[u8]) -> Bytes {
    let mut line = BytesMut::with_capacity(object.len() + 32);
    line.put_slice(b"{\"type\":\"");
    line.put_slice(event_type.as_bytes());
    line.put_slice(b"\",\"object\":");
    line.put_slice(object);
    line.put_slice(b"}\n");
    line.freeze()
}

/// How long a watch from a version ahead of the store waits for it (upstream's
/// watch cache blocks 3 s).
const TOO_LARGE_WAIT: Duration = Duration::from_secs(3);

/// Waits until the store reaches `wanted`; `Err(current)` after [`TOO_LARGE_WAIT`].
async fn wait_for_version(store: &Store, wanted: u64) -> Result<(), u64> {
    let deadline = tokio::time::Instant::now() + TOO_LARGE_WAIT;
    loop {
        let current = store.resource_version();
        if current >= wanted {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(current);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Upstream's answer to a watch from a version the server has not reached:
/// an in-stream ERROR with a 504 Timeout Status whose cause is
/// `ResourceVersionTooLarge` (client-go's reflector relists on it).
fn too_large_status(wanted: u64, current: u64) -> Value {
    let error = ApiError::new(
        StatusCode::GATEWAY_TIMEOUT,
        "Timeout",
        format!("Too large resource version: {wanted}, current: {current}"),
    )
    .with_details(json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1
    }));
    error.to_status()
}

/// The Status of an in-stream ERROR event (code 410, reason Expired, for a Gone version).
fn error_status(error: &StoreError) -> Value {
    ApiError::from(error.clone()).to_status()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_line_is_one_compact_line() {
        let line = splice_event("ADDED", &stored("p", "a", 9).json);
        let text = std::str::from_utf8(&line).unwrap();
        assert!(text.ends_with("}\n"));
        assert_eq!(text.matches('\n').count(), 1);
        let parsed: Value = serde_json::from_str(text).unwrap();
        assert_eq!(parsed["type"], "ADDED");
        assert_eq!(parsed["object"]["metadata"]["resourceVersion"], "9");
    }

    fn stored(name: &str, app: &str, rv: u64) -> Arc<StoredObject> {
        let obj = json!({"metadata":{"name":name,"namespace":"default","resourceVersion":rv.to_string(),"labels":{"app":app}}});
        Arc::new(StoredObject::from_value(ResourceKind::Pod, &obj).unwrap())
    }

    fn watcher(selector: &str) -> Watcher {
        Watcher {
            kind: ResourceKind::Pod,
            namespace: Some("default".into()),
            filter: Filter {
                labels: super::super::selectors::LabelSelector::parse(selector).unwrap(),
                ..Filter::default()
            },
            table: None,
            columns_sent: false,
            protobuf: false,
        }
    }

    fn event_type(line: &Bytes) -> String {
        let v: Value = serde_json::from_slice(line).unwrap();
        v["type"].as_str().unwrap().to_owned()
    }

    #[test]
    fn selector_moves_become_added_and_deleted() {
        let mut w = watcher("app=a");
        let moved_out = StoreEvent::new(
            ResourceKind::Pod,
            EventType::Modified,
            stored("p", "b", 5),
            Some(stored("p", "a", 4)),
        );
        assert_eq!(event_type(&w.render(&moved_out).unwrap()), "DELETED");
        let moved_in = StoreEvent::new(
            ResourceKind::Pod,
            EventType::Modified,
            stored("p", "a", 6),
            Some(stored("p", "b", 5)),
        );
        assert_eq!(event_type(&w.render(&moved_in).unwrap()), "ADDED");
        let unrelated = StoreEvent::new(
            ResourceKind::Pod,
            EventType::Modified,
            stored("q", "b", 7),
            Some(stored("q", "b", 6)),
        );
        assert!(w.render(&unrelated).is_none());
        let other_kind = StoreEvent::new(
            ResourceKind::Node,
            EventType::Added,
            stored("n", "a", 8),
            None,
        );
        assert!(w.render(&other_kind).is_none());
    }

    #[test]
    fn error_and_bookmark_lines() {
        let line = watcher("").status_event(&error_status(&StoreError::Gone {
            requested: 1,
            oldest: 9,
        }));
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["type"], "ERROR");
        assert_eq!(v["object"]["code"], 410);
        assert_eq!(v["object"]["reason"], "Expired");
        let bookmark: Value = serde_json::from_slice(&watcher("").bookmark(12, true)).unwrap();
        assert_eq!(bookmark["object"]["kind"], "Pod");
        assert_eq!(bookmark["object"]["metadata"]["resourceVersion"], "12");
        assert_eq!(
            bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );
    }

    /// Upstream frames a protobuf watch as 4-byte lengths and WatchEvents
    /// whose object is sealed in the `k8s\0` envelope.
    #[test]
    fn protobuf_watchers_write_frames() {
        let mut w = watcher("");
        w.protobuf = true;
        let frames = [
            w.line(EventType::Added, &stored("p", "a", 7)),
            w.bookmark(12, false),
            w.status_event(&error_status(&StoreError::Gone {
                requested: 1,
                oldest: 9,
            })),
        ];
        let read: Vec<(String, String, Value)> = frames
            .iter()
            .map(|frame| {
                let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
                assert_eq!(len, frame.len() - 4);
                let (kind, object) =
                    crate::model::protobuf::envelope::watch_event(&frame[4..]).unwrap();
                let value = crate::model::protobuf::from_message(object.kind, object.raw).unwrap();
                (kind.to_owned(), object.kind.to_owned(), value)
            })
            .collect();
        assert_eq!((read[0].0.as_str(), read[0].1.as_str()), ("ADDED", "Pod"));
        assert_eq!(read[0].2["metadata"]["name"], "p");
        assert_eq!(read[1].2["metadata"]["resourceVersion"], "12");
        assert_eq!(
            (read[2].0.as_str(), read[2].1.as_str()),
            ("ERROR", "Status")
        );
        assert_eq!(read[2].2["code"], 410);
        assert_eq!(read[2].2["reason"], "Expired");
    }
}
