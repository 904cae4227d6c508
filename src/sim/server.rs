//! The HTTPS server of the embedded cluster: binds the listener, terminates
//! TLS with the generated CA (taking a client certificate when one is
//! offered), serves HTTP/2 or HTTP/1.1 connections (as ALPN chose) into the
//! API router with header and body read timeouts, and hands back a [`ServerHandle`] (address, CA,
//! credentials, kubeconfig, in-process `kube::Config`, shutdown). Owns
//! sockets and tasks; no API semantics live here.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::sim::api::{self, ApiState, PeerCertificate};
use crate::sim::auth::Authorizer;
use crate::sim::authn::{self, Authenticator};
use crate::sim::bandwidth::{Link, Paced};
use crate::sim::kubeconfig::{self, KubeconfigParts};
use crate::sim::store::Store;
use crate::sim::tls::{self, TlsError, TlsMaterial};

/// Streams a client may open on one HTTP/2 connection: what k8s.io/apiserver's
/// recommended options give (`HTTP2MaxStreamsPerConnection = 1000`), far
/// above what a console or a fleet opens on one cluster.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 1000;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// Certificates or TLS configuration failed.
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Where to listen; `127.0.0.1:0` picks a free port.
    pub listen: SocketAddr,
    /// The bearer token clients must send; `None` generates a random one.
    pub token: Option<String>,
    /// Every credential to accept (from [`ServerHandle::credentials`]), so a
    /// restarted server takes the kubeconfig it wrote before; `None`: `token`
    /// and new random ones.
    pub credentials: Option<Authenticator>,
    /// The authorization policy (allow-all by default).
    pub authorizer: Authorizer,
    /// How often watches with `allowWatchBookmarks` get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// Certificates to reuse (from [`ServerHandle::tls`]), so a restarted
    /// server on the same port is trusted by existing clients; `None` makes new ones.
    pub tls: Option<TlsMaterial>,
    /// Injected faults (`rollcall sim --fault`); keep a clone to change them while serving.
    pub faults: crate::sim::fault::Faults,
    /// At most this many requests in flight, beyond which 429 (`None`: no limit).
    pub max_inflight: Option<usize>,
    /// How long request headers, and then a request body, may take to arrive.
    pub read_timeout: Duration,
    /// How long the exec plugin's tokens are valid.
    pub exec_token_ttl: Duration,
    /// The namespace the viewer context defaults to (its rights come from the authorizer).
    pub viewer_namespace: String,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            credentials: None,
            authorizer: Authorizer::allow_all(),
            bookmark_interval: Duration::from_secs(30),
            tls: None,
            faults: crate::sim::fault::Faults::none(),
            max_inflight: None,
            read_timeout: Duration::from_secs(30),
            exec_token_ttl: Duration::from_secs(120),
            viewer_namespace: "kube-system".to_owned(),
        }
    }
}

/// A running server.
pub struct ServerHandle {
    /// The bound address.
    pub addr: SocketAddr,
    /// The CA certificate (PEM) clients must trust.
    pub ca_pem: String,
    /// The admin bearer token.
    pub token: String,
    credentials: Authenticator,
    exec_token_ttl: Duration,
    viewer_namespace: String,
    tls: TlsMaterial,
    shutdown: watch::Sender<bool>,
    generation: watch::Sender<u64>,
    accept_task: JoinHandle<()>,
    requests: Arc<crate::sim::api::request_log::RequestLog>,
    open_connections: Arc<AtomicUsize>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// Starts the HTTPS API server for `store`.
pub async fn serve(store: Store, options: ServeOptions) -> Result<ServerHandle, SimError> {
    let listener = TcpListener::bind(options.listen)
        .await
        .map_err(|source| SimError::Bind {
            addr: options.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| SimError::Bind {
        addr: options.listen,
        source,
    })?;
    let material = match options.tls {
        Some(material) => material,
        None => tls::generate(&[addr.ip().to_string()])?,
    };
    let credentials = options
        .credentials
        .clone()
        .unwrap_or_else(|| Authenticator {
            admin_token: options.token.clone().unwrap_or_else(random_token),
            viewer_token: random_token(),
            exec_key: random_token(),
        });
    let token = credentials.admin_token.clone();
    let requests = Arc::new(crate::sim::api::request_log::RequestLog::default());
    let state = Arc::new(ApiState {
        store,
        authenticator: Some(credentials.clone()),
        authorizer: options.authorizer.clone(),
        inflight: options
            .max_inflight
            .map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1)))),
        read_timeout: options.read_timeout,
        server_address: addr.to_string(),
        bookmark_interval: options.bookmark_interval,
        faults: options.faults.clone(),
        requests: Arc::clone(&requests),
    });
    let (shutdown, _) = watch::channel(false);
    let (generation, _) = watch::channel(0u64);
    let acceptor = TlsAcceptor::from(Arc::clone(&material.server_config));
    let link = Link::new(options.faults.clone());
    let open_connections = Arc::new(AtomicUsize::new(0));
    let accept_task = tokio::spawn(accept_loop(
        Acceptor {
            listener,
            tls: acceptor,
            link,
            open: Arc::clone(&open_connections),
        },
        state,
        shutdown.subscribe(),
        generation.clone(),
    ));
    Ok(ServerHandle {
        addr,
        ca_pem: material.ca_pem.clone(),
        token,
        credentials,
        exec_token_ttl: options.exec_token_ttl,
        viewer_namespace: options.viewer_namespace.clone(),
        tls: material,
        shutdown,
        generation,
        accept_task,
        requests,
        open_connections,
    })
}

