//! The global flags, accepted before or after the subcommand as kubectl users
//! type them: the kubectl cluster flags (`--kubeconfig`, `--context`,
//! `-n/--namespace`, `--request-timeout`, `--cluster`, `--user`, `--as`,
//! `--as-group`) and rollcall's own (`--read-only`, `--journal`, `--log-file`).

use std::path::PathBuf;

use clap::Args;

use crate::cluster::connect::{ConnectError, ConnectOptions, Connection, connect};

/// `--kubeconfig`, `--context`, `-n/--namespace` (and `KUBECONFIG`), as kubectl has them.
#[derive(Clone, Debug, Default, Args)]
#[command(next_help_heading = "Global options")]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// The namespace (default: the context's namespace, else "default").
    #[arg(short = 'n', long, value_name = "NS", global = true)]
    pub namespace: Option<String>,
    /// Bound on the first request and on each run of an exec credential plugin (default 30s).
    #[arg(long, value_name = "D", value_parser = crate::cli::act_args::parse_duration, global = true)]
    pub request_timeout: Option<std::time::Duration>,
    /// The kubeconfig cluster to use instead of the context's.
    #[arg(long, value_name = "NAME", global = true)]
    pub cluster: Option<String>,
    /// The kubeconfig user to use instead of the context's.
    #[arg(long, value_name = "NAME", global = true)]
    pub user: Option<String>,
    /// Act as this user (impersonation; the kubeconfig's user must be allowed to).
    #[arg(long = "as", value_name = "USER", global = true)]
    pub as_user: Option<String>,
    /// Act with this group too (repeatable; with --as).
    #[arg(long = "as-group", value_name = "GROUP", global = true)]
    pub as_group: Vec<String>,
    /// Ask for gzip-compressed responses as kubectl does: auto = off to a
    /// loopback server or where the kubeconfig sets disable-compression,
    /// else chosen from the first list pages' throughput (gzip below 2
    /// Gbit/s); the log says which and why.
    #[arg(long, value_name = "MODE", value_enum, default_value_t, global = true)]
    pub compression: crate::cluster::compression::Compression,
    /// Encoding of node, pod and event lists and watches: protobuf (as
    /// client-go) or JSON; auto = protobuf, except to a loopback server.
    /// Falls back to JSON per resource where the server has no protobuf.
    #[arg(long, value_name = "MODE", value_enum, default_value_t, global = true)]
    pub wire: crate::cluster::wire::Wire,
}

impl ClusterArgs {
    /// The options for [`crate::cluster::connect::connect`].
    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
            request_timeout: self.request_timeout,
            cluster: self.cluster.clone(),
            user: self.user.clone(),
            as_user: self.as_user.clone(),
            as_groups: self.as_group.clone(),
            compression: self.compression,
            wire: self.wire,
            kubeconfig_read: None,
        }
    }
}

/// Every global flag, parsed once at the top and handed to the command.
#[derive(Clone, Debug, Default, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// kubectl's cluster flags.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Change nothing: the console disables its rollout keys; pause, resume,
    /// advance, auto and rollback print the writes they would make and exit 0.
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Journal file for rollout actions (default: $XDG_STATE_HOME/rollcall/journal.jsonl, else ~/.local/state/rollcall/journal.jsonl).
    #[arg(long, value_name = "FILE", global = true)]
    pub journal: Option<PathBuf>,
    /// Where logs go (the consoles' default: $XDG_STATE_HOME/rollcall/rollcall.log; headless commands log only when given this); RUST_LOG sets the level.
    #[arg(long, value_name = "FILE", global = true)]
    pub log_file: Option<PathBuf>,
}

/// The context and server this process connected to, for an error that
/// surfaces far from the connection (a command's read that found the server
/// gone): set once at connect, read only by [`unreachable_hint`].
static CONNECTED: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();

/// For an error that is "cannot reach the API server": which server and
/// context did not answer, and what to check.
pub fn unreachable_hint(err: &anyhow::Error) -> Option<String> {
    let unreachable = err.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<crate::ops::error::OpsError>(),
            Some(crate::ops::error::OpsError::Unreachable { .. })
        )
    });
    let (context, server) = CONNECTED.get()?;
    unreachable.then(|| {
        format!(
            "the API server {server} (context {context}) did not answer: is the cluster up, and is {context} the context you meant? (`kubectl config get-contexts` lists them; --context picks one)"
        )
    })
}

/// Connects as kubectl would with `options`; other failures get `what` as
/// context, but "no cluster configured" is said alone: it is one sentence that
/// already says what to do (`--kubeconfig`, or `rollcall demo`).
pub async fn connect_saying(
    options: &ConnectOptions,
    what: &'static str,
) -> anyhow::Result<Connection> {
    match connect(options).await {
        Ok(connection) => {
            let _ = CONNECTED.set((connection.context.clone(), connection.server.clone()));
            Ok(connection)
        }
        Err(err @ ConnectError::NoCluster) => Err(err.into()),
        Err(err) => Err(anyhow::Error::new(err).context(what)),
    }
}
