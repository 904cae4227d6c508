//! Fault injection for the embedded API server, for rehearsals and the
//! repo's fault tests: `rollcall sim --fault stall-watches=5s+10s,5xx:503=30s+5s`.
//!
//! A plan is a list of faults, each active in a window relative to when the
//! plan was installed (`START+LENGTH`, or just `LENGTH` from the start). The
//! API layer asks the plan two questions: what to do with a request arriving
//! now ([`Faults::before_request`]: pass, delay, or answer with an error), and
//! what to do with the bytes of an open watch stream ([`Faults::wrap_watch`]:
//! pass, hold, silence for good, cut, end with 410). Owns no sockets and no
//! API semantics; the clock is `tokio::time` so tests can drive it.
//!
//! Modes (`NAME[:ARG]=[START+]LENGTH`):
//! - `drop-watches`: open watches are cut (connection error) and new ones are
//!   cut at once;
//! - `stall-watches`: watches open in the window go silent for good (headers
//!   sent, then no byte ever), as a wedged proxy does; later watches work;
//! - `freeze`: a TCP freeze: every request and every watch byte waits until
//!   the window ends, then flows again;
//! - `gone`: as after a compaction: watches get an in-stream `ERROR` 410
//!   Expired and end, and list continuations are answered 410 Expired;
//! - `5xx[:CODE]`: requests are answered CODE (default 503; 500 and 504 too),
//!   and open watches end;
//! - `throttle[:SECONDS]`: requests are answered 429 with `Retry-After:
//!   SECONDS` (default 1) and a Status saying the same, and open watches end;
//! - `throttle-apf[:SECONDS]`: the same, the way kube-apiserver's Priority and
//!   Fairness and max-inflight filters answer: only the `Retry-After` header
//!   says the wait, the body is plain text;
//! - `latency[:DURATION]`: every request waits DURATION (default 500ms) first;
//! - `lose-replies`: changes are carried out, then answered 504;
//! - `refuse-protobuf`: lists and watches that ask for Kubernetes protobuf
//!   first are answered 406 Not Acceptable (a server or proxy that speaks
//!   JSON only), so clients' fallback to JSON can be tested;
//! - `bandwidth:RATE`: a slow link: everything the server sends, on every
//!   connection together, at most RATE (`100Mbit`, `1Gbit`; bits per second),
//!   paced by [`crate::sim::bandwidth`];
//! - `restart`: the control plane restarts with new state: its server
//!   stops at START (connections cut, new ones refused) and comes back after
//!   LENGTH on the same port and certificate, its watch cache starting anew
//!   (resourceVersions held by clients answer 410) and one node's daemon
//!   pods replaced meanwhile. Not a per-request effect: the server's owner
//!   carries it out (`rollcall sim --clusters` does, per member, with the
//!   embedded cluster's restart module).

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use http::{Response, StatusCode};
use serde_json::json;
use tokio::time::Instant;

use super::api::status::ApiError;

/// What a fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Cut watch connections.
    DropWatches,
    /// Silence watch streams for good.
    StallWatches,
    /// Hold every request and watch byte until the window ends.
    Freeze,
    /// End watches with an in-stream 410 Expired.
    Gone,
    /// Answer requests with this 5xx code.
    ServerError(u16),
    /// Answer requests 429 with this `Retry-After` (seconds).
    Throttle(u64),
    /// Answer requests 429 with this `Retry-After` (seconds) and a
    /// plain-text body, no Status (kube-apiserver's APF answer).
    ThrottleApf(u64),
    /// Delay each request.
    Latency(Duration),
    /// Carry out changes (PUT, PATCH, DELETE), then answer 504 as a timed-out
    /// proxy would: the client cannot tell whether its change happened.
    LoseReplies,
    /// Send at most this many bytes per second, all connections together.
    Bandwidth(u64),
    /// Answer 406 to lists and watches asking for protobuf first.
    RefuseProtobuf,
    /// Stop the server for the window, then bring it back with new state.
    Restart,
}

impl Fault {
    /// Whether this is a `restart`, carried out by the server's owner.
    pub fn is_restart(&self) -> bool {
        self.kind == FaultKind::Restart
    }
}

/// One fault and when it is active.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What it does.
    pub kind: FaultKind,
    /// When it starts, after the plan's origin.
    pub start: Duration,
    /// How long it lasts.
    pub length: Duration,
}

