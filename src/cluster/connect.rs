//! Builds a `kube::Client` the way kubectl picks its cluster: `--kubeconfig`,
//! else `KUBECONFIG` (a list of files, merged), else `~/.kube/config`, else the
//! in-cluster service account; `--context` and `-n/--namespace` override the
//! kubeconfig's current context and namespace. With none of these there is
//! no cluster: [`ConnectError::NoCluster`] says so and names `rollcall demo`
//! (nothing falls back to the embedded cluster on its own: a simulated
//! cluster whose DaemonSets look real must never open by accident).
//!
//! Bounded: an exec credential plugin (and a gcp auth-provider's `cmd-path`)
//! runs under `rollcall exec-guard` (killed after the request timeout, named
//! in the error) and is tried once before the first request; a server that
//! accepts connections but never answers fails the first request within the request timeout, with the cause said.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

use crate::cluster::exec::{self, ExecError};
use crate::cluster::gcp_provider;
use crate::cluster::server_kind::{self, ServerKind};
use crate::cluster::{proxy, retry};

/// The request timeout when none is given: the bound on the first request
/// and on each run of an exec credential plugin.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the user asked for on the command line (kubectl's flags).
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// `--kubeconfig FILE`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context NAME`.
    pub context: Option<String>,
    /// `-n/--namespace NS`.
    pub namespace: Option<String>,
    /// `--request-timeout D`: bounds the first request (reachability) and
    /// each run of an exec credential plugin (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub request_timeout: Option<Duration>,
    /// `--cluster NAME`: the kubeconfig cluster instead of the context's.
    pub cluster: Option<String>,
    /// `--user NAME`: the kubeconfig user instead of the context's.
    pub user: Option<String>,
    /// `--as USER`: impersonate this user.
    pub as_user: Option<String>,
    /// `--as-group GROUP…`: impersonate with these groups.
    pub as_groups: Vec<String>,
    /// `--compression`.
    pub compression: crate::cluster::compression::Compression,
    /// `--wire`.
    pub wire: crate::cluster::wire::Wire,
    /// The kubeconfig already read ([`read_once`]), for many connections.
    pub kubeconfig_read: Option<ReadOnce>,
}

/// A kubeconfig read and parsed once for a fleet's many connections: each
/// takes its own context's entries from it instead of reading and parsing
/// the whole file(s) again (200 contexts: 200 × the file's YAML, ~43 MB).
#[derive(Clone)]
pub struct ReadOnce(Arc<(String, Kubeconfig)>);

impl std::fmt::Debug for ReadOnce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The label only: the kubeconfig holds credentials.
        f.debug_tuple("ReadOnce").field(&self.0.0).finish()
    }
}

impl ReadOnce {
    /// The entries `options` uses (its context, else the current one; the
    /// cluster and user it names, else the context's), as a kubeconfig of
    /// its own: what kube makes a configuration of, without the rest.
    fn for_connection(&self, options: &ConnectOptions) -> Kubeconfig {
        let (_, full) = &*self.0;
        let context = options
            .context
            .clone()
            .or_else(|| full.current_context.clone())
            .unwrap_or_default();
        let entry = full.contexts.iter().find(|c| c.name == context);
        let named = entry.and_then(|c| c.context.as_ref());
        let cluster = options
            .cluster
            .clone()
            .or_else(|| named.map(|c| c.cluster.clone()));
        let user = options
            .user
            .clone()
            .or_else(|| named.and_then(|c| c.user.clone()));
        Kubeconfig {
            preferences: full.preferences.clone(),
            clusters: full
                .clusters
                .iter()
                .filter(|c| Some(&c.name) == cluster.as_ref())
                .cloned()
                .collect(),
            auth_infos: full
                .auth_infos
                .iter()
                .filter(|u| Some(&u.name) == user.as_ref())
                .cloned()
                .collect(),
            contexts: entry.cloned().into_iter().collect(),
            current_context: full.current_context.clone(),
            extensions: full.extensions.clone(),
            kind: full.kind.clone(),
            api_version: full.api_version.clone(),
            other: full.other.clone(),
        }
    }
}

