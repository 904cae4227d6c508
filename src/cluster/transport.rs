//! One cluster's HTTP transport, offering HTTP/2 as client-go does: TLS
//! with ALPN `h2` then `http/1.1`, so a server that speaks HTTP/2 (every
//! kube-apiserver, the embedded cluster) carries all of the cluster's
//! watches and requests on one TCP connection, and one that does not is
//! spoken to in HTTP/1.1 as before. kube's own `ClientBuilder::try_from`
//! builds the same stack HTTP/1-only; this is that stack, layer for layer
//! (base URI, gzip, credentials, extra headers, tracing, kube's connect /
//! read / write timeouts, `tls-server-name`, client certificates,
//! `insecure-skip-tls-verify`), with h2 enabled. A cluster reached through
//! a proxy keeps kube's own builder (HTTP/1.1), which knows its tunnels.
//! Builds clients only; what goes over them is the callers' business.

use std::time::Duration;

use http::{Request, Response};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::{Body, ClientBuilder, ConfigExt as _, DynBody};
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

/// kube's client stack type, whichever builder made it.
pub type Stack = BoxService<Request<Body>, Response<Box<DynBody>>, BoxError>;

/// With no data from the server for this long, an HTTP/2 connection with
/// requests open is pinged (client-go's `ReadIdleTimeout`, 30 s): a
/// connection that died silently would otherwise hold every watch of the
/// cluster until the kernel gives up on it.
pub const PING_AFTER_SILENCE: Duration = Duration::from_secs(30);
/// How long a ping may go unanswered before the connection is closed and
/// its requests fail (client-go's `PingTimeout`, 15 s).
pub const PING_TIMEOUT: Duration = Duration::from_secs(15);

/// Bytes a server may send on one stream before the client reads them:
/// Go's HTTP/2 transport's (client-go's), 4 MiB, above hyper's 2 MiB (a
/// page of 500 nodes is ~5 MB of JSON).
pub const STREAM_WINDOW: u32 = 4 << 20;
/// The same for the whole connection: Go's, 1 GiB (the streams' own
/// windows are the bound that matters; a small one would make the
/// cluster's watches and lists wait on each other).
pub const CONNECTION_WINDOW: u32 = 1 << 30;

/// The stack for `config`: HTTP/2 where the server offers it, unless the
/// cluster is reached through a proxy (then kube's own HTTP/1.1 stack, and
/// the log says so).
pub fn stack(config: &kube::Config) -> Result<ClientBuilder<Stack>, kube::Error> {
    if let Some(proxy) = &config.proxy_url {
        tracing::info!(
            server = %config.cluster_url,
            proxy = proxy.scheme_str().unwrap_or("?"),
            "through a proxy: HTTP/1.1 with kube's own connector"
        );
        return ClientBuilder::try_from(config.clone());
    }
    multiplexed(config)
}

