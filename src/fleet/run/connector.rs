//! How a fleet run reaches its clusters: a [`Connector`] turns a context's
//! name into a connection. The run reaches clusters through it alone, so
//! the same run drives real clusters ([`Kubeconfig`]: as kubectl reads the
//! kubeconfig), clusters already connected ([`Made`]: the fleet matrix's)
//! and clusters served in-process (a rehearsal).

use std::collections::BTreeMap;

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

/// Connections already made, by context — the fleet matrix's, one stack
/// per cluster: a run from the matrix's `A` goes through the same pool and
/// credential as the rows it was started from (no second exec plugin run,
/// no second handshake). Any other context is reached through `fallback`.
pub struct Made<F> {
    /// The connections to reuse.
    pub connections: BTreeMap<String, Connection>,
    /// How a context without one is reached.
    pub fallback: F,
}

impl<F: Connector> Connector for Made<F> {
    fn connect<'a>(&'a self, context: &'a str) -> BoxFuture<'a, Result<Connection, String>> {
        match self.connections.get(context) {
            Some(connection) => {
                let connection = connection.clone();
                Box::pin(async move { Ok(connection) })
            }
            None => self.fallback.connect(context),
        }
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

    /// Reaches every context through `fallback` and says which it was asked for.
    #[derive(Default)]
    struct Asked(std::sync::Mutex<Vec<String>>);

    impl Connector for Asked {
        fn connect<'a>(&'a self, context: &'a str) -> BoxFuture<'a, Result<Connection, String>> {
            if let Ok(mut asked) = self.0.lock() {
                asked.push(context.to_owned());
            }
            Box::pin(async move { Err(format!("{context}: not made")) })
        }
    }

    #[tokio::test]
    async fn a_made_connection_is_reused_and_only_others_are_connected() {
        let store = crate::sim::store::Store::default();
        let client = crate::sim::in_process::client(&store, "default");
        let mut served = crate::fleet::rehearse::connector::InProcess::default();
        served.add("prod-eu-1", client);
        let made = served.get("prod-eu-1").cloned().expect("added");
        let connections = BTreeMap::from([("prod-eu-1".to_owned(), made)]);
        let connector = Made {
            connections,
            fallback: Asked::default(),
        };
        let reused = connector.connect("prod-eu-1").await.expect("reused");
        assert_eq!(reused.context, "prod-eu-1");
        let other = connector.connect("prod-us-1").await;
        assert_eq!(other.err().as_deref(), Some("prod-us-1: not made"));
        let asked = connector
            .fallback
            .0
            .lock()
            .map(|a| a.clone())
            .unwrap_or_default();
        assert_eq!(asked, ["prod-us-1"]);
    }

    #[test]
    fn a_chain_names_each_cause_once() {
        let err = Outer(std::io::Error::other("no such file"));
        assert_eq!(chain(&err), "cannot load kubeconfig: no such file");
    }
}
