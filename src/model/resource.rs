//! `k8s_openapi::Resource` for the slim types, so kube's typed `Api<K>`, watchers
//! and reflectors decode straight into them.

use super::{Event, Meta, Node, Pod};

macro_rules! core_v1_resource {
    ($ty:ty, $kind:literal, $plural:literal, $list:literal, $scope:ty) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = "v1";
            const GROUP: &'static str = "";
            const KIND: &'static str = $kind;
            const VERSION: &'static str = "v1";
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = $scope;
        }
        impl k8s_openapi::ListableResource for $ty {
            const LIST_KIND: &'static str = $list;
        }
        impl k8s_openapi::Metadata for $ty {
            type Ty = Meta;
            fn metadata(&self) -> &Meta {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut Meta {
                &mut self.metadata
            }
        }
    };
}

core_v1_resource!(
    Node,
    "Node",
    "nodes",
    "NodeList",
    k8s_openapi::ClusterResourceScope
);
core_v1_resource!(
    Pod,
    "Pod",
    "pods",
    "PodList",
    k8s_openapi::NamespaceResourceScope
);
core_v1_resource!(
    Event,
    "Event",
    "events",
    "EventList",
    k8s_openapi::NamespaceResourceScope
);
