//! The embedded cluster: a Kubernetes API over HTTPS on loopback, a DaemonSet
//! controller driven by the engine, and simulated kubelets.
pub mod controller;
pub mod embedded;
pub mod generate;
pub mod kubelet;
pub mod scenario;
