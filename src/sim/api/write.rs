//! GET of one object and the writes: POST (create), PUT (update), PATCH and
//! DELETE, with `dryRun=All`, DeleteOptions (body or query), and the
//! path-versus-body identity checks upstream makes. Parsing and answering
//! only; the write rules live in the store.

use axum::body::Body;
use http::{Response, StatusCode, header};
use serde_json::{Value, json};

use super::apply;
use super::patch::{self, PatchType};
use super::status::ApiError;
use super::table::{self, IncludeObject};
use super::{ApiState, RequestInfo, ResourcePath, json_response};
use crate::sim::resources::ResourceKind;
use crate::sim::store::managed;
use crate::sim::store::{
    CreateMode, DeleteOptions, Preconditions, StoreError, StoredObject, Subresource, WriteOptions,
};

fn subresource(path: &ResourcePath) -> Subresource {
    if path.subresource.is_some() {
        Subresource::Status
    } else {
        Subresource::Main
    }
}

fn namespace(path: &ResourcePath) -> &str {
    path.namespace.as_deref().unwrap_or_default()
}

fn name(path: &ResourcePath) -> &str {
    path.name.as_deref().unwrap_or_default()
}

/// The body of a create or update: JSON, or protobuf for the one kind
/// kubectl's typed clients send that way (`kubectl create priorityclass`).
fn parse_body(info: &RequestInfo, kind: ResourceKind, body: &[u8]) -> Result<Value, ApiError> {
    let content_type = info.header(header::CONTENT_TYPE);
    if !content_type.starts_with("application/vnd.kubernetes.protobuf") {
        return parse_json(body);
    }
    match kind {
        ResourceKind::PriorityClass => super::protobuf::priority_class(body)
            .ok_or_else(|| ApiError::bad_request("malformed protobuf PriorityClass")),
        _ => Err(ApiError::unsupported_media_type(
            "application/json, application/yaml",
        )),
    }
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
}

fn object_response(
    info: &RequestInfo,
    path: &ResourcePath,
    code: StatusCode,
    object: &StoredObject,
) -> Response<Body> {
    if info.wants_table() {
        let include = IncludeObject::parse(info.query.get("includeObject"));
        let row = table::row(path.kind, &object.value(), include, crate::clock::now());
        let metadata = json!({"resourceVersion": object.resource_version.to_string()});
        return json_response(code, &table::table(path.kind, vec![row], true, metadata));
    }
    super::bytes_response(code, "application/json", object.json.clone())
}

/// GET one object (also `/status`, which answers the whole object).
pub fn get(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
) -> Result<Response<Body>, ApiError> {
    let object = state
        .store
        .get_object(path.kind, namespace(path), name(path))
        .ok_or_else(|| StoreError::NotFound {
            kind: path.kind,
            name: name(path).to_owned(),
        })?;
    Ok(object_response(info, path, StatusCode::OK, &object))
}

/// Makes the body's namespace and name agree with the path (filling them in
/// when absent); a disagreement is a 400 as upstream.
fn align_identity(obj: &mut Value, path: &ResourcePath) -> Result<(), ApiError> {
    if !obj.is_object() || !obj.get("metadata").is_none_or(Value::is_object) {
        return Err(ApiError::bad_request(
            "the body must be a JSON object with an object metadata",
        ));
    }
    if path.kind.namespaced() {
        let path_ns = namespace(path);
        match obj["metadata"]["namespace"].as_str() {
            None | Some("") => obj["metadata"]["namespace"] = json!(path_ns),
            Some(ns) if ns == path_ns => {}
            Some(_) => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
        }
    }
    if let Some(path_name) = &path.name {
        match obj["metadata"]["name"].as_str() {
            None | Some("") => obj["metadata"]["name"] = json!(path_name),
            Some(n) if n == path_name => {}
            Some(n) => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({path_name})"
                )));
            }
        }
    }
    Ok(())
}