/// Why a `--fault` spec did not parse.
#[derive(Debug, thiserror::Error)]
#[error("invalid --fault {spec:?}: {reason}")]
pub struct FaultSpecError {
    spec: String,
    reason: String,
}

/// Parses `NAME[:ARG]=[START+]LENGTH[,…]`.
pub fn parse(spec: &str) -> Result<Vec<Fault>, FaultSpecError> {
    spec.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            parse_one(part).map_err(|reason| FaultSpecError {
                spec: part.to_owned(),
                reason,
            })
        })
        .collect()
}

fn parse_one(part: &str) -> Result<Fault, String> {
    let (head, window) = part
        .split_once('=')
        .ok_or("expected NAME[:ARG]=[START+]LENGTH, e.g. stall-watches=5s+10s")?;
    let (name, arg) = match head.split_once(':') {
        Some((name, arg)) => (name, Some(arg)),
        None => (head, None),
    };
    let kind = match (name, arg) {
        ("drop-watches", None) => FaultKind::DropWatches,
        ("stall-watches", None) => FaultKind::StallWatches,
        ("freeze", None) => FaultKind::Freeze,
        ("gone", None) => FaultKind::Gone,
        ("lose-replies", None) => FaultKind::LoseReplies,
        ("refuse-protobuf", None) => FaultKind::RefuseProtobuf,
        ("restart", None) => FaultKind::Restart,
        ("5xx", code) => {
            let code = code.map_or(Ok(503), |c| c.parse::<u16>().map_err(|_| c.to_owned()));
            match code {
                Ok(code @ 500..=599) => FaultKind::ServerError(code),
                _ => return Err("5xx takes a code from 500 to 599".into()),
            }
        }
        ("throttle", seconds) => FaultKind::Throttle(
            seconds
                .map_or(Ok(1), str::parse)
                .map_err(|_| "throttle takes whole seconds (Retry-After)")?,
        ),
        ("throttle-apf", seconds) => FaultKind::ThrottleApf(
            seconds
                .map_or(Ok(1), str::parse)
                .map_err(|_| "throttle-apf takes whole seconds (Retry-After)")?,
        ),
        ("latency", delay) => {
            FaultKind::Latency(delay.map_or(Ok(Duration::from_millis(500)), parse_duration)?)
        }
        ("bandwidth", Some(rate)) => FaultKind::Bandwidth(parse_rate(rate)?),
        ("bandwidth", None) => return Err("bandwidth takes a rate, e.g. bandwidth:1Gbit".into()),
        (name, Some(_))
            if [
                "drop-watches",
                "stall-watches",
                "freeze",
                "gone",
                "lose-replies",
                "refuse-protobuf",
                "restart",
            ]
            .contains(&name) =>
        {
            return Err(format!("{name} takes no argument"));
        }
        _ => {
            return Err(
                "unknown fault; one of drop-watches, stall-watches, freeze, gone, 5xx[:CODE], throttle[:SECONDS], throttle-apf[:SECONDS], latency[:DURATION], lose-replies, refuse-protobuf, bandwidth:RATE, restart"
                    .into(),
            );
        }
    };
    let (start, length) = match window.split_once('+') {
        Some((start, length)) => (parse_duration(start)?, parse_duration(length)?),
        None => (Duration::ZERO, parse_duration(window)?),
    };
    Ok(Fault {
        kind,
        start,
        length,
    })
}

/// `250ms`, `5s`, `2m`, `1h` (whole numbers).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || format!("bad duration {text:?} (use e.g. 250ms, 5s, 2m)");
    let number: u64 = number.parse().map_err(|_| bad())?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number.saturating_mul(60))),
        "h" => Ok(Duration::from_secs(number.saturating_mul(3600))),
        _ => Err(bad()),
    }
}

/// A link rate in bits per second, as network links are named (`500kbit`,
/// `100Mbit`, `2.5Gbit`; SI prefixes), in bytes per second.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let bad = || format!("bad rate {text:?} (use e.g. 100Mbit, 1Gbit, 2.5Gbit)");
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let bits_per_unit = match unit {
        "bit" => 1.0,
        "kbit" => 1e3,
        "Mbit" => 1e6,
        "Gbit" => 1e9,
        _ => return Err(bad()),
    };
    let bytes = number * bits_per_unit / 8.0;
    if !(1.0..=1e12).contains(&bytes) {
        return Err(format!("rate {text:?} is out of range (8bit to 8Tbit)"));
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "range checked above"
    )]
    Ok(bytes as u64)
}

