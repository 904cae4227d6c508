//! SelfSubjectAccessReview: reads the review from JSON (kube-rs, kubectl
//! 1.20) or from the Kubernetes protobuf envelope kubectl 1.32 sends, asks the
//! [`Authorizer`], and answers JSON with `status.allowed`. The protobuf reader
//! decodes only the few string fields it needs and fails cleanly on anything
//! malformed.

use serde_json::{Value, json};

use super::protobuf::{PROTOBUF_MAGIC, field_bytes};
use super::status::ApiError;
use crate::sim::auth::{Attributes, Authorizer, Identity};

/// Answers a review body (JSON or protobuf, by Content-Type).
pub fn review(
    body: &[u8],
    content_type: &str,
    authorizer: &Authorizer,
    user: &Identity,
) -> Result<Value, ApiError> {
    let (spec, attributes) = if content_type.starts_with("application/vnd.kubernetes.protobuf") {
        let attributes = decode_protobuf(body)
            .ok_or_else(|| ApiError::bad_request("malformed protobuf SelfSubjectAccessReview"))?;
        (spec_json(&attributes), attributes)
    } else {
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))?;
        let spec = value.get("spec").cloned().unwrap_or_else(|| json!({}));
        let attributes = from_json(&spec);
        (spec, attributes)
    };
    let status = match authorizer.check(user, &attributes) {
        Ok(()) => json!({"allowed": true, "reason": "allowed by the simulator's policy"}),
        Err(reason) => json!({"allowed": false, "denied": true, "reason": reason}),
    };
    Ok(
        json!({"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null}, "spec": spec, "status": status}),
    )
}

fn from_json(spec: &Value) -> Attributes {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    if let Some(non_resource) = spec.get("nonResourceAttributes") {
        return Attributes {
            verb: text(&non_resource["verb"]),
            resource: text(&non_resource["path"]),
            ..Attributes::default()
        };
    }
    let r = &spec["resourceAttributes"];
    Attributes {
        verb: text(&r["verb"]),
        group: text(&r["group"]),
        resource: text(&r["resource"]),
        subresource: text(&r["subresource"]),
        namespace: text(&r["namespace"]),
        name: text(&r["name"]),
    }
}

fn spec_json(a: &Attributes) -> Value {
    json!({"resourceAttributes": {"namespace": a.namespace, "verb": a.verb, "group": a.group,
        "resource": a.resource, "subresource": a.subresource, "name": a.name}})
}

/// `runtime.Unknown` { 2: raw SSAR } → SSAR { 2: spec } → spec { 1: resourceAttributes, 2: nonResourceAttributes }.
fn decode_protobuf(body: &[u8]) -> Option<Attributes> {
    let envelope = body.strip_prefix(PROTOBUF_MAGIC)?;
    let raw = field_bytes(envelope, 2)?;
    let spec = field_bytes(raw, 2)?;
    if let Some(resource) = field_bytes(spec, 1) {
        let text = |n| {
            field_bytes(resource, n)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        return Some(Attributes {
            namespace: text(1),
            verb: text(2),
            group: text(3),
            resource: text(5),
            subresource: text(6),
            name: text(7),
        });
    }
    let non_resource = field_bytes(spec, 2)?;
    let text = |n| {
        field_bytes(non_resource, n)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    Some(Attributes {
        resource: text(1),
        verb: text(2),
        ..Attributes::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | 2, u8::try_from(payload.len()).unwrap()];
        out.extend_from_slice(payload);
        out
    }

    fn kubectl_body() -> Vec<u8> {
        let mut attributes = field(1, b"kube-system");
        attributes.extend(field(2, b"patch"));
        attributes.extend(field(3, b"apps"));
        attributes.extend(field(5, b"daemonsets"));
        attributes.extend(field(6, b"status"));
        let spec = field(1, &attributes);
        let ssar = field(2, &spec);
        let mut type_meta = field(1, b"authorization.k8s.io/v1");
        type_meta.extend(field(2, b"SelfSubjectAccessReview"));
        let mut body = PROTOBUF_MAGIC.to_vec();
        body.extend(field(1, &type_meta));
        body.extend(field(2, &ssar));
        body.extend(field(3, b""));
        body.extend(field(4, b""));
        body
    }

    #[test]
    fn decodes_the_kubectl_protobuf_review() {
        let attributes = decode_protobuf(&kubectl_body()).unwrap();
        assert_eq!(attributes.namespace, "kube-system");
        assert_eq!(attributes.verb, "patch");
        assert_eq!(attributes.group, "apps");
        assert_eq!(attributes.resource, "daemonsets");
        assert_eq!(attributes.subresource, "status");
    }

    #[test]
    fn answers_allowed_and_denied() {
        let deny = Authorizer::allow_all().deny("patch", "daemonsets/status", None);
        let admin = Identity::admin();
        let answer = review(
            &kubectl_body(),
            "application/vnd.kubernetes.protobuf",
            &deny,
            &admin,
        )
        .unwrap();
        assert_eq!(answer["status"]["allowed"], false);
        let json_body = br#"{"spec":{"resourceAttributes":{"namespace":"default","verb":"delete","resource":"pods"}}}"#;
        let answer = review(json_body, "application/json", &deny, &admin).unwrap();
        assert_eq!(answer["status"]["allowed"], true);
        assert_eq!(answer["spec"]["resourceAttributes"]["verb"], "delete");
        let viewer = Identity::new(
            crate::sim::auth::VIEWER_USER,
            &[crate::sim::auth::VIEWERS_GROUP],
        );
        let answer = review(json_body, "application/json", &deny, &viewer).unwrap();
        assert_eq!(answer["status"]["allowed"], false);
    }

    #[test]
    fn garbage_is_a_bad_request() {
        for body in [&b"k8s\0\x12\xff"[..], b"k8s", b"\x00\x01"] {
            assert!(
                review(
                    body,
                    "application/vnd.kubernetes.protobuf",
                    &Authorizer::allow_all(),
                    &Identity::admin(),
                )
                .is_err()
            );
        }
        assert!(
            review(
                b"{",
                "application/json",
                &Authorizer::allow_all(),
                &Identity::admin()
            )
            .is_err()
        );
    }
}