/// POST to a collection.
pub fn create(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    if path.kind.namespaced() && path.namespace.is_none() {
        return Err(ApiError::method_not_allowed(&info.method));
    }
    let mut obj = parse_body(info, path.kind, body)?;
    align_identity(&mut obj, path)?;
    let options = write_options(info);
    let created = state
        .store
        .create_with(path.kind, obj, CreateMode::Api, options)?;
    Ok(object_response(info, path, StatusCode::CREATED, &created))
}

/// PUT an object or its status.
pub fn update(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    let mut obj = parse_body(info, path.kind, body)?;
    align_identity(&mut obj, path)?;
    let options = write_options(info);
    let updated = state
        .store
        .update_with(path.kind, obj, subresource(path), options)?;
    Ok(object_response(info, path, StatusCode::OK, &updated))
}

/// PATCH an object or its status.
pub fn patch(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    let patch_type = PatchType::from_content_type(info.header(header::CONTENT_TYPE))
        .ok_or_else(|| ApiError::unsupported_media_type(patch::ACCEPTED))?;
    if patch_type == PatchType::Apply {
        return server_side_apply(state, info, path, body);
    }
    let patch_body = parse_json(body)?;
    let options = write_options(info);
    let mut patch_error = None;
    let result = state.store.modify_with(
        path.kind,
        namespace(path),
        name(path),
        subresource(path),
        options,
        |current| {
            patch::apply(patch_type, current, &patch_body).map_err(|error| {
                patch_error = Some(error);
                StoreError::BadRequest("patch failed".into())
            })
        },
    );
    match (result, patch_error) {
        (_, Some(error)) => Err(error),
        (Ok(patched), None) => Ok(object_response(info, path, StatusCode::OK, &patched)),
        (Err(error), None) => Err(error.into()),
    }
}

/// PATCH `application/apply-patch+yaml`: server-side apply of the body (a
/// YAML or JSON object) as `fieldManager`, creating the object when absent
/// (201), else merging it (`apply.rs`); conflicts with other managers are a
/// 409 unless `force=true`.
fn server_side_apply(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    if path.subresource.is_some() {
        return Err(ApiError::method_not_allowed(&info.method));
    }
    let manager = info.query.non_empty("fieldManager").ok_or_else(|| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
        )
    })?;
    let mut config: Value = serde_json::from_slice(body)
        .or_else(|_| serde_norway::from_slice(body))
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    align_identity(&mut config, path)?;
    if config["apiVersion"].as_str().is_none_or(str::is_empty)
        || config["kind"].as_str().is_none_or(str::is_empty)
    {
        return Err(ApiError::bad_request(
            "apiVersion and kind must be set in an apply configuration",
        ));
    }
    let force = info.query.flag("force");
    let now = crate::sim::store::now_rfc3339();
    // The sim's own bookkeeping records Update operations; apply writes its
    // own `Apply` entry, so the store records none.
    let options = WriteOptions {
        dry_run: info.dry_run(),
        manager: None,
    };
    let mut conflicts = None;
    let merged = state.store.modify_with(
        path.kind,
        namespace(path),
        name(path),
        Subresource::Main,
        options.clone(),
        |current| {
            apply::apply(current, &config, manager, force, &now).map_err(|found| {
                conflicts = Some(found);
                StoreError::BadRequest("apply conflict".into())
            })
        },
    );
    match (merged, conflicts) {
        (_, Some(found)) => Err(apply_conflict(path, &found)),
        (Ok(applied), None) => Ok(object_response(info, path, StatusCode::OK, &applied)),
        (Err(StoreError::NotFound { .. }), None) => {
            let object = apply::create(config, manager, &now);
            let created = state
                .store
                .create_with(path.kind, object, CreateMode::Api, options)?;
            Ok(object_response(info, path, StatusCode::CREATED, &created))
        }
        (Err(error), None) => Err(error.into()),
    }
}

