//! How a rehearsed fleet run reaches its members: each context's
//! connection is a client answered in-process by that context's embedded
//! cluster ([`crate::sim::in_process`]), so the very run `fleet auto`
//! makes ([`crate::fleet::run::FleetRun`]) drives the rehearsal unchanged.

use std::collections::BTreeMap;

use futures::future::BoxFuture;

use crate::cluster::connect::Connection;
use crate::cluster::server_kind::ServerKind;
use crate::fleet::run::Connector;

/// The namespace a member's client defaults to (a kubeconfig context
/// without one gets `default` too).
const DEFAULT_NAMESPACE: &str = "default";

/// The connections of a rehearsed fleet, by context.
#[derive(Default)]
pub struct InProcess {
    connections: BTreeMap<String, Connection>,
}

impl InProcess {
    /// Adds `context`, served by `client`.
    pub fn add(&mut self, context: &str, client: kube::Client) {
        self.connections
            .insert(context.to_owned(), connection(context, client));
    }

    /// `context`'s connection, as the run gets it.
    pub fn get(&self, context: &str) -> Option<&Connection> {
        self.connections.get(context)
    }
}

impl Connector for InProcess {
    fn connect<'a>(&'a self, context: &'a str) -> BoxFuture<'a, Result<Connection, String>> {
        let found = self
            .connections
            .get(context)
            .cloned()
            .ok_or_else(|| format!("no snapshot was loaded for context {context}"));
        Box::pin(async move { found })
    }
}

/// A connection to an embedded member: one client serves reads, writes
/// and watches alike (there is no 429 to retry in-process).
fn connection(context: &str, client: kube::Client) -> Connection {
    Connection {
        watch_client: client.clone(),
        client,
        context: context.to_owned(),
        namespace: DEFAULT_NAMESPACE.to_owned(),
        server: format!("in-process rehearsal of {context}"),
        server_kind: ServerKind::Embedded {
            bookmark_interval: crate::sim::in_process::BOOKMARK_INTERVAL,
        },
        user: Some("rollcall-rehearsal".to_owned()),
        context_namespace: None,
    }
}
