//! SelfSubjectRulesReview (`kubectl auth can-i --list`): reads the namespace
//! from JSON or from the protobuf envelope, and answers JSON with the rules
//! of the [`Authorizer`] that apply to the caller in that namespace, as
//! upstream's RBAC rule resolver lists them.

use serde_json::{Value, json};

use super::protobuf::{PROTOBUF_MAGIC, field_bytes};
use super::status::ApiError;
use crate::sim::auth::{Authorizer, Identity};

/// Answers a rules review body (JSON or protobuf, by Content-Type).
pub fn review(
    body: &[u8],
    content_type: &str,
    authorizer: &Authorizer,
    user: &Identity,
) -> Result<Value, ApiError> {
    let namespace = if content_type.starts_with("application/vnd.kubernetes.protobuf") {
        decode_protobuf(body)
            .ok_or_else(|| ApiError::bad_request("malformed protobuf SelfSubjectRulesReview"))?
    } else {
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))?;
        value["spec"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let resource_rules: Vec<Value> = authorizer
        .rules_for(user, &namespace)
        .iter()
        .map(|rule| json!({"verbs": rule.verbs, "apiGroups": rule.api_groups, "resources": rule.resources}))
        .collect();
    let non_resource = json!([{"verbs": ["get"], "nonResourceURLs":
        ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version", "/version/"]}]);
    Ok(
        json!({"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null}, "spec": {"namespace": namespace},
        "status": {"resourceRules": resource_rules, "nonResourceRules": non_resource, "incomplete": false}}),
    )
}

/// `runtime.Unknown` { 2: raw } → SelfSubjectRulesReview { 2: spec } → spec { 1: namespace }.
fn decode_protobuf(body: &[u8]) -> Option<String> {
    let envelope = body.strip_prefix(PROTOBUF_MAGIC)?;
    let raw = field_bytes(envelope, 2)?;
    let namespace = field_bytes(raw, 2)
        .and_then(|spec| field_bytes(spec, 1))
        .unwrap_or_default();
    Some(String::from_utf8_lossy(namespace).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::auth::{VIEWER_USER, VIEWERS_GROUP};

    #[test]
    fn lists_the_viewers_rules_in_its_namespace_only() {
        let policy = Authorizer::allow_all().with_viewer_namespace("kube-system");
        let viewer = Identity::new(VIEWER_USER, &[VIEWERS_GROUP]);
        let body = br#"{"spec":{"namespace":"kube-system"}}"#;
        let answer = review(body, "application/json", &policy, &viewer).unwrap();
        let rules = answer["status"]["resourceRules"].as_array().unwrap();
        assert!(rules.iter().any(|r| {
            r["resources"]
                .as_array()
                .unwrap()
                .contains(&json!("daemonsets"))
        }));
        let body = br#"{"spec":{"namespace":"default"}}"#;
        let answer = review(body, "application/json", &policy, &viewer).unwrap();
        let rules = answer["status"]["resourceRules"].as_array().unwrap();
        assert!(
            !rules
                .iter()
                .any(|r| r["resources"].as_array().unwrap().contains(&json!("pods")))
        );
    }

    #[test]
    fn reads_the_protobuf_namespace() {
        let namespace = b"kube-system";
        let mut spec = vec![0x0a, u8::try_from(namespace.len()).unwrap()];
        spec.extend_from_slice(namespace);
        let mut raw = vec![0x12, u8::try_from(spec.len()).unwrap()];
        raw.extend(spec);
        let mut body = PROTOBUF_MAGIC.to_vec();
        body.push(0x12);
        body.push(u8::try_from(raw.len()).unwrap());
        body.extend(raw);
        assert_eq!(decode_protobuf(&body).as_deref(), Some("kube-system"));
        assert!(decode_protobuf(b"nope").is_none());
    }
}