/// `options` with the kubeconfig read now, once, for every connection made
/// with them (a fleet's); unchanged in a cluster (no file to read).
pub fn read_once(options: &ConnectOptions) -> Result<ConnectOptions, ConnectError> {
    let source = find_kubeconfig(options).ok_or(ConnectError::NoCluster)?;
    let Some((label, read)) = read_files(source)? else {
        return Ok(options.clone());
    };
    let kubeconfig = parsed(&label, read)?;
    Ok(ConnectOptions {
        kubeconfig_read: Some(ReadOnce(Arc::new((label, kubeconfig)))),
        ..options.clone()
    })
}

/// A client and where it points.
#[derive(Clone)]
pub struct Connection {
    /// The client one-off reads, access reviews and state patches go
    /// through: 429/503/504 are retried by [`crate::cluster::retry`]
    /// (Retry-After capped, jittered, bounded, logged). Sent through
    /// [`Connection::watch_client`]'s stack: one pool and one credential per cluster.
    pub client: kube::Client,
    /// The cluster's one stack ([`retry::shared_stack`]) without any retry
    /// of 429/503/504, for the watch streams: they retry themselves and
    /// show that they do ("throttled, retrying in 95s") instead of waiting
    /// silently inside a request.
    pub watch_client: kube::Client,
    /// The kubeconfig context in use (`in-cluster` or `embedded` when there is none).
    pub context: String,
    /// The namespace commands default to.
    pub namespace: String,
    /// The API server URL, for messages.
    pub server: String,
    /// What kind of server it is (read from `/version` when connecting;
    /// a kube-apiserver until known).
    pub server_kind: ServerKind,
    /// Who the kubeconfig says this is: the `--as` user, else `--user`, else
    /// the context's user entry (a name in the kubeconfig, not always the
    /// server's; [`crate::cluster::identity`] asks the server first).
    pub user: Option<String>,
    /// The namespace the kubeconfig's context names, if it names one (not
    /// kube's `default` fallback): where a command without `-n` looks first.
    pub context_namespace: Option<String>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("context", &self.context)
            .field("namespace", &self.namespace)
            .field("server", &self.server)
            .field("server_kind", &self.server_kind)
            .finish_non_exhaustive()
    }
}

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No kubeconfig anywhere and not inside a cluster. One sentence that
    /// says what to do; callers show it without adding context.
    #[error(
        "no cluster configured (no KUBECONFIG, no ~/.kube/config): pass --kubeconfig, or run `rollcall demo` for a simulated cluster"
    )]
    NoCluster,
    /// The kubeconfig file is not one that may be read (a device, too large).
    #[error(transparent)]
    Input(crate::input::limits::InputError),
    /// The kubeconfig could not be read or parsed.
    #[error("cannot load kubeconfig {path}")]
    Kubeconfig {
        /// The file(s) tried.
        path: String,
        /// The parser's error.
        #[source]
        source: KubeconfigError,
    },
    /// A kubeconfig file could not be read (missing, unreadable).
    #[error("cannot read kubeconfig {path}: {source}")]
    KubeconfigUnreadable {
        /// The file(s) tried.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The kubeconfig parsed but does not describe a usable cluster (missing context, bad URL, ...).
    #[error("kubeconfig {path}: {source}")]
    Config {
        /// The file(s) tried.
        path: String,
        /// kube's error.
        #[source]
        source: KubeconfigError,
    },
    /// The in-cluster service account could not be used.
    #[error("in-cluster configuration failed")]
    InCluster(#[source] kube::config::InClusterError),
    /// The HTTP client could not be built (TLS setup).
    #[error("cannot create the API client")]
    Client(#[source] kube::Error),
    /// The kubeconfig's exec credential plugin gave no credential.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The server took the connection but answered nothing in time.
    #[error(
        "the API server at {server} did not answer within {}s (it accepted the connection, then said nothing: overloaded, a stuck proxy, or the wrong port?)",
        after.as_secs_f64()
    )]
    NoAnswer {
        /// The server URL.
        server: String,
        /// The request timeout.
        after: Duration,
    },
    /// The kubeconfig's `proxy-url` could not be used: the proxy refused or
    /// dropped the connection, or could not open the tunnel to the server.
    #[error(
        "cannot reach the API server at {server} through the proxy {proxy} (the kubeconfig's proxy-url; is the proxy running, and may it reach the server?)"
    )]
    Proxy {
        /// The server URL.
        server: String,
        /// The proxy URL, without any user or password in it.
        proxy: String,
        /// kube's error (tunnel, SOCKS or TCP connect failure).
        #[source]
        source: kube::Error,
    },
}

