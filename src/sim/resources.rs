//! The table of resource kinds the embedded cluster serves: names, group,
//! version, scope, short names and categories, exactly as discovery reports
//! them. Everything that needs to know "what is a daemonset" reads it here;
//! this module holds no objects and does no I/O.
//!
//! Two sorts of kind: the typed ones the simulation acts on (nodes, pods,
//! DaemonSets, …: one variant each, with their own strategies and tables),
//! and [`ResourceKind::Inert`] ones it only stores and serves — the built-in
//! kinds manifests carry ([`info::BUILT_IN`]) and custom resources, whose
//! descriptor comes from their CRD ([`crd`]).

pub mod crd;
pub mod info;

use std::fmt;

pub use info::{InertKind, KindInfo};

/// One kind of object the embedded cluster stores and serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceKind {
    /// `v1 Node`, cluster-scoped.
    Node,
    /// `v1 Pod`, namespaced.
    Pod,
    /// `v1 Event`, namespaced.
    Event,
    /// `v1 Namespace`, cluster-scoped.
    Namespace,
    /// `apps/v1 DaemonSet`, namespaced.
    DaemonSet,
    /// `apps/v1 ControllerRevision`, namespaced.
    ControllerRevision,
    /// `scheduling.k8s.io/v1 PriorityClass`, cluster-scoped.
    PriorityClass,
    /// A kind stored and served but never acted on (ConfigMap, Service,
    /// RBAC, CRDs and custom resources, …), described by its [`KindInfo`].
    Inert(InertKind),
}

impl ResourceKind {
    /// Every typed kind (the ones the simulation acts on), in discovery order.
    pub const ALL: [ResourceKind; 7] = [
        ResourceKind::Node,
        ResourceKind::Pod,
        ResourceKind::Event,
        ResourceKind::Namespace,
        ResourceKind::DaemonSet,
        ResourceKind::ControllerRevision,
        ResourceKind::PriorityClass,
    ];

