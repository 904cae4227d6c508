//! Kubernetes protobuf for nodes, pods and events: the field table
//! ([`schema`]), the wire format ([`wire`]), the `k8s\0` envelope and watch
//! framing ([`envelope`]), reading into any `Deserialize` type as if it were
//! the object's JSON ([`de`]) and writing stored JSON as protobuf
//! ([`encode`], for the embedded cluster). No I/O.

pub mod de;
pub mod encode;
pub mod envelope;
pub mod schema;
pub mod wire;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use de::{Error, from_message};
pub use encode::{Encoded, encode_object};
pub use envelope::{EnvelopeError, MEDIA_TYPE, Unknown, WATCH_MEDIA_TYPE};
