//! What the cluster layer lists and watches, and a page of it: the types the
//! request code and both decoders (JSON and Kubernetes protobuf) share, a
//! floor below all of them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;

use crate::model::MetaFields;

/// A kind the cluster layer lists and watches: its URL from the
/// `k8s_openapi` constants, its metadata readable through [`MetaFields`].
pub trait Object:
    k8s_openapi::Resource
    + k8s_openapi::Metadata<Ty: MetaFields>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> Object for K where
    K: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty: MetaFields>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// One list page: its metadata (the continue token, the resourceVersion)
/// and its objects.
#[derive(Debug)]
pub struct Page<K> {
    /// The list's metadata.
    pub metadata: ListMeta,
    /// The page's objects.
    pub items: Vec<K>,
}
