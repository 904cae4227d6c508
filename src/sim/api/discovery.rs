//! Discovery documents: `/version`, legacy `/api`, `/apis` and per
//! group-version resource lists, and aggregated discovery (v2 / v2beta1)
//! negotiated from the Accept header exactly as the protocol brief §2.3 says.
//! Built from the kinds table; no state.

use serde_json::{Value, json};

use crate::sim::resources::ResourceKind;

/// The Content-Type aggregated discovery must carry for kubectl to read it.
pub fn aggregated_content_type(version: AggregatedVersion) -> &'static str {
    match version {
        AggregatedVersion::V2 => {
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        }
        AggregatedVersion::V2Beta1 => {
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        }
    }
}

/// Which aggregated discovery version a client asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggregatedVersion {
    /// `apidiscovery.k8s.io/v2` (kubectl 1.30+).
    V2,
    /// `apidiscovery.k8s.io/v2beta1` (kubectl 1.27–1.29).
    V2Beta1,
}

/// Reads the Accept header: v2 if offered, else v2beta1 if offered, else
/// legacy (`None`).
pub fn negotiate(accept: &str) -> Option<AggregatedVersion> {
    let compact: String = accept.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("v=v2;as=APIGroupDiscoveryList") {
        Some(AggregatedVersion::V2)
    } else if compact.contains("v=v2beta1;as=APIGroupDiscoveryList") {
        Some(AggregatedVersion::V2Beta1)
    } else {
        None
    }
}

/// `/version`: v1.32.x, so the gcloud kubectl dispatcher runs kubectl 1.32.
/// `gitCommit` says this is the embedded cluster, and one field of its own
/// how often its watches get a BOOKMARK (kubectl and kube ignore it; rollcall's
/// watches assume that rhythm until they have learnt it; the client side
/// reads both in `cluster::server_kind`, whose tests read this answer).
pub fn version(bookmark_interval: std::time::Duration) -> Value {
    let millis = u64::try_from(bookmark_interval.as_millis()).unwrap_or(u64::MAX);
    json!({"major": "1", "minor": "32", "gitVersion": "v1.32.4", "gitCommit": "rollcall-sim",
        "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.23",
        "compiler": "gc", "platform": "linux/amd64", "rollcallBookmarkIntervalMillis": millis})
}

/// Legacy `/api`.
pub fn core_versions(server_address: &str) -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]})
}

/// The access-review group: served, but holds no stored kind.
const AUTHORIZATION: &str = "authorization.k8s.io";

/// The served API groups (core excluded) with their versions, the preferred
/// one first, in the order the kinds come.
fn groups(kinds: &[ResourceKind]) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut groups: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    let named = kinds.iter().filter(|k| !k.group().is_empty());
    for kind in named {
        let at = groups
            .iter()
            .position(|(g, _)| *g == kind.group())
            .unwrap_or_else(|| {
                groups.push((kind.group(), Vec::new()));
                groups.len() - 1
            });
        for version in kind.versions() {
            if !groups[at].1.contains(&version) {
                groups[at].1.push(version);
            }
        }
    }
    let at = groups
        .iter()
        .position(|(g, _)| *g == "apps")
        .map_or(0, |i| i + 1);
    groups.insert(at, (AUTHORIZATION, vec!["v1"]));
    groups
}

