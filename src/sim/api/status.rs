//! Kubernetes `Status` error bodies: every failure the API answers is one of
//! these, with both `code` and `reason` set (kube-rs matches on `reason`,
//! its watcher on `code`; kubectl prints `Error from server (<reason>): …`).

use http::StatusCode;
use serde_json::{Value, json};

use crate::sim::resources::ResourceKind;
use crate::sim::store::StoreError;

/// An API error: HTTP status, reason and message, plus optional details.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// The HTTP status code.
    pub code: StatusCode,
    /// The machine-readable reason (`NotFound`, `Conflict`, …).
    pub reason: &'static str,
    /// The human-readable message.
    pub message: String,
    /// `details` (name, group, kind, causes), when known.
    pub details: Option<Value>,
}

impl ApiError {
    /// An error without details.
    pub fn new(code: StatusCode, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    /// 404 for a path the server does not serve.
    pub fn unknown_path() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 405 for a verb the path does not support.
    pub fn method_not_allowed(method: &http::Method) -> ApiError {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({method})"),
        )
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized")
    }

    /// 415 for an unknown body or patch type.
    pub fn unsupported_media_type(accepted: &str) -> ApiError {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ),
        )
    }

    /// 410 Expired (a too-old resourceVersion or continue token).
    pub fn expired(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::GONE, "Expired", message)
    }

    /// 410 to a list continuation whose snapshot is gone (upstream's words).
    pub fn continue_expired() -> ApiError {
        ApiError::expired(
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
        )
    }

    /// Attaches `details`.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> ApiError {
        self.details = Some(details);
        self
    }

    /// The Status object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

/// The `details` block naming an object.
pub fn object_details(kind: ResourceKind, name: &str) -> Value {
    json!({"name": name, "group": kind.group(), "kind": kind.plural()})
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        let message = error.to_string();
        match &error {
            StoreError::NotFound { kind, name } => {
                ApiError::new(StatusCode::NOT_FOUND, "NotFound", message)
                    .with_details(object_details(*kind, name))
            }
            StoreError::AlreadyExists { kind, name } => {
                ApiError::new(StatusCode::CONFLICT, "AlreadyExists", message)
                    .with_details(object_details(*kind, name))
            }
            StoreError::Conflict { kind, name, .. } => {
                ApiError::new(StatusCode::CONFLICT, "Conflict", message)
                    .with_details(object_details(*kind, name))
            }
            StoreError::Invalid {
                kind,
                name,
                field,
                message: cause,
            } => {
                let mut details = object_details(*kind, name);
                details["kind"] = json!(kind.kind());
                details["causes"] =
                    json!([{"reason": "FieldValueInvalid", "message": cause, "field": field}]);
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message)
                    .with_details(details)
            }
            StoreError::Forbidden { kind, name, .. } => {
                ApiError::new(StatusCode::FORBIDDEN, "Forbidden", message)
                    .with_details(object_details(*kind, name))
            }
            StoreError::Gone { .. } => ApiError::expired(message),
            StoreError::BadRequest(_) => ApiError::bad_request(message),
            StoreError::Decode(_) | StoreError::Internal(_) => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_map_to_code_and_reason() {
        let cases = [
            (
                StoreError::NotFound {
                    kind: ResourceKind::DaemonSet,
                    name: "x".into(),
                },
                404,
                "NotFound",
                "daemonsets.apps \"x\" not found",
            ),
            (
                StoreError::conflict(ResourceKind::Pod, "p"),
                409,
                "Conflict",
                "Operation cannot be fulfilled on pods \"p\": the object has been modified; please apply your changes to the latest version and try again",
            ),
            (
                StoreError::Gone {
                    requested: 3,
                    oldest: 9,
                },
                410,
                "Expired",
                "too old resource version: 3 (9)",
            ),
            (
                StoreError::invalid(
                    ResourceKind::DaemonSet,
                    "x",
                    "spec.selector",
                    "field is immutable",
                ),
                422,
                "Invalid",
                "DaemonSet.apps \"x\" is invalid: spec.selector: field is immutable",
            ),
        ];
        for (error, code, reason, message) in cases {
            let status = ApiError::from(error).to_status();
            assert_eq!(status["code"], code);
            assert_eq!(status["reason"], reason);
            assert_eq!(status["message"], message);
            assert_eq!(status["kind"], "Status");
        }
    }
}
