//! The decode's own floor: the node and pod lists read whole into memory,
//! then decoded on one core, twice: one JSON pass that builds nothing
//! (serde_json skipping every value: what any parser must at least do) and
//! the console's decode into its slim objects (`request::decode_page`). The
//! console's load cannot be faster than the transfer, nor than its decode
//! spread over the machine's cores while the server and the TLS layer take
//! their share: these figures say how far from that floor it is.

use std::time::{Duration, Instant};

use futures::AsyncReadExt;
use rollcall::cluster::request::decode_page;
use rollcall::model::{Node, Pod};

/// How long one core takes to decode the lists.
pub(crate) struct Decoding {
    pub(crate) bytes: u64,
    /// One JSON pass, nothing built.
    pub(crate) skip: Duration,
    /// The console's decode into its slim objects.
    pub(crate) slim: Duration,
}

impl std::fmt::Display for Decoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        #[allow(clippy::cast_precision_loss, reason = "display only")]
        let mb = self.bytes as f64 / 1_000_000.0;
        write!(
            f,
            "decode of the node and pod lists ({mb:.0} MB) on one core, best of two: one JSON pass building nothing {:.2?} ({:.0} MB/s), the console's slim decode {:.2?} ({:.0} MB/s)",
            self.skip,
            mb / self.skip.as_secs_f64(),
            self.slim,
            mb / self.slim.as_secs_f64()
        )
    }
}

/// Reads the lists at `nodes` and `pods` and times their decode.
pub(crate) async fn floor(
    client: &kube::Client,
    nodes: &str,
    pods: &str,
) -> anyhow::Result<Decoding> {
    let nodes = body(client, nodes).await?;
    let pods = body(client, pods).await?;
    let (mut skip, mut slim) = (Duration::MAX, Duration::MAX);
    for _ in 0..2 {
        let started = Instant::now();
        serde_json::from_slice::<serde::de::IgnoredAny>(&nodes)?;
        serde_json::from_slice::<serde::de::IgnoredAny>(&pods)?;
        skip = skip.min(started.elapsed());
        let started = Instant::now();
        let decoded = (decode_page::<Node>(&nodes)?, decode_page::<Pod>(&pods)?);
        slim = slim.min(started.elapsed());
        anyhow::ensure!(
            !decoded.0.items.is_empty() && !decoded.1.items.is_empty(),
            "the lists decoded empty"
        );
    }
    Ok(Decoding {
        bytes: (nodes.len() + pods.len()) as u64,
        skip,
        slim,
    })
}

async fn body(client: &kube::Client, path: &str) -> anyhow::Result<Vec<u8>> {
    let request = http::Request::get(path).body(Vec::new())?;
    let mut bytes = Vec::new();
    client
        .request_stream(request)
        .await?
        .read_to_end(&mut bytes)
        .await?;
    Ok(bytes)
}
