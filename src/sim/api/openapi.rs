//! The minimal OpenAPI v3 documents that let `kubectl edit` and `kubectl
//! apply` pass their validation step: kubectl only checks that the PATCH
//! operation of each kind declares a `fieldValidation` query parameter
//! (cli-runtime `query_param_verifier_v3.go`). No schemas are served.

use serde_json::{Value, json};

use crate::sim::resources::ResourceKind;

/// `/openapi/v3`: the group-version index.
pub fn index() -> Value {
    json!({"paths": {
        "api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=rollcall-core"},
        "apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=rollcall-apps"},
        "apis/scheduling.k8s.io/v1": {
            "serverRelativeURL": "/openapi/v3/apis/scheduling.k8s.io/v1?hash=rollcall-scheduling"
        },
    }})
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/v1` for a group that
/// has a kind in the kinds table (`""`, `apps`, `scheduling.k8s.io`).
pub fn group_version(group: &str) -> Option<Value> {
    if !ResourceKind::ALL.iter().any(|k| k.group() == group) {
        return None;
    }
    let mut paths = serde_json::Map::new();
    for kind in ResourceKind::ALL.into_iter().filter(|k| k.group() == group) {
        let prefix = if group.is_empty() {
            "/api/v1".to_owned()
        } else {
            format!("/apis/{group}/v1")
        };
        let path = if kind.namespaced() {
            format!(
                "{prefix}/namespaces/{{namespace}}/{}/{{name}}",
                kind.plural()
            )
        } else {
            format!("{prefix}/{}/{{name}}", kind.plural())
        };
        let operation = json!({
            "x-kubernetes-group-version-kind": {"group": group, "version": "v1", "kind": kind.kind()},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert(path, json!({"patch": operation}));
    }
    Some(
        json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.4"},
        "components": {"schemas": {}}, "paths": paths}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_operations_declare_field_validation() {
        let apps = group_version("apps").unwrap();
        let ds = &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"]["patch"];
        assert_eq!(ds["x-kubernetes-group-version-kind"]["kind"], "DaemonSet");
        assert_eq!(ds["parameters"][0]["name"], "fieldValidation");
        let core = group_version("").unwrap();
        assert!(core["paths"]["/api/v1/nodes/{name}"]["patch"].is_object());
        assert!(group_version("batch").is_none());
        let scheduling = group_version("scheduling.k8s.io").unwrap();
        assert!(
            scheduling["paths"]["/apis/scheduling.k8s.io/v1/priorityclasses/{name}"]["patch"]
                .is_object()
        );
    }
}
