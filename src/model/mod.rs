//! Slim typed projections of the API objects rollcall reads.
//!
//! Nodes, pods and events exist by the thousand, so they are decoded into small
//! structs that keep only the fields the engine, the console and the audit use
//! (everything else in the JSON is skipped by serde, never held). DaemonSets and
//! ControllerRevisions are few and their templates matter whole, so they are the
//! upstream `k8s-openapi` types. This module does no I/O and never imports
//! `input`, which reads files into it.

pub mod bounds;
pub mod decode;
mod ds_ref;
mod event;
mod interned;
mod labels;
mod meta;
mod node;
mod node_condition;
mod owner;
mod pod;
pub mod pod_requests;
mod pod_scheduling;
mod pod_spec_wire;
pub mod protobuf;
pub mod quantity;
mod resource;
pub mod resource_list;
pub mod shared;
pub mod snapshot;
mod stamp;
mod taint;
mod uid;
mod usage_pod;

pub use ds_ref::{DsRef, DsRefError, Target};
pub use event::{Event, InvolvedObject};
pub use interned::Interned;
pub use labels::{LabelSet, Labels};
pub use meta::{Meta, MetaFields};
pub use node::{Node, NodeSpec, NodeStatus, NodeSystemInfo};
pub use node_condition::{ConditionText, NodeCondition};
pub use owner::{Owner, OwnerFields, Owners};
pub use pod::{
    ContainerState, ContainerStatus, Few, POD_SCHEDULED, Pod, PodCondition, PodContainer, PodSpec,
    PodStatus, RunningState, StateDetail,
};
pub use pod_requests::HostPort;
pub use pod_scheduling::PodScheduling;
pub use quantity::QuantityError;
pub use resource_list::ResourceList;
pub use shared::Shared;

pub use snapshot::Snapshot;
pub use stamp::Stamp;
pub use taint::Taint;
pub use uid::Uid;
pub use usage_pod::{UsageMeta, UsagePod};

pub use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
pub use k8s_openapi::api::core::v1::Toleration;
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

/// The label every daemon pod carries with the hash of the template it was made from.
pub const REVISION_HASH_LABEL: &str = "controller-revision-hash";

/// Drops the metadata fields no part of rollcall reads (managed fields are often
/// the largest part of an object), so long-lived caches stay small.
pub fn slim_metadata(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
}