#[derive(Debug, Default)]
struct Plan {
    origin: Option<Instant>,
    faults: Vec<Fault>,
}

impl Plan {
    fn active(&self, now: Instant) -> impl Iterator<Item = FaultKind> + '_ {
        let origin = self.origin.unwrap_or(now);
        self.faults.iter().filter_map(move |f| {
            let start = origin + f.start;
            (now >= start && now < start + f.length).then_some(f.kind)
        })
    }

    /// The end of the active window of the first active fault matching `pick`.
    fn end_of(&self, now: Instant, pick: impl Fn(FaultKind) -> bool) -> Option<Instant> {
        let origin = self.origin?;
        self.faults
            .iter()
            .filter(|f| pick(f.kind))
            .map(|f| (origin + f.start, origin + f.start + f.length))
            .filter(|(start, end)| now >= *start && now < *end)
            .map(|(_, end)| end)
            .max()
    }

    /// The next window start or end after `now` (when to look again).
    fn next_boundary(&self, now: Instant) -> Option<Instant> {
        let origin = self.origin?;
        self.faults
            .iter()
            .flat_map(|f| [origin + f.start, origin + f.start + f.length])
            .filter(|at| *at > now)
            .min()
    }
}

/// The fault plan shared by the server and whoever controls it. Cheap to
/// clone; an empty plan costs one read lock per request.
#[derive(Clone, Debug)]
pub struct Faults {
    plan: Arc<RwLock<Plan>>,
    /// Bumped on every install, so open watch streams look again.
    installed: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            plan: Arc::default(),
            installed: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }
}

/// What to do with the bytes of an open watch right now.
enum WatchEffect {
    Pass(Option<Instant>),
    Hold(Instant),
    Stall,
    Cut,
    Gone,
    End,
}

impl Faults {
    /// No faults.
    pub fn none() -> Faults {
        Faults::default()
    }

    /// Installs `faults`, with windows counted from now.
    pub fn install(&self, faults: Vec<Fault>) {
        let mut plan = self.plan.write().unwrap_or_else(PoisonError::into_inner);
        plan.origin = Some(Instant::now());
        plan.faults = faults;
        drop(plan);
        self.installed.send_modify(|n| *n += 1);
    }