impl ServerHandle {
    /// `https://127.0.0.1:PORT` (the loopback address when listening on all
    /// interfaces, since `0.0.0.0` is not an address a client can reach).
    pub fn url(&self) -> String {
        let mut addr = self.addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(if addr.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        format!("https://{addr}")
    }

    /// The viewer's bearer token.
    pub fn viewer_token(&self) -> &str {
        &self.credentials.viewer_token
    }

    /// The kubeconfig's parts: the admin token always, the client
    /// certificate, the viewer, and the exec plugin when this binary's path
    /// is known.
    pub fn kubeconfig_parts(&self) -> KubeconfigParts {
        let exec = std::env::current_exe().ok().map(|binary| {
            (
                binary.to_string_lossy().into_owned(),
                vec![
                    "sim-credential".to_owned(),
                    "--key".to_owned(),
                    self.credentials.exec_key.clone(),
                    "--ttl".to_owned(),
                    format!("{}s", self.exec_token_ttl.as_secs().max(1)),
                ],
            )
        });
        KubeconfigParts {
            server: self.url(),
            ca_pem: self.ca_pem.clone(),
            admin_token: self.token.clone(),
            client_cert: Some((
                self.tls.client_cert_pem.clone(),
                self.tls.client_key_pem.clone(),
            )),
            exec,
            viewer: Some((
                self.credentials.viewer_token.clone(),
                self.viewer_namespace.clone(),
            )),
            token_file: None,
            tls_server_name: Some(kubeconfig::TLS_SERVER_NAME.to_owned()),
        }
    }

    /// A kubeconfig (YAML) with the CA inline and a context per way in.
    pub fn kubeconfig_yaml(&self) -> String {
        kubeconfig::render(&self.kubeconfig_parts())
    }

    /// Writes [`ServerHandle::kubeconfig_yaml`] to `path` (created 0600, never
    /// through a symlink), plus the `tokenFile` context, whose file (the admin
    /// token, same care) goes beside it; [`kubeconfig::remove`] removes both.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        let token_file = std::path::absolute(kubeconfig::token_file_path(path))?;
        let parts = KubeconfigParts {
            token_file: Some(token_file.clone()),
            ..self.kubeconfig_parts()
        };
        // The kubeconfig first: a symlink there is refused before anything is written.
        kubeconfig::write(path, &kubeconfig::render(&parts))?;
        kubeconfig::write(&token_file, &self.token).inspect_err(|_| kubeconfig::remove(path))
    }

    /// An in-memory client configuration trusting the CA, with the token, so
    /// in-process users build a `kube::Client` without a file.
    pub fn kube_config(&self) -> kube::Config {
        let uri = self.url().parse::<http::Uri>().unwrap_or_default();
        let mut config = kube::Config::new(uri);
        config.root_cert = Some(vec![self.tls.ca_der.clone()]);
        config.auth_info.token = Some(self.token.clone().into());
        "default".clone_into(&mut config.default_namespace);
        // A loopback server: uncompressed, as `--compression auto` chooses
        // (the console's `--compression on` still asks for gzip).
        config.disable_compression = true;
        config
    }

    /// The certificates in use, to restart a server that clients still trust.
    pub fn tls(&self) -> TlsMaterial {
        self.tls.clone()
    }

    /// The credentials accepted, to restart a server its kubeconfig still reaches.
    pub fn credentials(&self) -> Authenticator {
        self.credentials.clone()
    }

