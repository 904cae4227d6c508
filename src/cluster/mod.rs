//! The cluster layer: kube-rs clients from kubeconfig, watch streams into slim
//! stores, and the one task that writes. Receives a `kube::Client`; never decides.
pub mod connect;