    /// Removes every fault.
    pub fn clear(&self) {
        self.install(Vec::new());
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Plan> {
        self.plan.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies the request-level faults: waits out a freeze or a latency,
    /// or answers with the injected error. `continuation`: a list request
    /// with a `continue` token.
    pub async fn before_request(&self, continuation: bool) -> Option<Response<Body>> {
        let (freeze_end, latency, answer) = {
            let plan = self.read();
            let now = Instant::now();
            let freeze_end = plan.end_of(now, |k| k == FaultKind::Freeze);
            let mut latency = Duration::ZERO;
            let mut answer = None;
            for kind in plan.active(now) {
                match kind {
                    FaultKind::Latency(d) => latency = latency.max(d),
                    FaultKind::ServerError(code) => answer = Some(server_error(code)),
                    FaultKind::Throttle(seconds) => answer = Some(throttled(seconds)),
                    FaultKind::ThrottleApf(seconds) => {
                        answer = Some(super::api::too_many_requests_plain(seconds));
                    }
                    FaultKind::Gone if continuation => {
                        answer = Some(super::api::error_response(&ApiError::continue_expired()));
                    }
                    _ => {}
                }
            }
            (freeze_end, latency, answer)
        };
        if let Some(end) = freeze_end {
            tracing::debug!("fault: request frozen until the window ends");
            tokio::time::sleep_until(end).await;
        }
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        answer
    }

    fn watch_effect(&self, stalled: bool) -> WatchEffect {
        let plan = self.read();
        let now = Instant::now();
        if stalled {
            return WatchEffect::Stall;
        }
        let mut effect = None;
        for kind in plan.active(now) {
            effect = Some(match kind {
                FaultKind::StallWatches => return WatchEffect::Stall,
                FaultKind::DropWatches => WatchEffect::Cut,
                FaultKind::Gone => WatchEffect::Gone,
                FaultKind::ServerError(_) | FaultKind::Throttle(_) | FaultKind::ThrottleApf(_) => {
                    WatchEffect::End
                }
                FaultKind::Freeze => match plan.end_of(now, |k| k == FaultKind::Freeze) {
                    Some(end) => WatchEffect::Hold(end),
                    None => continue,
                },
                FaultKind::Latency(_)
                | FaultKind::LoseReplies
                | FaultKind::Bandwidth(_)
                | FaultKind::RefuseProtobuf
                | FaultKind::Restart => {
                    continue;
                }
            });
        }
        effect.unwrap_or_else(|| WatchEffect::Pass(plan.next_boundary(now)))
    }

    /// The link's rate now, in bytes per second (the slowest active
    /// `bandwidth` fault); `None`: unpaced.
    pub fn bandwidth(&self) -> Option<u64> {
        self.read()
            .active(Instant::now())
            .filter_map(|kind| match kind {
                FaultKind::Bandwidth(rate) => Some(rate),
                _ => None,
            })
            .min()
    }

    /// Whether `refuse-protobuf` is active now.
    pub fn refuses_protobuf(&self) -> bool {
        self.read()
            .active(Instant::now())
            .any(|kind| kind == FaultKind::RefuseProtobuf)
    }

    /// After a write was carried out: while `lose-replies` is active, its
    /// answer is replaced by a 504, as if a proxy had given up waiting.
    pub fn after_write(&self, response: Response<Body>) -> Response<Body> {
        let plan = self.read();
        if plan
            .active(Instant::now())
            .any(|kind| kind == FaultKind::LoseReplies)
        {
            tracing::debug!("fault: the write happened, its reply is lost");
            return server_error(504);
        }
        response
    }

    /// Wraps a watch response body so open streams feel the faults too.
    pub fn wrap_watch(&self, response: Response<Body>) -> Response<Body> {
        let (parts, body) = response.into_parts();
        let tap = Tap {
            faults: self.clone(),
            installed: self.installed.subscribe(),
            inner: body.into_data_stream(),
            stalled: false,
            done: false,
        };
        let stream = futures::stream::unfold(tap, |mut tap| async move {
            let item = tap.next().await?;
            Some((item, tap))
        });
        Response::from_parts(parts, Body::from_stream(stream))
    }
}

struct Tap {
    faults: Faults,
    installed: tokio::sync::watch::Receiver<u64>,
    inner: axum::body::BodyDataStream,
    stalled: bool,
    done: bool,
}

impl Tap {
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        if self.done {
            return None;
        }
        let mut pending: Option<Result<Bytes, std::io::Error>> = None;
        loop {
            match self.faults.watch_effect(self.stalled) {
                WatchEffect::Stall => {
                    if !self.stalled {
                        tracing::info!("fault: watch stalled");
                    }
                    self.stalled = true;
                    return std::future::pending().await;
                }
                WatchEffect::Cut => {
                    self.done = true;
                    return Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "fault: watch dropped",
                    )));
                }
                WatchEffect::Gone => {
                    self.done = true;
                    return Some(Ok(gone_line()));
                }
                WatchEffect::End => return None,
                WatchEffect::Hold(until) => tokio::time::sleep_until(until).await,
                WatchEffect::Pass(_) if pending.is_some() => return pending,
                WatchEffect::Pass(boundary) => {
                    // Look again at the next window edge or when a plan is installed.
                    let edge = async {
                        match boundary {
                            Some(at) => tokio::time::sleep_until(at).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        item = self.inner.next() => {
                            // Judge the chunk by the plan at the time it is sent.
                            pending = Some(item?.map_err(std::io::Error::other));
                        }
                        () = edge => {}
                        // Never an error: this tap holds the sender (in `faults`).
                        _ = self.installed.changed() => {}
                    }
                }
            }
        }
    }
}

fn server_error(code: u16) -> Response<Body> {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let (reason, message) = match code {
        500 => ("InternalError", "Internal error occurred: injected fault"),
        504 => ("Timeout", "Timeout: injected fault"),
        _ => (
            "ServiceUnavailable",
            "the server is currently unable to handle the request (injected fault)",
        ),
    };
    super::api::error_response(&ApiError::new(status, reason, message))
}

fn throttled(seconds: u64) -> Response<Body> {
    let error = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "TooManyRequests",
        "Too many requests, please try again later.",
    )
    .with_details(json!({"retryAfterSeconds": seconds}));
    let mut response = super::api::error_response(&error);
    if let Ok(value) = http::HeaderValue::from_str(&seconds.to_string()) {
        response
            .headers_mut()
            .insert(http::header::RETRY_AFTER, value);
    }
    response
}