/// The 409 upstream answers for apply conflicts, one cause per field.
fn apply_conflict(path: &ResourcePath, conflicts: &[apply::Conflict]) -> ApiError {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({"reason": "FieldManagerConflict",
            "message": format!("conflict with \"{}\"", c.manager), "field": c.field})
        })
        .collect();
    let mut details = super::status::object_details(path.kind, name(path));
    details["causes"] = json!(causes);
    ApiError::new(
        StatusCode::CONFLICT,
        "Conflict",
        apply::conflict_message(conflicts, path.kind.api_version()),
    )
    .with_details(details)
}

/// The DeleteOptions fields the server honours.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeleteBody {
    grace_period_seconds: Option<i64>,
    preconditions: Option<PreconditionsBody>,
    #[serde(default)]
    dry_run: Vec<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct PreconditionsBody {
    uid: Option<String>,
    resource_version: Option<String>,
}

/// DELETE an object.
pub fn delete(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    if path.subresource.is_some() {
        return Err(ApiError::method_not_allowed(&info.method));
    }
    let options = delete_options(info, body)?;
    let outcome = state
        .store
        .delete_with(path.kind, namespace(path), name(path), &options)?;
    Ok(super::bytes_response(
        StatusCode::OK,
        "application/json",
        outcome.object().json.clone(),
    ))
}

/// DELETE a collection (`deletecollection`): every object matching the
/// selectors, one by one; answers the list of deleted (or terminating) objects.
pub fn delete_collection(
    state: &ApiState,
    info: &RequestInfo,
    path: &ResourcePath,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    let options = delete_options(info, body)?;
    let filter = super::list::Filter::from_request(info, path.kind)?;
    let page = state.store.list_page(
        path.kind,
        path.namespace.as_deref(),
        None,
        usize::MAX,
        |o| filter.matches(o),
    );
    let mut deleted = Vec::with_capacity(page.items.len());
    for object in &page.items {
        match state
            .store
            .delete_with(path.kind, &object.key.namespace, &object.key.name, &options)
        {
            Ok(outcome) => deleted.push(outcome.object().value()),
            // Deleted meanwhile by someone else: nothing left to do for it.
            Err(StoreError::NotFound { .. }) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let list = json!({"kind": path.kind.list_kind(), "apiVersion": path.kind.api_version(),
        "metadata": {"resourceVersion": state.store.resource_version().to_string()}, "items": deleted});
    Ok(json_response(StatusCode::OK, &list))
}

/// The options of a create, update or patch: dry run, and the field manager
/// (`fieldManager`, else the User-Agent's prefix) recorded in managedFields.
fn write_options(info: &RequestInfo) -> WriteOptions {
    WriteOptions {
        dry_run: info.dry_run(),
        manager: Some(
            managed::manager_or_user_agent(
                info.query.get("fieldManager"),
                info.header(header::USER_AGENT),
            )
            .into(),
        ),
    }
}

/// DeleteOptions from the body (optional) and the query.
fn delete_options(info: &RequestInfo, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let parsed: DeleteBody = if body.iter().all(u8::is_ascii_whitespace) {
        DeleteBody::default()
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
    };
    let query_grace = match info
        .query
        .non_empty("gracePeriodSeconds")
        .map(str::parse::<i64>)
    {
        Some(Ok(seconds)) => Some(seconds),
        Some(Err(_)) => {
            return Err(ApiError::bad_request(
                "gracePeriodSeconds must be an integer",
            ));
        }
        None => None,
    };
    let preconditions = parsed.preconditions.unwrap_or_default();
    Ok(DeleteOptions {
        preconditions: Preconditions {
            uid: preconditions.uid,
            resource_version: preconditions.resource_version,
        },
        grace_period_seconds: parsed.grace_period_seconds.or(query_grace),
        dry_run: info.dry_run() || parsed.dry_run.iter().any(|d| d == "All"),
    })
}
