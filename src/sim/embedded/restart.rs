//! A control plane restarting with new state (`--fault restart=START+DOWNTIME`,
//! carried out per member by `rollcall sim --clusters`), built from what a
//! client of a real cluster sees when kube-apiserver restarts:
//!
//! - the API server stops: open connections (watches included) are cut and,
//!   its listener closed, new ones are refused until it is back;
//! - the cluster moves on meanwhile: the daemon pods of one node (the node
//!   whose name sorts last) are evicted, as kubelet node-pressure eviction or
//!   a drain does while nobody watches, and the DaemonSet controller replaces
//!   them from its current template — new names, new UIDs, and for an
//!   OnDelete DaemonSet mid-rollout the new revision. The store (etcd's part),
//!   the controller and the kubelets keep running;
//! - it comes back on the same port with the same certificate and
//!   credentials (the kubeconfig still works) and a watch cache that starts
//!   at the current revision: a watch resumed from a resourceVersion a client
//!   held is answered 410 Expired ("too old resource version", as
//!   kube-apiserver's cacher answers after a restart), so clients relist.
//!
//! The single-cluster sim's restart is stopping `rollcall sim` and starting
//! it again on the same `--listen` (its versions start above the last run's).

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::fleet::Fleet;
use super::{EmbeddedCluster, EmbeddedOptions, SimError, Simulation, server_options};
use crate::sim::authn::Authenticator;
use crate::sim::fault::Fault;
use crate::sim::resources::ResourceKind;
use crate::sim::server::{self, ServeOptions};
use crate::sim::store::{Preconditions, Store};
use crate::sim::tls::TlsMaterial;

/// A cluster whose API server is down: what it needs to come back as itself.
pub struct Down {
    simulation: Simulation,
    addr: SocketAddr,
    tls: TlsMaterial,
    credentials: Authenticator,
}

/// Stops `cluster`'s API server (connections cut, new ones refused) and
/// evicts one node's daemon pods; the simulation keeps running.
pub async fn go_down(cluster: EmbeddedCluster) -> Down {
    let EmbeddedCluster { server, simulation } = cluster;
    let down = Down {
        addr: server.addr,
        tls: server.tls(),
        credentials: server.credentials(),
        simulation,
    };
    server.shutdown().await;
    let evicted = evict_one_node(&down.simulation.store);
    tracing::info!(addr = %down.addr, ?evicted, "restart: API server down, daemon pods evicted");
    down
}

impl Down {
    /// Brings the API server back on its address with its certificate and
    /// credentials and a watch cache starting now; the other settings as a
    /// start from `options` and `serve` would make them.
    pub async fn come_back(
        self,
        options: &EmbeddedOptions,
        serve: ServeOptions,
    ) -> Result<EmbeddedCluster, SimError> {
        // Every version a client held is older than the new watch cache's start.
        self.simulation.store.compact();
        let serve = ServeOptions {
            tls: Some(self.tls),
            credentials: Some(self.credentials),
            ..server_options(&self.simulation, options, serve)
        };
        let serve = ServeOptions {
            listen: self.addr,
            ..serve
        };
        match server::serve(self.simulation.store.clone(), serve).await {
            Ok(server) => {
                tracing::info!(addr = %self.addr, "restart: API server back");
                Ok(EmbeddedCluster {
                    server,
                    simulation: self.simulation,
                })
            }
            Err(error) => {
                self.simulation.shutdown().await;
                Err(error.into())
            }
        }
    }

    /// Stops what still runs (a signal came while the server was down).
    pub async fn shutdown(self) {
        self.simulation.shutdown().await;
    }
}

/// Deletes the DaemonSet-owned pods of the node whose name sorts last among
/// those running any; returns the pods' `namespace/name`.
fn evict_one_node(store: &Store) -> Vec<String> {
    let (pods, _) = store.list(ResourceKind::Pod, None);
    let Some(node) = node_to_evict(&pods) else {
        return Vec::new();
    };
    let mut evicted = Vec::new();
    for pod in pods
        .iter()
        .filter(|pod| owned_by_daemon_set(pod) && pod["spec"]["nodeName"] == node.as_str())
    {
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let preconditions = Preconditions {
            uid: pod["metadata"]["uid"].as_str().map(str::to_owned),
            resource_version: None,
        };
        // Gone or replaced since the list: nothing left to evict.
        if store
            .delete(ResourceKind::Pod, namespace, name, &preconditions)
            .is_ok()
        {
            evicted.push(format!("{namespace}/{name}"));
        }
    }
    evicted
}