/// Legacy `/apis`.
pub fn group_list(kinds: &[ResourceKind]) -> Value {
    let groups: Vec<Value> = groups(kinds)
        .iter()
        .map(|(group, versions)| api_group(group, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn api_group(group: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({"name": group, "versions": versions, "preferredVersion": versions.first()})
}

/// `/apis/{group}`: one `APIGroup`, or `None` for a group not served.
pub fn group(kinds: &[ResourceKind], group: &str) -> Option<Value> {
    groups(kinds)
        .into_iter()
        .find(|(g, _)| *g == group)
        .map(|(group, versions)| {
            let mut value = api_group(group, &versions);
            value["kind"] = json!("APIGroup");
            value["apiVersion"] = json!("v1");
            value
        })
}

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The kinds served at `group`/`version`.
fn served_at<'a>(
    kinds: &'a [ResourceKind],
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = ResourceKind> + 'a {
    kinds
        .iter()
        .copied()
        .filter(move |k| k.group() == group && k.serves(version))
}

/// Legacy `APIResourceList` for `group` (`""` is core) at `version`, or
/// `None` for a group-version the server does not serve.
pub fn resource_list(kinds: &[ResourceKind], group: &str, version: &str) -> Option<Value> {
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let mut resources = Vec::new();
    if group == AUTHORIZATION && version == "v1" {
        resources.push(
            json!({"name": "selfsubjectaccessreviews", "singularName": "selfsubjectaccessreview",
            "namespaced": false, "kind": "SelfSubjectAccessReview", "verbs": ["create"]}),
        );
        resources.push(
            json!({"name": "selfsubjectrulesreviews", "singularName": "selfsubjectrulesreview",
            "namespaced": false, "kind": "SelfSubjectRulesReview", "verbs": ["create"]}),
        );
    } else if served_at(kinds, group, version).next().is_none() {
        return None;
    }
    for kind in served_at(kinds, group, version) {
        let mut entry = json!({"name": kind.plural(), "singularName": kind.singular(),
            "namespaced": kind.namespaced(), "kind": kind.kind(), "verbs": VERBS});
        if !kind.short_names().is_empty() {
            entry["shortNames"] = json!(kind.short_names());
        }
        if !kind.categories().is_empty() {
            entry["categories"] = json!(kind.categories());
        }
        resources.push(entry);
        if kind.has_status() {
            resources.push(json!({"name": format!("{}/status", kind.plural()), "singularName": "",
                "namespaced": kind.namespaced(), "kind": kind.kind(), "verbs": ["get", "patch", "update"]}));
        }
        if kind == ResourceKind::Pod {
            resources.push(
                json!({"name": "pods/log", "singularName": "", "namespaced": true,
                "kind": "Pod", "verbs": ["get"]}),
            );
        }
    }
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

/// Aggregated discovery for `/api` (`core == true`) or `/apis`.
pub fn aggregated(kinds: &[ResourceKind], core: bool, version: AggregatedVersion) -> Value {
    let groups = if core {
        vec![("", vec!["v1"])]
    } else {
        groups(kinds)
    };
    let items: Vec<Value> = groups
        .into_iter()
        .map(|(group, versions)| aggregated_group(kinds, group, &versions))
        .collect();
    let api_version = match version {
        AggregatedVersion::V2 => "apidiscovery.k8s.io/v2",
        AggregatedVersion::V2Beta1 => "apidiscovery.k8s.io/v2beta1",
    };
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": api_version, "metadata": {}, "items": items})
}

fn aggregated_resource(kind: ResourceKind) -> Value {
    let response_kind = json!({"group": "", "version": "", "kind": kind.kind()});
    let mut entry = json!({"resource": kind.plural(), "responseKind": response_kind,
        "scope": if kind.namespaced() { "Namespaced" } else { "Cluster" },
        "singularResource": kind.singular(), "verbs": VERBS});
    if !kind.short_names().is_empty() {
        entry["shortNames"] = json!(kind.short_names());
    }
    if !kind.categories().is_empty() {
        entry["categories"] = json!(kind.categories());
    }
    if kind.has_status() {
        entry["subresources"] = json!([{"subresource": "status", "responseKind": response_kind,
            "verbs": ["get", "patch", "update"]}]);
    }
    if kind == ResourceKind::Pod
        && let Some(subresources) = entry["subresources"].as_array_mut()
    {
        subresources.push(json!({"subresource": "log", "responseKind": response_kind,
            "verbs": ["get"]}));
    }
    entry
}

fn aggregated_group(kinds: &[ResourceKind], group: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|version| {
            let mut resources: Vec<Value> = served_at(kinds, group, version)
                .map(aggregated_resource)
                .collect();
            if group == AUTHORIZATION {
                resources.push(json!({"resource": "selfsubjectaccessreviews",
                    "responseKind": {"group": "", "version": "", "kind": "SelfSubjectAccessReview"},
                    "scope": "Cluster", "singularResource": "selfsubjectaccessreview", "verbs": ["create"]}));
                resources.push(json!({"resource": "selfsubjectrulesreviews",
                    "responseKind": {"group": "", "version": "", "kind": "SelfSubjectRulesReview"},
                    "scope": "Cluster", "singularResource": "selfsubjectrulesreview", "verbs": ["create"]}));
            }
            json!({"version": version, "freshness": "Current", "resources": resources})
        })
        .collect();
    let mut metadata = json!({"creationTimestamp": null});
    if !group.is_empty() {
        metadata["name"] = json!(group);
    }
    json!({"metadata": metadata, "versions": versions})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> Vec<ResourceKind> {
        ResourceKind::built_in().collect()
    }

    #[test]
    fn pods_advertise_their_log_subresource() {
        let kinds = kinds();
        let core = resource_list(&kinds, "", "v1").unwrap();
        let names: Vec<&str> = core["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"pods/log"), "{names:?}");
        assert!(!names.contains(&"nodes/log"), "{names:?}");
        let text = aggregated(&kinds, true, AggregatedVersion::V2).to_string();
        assert!(text.contains(r#"{"responseKind":{"group":"","kind":"Pod","version":""},"subresource":"log","verbs":["get"]}"#), "{text}");
    }

    #[test]
    fn negotiation_follows_the_accept_header() {
        let kubectl_132 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        let kubectl_128 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(negotiate(kubectl_132), Some(AggregatedVersion::V2));
        assert_eq!(negotiate(kubectl_128), Some(AggregatedVersion::V2Beta1));
        assert_eq!(negotiate("application/json, */*"), None);
    }

    #[test]
    fn short_names_and_categories_are_advertised() {
        let kinds = kinds();
        let core = resource_list(&kinds, "", "v1").unwrap();
        let pods = core["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "pods")
            .unwrap();
        assert_eq!(pods["shortNames"], json!(["po"]));
        assert_eq!(pods["categories"], json!(["all"]));
        let apps = aggregated(&kinds, false, AggregatedVersion::V2);
        let ds = &apps["items"][0]["versions"][0]["resources"][0];
        assert_eq!(ds["resource"], "daemonsets");
        assert_eq!(ds["shortNames"], json!(["ds"]));
        assert!(resource_list(&kinds, "batch.example.com", "v1").is_none());
    }
}
