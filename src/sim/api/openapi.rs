//! The minimal OpenAPI v3 documents that let `kubectl edit` and `kubectl
//! apply` pass their validation step: kubectl only checks that the PATCH
//! operation of each kind declares a `fieldValidation` query parameter
//! (cli-runtime `query_param_verifier_v3.go`). No schemas are served.
//!
//! Plus an empty OpenAPI v2 document (no paths, no definitions), for the
//! kinds kubectl's cached v3 index does not know yet — custom resources
//! whose CRD the same `kubectl apply` just created: kubectl falls back to v2,
//! finds no schema and skips validation, as it does on a real cluster for a
//! kind without one, instead of failing on a 404.

use serde_json::{Value, json};

use crate::sim::resources::ResourceKind;

/// `/openapi/v3`: the group-version index, one entry per served group-version.
pub fn index(kinds: &[ResourceKind]) -> Value {
    let mut paths = serde_json::Map::new();
    for kind in kinds {
        for version in kind.versions() {
            let (path, hash) = match kind.group() {
                "" => (format!("api/{version}"), "rollcall-core".to_owned()),
                group => (
                    format!("apis/{group}/{version}"),
                    format!("rollcall-{group}"),
                ),
            };
            let url = format!("/openapi/v3/{path}?hash={hash}");
            paths
                .entry(path)
                .or_insert_with(|| json!({"serverRelativeURL": url}));
        }
    }
    json!({"paths": paths})
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}` for a
/// group-version that serves a kind.
pub fn group_version(kinds: &[ResourceKind], group: &str, version: &str) -> Option<Value> {
    let served: Vec<ResourceKind> = kinds
        .iter()
        .copied()
        .filter(|k| k.group() == group && k.serves(version))
        .collect();
    if served.is_empty() {
        return None;
    }
    let prefix = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    let mut paths = serde_json::Map::new();
    for kind in served {
        let path = if kind.namespaced() {
            format!(
                "{prefix}/namespaces/{{namespace}}/{}/{{name}}",
                kind.plural()
            )
        } else {
            format!("{prefix}/{}/{{name}}", kind.plural())
        };
        let operation = json!({
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": kind.kind()},
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

/// The media type of the protobuf `/openapi/v2` answer (kubectl asks with
/// the older `…spec.v2@v1.0+protobuf`, which Go's MIME parser cannot read
/// back as a Content-Type; upstream answers with this one).
pub const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `/openapi/v2`: `(content type, body)`, protobuf (a gnostic
/// `openapi.v2.Document`: swagger `2.0` and info) when the Accept header
/// asks for it, as kubectl does, else the same in JSON.
pub fn v2_document(accept: &str) -> (&'static str, Vec<u8>) {
    const TITLE: &str = "Kubernetes";
    const VERSION: &str = "v1.32.4";
    if !accept.contains("protobuf") {
        let doc = json!({"swagger": "2.0", "info": {"title": TITLE, "version": VERSION},
            "paths": {}, "definitions": {}});
        return ("application/json", doc.to_string().into_bytes());
    }
    // Field 1 (swagger) and field 2 (Info: 1 title, 2 version), each a
    // length-delimited field: tag, one-byte length (all are short), bytes.
    let field = |tag: u8, bytes: &[u8]| -> Vec<u8> {
        let mut out = vec![tag, u8::try_from(bytes.len()).unwrap_or(u8::MAX)];
        out.extend_from_slice(bytes);
        out
    };
    let info = [
        field(0x0a, TITLE.as_bytes()),
        field(0x12, VERSION.as_bytes()),
    ]
    .concat();
    let body = [field(0x0a, b"2.0"), field(0x12, &info)].concat();
    (V2_PROTOBUF, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_operations_declare_field_validation() {
        let kinds: Vec<ResourceKind> = ResourceKind::built_in().collect();
        let apps = group_version(&kinds, "apps", "v1").unwrap();
        let ds = &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"]["patch"];
        assert_eq!(ds["x-kubernetes-group-version-kind"]["kind"], "DaemonSet");
        assert_eq!(ds["parameters"][0]["name"], "fieldValidation");
        let core = group_version(&kinds, "", "v1").unwrap();
        assert!(core["paths"]["/api/v1/nodes/{name}"]["patch"].is_object());
        assert!(group_version(&kinds, "batch.example.com", "v1").is_none());
        let scheduling = group_version(&kinds, "scheduling.k8s.io", "v1").unwrap();
        assert!(
            scheduling["paths"]["/apis/scheduling.k8s.io/v1/priorityclasses/{name}"]["patch"]
                .is_object()
        );
        let (content_type, body) = v2_document(V2_PROTOBUF);
        assert_eq!(content_type, V2_PROTOBUF);
        assert_eq!(&body[..5], b"\x0a\x032.0");
        assert_eq!(body.len(), 5 + 2 + 12 + 9);
        let index = index(&kinds);
        assert!(index["paths"]["apis/rbac.authorization.k8s.io/v1"].is_object());
        assert!(index["paths"]["apis/apiextensions.k8s.io/v1"].is_object());
    }
}