    /// Cuts every open connection (watches included) while the listener
    /// stays up, as a network blip would; clients reconnect.
    pub fn drop_connections(&self) {
        self.generation.send_modify(|g| *g += 1);
    }

    /// The requests asked so far (the newest few thousand), oldest first:
    /// who asked, method, path and query.
    pub fn requests(&self) -> Vec<crate::sim::api::request_log::RequestRecord> {
        self.requests.snapshot()
    }

    /// The client connections (TCP) open now: a kube client speaking
    /// HTTP/2 holds one for all of its watches, one speaking HTTP/1.1 one
    /// per watch.
    pub fn open_connections(&self) -> usize {
        self.open_connections.load(Ordering::Relaxed)
    }

    /// Stops accepting, closes every connection and waits for the listener to close.
    pub async fn shutdown(self) {
        self.shutdown.send_replace(true);
        let _ = self.accept_task.await;
    }
}

/// What the accept loop takes connections with.
struct Acceptor {
    listener: TcpListener,
    tls: TlsAcceptor,
    link: Arc<Link>,
    /// Counts the connections open ([`ServerHandle::open_connections`]).
    open: Arc<AtomicUsize>,
}

async fn accept_loop(
    acceptor: Acceptor,
    state: Arc<ApiState>,
    mut shutdown: watch::Receiver<bool>,
    generation: watch::Sender<u64>,
) {
    loop {
        tokio::select! {
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    return;
                }
            }
            accepted = acceptor.listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors or similar: back off instead of spinning.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let task = Connection {
                    acceptor: acceptor.tls.clone(),
                    link: Arc::clone(&acceptor.link),
                    open: OpenConnection::count(&acceptor.open),
                    read_timeout: state.read_timeout,
                    state: Arc::clone(&state),
                    shutdown: shutdown.clone(),
                    generation: generation.subscribe(),
                };
                tokio::spawn(task.serve(stream));
            }
        }
    }
}

/// One client connection.
struct Connection {
    acceptor: TlsAcceptor,
    /// What the server sends goes through the one link (`bandwidth` faults).
    link: Arc<Link>,
    read_timeout: Duration,
    state: Arc<ApiState>,
    shutdown: watch::Receiver<bool>,
    generation: watch::Receiver<u64>,
    /// Counted as open while this lives.
    open: OpenConnection,
}

/// One open connection in the server's count, until dropped.
struct OpenConnection(Arc<AtomicUsize>);

impl OpenConnection {
    fn count(open: &Arc<AtomicUsize>) -> OpenConnection {
        open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(Arc::clone(open))
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Connection {
    async fn serve(mut self, stream: TcpStream) {
        let _counted = self.open;
        let _ = stream.set_nodelay(true);
        let handshake_timeout = self.read_timeout.min(Duration::from_secs(10));
        let stream = Paced::new(stream, Arc::clone(&self.link));
        let Ok(Ok(tls)) =
            tokio::time::timeout(handshake_timeout, self.acceptor.accept(stream)).await
        else {
            return;
        };
        let certificate = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(|leaf| authn::certificate_identity(leaf))
            .map(PeerCertificate);
        let state = Arc::clone(&self.state);
        let service =
            hyper::service::service_fn(move |mut request: http::Request<hyper::body::Incoming>| {
                let state = Arc::clone(&state);
                if let Some(certificate) = &certificate {
                    request.extensions_mut().insert(certificate.clone());
                }
                async move { Ok::<_, Infallible>(api::handle(state, request.map(Body::new)).await) }
            });
        let h2 = tls.get_ref().1.alpn_protocol() == Some(tls::ALPN_H2);
        let io = TokioIo::new(tls);
        let connection: std::pin::Pin<Box<dyn Future<Output = Result<(), hyper::Error>> + Send>> =
            if h2 {
                Box::pin(
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .timer(hyper_util::rt::TokioTimer::new())
                        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION)
                        .serve_connection(io, service),
                )
            } else {
                Box::pin(
                    hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(self.read_timeout)
                        .serve_connection(io, service),
                )
            };
        tokio::select! {
            _ = connection => {}
            _ = self.shutdown.changed() => {}
            _ = self.generation.changed() => {}
        }
    }
}

/// 32 random hex characters from the OS, or from the clock if it has none.
fn random_token() -> String {
    let mut bytes = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if !from_os {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (seed ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().fold(String::with_capacity(32), |mut hex, b| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
        hex
    })
}