fn gone_line() -> Bytes {
    let status = ApiError::expired("too old resource version: injected fault").to_status();
    let line = json!({"type": "ERROR", "object": status});
    let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        let faults = parse(
            "stall-watches=5s+10s, 5xx:500=2s,throttle:120=1m+30s,latency:250ms=1h,gone=0s+1s",
        )
        .unwrap();
        assert_eq!(
            faults,
            vec![
                Fault {
                    kind: FaultKind::StallWatches,
                    start: Duration::from_secs(5),
                    length: Duration::from_secs(10)
                },
                Fault {
                    kind: FaultKind::ServerError(500),
                    start: Duration::ZERO,
                    length: Duration::from_secs(2)
                },
                Fault {
                    kind: FaultKind::Throttle(120),
                    start: Duration::from_secs(60),
                    length: Duration::from_secs(30)
                },
                Fault {
                    kind: FaultKind::Latency(Duration::from_millis(250)),
                    start: Duration::ZERO,
                    length: Duration::from_secs(3600)
                },
                Fault {
                    kind: FaultKind::Gone,
                    start: Duration::ZERO,
                    length: Duration::from_secs(1)
                },
            ]
        );
        assert_eq!(
            parse("5xx=1s").unwrap()[0].kind,
            FaultKind::ServerError(503)
        );
        let restart = parse("restart=4s+2s").unwrap()[0];
        assert!(restart.is_restart());
        assert_eq!(
            (restart.start, restart.length),
            (Duration::from_secs(4), Duration::from_secs(2))
        );
    }

    #[test]
    fn rejects_bad_specs_with_the_part_named() {
        for bad in [
            "stall-watches",
            "nope=1s",
            "5xx:404=1s",
            "gone:1=1s",
            "restart:1=1s",
            "freeze=5",
            "freeze=1s+x",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains(bad), "{err}");
        }
    }

    #[test]
    fn bandwidth_rates_are_bits_per_second_as_links_are_named() {
        for (spec, bytes_per_second) in [
            ("bandwidth:1Gbit=1m", 125_000_000),
            ("bandwidth:2.5Gbit=1m", 312_500_000),
            ("bandwidth:100Mbit=1m", 12_500_000),
            ("bandwidth:800kbit=1m", 100_000),
            ("bandwidth:80bit=1m", 10),
        ] {
            let kind = parse(spec).unwrap()[0].kind;
            assert_eq!(kind, FaultKind::Bandwidth(bytes_per_second), "{spec}");
        }
        for bad in [
            "bandwidth=1m",
            "bandwidth:1GB=1m",
            "bandwidth:fast=1m",
            "bandwidth:1=1m",
            "bandwidth:0Mbit=1m",
            "bandwidth:1.2.3Gbit=1m",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains(bad), "{err}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_slowest_active_bandwidth_is_the_rate() {
        let faults = Faults::none();
        assert_eq!(faults.bandwidth(), None);
        faults.install(parse("bandwidth:8Mbit=2s,bandwidth:80Mbit=5s,latency=5s").unwrap());
        assert_eq!(faults.bandwidth(), Some(1_000_000));
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(faults.bandwidth(), Some(10_000_000));
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(faults.bandwidth(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn windows_open_and_close_on_time() {
        let faults = Faults::none();
        faults.install(parse("throttle:7=1s+2s").unwrap());
        assert!(faults.before_request(false).await.is_none());
        tokio::time::advance(Duration::from_millis(1500)).await;
        let answer = faults.before_request(false).await.expect("throttled");
        assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(answer.headers()[http::header::RETRY_AFTER], "7");
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(faults.before_request(false).await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn gone_expires_list_continuations_but_not_first_pages() {
        let faults = Faults::none();
        faults.install(parse("gone=1s").unwrap());
        assert!(faults.before_request(false).await.is_none());
        let answer = faults.before_request(true).await.expect("expired");
        assert_eq!(answer.status(), StatusCode::GONE);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(faults.before_request(true).await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_watch_stays_silent_after_the_window() {
        let faults = Faults::none();
        faults.install(parse("stall-watches=0s+1s").unwrap());
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
        let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
        let response = faults.wrap_watch(Response::new(body));
        let mut data = response.into_body().into_data_stream();
        tx.send(Ok(Bytes::from_static(b"x\n"))).await.unwrap();
        let first = tokio::time::timeout(Duration::from_secs(5), data.next()).await;
        assert!(first.is_err(), "nothing gets through a stalled watch");
        tx.send(Ok(Bytes::from_static(b"y\n"))).await.unwrap();
        let later = tokio::time::timeout(Duration::from_secs(5), data.next()).await;
        assert!(later.is_err(), "still nothing after the window");
    }
}
