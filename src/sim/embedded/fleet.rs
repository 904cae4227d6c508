//! An embedded fleet (`rollcall sim --clusters N`): N embedded clusters in one
//! process, each started exactly as a lone one ([`super::start_with`]): its
//! own store, controller, kubelets and API server on its own loopback port,
//! with its own fault plan. One kubeconfig names them `rollcall-sim-1` …
//! `rollcall-sim-N`. Owns the members' wiring only.

use std::net::SocketAddr;
use std::path::Path;

use super::member::Variant;
use super::{EmbeddedCluster, EmbeddedOptions, SimError, start_with};
use crate::sim::fault::Faults;
use crate::sim::kubeconfig::{self, MemberAuth};
use crate::sim::server::ServeOptions;

/// The context (and cluster and user) name of member `index` (1-based).
pub fn context_name(index: usize) -> String {
    format!("{}-{index}", kubeconfig::CONTEXT_NAME)
}

/// One running member.
#[derive(Debug)]
pub struct Member {
    /// Its context name, `rollcall-sim-INDEX`.
    pub context: String,
    /// How it differs from the scenario (`None`: it does not).
    pub variant: Option<Variant>,
    /// Its fault plan (install faults here to rehearse a sick member).
    pub faults: Faults,
    /// The cluster.
    pub cluster: EmbeddedCluster,
}

/// The running fleet, members in context order.
#[derive(Debug)]
pub struct Fleet {
    /// Member 1 first.
    pub members: Vec<Member>,
}

/// Starts `count` members from `options` (its `faults` and `variant` are
/// ignored: each member gets its own plan, and with `vary` the variant of
/// its index). A fixed `--listen` port gives member K the port + K − 1;
/// a `--seed` S gives member K the seed S + K − 1 (without one, every member
/// takes the scenario's). A member that fails to start stops the ones started.
pub async fn start(
    options: &EmbeddedOptions,
    serve: &ServeOptions,
    count: usize,
    vary: bool,
) -> Result<Fleet, SimError> {
    let mut members: Vec<Member> = Vec::with_capacity(count);
    for index in 1..=count {
        let faults = Faults::none();
        let variant = vary.then(|| Variant::of(index));
        let member_options = EmbeddedOptions {
            listen: options.listen.map(|listen| member_address(listen, index)),
            seed: options.seed.map(|seed| seed.wrapping_add(index as u64 - 1)),
            faults: faults.clone(),
            variant,
            ..options.clone()
        };
        match start_with(member_options, serve.clone()).await {
            Ok(cluster) => members.push(Member {
                context: context_name(index),
                variant,
                faults,
                cluster,
            }),
            Err(error) => {
                Fleet { members }.shutdown().await;
                return Err(error);
            }
        }
    }
    Ok(Fleet { members })
}

/// Member `index`'s address: `listen`, its port moved up by `index − 1`
/// unless it is 0 (any free port).
fn member_address(listen: SocketAddr, index: usize) -> SocketAddr {
    let mut address = listen;
    if listen.port() != 0 {
        let offset = u16::try_from(index - 1).unwrap_or(u16::MAX);
        address.set_port(listen.port().saturating_add(offset));
    }
    address
}

impl Fleet {
    /// The fleet's kubeconfig: one context per member, the first current,
    /// each user the member's admin token.
    pub fn kubeconfig_yaml(&self) -> String {
        self.kubeconfig_yaml_with(MemberAuth::Token)
    }

    /// The fleet's kubeconfig with the members' users authenticating as `auth` says.
    pub fn kubeconfig_yaml_with(&self, auth: MemberAuth) -> String {
        let parts: Vec<_> = self
            .members
            .iter()
            .map(|m| (m.context.clone(), m.cluster.server.kubeconfig_parts()))
            .collect();
        kubeconfig::render_fleet(&parts, auth)
    }

    /// Writes [`Fleet::kubeconfig_yaml`] to `path` (0600, never through a symlink).
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        self.write_kubeconfig_with(path, MemberAuth::Token)
    }

    /// Writes [`Fleet::kubeconfig_yaml_with`] `auth` to `path`, as [`Fleet::write_kubeconfig`].
    pub fn write_kubeconfig_with(&self, path: &Path, auth: MemberAuth) -> std::io::Result<()> {
        kubeconfig::write(path, &self.kubeconfig_yaml_with(auth))
    }

    /// Stops every member.
    pub async fn shutdown(self) {
        for member in self.members {
            member.cluster.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_ports_count_up_and_port_zero_stays_any() {
        let fixed: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        assert_eq!(member_address(fixed, 1).port(), 7000);
        assert_eq!(member_address(fixed, 3).port(), 7002);
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert_eq!(member_address(any, 5).port(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn members_are_separate_clusters_with_their_own_state() {
        let options = EmbeddedOptions {
            scenario: Some("small".to_owned()),
            ..EmbeddedOptions::default()
        };
        let fleet = start(&options, &ServeOptions::default(), 3, true)
            .await
            .unwrap();
        let ports: std::collections::BTreeSet<u16> = fleet
            .members
            .iter()
            .map(|m| m.cluster.addr().port())
            .collect();
        assert_eq!(ports.len(), 3);
        let images: Vec<String> = fleet
            .members
            .iter()
            .map(|m| {
                let ds = m
                    .cluster
                    .simulation
                    .store
                    .get(
                        crate::sim::resources::ResourceKind::DaemonSet,
                        "kube-system",
                        "node-agent",
                    )
                    .unwrap();
                ds["spec"]["template"]["spec"]["containers"][0]["image"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(images[0], images[1]);
        assert!(images[2].ends_with(":1.5.1"), "{images:?}");
        let contexts: Vec<&str> = fleet.members.iter().map(|m| m.context.as_str()).collect();
        assert_eq!(
            contexts,
            ["rollcall-sim-1", "rollcall-sim-2", "rollcall-sim-3"]
        );
        fleet.shutdown().await;
    }
}