/// The node whose name sorts last among those running a daemon pod.
fn node_to_evict(pods: &[Value]) -> Option<String> {
    pods.iter()
        .filter(|pod| owned_by_daemon_set(pod))
        .filter_map(|pod| pod["spec"]["nodeName"].as_str())
        .max()
        .map(str::to_owned)
}

fn owned_by_daemon_set(pod: &Value) -> bool {
    pod["metadata"]["deletionTimestamp"].is_null()
        && pod["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|owners| owners.iter().any(|o| o["kind"] == "DaemonSet"))
}

/// A restart of one fleet member: its index (0-based), when (after the
/// faults' origin) and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The member's index in [`Fleet::members`].
    pub member: usize,
    /// When it goes down, after the origin.
    pub at: Duration,
    /// How long it stays down.
    pub downtime: Duration,
}

/// The restarts among `faults`, for each member in `members`, in time order.
pub fn plan(faults: &[Fault], members: impl IntoIterator<Item = usize>) -> Vec<Planned> {
    let mut planned: Vec<Planned> = members
        .into_iter()
        .flat_map(|member| {
            faults
                .iter()
                .filter(|f| f.is_restart())
                .map(move |f| Planned {
                    member,
                    at: f.start,
                    downtime: f.length,
                })
        })
        .collect();
    planned.sort_by_key(|p| (p.at, p.member));
    planned
}

/// Carries out `planned` on `fleet` from `origin` (a restart due while an
/// earlier one is down waits for it) until all are done or `stop`
/// completes; `Ok(true)`: stopped. Each member comes back with the
/// settings `options` and `serve` give, its own fault plan kept. A member
/// that cannot come back is an error (the others still run).
pub async fn drive(
    fleet: &mut Fleet,
    planned: &[Planned],
    origin: Instant,
    options: &EmbeddedOptions,
    serve: &ServeOptions,
    stop: impl Future<Output = ()>,
) -> Result<bool, SimError> {
    tokio::pin!(stop);
    for restart in planned {
        tokio::select! {
            () = &mut stop => return Ok(true),
            () = tokio::time::sleep_until(origin + restart.at) => {}
        }
        if restart.member >= fleet.members.len() {
            continue;
        }
        let member = fleet.members.remove(restart.member);
        let down = go_down(member.cluster).await;
        tokio::select! {
            () = &mut stop => {
                down.shutdown().await;
                return Ok(true);
            }
            () = tokio::time::sleep(restart.downtime) => {}
        }
        let member_options = EmbeddedOptions {
            faults: member.faults.clone(),
            ..options.clone()
        };
        let cluster = down.come_back(&member_options, serve.clone()).await?;
        fleet
            .members
            .insert(restart.member, super::fleet::Member { cluster, ..member });
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fault;

    #[test]
    fn restarts_are_planned_per_member_in_time_order() {
        let faults = fault::parse("restart=5s+1s,latency=1m,restart=1s+2s").unwrap();
        let planned = plan(&faults, [1, 0]);
        let at = |p: &Planned| (p.member, p.at.as_secs(), p.downtime.as_secs());
        assert_eq!(
            planned.iter().map(at).collect::<Vec<_>>(),
            [(0, 1, 2), (1, 1, 2), (0, 5, 1), (1, 5, 1)]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_restart_keeps_address_and_credentials_and_replaces_state() {
        let options = EmbeddedOptions {
            scenario: Some("small".to_owned()),
            ..EmbeddedOptions::default()
        };
        let cluster = super::super::start(options.clone()).await.unwrap();
        let store = cluster.simulation.store.clone();
        let (addr, token) = (cluster.addr(), cluster.server.token.clone());
        let held = store.resource_version();
        let pods_on = |node: &str| -> Vec<(String, String)> {
            let (pods, _) = store.list(ResourceKind::Pod, None);
            pods.iter()
                .filter(|p| owned_by_daemon_set(p) && p["spec"]["nodeName"] == node)
                .map(|p| {
                    let meta = &p["metadata"];
                    (meta["name"].to_string(), meta["uid"].to_string())
                })
                .collect()
        };
        let node = node_to_evict(&store.list(ResourceKind::Pod, None).0).expect("daemon pods");
        let before = pods_on(&node);
        let down = go_down(cluster).await;
        assert!(
            tokio::net::TcpStream::connect(addr).await.is_err(),
            "refused while down"
        );
        let back = down
            .come_back(&options, ServeOptions::default())
            .await
            .unwrap();
        assert_eq!((back.addr(), back.server.token.as_str()), (addr, &*token));
        assert!(store.subscribe_from(held).is_err(), "old versions are gone");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let after = pods_on(&node);
            if after.len() == before.len() && after.iter().all(|pod| !before.contains(pod)) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "not replaced: {before:?} {after:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        back.shutdown().await;
    }
}
