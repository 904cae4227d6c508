//! URL paths to routes: discovery documents, OpenAPI, access reviews and
//! resource paths (kind, namespace, name, subresource). Only what the
//! embedded cluster serves parses; everything else is `None` (404). Which
//! kinds are served at a group and version is the caller's to say (the
//! store's: CRDs add kinds), through a resolver.

use crate::sim::resources::ResourceKind;

/// A resource path: kind, namespace, name and subresource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePath {
    /// The kind.
    pub kind: ResourceKind,
    /// The namespace from the path, if any.
    pub namespace: Option<String>,
    /// The object name, for object paths.
    pub name: Option<String>,
    /// `status` (or a pod's `log`), when addressed.
    pub subresource: Option<String>,
}

/// Where a path leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `/version`.
    Version,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` (empty group) or `/apis/{group}/{version}`: group, version.
    GroupVersion(String, String),
    /// `/healthz`, `/livez`, `/readyz`.
    Health,
    /// `/openapi/v3`.
    OpenApiIndex,
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}`: group, version.
    OpenApiGroup(String, String),
    /// `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`.
    AccessReview,
    /// `POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews`.
    RulesReview,
    /// A resource collection, object or subresource.
    Resource(ResourcePath),
}

/// Finds the kind served at (group, version, resource name).
pub trait Resolve {
    /// The kind, or `None` when nothing is served there.
    fn resolve(&self, group: &str, version: &str, plural: &str) -> Option<ResourceKind>;
}

impl<F: Fn(&str, &str, &str) -> Option<ResourceKind>> Resolve for F {
    fn resolve(&self, group: &str, version: &str, plural: &str) -> Option<ResourceKind> {
        self(group, version, plural)
    }
}

impl Resolve for crate::sim::store::Store {
    fn resolve(&self, group: &str, version: &str, plural: &str) -> Option<ResourceKind> {
        crate::sim::store::Store::resolve(self, group, version, plural)
    }
}

/// Parses a request path.
pub fn route(path: &str, kinds: &impl Resolve) -> Option<Route> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let owned = |group: &str, version: &str| (group.to_owned(), version.to_owned());
    match segments.as_slice() {
        ["version"] => Some(Route::Version),
        ["api"] => Some(Route::CoreVersions),
        ["apis"] => Some(Route::Groups),
        ["apis", group] => Some(Route::Group((*group).to_owned())),
        ["healthz" | "livez" | "readyz"] => Some(Route::Health),
        ["api", "v1"] => Some(Route::GroupVersion(String::new(), "v1".to_owned())),
        ["apis", group, version] => {
            let (group, version) = owned(group, version);
            Some(Route::GroupVersion(group, version))
        }
        ["openapi", "v3"] => Some(Route::OpenApiIndex),
        ["openapi", "v2"] => Some(Route::OpenApiV2),
        ["openapi", "v3", "api", "v1"] => Some(Route::OpenApiGroup(String::new(), "v1".to_owned())),
        ["openapi", "v3", "apis", group, version] => {
            let (group, version) = owned(group, version);
            Some(Route::OpenApiGroup(group, version))
        }
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
        ] => Some(Route::AccessReview),
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectrulesreviews",
        ] => Some(Route::RulesReview),
        ["api", "v1", rest @ ..] => resource_path(kinds, "", "v1", rest).map(Route::Resource),
        ["apis", group, version, rest @ ..] => {
            resource_path(kinds, group, version, rest).map(Route::Resource)
        }
        _ => None,
    }
}

fn resource_path(
    kinds: &impl Resolve,
    group: &str,
    version: &str,
    rest: &[&str],
) -> Option<ResourcePath> {
    let owned = |s: &str| Some(s.to_owned());
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..] if *plural != "status" && *plural != "finalize" => {
            (owned(ns), {
                let mut v = vec![*plural];
                v.extend_from_slice(tail);
                v
            })
        }
        _ => (None, rest.to_vec()),
    };
    let (plural, name, subresource) = match rest.as_slice() {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, owned(name), None),
        [plural, name, sub @ ("status" | "log")] => (*plural, owned(name), owned(sub)),
        _ => return None,
    };
    let kind = kinds.resolve(group, version, plural)?;
    let scoped_right = namespace.is_none() || kind.namespaced();
    let addressable = name.is_none() || namespace.is_some() || !kind.namespaced();
    let has_subresource = match subresource.as_deref() {
        None => true,
        Some("log") => kind == ResourceKind::Pod,
        Some(_) => kind.has_status(),
    };
    let names_ok = [&namespace, &name]
        .into_iter()
        .flatten()
        .all(|n| !n.is_empty());
    (scoped_right && addressable && has_subresource && names_ok).then_some(ResourcePath {
        kind,
        namespace,
        name,
        subresource,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(
        clippy::unnecessary_wraps,
        reason = "matches the type of the expected column"
    )]
    fn resource(
        kind: ResourceKind,
        ns: Option<&str>,
        name: Option<&str>,
        sub: Option<&str>,
    ) -> Option<Route> {
        Some(Route::Resource(ResourcePath {
            kind,
            namespace: ns.map(str::to_owned),
            name: name.map(str::to_owned),
            subresource: sub.map(str::to_owned),
        }))
    }

    #[test]
    fn routes() {
        use ResourceKind::{DaemonSet, Namespace, Node, Pod};
        let cases = [
            ("/version", Some(Route::Version)),
            ("/api", Some(Route::CoreVersions)),
            (
                "/apis/apps/v1",
                Some(Route::GroupVersion("apps".into(), "v1".into())),
            ),
            ("/apis/apps", Some(Route::Group("apps".into()))),
            ("/healthz", Some(Route::Health)),
            ("/api/v1/nodes", resource(Node, None, None, None)),
            (
                "/api/v1/nodes/n1/status",
                resource(Node, None, Some("n1"), Some("status")),
            ),
            ("/api/v1/pods", resource(Pod, None, None, None)),
            (
                "/api/v1/namespaces/default/pods/p",
                resource(Pod, Some("default"), Some("p"), None),
            ),
            (
                "/apis/apps/v1/namespaces/ns/daemonsets/ds/status",
                resource(DaemonSet, Some("ns"), Some("ds"), Some("status")),
            ),
            ("/api/v1/namespaces", resource(Namespace, None, None, None)),
            (
                "/api/v1/namespaces/team",
                resource(Namespace, None, Some("team"), None),
            ),
            (
                "/api/v1/namespaces/team/status",
                resource(Namespace, None, Some("team"), Some("status")),
            ),
            ("/api/v1/pods/p", None),
            ("/api/v1/namespaces/x/nodes", None),
            ("/apis/apps/v1/pods", None),
            ("/api/v1/namespaces/x/events/e/status", None),
            (
                "/api/v1/namespaces/ns/pods/p/log",
                resource(Pod, Some("ns"), Some("p"), Some("log")),
            ),
            ("/api/v1/nodes/n1/log", None),
            ("/api/v1/namespaces//pods", None),
            ("/nope", None),
            ("", None),
        ];
        let typed = |group: &str, version: &str, plural: &str| {
            ResourceKind::from_group_plural(group, plural).filter(|_| version == "v1")
        };
        for (path, expected) in cases {
            assert_eq!(route(path, &typed), expected, "{path}");
        }
    }
}
