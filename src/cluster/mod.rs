//! The cluster layer: kube-rs clients from kubeconfig, watch streams into slim
//! stores, and the one task that writes them. Receives a `kube::Client`; never
//! decides what to show or do.
pub mod access;
pub mod cache;
pub mod compression;
pub mod compression_probe;
pub mod connect;
pub mod exec;
pub mod gcp_provider;
pub mod identity;
mod list_head;
mod node_pods;
pub mod object;
mod page;
pub mod pager;
pub mod protobuf_read;
pub mod proxy;
pub mod request;
mod resend;
pub mod retry;
pub mod retry_after;
pub mod rhythm;
pub mod server_kind;
pub mod status;
pub mod store;
pub mod stream;
pub mod transport;
pub mod usage;
pub mod watch;
mod watch_body;
pub mod wire;

#[cfg(test)]
mod stream_tests;