/// Where the kubeconfig comes from, following kubectl's precedence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KubeconfigSource {
    /// `--kubeconfig FILE`.
    Flag(PathBuf),
    /// `KUBECONFIG` (one or more files).
    Env(String),
    /// `~/.kube/config`.
    Home(PathBuf),
    /// The pod's service account.
    InCluster,
}

/// Finds the kubeconfig kubectl would use, or `None` when there is no cluster at all.
pub fn find_kubeconfig(options: &ConnectOptions) -> Option<KubeconfigSource> {
    if let Some(path) = &options.kubeconfig {
        return Some(KubeconfigSource::Flag(path.clone()));
    }
    if let Some(value) = std::env::var_os("KUBECONFIG")
        && std::env::split_paths(&value).any(|p| !p.as_os_str().is_empty())
    {
        return Some(KubeconfigSource::Env(value.to_string_lossy().into_owned()));
    }
    if let Some(home) = std::env::var_os("HOME") {
        let path = PathBuf::from(home).join(".kube").join("config");
        if path.is_file() {
            return Some(KubeconfigSource::Home(path));
        }
    }
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        return Some(KubeconfigSource::InCluster);
    }
    None
}

/// Connects as kubectl would with the same flags.
pub async fn connect(options: &ConnectOptions) -> Result<Connection, ConnectError> {
    let read = match &options.kubeconfig_read {
        Some(once) => Some((once.0.0.clone(), Ok(once.for_connection(options)))),
        None => read_files(find_kubeconfig(options).ok_or(ConnectError::NoCluster)?)?,
    };
    let (mut config, context, (user, context_namespace)) = match read {
        None => (
            kube::Config::incluster().map_err(ConnectError::InCluster)?,
            "in-cluster".to_owned(),
            (None, None),
        ),
        Some((label, read)) => load_kubeconfig(label, read, options).await?,
    };
    if let Some(user) = &options.as_user {
        config.auth_info.impersonate = Some(user.clone());
    }
    if !options.as_groups.is_empty() {
        config.auth_info.impersonate_groups = Some(options.as_groups.clone());
    }
    let timeout = options.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT);
    if let Some(exec_config) = config.auth_info.exec.as_mut()
        && let Some(binary) = exec::guard_binary()
    {
        exec::wrap(exec_config, &binary, timeout);
        exec::preflight(exec_config, timeout).await?;
    }
    if let Some(provider) = config.auth_info.auth_provider.as_mut()
        && gcp_provider::runs_command(provider, jiff::Timestamp::now())
        && let Some(binary) = exec::guard_binary()
    {
        if gcp_provider::wrap(provider, &binary, timeout) {
            gcp_provider::preflight(provider, timeout).await?;
        } else {
            tracing::warn!(
                "the gcp auth-provider's cmd-path has a space; it runs unbounded, as kube-rs runs it"
            );
        }
    }
    if options.request_timeout.is_some() {
        config.connect_timeout = Some(timeout);
    }
    let proxy = config.proxy_url.as_ref().map(shown_proxy);
    let mut connection = connection_from_config(
        config,
        context,
        options.namespace.clone(),
        options.wire,
        options.compression,
    )?;
    connection.user = options.as_user.clone().or(user);
    connection.context_namespace = context_namespace;
    connection.server_kind = probe(&connection, timeout, proxy).await?;
    Ok(connection)
}