    /// The object `kind` (`DaemonSet`).
    pub fn kind(self) -> &'static str {
        match self {
            ResourceKind::Node => "Node",
            ResourceKind::Pod => "Pod",
            ResourceKind::Event => "Event",
            ResourceKind::Namespace => "Namespace",
            ResourceKind::DaemonSet => "DaemonSet",
            ResourceKind::ControllerRevision => "ControllerRevision",
            ResourceKind::PriorityClass => "PriorityClass",
            ResourceKind::Inert(kind) => &kind.info().kind,
        }
    }

    /// The list kind (`DaemonSetList`).
    pub fn list_kind(self) -> String {
        match self {
            ResourceKind::Inert(kind) => kind.info().list_kind.clone(),
            _ => format!("{}List", self.kind()),
        }
    }

    /// The inert kind's descriptor; `None` for the typed kinds.
    pub fn inert(self) -> Option<&'static KindInfo> {
        match self {
            ResourceKind::Inert(kind) => Some(kind.info()),
            _ => None,
        }
    }

    /// Whether this is `CustomResourceDefinition`.
    pub fn is_crd(self) -> bool {
        matches!(self, ResourceKind::Inert(kind) if kind == info::crd_kind())
    }

    /// The URL resource name (`daemonsets`).
    pub fn plural(self) -> &'static str {
        match self {
            ResourceKind::Node => "nodes",
            ResourceKind::Pod => "pods",
            ResourceKind::Event => "events",
            ResourceKind::Namespace => "namespaces",
            ResourceKind::DaemonSet => "daemonsets",
            ResourceKind::ControllerRevision => "controllerrevisions",
            ResourceKind::PriorityClass => "priorityclasses",
            ResourceKind::Inert(kind) => &kind.info().plural,
        }
    }

    /// The singular resource name discovery reports (`daemonset`).
    pub fn singular(self) -> String {
        match self {
            ResourceKind::Inert(kind) => kind.info().singular.clone(),
            _ => self.kind().to_ascii_lowercase(),
        }
    }

    /// The API group (`""` for core, `apps`).
    pub fn group(self) -> &'static str {
        match self {
            ResourceKind::DaemonSet | ResourceKind::ControllerRevision => "apps",
            ResourceKind::PriorityClass => "scheduling.k8s.io",
            ResourceKind::Inert(kind) => &kind.info().group,
            _ => "",
        }
    }

    /// The preferred version; every typed kind is `v1`.
    pub fn version(self) -> &'static str {
        match self {
            ResourceKind::Inert(kind) => kind.info().version(),
            _ => "v1",
        }
    }

    /// Whether `version` is served (without building the list).
    pub fn serves(self, version: &str) -> bool {
        match self {
            ResourceKind::Inert(kind) => kind.info().serves(version),
            _ => version == "v1",
        }
    }

    /// Every served version, the preferred one first.
    pub fn versions(self) -> Vec<&'static str> {
        match self {
            ResourceKind::Inert(kind) => kind.info().versions.iter().map(String::as_str).collect(),
            _ => vec!["v1"],
        }
    }

    /// The `apiVersion` field value (`v1`, `apps/v1`) of the preferred version.
    pub fn api_version(self) -> &'static str {
        match self {
            ResourceKind::Inert(kind) => &kind.info().api_version,
            _ => match self.group() {
                "" => "v1",
                "apps" => "apps/v1",
                _ => "scheduling.k8s.io/v1",
            },
        }
    }

    /// Whether an object's `apiVersion` names this kind's group and a
    /// served version.
    pub fn accepts_api_version(self, api_version: &str) -> bool {
        match self {
            ResourceKind::Inert(kind) => kind.info().accepts_api_version(api_version),
            _ => api_version == self.api_version(),
        }
    }

    /// Whether objects of this kind live in a namespace.
    pub fn namespaced(self) -> bool {
        match self {
            ResourceKind::Inert(kind) => kind.info().namespaced,
            _ => !matches!(
                self,
                ResourceKind::Node | ResourceKind::Namespace | ResourceKind::PriorityClass
            ),
        }
    }

    /// Whether the kind has a `/status` subresource (and so a spec/status split
    /// on writes).
    pub fn has_status(self) -> bool {
        match self {
            ResourceKind::Inert(kind) => kind.info().has_status,
            _ => matches!(
                self,
                ResourceKind::Node
                    | ResourceKind::Pod
                    | ResourceKind::DaemonSet
                    | ResourceKind::Namespace
            ),
        }
    }

    /// kubectl short names; kubectl learns them only from discovery.
    pub fn short_names(self) -> Vec<&'static str> {
        let typed: &[&str] = match self {
            ResourceKind::Node => &["no"],
            ResourceKind::Pod => &["po"],
            ResourceKind::Event => &["ev"],
            ResourceKind::Namespace => &["ns"],
            ResourceKind::DaemonSet => &["ds"],
            ResourceKind::ControllerRevision => &[],
            ResourceKind::PriorityClass => &["pc"],
            ResourceKind::Inert(kind) => {
                return kind.info().short_names.iter().map(String::as_str).collect();
            }
        };
        typed.to_vec()
    }

    /// Discovery categories (`kubectl get all` uses `all`).
    pub fn categories(self) -> Vec<&'static str> {
        match self {
            ResourceKind::Pod | ResourceKind::DaemonSet => vec!["all"],
            ResourceKind::Inert(kind) => {
                kind.info().categories.iter().map(String::as_str).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The name used in upstream error messages: the plural, qualified by the
    /// group when there is one (`daemonsets.apps`).
    pub fn qualified_plural(self) -> String {
        match self.group() {
            "" => self.plural().to_owned(),
            group => format!("{}.{group}", self.plural()),
        }
    }

    /// Finds a typed or built-in kind by group and URL resource name (the
    /// kinds every cluster serves; custom resources are the store's to resolve).
    pub fn from_group_plural(group: &str, plural: &str) -> Option<ResourceKind> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.group() == group && kind.plural() == plural)
            .or_else(|| info::built_in(group, plural).map(ResourceKind::Inert))
    }

    /// Every typed and built-in inert kind, in discovery order.
    pub fn built_in() -> impl Iterator<Item = ResourceKind> {
        Self::ALL
            .into_iter()
            .chain(info::BUILT_IN.iter().copied().map(ResourceKind::Inert))
    }

    /// `CustomResourceDefinition`.
    pub fn crd() -> ResourceKind {
        ResourceKind::Inert(info::crd_kind())
    }

    /// Finds a kind by its `kind` field and `apiVersion` (used when loading
    /// snapshots and checking request bodies).
    pub fn from_kind(api_version: &str, kind: &str) -> Option<ResourceKind> {
        Self::ALL
            .into_iter()
            .find(|k| k.kind() == kind && k.api_version() == api_version)
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.qualified_plural())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_round_trip_for_every_kind() {
        for kind in ResourceKind::ALL {
            assert_eq!(
                ResourceKind::from_group_plural(kind.group(), kind.plural()),
                Some(kind)
            );
            assert_eq!(
                ResourceKind::from_kind(kind.api_version(), kind.kind()),
                Some(kind)
            );
        }
        assert_eq!(ResourceKind::from_group_plural("", "daemonsets"), None);
    }

    #[test]
    fn names_match_upstream() {
        assert_eq!(
            ResourceKind::DaemonSet.qualified_plural(),
            "daemonsets.apps"
        );
        assert_eq!(ResourceKind::Pod.qualified_plural(), "pods");
        assert_eq!(
            ResourceKind::ControllerRevision.list_kind(),
            "ControllerRevisionList"
        );
        assert!(!ResourceKind::Node.namespaced());
        assert!(ResourceKind::Event.namespaced());
        assert!(!ResourceKind::PriorityClass.namespaced());
        assert_eq!(
            ResourceKind::PriorityClass.api_version(),
            "scheduling.k8s.io/v1"
        );
    }
}
