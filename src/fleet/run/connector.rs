//! How a fleet run reaches its clusters: a [`Connector`] turns a context's
//! name into a connection. The run reaches clusters through it alone, so
//! the same run drives real clusters ([`Kubeconfig`]: as kubectl reads the
//! kubeconfig) and clusters served in-process (a rehearsal).

use futures::future::BoxFuture;

use crate::cluster::connect::{ConnectOptions, Connection, connect};

/// Turns a context's name into a connection (clients and where they point).
pub trait Connector: Send + Sync {
    /// Connects to `context`; `Err` says in words why not (the member is
    /// then unreachable: its wave holds, or skips it).
    fn connect<'a>(&'a self, context: &'a str) -> BoxFuture<'a, Result<Connection, String>>;
}

/// Connects through the kubeconfig, with the command line's flags.
pub struct Kubeconfig {
    /// The flags every member shares (each member sets its own context).
    pub options: ConnectOptions,
}

impl Connector for Kubeconfig {
    fn connect<'a>(&'a self, context: &'a str) -> BoxFuture<'a, Result<Connection, String>> {
        let options = ConnectOptions {
            context: Some(context.to_owned()),
            ..self.options.clone()
        };
        Box::pin(async move {
            connect(&options).await.map_err(|err| match err {
                // Already one sentence saying what to do.
                crate::cluster::connect::ConnectError::NoCluster => err.to_string(),
                err => format!("cannot connect to the cluster: {}", chain(&err)),
            })
        })
    }
}

/// An error and its sources, `: `-joined, each said once.
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause = Some(err);
    while let Some(err) = cause {
        let message = err.to_string();
        if !text.contains(&message) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&message);
        }
        cause = err.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("cannot load kubeconfig")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_chain_names_each_cause_once() {
        let err = Outer(std::io::Error::other("no such file"));
        assert_eq!(chain(&err), "cannot load kubeconfig: no such file");
    }
}
