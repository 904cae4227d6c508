//! The table of resource kinds the embedded cluster serves: names, group,
//! version, scope, short names and categories, exactly as discovery reports
//! them. Everything that needs to know "what is a daemonset" reads it here;
//! this module holds no objects and does no I/O.

use std::fmt;

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
}

impl ResourceKind {
    /// Every kind, in discovery order.
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
        }
    }

    /// The list kind (`DaemonSetList`).
    pub fn list_kind(self) -> String {
        format!("{}List", self.kind())
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
        }
    }

    /// The singular resource name discovery reports (`daemonset`).
    pub fn singular(self) -> String {
        self.kind().to_ascii_lowercase()
    }

    /// The API group (`""` for core, `apps`).
    pub fn group(self) -> &'static str {
        match self {
            ResourceKind::DaemonSet | ResourceKind::ControllerRevision => "apps",
            ResourceKind::PriorityClass => "scheduling.k8s.io",
            _ => "",
        }
    }

    /// The served version; every kind here is `v1`.
    pub fn version(self) -> &'static str {
        "v1"
    }

    /// The `apiVersion` field value (`v1`, `apps/v1`).
    pub fn api_version(self) -> &'static str {
        match self.group() {
            "" => "v1",
            "apps" => "apps/v1",
            _ => "scheduling.k8s.io/v1",
        }
    }

    /// Whether objects of this kind live in a namespace.
    pub fn namespaced(self) -> bool {
        !matches!(
            self,
            ResourceKind::Node | ResourceKind::Namespace | ResourceKind::PriorityClass
        )
    }

    /// Whether the kind has a `/status` subresource (and so a spec/status split
    /// on writes).
    pub fn has_status(self) -> bool {
        matches!(
            self,
            ResourceKind::Node
                | ResourceKind::Pod
                | ResourceKind::DaemonSet
                | ResourceKind::Namespace
        )
    }

    /// kubectl short names; kubectl learns them only from discovery.
    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            ResourceKind::Node => &["no"],
            ResourceKind::Pod => &["po"],
            ResourceKind::Event => &["ev"],
            ResourceKind::Namespace => &["ns"],
            ResourceKind::DaemonSet => &["ds"],
            ResourceKind::ControllerRevision => &[],
            ResourceKind::PriorityClass => &["pc"],
        }
    }

    /// Discovery categories (`kubectl get all` uses `all`).
    pub fn categories(self) -> &'static [&'static str] {
        match self {
            ResourceKind::Pod | ResourceKind::DaemonSet => &["all"],
            _ => &[],
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

    /// Finds a kind by group and URL resource name.
    pub fn from_group_plural(group: &str, plural: &str) -> Option<ResourceKind> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.group() == group && kind.plural() == plural)
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