/// A context of the kubeconfig, for commands that use many (`rollcall fleet`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedContext {
    /// The context's name.
    pub name: String,
    /// Whether its user gets credentials from an exec plugin (or a gcp
    /// auth-provider command): connecting runs a process.
    pub runs_command: bool,
}

/// Every context of the kubeconfig kubectl would use (`KUBECONFIG`'s files
/// merged as kubectl merges them: the first file that names a context
/// wins), in the order they are written.
pub fn kubeconfig_contexts(options: &ConnectOptions) -> Result<Vec<NamedContext>, ConnectError> {
    let read_now;
    let kubeconfig = if let Some(once) = &options.kubeconfig_read {
        &once.0.1
    } else {
        let source = find_kubeconfig(options).ok_or(ConnectError::NoCluster)?;
        let Some((label, read)) = read_files(source)? else {
            return Ok(Vec::new());
        };
        read_now = parsed(&label, read)?;
        &read_now
    };
    let runs_command = |user: Option<&str>| {
        kubeconfig
            .auth_infos
            .iter()
            .find(|named| Some(named.name.as_str()) == user)
            .and_then(|named| named.auth_info.as_ref())
            .is_some_and(|auth| auth.exec.is_some() || auth.auth_provider.is_some())
    };
    Ok(kubeconfig
        .contexts
        .iter()
        .map(|named| NamedContext {
            name: named.name.clone(),
            runs_command: runs_command(
                options
                    .user
                    .as_deref()
                    .or_else(|| named.context.as_ref().and_then(|c| c.user.as_deref())),
            ),
        })
        .collect())
}

/// What reading the kubeconfig gave, with the label errors name its file(s) by.
type KubeconfigRead = (String, Result<Kubeconfig, KubeconfigError>);

/// Reads the kubeconfig file(s) of `source` (each checked first, see
/// [`check_kubeconfig_file`]; `KUBECONFIG`'s merged as kubectl merges them);
/// `None` in a cluster (no file).
fn read_files(source: KubeconfigSource) -> Result<Option<KubeconfigRead>, ConnectError> {
    Ok(match source {
        KubeconfigSource::InCluster => None,
        KubeconfigSource::Flag(path) | KubeconfigSource::Home(path) => {
            check_kubeconfig_file(&path)?;
            Some((path.display().to_string(), Kubeconfig::read_from(&path)))
        }
        KubeconfigSource::Env(paths) => {
            for path in std::env::split_paths(&paths).filter(|p| p.exists()) {
                check_kubeconfig_file(&path)?;
            }
            Some((paths, Kubeconfig::read()))
        }
    })
}

/// kube reads a kubeconfig whole, without a bound: `--kubeconfig /dev/zero`
/// would grow until memory ran out. Refuse devices and oversized files first.
fn check_kubeconfig_file(path: &std::path::Path) -> Result<(), ConnectError> {
    use crate::input::limits::{MAX_KUBECONFIG_BYTES, check_file};
    check_file(path, "a kubeconfig", MAX_KUBECONFIG_BYTES).map_err(ConnectError::Input)
}

/// A proxy URL as it may be shown: scheme, host and port, no credentials.
fn shown_proxy(url: &http::Uri) -> String {
    let scheme = url.scheme_str().unwrap_or("http");
    let host = url.host().unwrap_or_default();
    match url.port_u16() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    }
}

/// Whether a transport error is the proxy's (hyper-util's CONNECT tunnel or
/// SOCKS connector failed), not the server's (TLS, HTTP) behind a working proxy.
fn is_proxy_failure(err: &kube::Error) -> bool {
    let mut cause: Option<&dyn std::error::Error> = Some(err);
    while let Some(error) = cause {
        let text = error.to_string();
        if text.starts_with("tunnel error") || text.starts_with("SOCKS error") {
            return true;
        }
        cause = error.source();
    }
    false
}