/// kube's `make_generic_builder`, with ALPN `h2` offered and the HTTP/2
/// keep-alive of client-go.
fn multiplexed(config: &kube::Config) -> Result<ClientBuilder<Stack>, kube::Error> {
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    // As Go dials (client-go): the small frames HTTP/2 sends back (window
    // updates) must not wait on Nagle for the peer's ACK. With this and the
    // windows below, h2 lists as fast as HTTP/1.1 (`examples/wire.rs`; with
    // hyper's defaults, 2–4× slower over loopback).
    tcp.set_nodelay(true);
    let tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config.rustls_client_config()?)
        .https_or_http();
    let tls = match &config.tls_server_name {
        Some(name) => {
            let name = name
                .clone()
                .try_into()
                .map_err(kube::client::RustlsTlsError::InvalidServerName)
                .map_err(kube::Error::RustlsTls)?;
            tls.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => tls,
    };
    let mut connector =
        hyper_timeout::TimeoutConnector::new(tls.enable_all_versions().wrap_connector(tcp));
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);

    let client: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .http2_keep_alive_interval(PING_AFTER_SILENCE)
            .http2_keep_alive_timeout(PING_TIMEOUT)
            .http2_initial_stream_window_size(STREAM_WINDOW)
            .http2_initial_connection_window_size(CONNECTION_WINDOW)
            .build(connector);

    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .layer(
            tower_http::decompression::DecompressionLayer::new()
                .no_br()
                .no_deflate()
                .no_zstd()
                .gzip(!config.disable_compression),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .map_err(BoxError::from)
        .service(client)
        .map_response(|response| response.map(|body| Box::new(body) as Box<DynBody>))
        .boxed();
    // kube also dates the client by an exec plugin's certificate
    // (`valid_until`), from a reading it keeps to itself; nothing here or
    // in kube acts on that date.
    Ok(ClientBuilder::new(
        service,
        config.default_namespace.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::cluster::watch::{self, Target, WatchHandle};
    use crate::sim::embedded::{self, EmbeddedCluster, EmbeddedOptions};

    async fn small_cluster() -> EmbeddedCluster {
        embedded::start(EmbeddedOptions {
            scenario: Some("small".to_owned()),
            ..EmbeddedOptions::default()
        })
        .await
        .expect("the embedded cluster starts")
    }

    fn agent() -> Target {
        Target {
            namespace: "kube-system".to_owned(),
            name: "node-agent".to_owned(),
        }
    }

    /// The console's watch (every stream, node usage included) on `client`,
    /// once the server has been asked for at least six watches and every
    /// stream has listed.
    async fn console_watching(cluster: &EmbeddedCluster, client: kube::Client) -> WatchHandle {
        let handle = watch::spawn(client, None, Some(agent()));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let watches = cluster
                .server
                .requests()
                .iter()
                .filter(|r| r.is_watch())
                .count();
            let listed = {
                let cache = handle.shared.lock();
                cache.streams().len() >= 6
                    && cache
                        .streams()
                        .values()
                        .all(crate::cluster::status::StreamStatus::settled)
            };
            if watches >= 6 && listed {
                return handle;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{watches} watches asked, streams listed: {listed}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The server's open connections once they are at most `most`, or
    /// what they are after 5 s (a connection raced at start and left
    /// unused closes as soon as ALPN says h2).
    async fn open_settling_to(cluster: &EmbeddedCluster, most: usize) -> usize {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let open = cluster.server.open_connections();
            if open <= most || tokio::time::Instant::now() >= deadline {
                return open;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_console_holds_its_watches_and_reads_on_one_connection_of_the_cluster() {
        let cluster = small_cluster().await;
        let connection = crate::cluster::connect::connection_from_config(
            cluster.server.kube_config(),
            "embedded".to_owned(),
            None,
            crate::cluster::wire::Wire::default(),
            crate::cluster::compression::Compression::default(),
        )
        .expect("a connection");
        let _watching = console_watching(&cluster, connection.watch_client.clone()).await;
        // One-off reads (the retrying client) beside the open watches.
        let nodes: kube::Api<k8s_openapi::api::core::v1::Node> =
            kube::Api::all(connection.client.clone());
        for _ in 0..3 {
            nodes
                .list(&kube::api::ListParams::default())
                .await
                .expect("nodes list");
        }
        let open = open_settling_to(&cluster, 2).await;
        assert!(open <= 2, "{open} connections for one cluster");
        assert!(open >= 1, "the watches are open");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_offering_only_http1_is_served_one_connection_per_watch() {
        let cluster = small_cluster().await;
        // kube's own builder: ALPN `http/1.1` only, as behind a proxy.
        let http1 = kube::client::ClientBuilder::try_from(cluster.server.kube_config())
            .expect("kube's client")
            .build();
        let _watching = console_watching(&cluster, http1).await;
        let open = cluster.server.open_connections();
        assert!(
            open >= 6,
            "{open} connections for six watches over HTTP/1.1"
        );
    }
}
