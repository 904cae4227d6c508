//! kubectl-style cluster flags shared by every command that talks to a cluster.

use std::path::PathBuf;

use clap::Args;

use crate::cluster::connect::ConnectOptions;

/// `--kubeconfig`, `--context`, `-n/--namespace` (and `KUBECONFIG`), as kubectl has them.
#[derive(Clone, Debug, Default, Args)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace (default: the context's namespace, else "default").
    #[arg(short = 'n', long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Bound on the first request and on each run of an exec credential plugin (default 30s).
    #[arg(long, value_name = "D", value_parser = crate::cli::act_args::parse_duration)]
    pub request_timeout: Option<std::time::Duration>,
}

impl ClusterArgs {
    /// The options for [`crate::cluster::connect::connect`].
    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
            request_timeout: self.request_timeout,
        }
    }
}