/// One `/version` request bounded by `timeout`: silence is an error here, and
/// so is a failure to connect through the kubeconfig's proxy (named, since
/// kube's words for it say neither which proxy nor that one was configured);
/// any other failure is left for the caller's first real request to report.
/// The answer says what kind of server it is (a kube-apiserver when it
/// does not say).
async fn probe(
    connection: &Connection,
    timeout: Duration,
    proxy: Option<String>,
) -> Result<ServerKind, ConnectError> {
    let started = tokio::time::Instant::now();
    // Through the client without retries: a server that answers 429 has
    // answered (the first real request waits it out, bounded, and says so).
    let mut kind = ServerKind::Kubernetes;
    let silent =
        match tokio::time::timeout(timeout, server_kind::version(&connection.watch_client)).await {
            Ok(Ok(version)) => {
                kind = ServerKind::from_version(&version);
                false
            }
            Ok(Err(source)) if let Some(proxy) = proxy.filter(|_| is_proxy_failure(&source)) => {
                return Err(ConnectError::Proxy {
                    server: connection.server.clone(),
                    proxy,
                    source,
                });
            }
            // The client's own connect timeout (TLS handshake never answered)
            // ends as an opaque "deadline has elapsed": it is the same silence.
            Ok(Err(_)) => started.elapsed() >= timeout.mul_f64(0.9),
            Err(_) => true,
        };
    if silent {
        return Err(ConnectError::NoAnswer {
            server: connection.server.clone(),
            after: timeout,
        });
    }
    Ok(kind)
}

/// Wraps an already-built config (the embedded cluster hands one over
/// in-process); `wire` picks the encoding of node, pod and event reads,
/// `compression` whether responses come gzip-compressed.
pub fn connection_from_config(
    mut config: kube::Config,
    context: String,
    namespace: Option<String>,
    wire: crate::cluster::wire::Wire,
    compression: crate::cluster::compression::Compression,
) -> Result<Connection, ConnectError> {
    if let Some(ns) = namespace {
        config.default_namespace = ns;
    }
    let namespace = config.default_namespace.clone();
    let server = config.cluster_url.to_string();
    // One stack per cluster (one pool, one credential): the watches use it
    // bare, one-off requests through the retry layer above it.
    let wire = crate::cluster::wire::layer(wire, &config.cluster_url);
    let compression = crate::cluster::compression_probe::apply(compression, &mut config);
    let watch_client =
        retry::shared_stack(config, wire, compression).map_err(ConnectError::Client)?;
    let client = retry::client_over(&watch_client, retry::Policy::default());
    Ok(Connection {
        client,
        watch_client,
        context,
        namespace,
        server,
        server_kind: ServerKind::Kubernetes,
        user: None,
        context_namespace: None,
    })
}

/// The context's user and namespace entries, as the kubeconfig names them.
type ContextNames = (Option<String>, Option<String>);

/// The kubeconfig read, or the error naming the file(s) by `label`.
fn parsed(
    label: &str,
    read: Result<Kubeconfig, KubeconfigError>,
) -> Result<Kubeconfig, ConnectError> {
    read.map_err(|source| match source {
        // kube's own text quotes a debug-printed path ('"/x"') after ours.
        KubeconfigError::ReadConfig(source, _) => ConnectError::KubeconfigUnreadable {
            path: label.to_owned(),
            source,
        },
        source => ConnectError::Kubeconfig {
            path: label.to_owned(),
            source,
        },
    })
}

