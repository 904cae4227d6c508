//! The effects side of the logs overlay: fetches a pod's log through the API
//! (`GET …/pods/{name}/log` with `container`, `previous`, `tailLines` and
//! `limitBytes`, via kube's `Api::<Pod>::log_stream`) on its own task, one
//! task per request, so the console's loop never waits on the network, and
//! sends each answer back as a [`LogsResult`] with errors in words.

use std::time::Duration;

use futures::AsyncReadExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};
use tokio::sync::mpsc;

use super::logs_request::{LIMIT_BYTES, LogsRequest, LogsResult, TAIL_LINES};

/// How long a log fetch may take before the overlay says so.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// The event loop's ends of the log fetcher.
#[derive(Debug)]
pub struct LogsLink {
    requests: mpsc::UnboundedSender<LogsRequest>,
    /// The answers, in the order they arrive.
    pub results: mpsc::UnboundedReceiver<LogsResult>,
}

impl LogsLink {
    /// Asks for a log; the answer arrives on `results`.
    pub fn fetch(&self, request: LogsRequest) {
        // The fetcher only stops when the link is dropped.
        let _ = self.requests.send(request);
    }
}

/// Starts the fetcher on the current runtime.
pub fn start(client: kube::Client) -> LogsLink {
    let (requests, mut incoming) = mpsc::unbounded_channel::<LogsRequest>();
    let (answers, results) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(request) = incoming.recv().await {
            let client = client.clone();
            let answers = answers.clone();
            tokio::spawn(async move {
                let outcome = fetch(client, &request).await;
                let _ = answers.send(LogsResult { request, outcome });
            });
        }
    });
    LogsLink { requests, results }
}

/// Fetches one log: its text (invalid UTF-8, e.g. cut by the byte limit,
/// replaced), or what went wrong in words.
pub async fn fetch(client: kube::Client, request: &LogsRequest) -> Result<String, String> {
    let api: Api<Pod> = Api::namespaced(client, &request.namespace);
    let params = LogParams {
        container: request.container.clone(),
        previous: request.previous,
        tail_lines: Some(TAIL_LINES),
        limit_bytes: Some(LIMIT_BYTES),
        ..LogParams::default()
    };
    let read = async {
        let stream = api.log_stream(&request.pod, &params).await?;
        let stream = std::pin::pin!(stream);
        let mut bytes = Vec::new();
        let limit = u64::try_from(LIMIT_BYTES).unwrap_or(u64::MAX);
        stream
            .take(limit)
            .read_to_end(&mut bytes)
            .await
            .map_err(kube::Error::ReadEvents)?;
        Ok::<_, kube::Error>(bytes)
    };
    match tokio::time::timeout(FETCH_TIMEOUT, read).await {
        Ok(Ok(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Ok(Err(err)) => Err(describe(&err, request)),
        Err(_) => Err(format!(
            "the cluster did not answer within {}s",
            FETCH_TIMEOUT.as_secs()
        )),
    }
}

/// A fetch error in words: forbidden, gone, the kubelet's refusal, or unreachable.
pub fn describe(err: &kube::Error, request: &LogsRequest) -> String {
    let pod = format!("{}/{}", request.namespace, request.pod);
    match err {
        kube::Error::Api(status) => match status.code {
            403 => format!(
                "not allowed to read the log of {pod} (pods/log get): {}",
                status.message
            ),
            404 => format!(
                "pod {pod} not found (replaced or deleted?): {}",
                status.message
            ),
            400 => status.message.clone(),
            code => format!(
                "the API server answered {code} {}: {}",
                status.reason, status.message
            ),
        },
        other => format!("cluster unreachable: {other}"),
    }
}
