//! The embedded cluster: a Kubernetes API over HTTPS on loopback, a DaemonSet
//! controller driven by the engine, and simulated kubelets.

pub mod api;
pub mod auth;
pub mod authn;
pub mod bandwidth;
pub mod churn;
pub mod controller;
pub mod embedded;
pub mod event_ttl;
pub mod fault;
pub mod generate;
pub mod in_process;
pub mod kubeconfig;
pub mod kubelet;
pub mod offload;
pub mod resources;
pub mod scenario;
pub mod scheduler;
pub mod selfheal;
pub mod server;
pub mod store;
pub mod tls;
pub mod wake;