async fn load_kubeconfig(
    label: String,
    read: Result<Kubeconfig, KubeconfigError>,
    options: &ConnectOptions,
) -> Result<(kube::Config, String, ContextNames), ConnectError> {
    let kubeconfig = parsed(&label, read)?;
    let context = options
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())
        .unwrap_or_default();
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        cluster: options.cluster.clone(),
        user: options.user.clone(),
    };
    let configured_proxy = cluster_proxy_url(&kubeconfig, &context, options.cluster.as_deref());
    let entry = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref());
    let user = options
        .user
        .clone()
        .or_else(|| entry.and_then(|c| c.user.clone()));
    let context_namespace = entry
        .and_then(|c| c.namespace.clone())
        .filter(|ns| !ns.is_empty());
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube_options)
        .await
        .map_err(|source| ConnectError::Config {
            path: label.clone(),
            source,
        })?;
    config.proxy_url = proxy::choose(configured_proxy.as_deref(), &config.cluster_url, |name| {
        std::env::var(name).ok()
    })
    .map_err(|err| ConnectError::Config {
        path: label,
        source: KubeconfigError::ParseProxyUrl(err),
    })?;
    Ok((config, context, (user, context_namespace)))
}

/// The `proxy-url` of the cluster entry in use (`--cluster`, else the one
/// `context` points at), if any.
fn cluster_proxy_url(
    kubeconfig: &Kubeconfig,
    context: &str,
    cluster: Option<&str>,
) -> Option<String> {
    let cluster = match cluster {
        Some(name) => name.to_owned(),
        None => kubeconfig
            .contexts
            .iter()
            .find(|named| named.name == context)?
            .context
            .as_ref()?
            .cluster
            .clone(),
    };
    kubeconfig
        .clusters
        .iter()
        .find(|named| named.name == cluster)?
        .cluster
        .as_ref()?
        .proxy_url
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kubeconfig_read_once_gives_each_connection_only_its_own_entries() {
        let yaml = "apiVersion: v1\nkind: Config\ncurrent-context: a\n\
            clusters: [{name: ca, cluster: {server: 'https://a'}}, {name: cb, cluster: {server: 'https://b'}}]\n\
            users: [{name: ua, user: {token: x}}, {name: ub, user: {token: y}}]\n\
            contexts: [{name: a, context: {cluster: ca, user: ua}}, {name: b, context: {cluster: cb, user: ub}}]\n";
        let once = ReadOnce(Arc::new((
            "test".to_owned(),
            Kubeconfig::from_yaml(yaml).unwrap(),
        )));
        let names = |k: &Kubeconfig| {
            (
                k.contexts
                    .iter()
                    .map(|c| c.name.clone())
                    .collect::<Vec<_>>(),
                k.clusters
                    .iter()
                    .map(|c| c.name.clone())
                    .collect::<Vec<_>>(),
                k.auth_infos
                    .iter()
                    .map(|u| u.name.clone())
                    .collect::<Vec<_>>(),
            )
        };
        let for_b = ConnectOptions {
            context: Some("b".to_owned()),
            ..ConnectOptions::default()
        };
        let entries = |c: &str, k: &str, u: &str| {
            (vec![c.to_owned()], vec![k.to_owned()], vec![u.to_owned()])
        };
        assert_eq!(
            names(&once.for_connection(&for_b)),
            entries("b", "cb", "ub")
        );
        // No context: the current one; `--user` names another entry.
        let current_as_ub = ConnectOptions {
            user: Some("ub".to_owned()),
            ..ConnectOptions::default()
        };
        assert_eq!(
            names(&once.for_connection(&current_as_ub)),
            entries("a", "ca", "ub")
        );
        assert!(!format!("{once:?}").contains("token"));
    }

    #[test]
    fn flag_wins_over_everything() {
        let options = ConnectOptions {
            kubeconfig: Some(PathBuf::from("/nonexistent/kubeconfig")),
            ..ConnectOptions::default()
        };
        assert_eq!(
            find_kubeconfig(&options),
            Some(KubeconfigSource::Flag(PathBuf::from(
                "/nonexistent/kubeconfig"
            )))
        );
    }

    #[test]
    fn contexts_are_listed_in_order_with_whether_they_run_a_command() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\n\
             clusters: [{name: k, cluster: {server: 'https://127.0.0.1:9'}}]\n\
             users: [{name: t, user: {token: x}}, {name: e, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: cred}}}]\n\
             contexts: [{name: b, context: {cluster: k, user: e}}, {name: a, context: {cluster: k, user: t}}]\n",
        )
        .unwrap();
        let options = ConnectOptions {
            kubeconfig: Some(path),
            ..ConnectOptions::default()
        };
        let contexts = kubeconfig_contexts(&options).unwrap();
        assert_eq!(
            contexts,
            [
                NamedContext {
                    name: "b".into(),
                    runs_command: true
                },
                NamedContext {
                    name: "a".into(),
                    runs_command: false
                },
            ]
        );
    }

    #[test]
    fn a_proxy_is_shown_without_its_credentials() {
        let url: http::Uri = "http://user:secret@proxy.example:3128".parse().unwrap();
        assert_eq!(shown_proxy(&url), "http://proxy.example:3128");
        let url: http::Uri = "socks5://10.0.0.1:1080".parse().unwrap();
        assert_eq!(shown_proxy(&url), "socks5://10.0.0.1:1080");
    }

    /// An OIDC id-token past its `exp` is not sent: kube refreshes it through
    /// the issuer, and says what is missing when it cannot.
    #[tokio::test]
    async fn an_expired_oidc_token_without_refresh_settings_is_refused_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        // {"alg":"none"} . {"exp":1} . "sig": a JWT that expired in 1970.
        let expired = "eyJhbGciOiJub25lIn0.eyJleHAiOjF9.c2ln";
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
                 clusters: [{{name: k, cluster: {{server: 'https://127.0.0.1:9'}}}}]\n\
                 contexts: [{{name: c, context: {{cluster: k, user: u}}}}]\n\
                 users: [{{name: u, user: {{auth-provider: {{name: oidc, config: \
                 {{client-id: rollcall, id-token: '{expired}'}}}}}}}}]\n"
            ),
        )
        .unwrap();
        let options = ConnectOptions {
            kubeconfig: Some(path),
            request_timeout: Some(Duration::from_secs(5)),
            ..ConnectOptions::default()
        };
        let connection = connect(&options).await.expect("connects");
        let err = connection.client.apiserver_version().await.unwrap_err();
        let said = err.to_string();
        assert!(said.contains("ID token expired"), "{said}");
        assert!(said.contains("idp-issuer-url"), "{said}");
    }

    /// A server that answers 429 has answered: connecting is not a
    /// "did not answer" timeout; the reads that follow wait and say so.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_throttling_server_is_not_mistaken_for_a_silent_one() {
        let faults = crate::sim::fault::Faults::none();
        let options = crate::sim::embedded::EmbeddedOptions {
            scenario: Some("small".to_owned()),
            faults: faults.clone(),
            ..crate::sim::embedded::EmbeddedOptions::default()
        };
        let cluster = crate::sim::embedded::start(options).await.unwrap();
        faults.install(crate::sim::fault::parse("throttle:3600=0s+1m").unwrap());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        cluster.server.write_kubeconfig(&path).unwrap();
        let options = ConnectOptions {
            kubeconfig: Some(path),
            request_timeout: Some(Duration::from_secs(2)),
            ..ConnectOptions::default()
        };
        let started = std::time::Instant::now();
        let connected = connect(&options).await;
        assert!(connected.is_ok(), "{:?}", connected.err());
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn malformed_kubeconfig_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, "apiVersion: v1\nclusters: [unclosed\n").unwrap();
        let options = ConnectOptions {
            kubeconfig: Some(path.clone()),
            ..ConnectOptions::default()
        };
        let err = connect(&options).await.unwrap_err();
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }

    #[tokio::test]
    async fn unknown_context_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
        )
        .unwrap();
        let options = ConnectOptions {
            kubeconfig: Some(path.clone()),
            context: Some("nope".into()),
            ..ConnectOptions::default()
        };
        let err = connect(&options).await.unwrap_err();
        assert!(matches!(err, ConnectError::Config { .. }), "{err:?}");
    }
}
