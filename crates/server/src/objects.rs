//! `/v1/objects`: apply, get, list, delete, and status.

use super::openapi::Refused;
use super::paged_list;
use super::{ApiError, AppState};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header::WARNING;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use reactor_core::object::{
    ApplyRequest, Object, Revision, Selector, is_reserved, validate_kind, validate_object_name,
};
use reactor_core::wire::ErrorCode;
use reactor_core::wire::{AppliedBody, ApplyBody, StatusBody};
use reactor_http::JsonBody;
use reactor_http::Path;
use reactor_store::{Listing, StoreError};
use serde::Deserialize;
use utoipa::IntoParams;

type Answer<T> = Result<Json<T>, ApiError>;

/// The path parameters of one object, for the OpenAPI document.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // read by the derive only
pub(super) struct ObjectPath {
    /// The object's kind, e.g. `Policy`.
    #[param(pattern = "^[A-Za-z][A-Za-z0-9-]*$", max_length = 63)]
    kind: String,
    /// The object's name, unique within its kind.
    #[param(
        pattern = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?|[A-Za-z][A-Za-z0-9-]*)$",
        max_length = 63
    )]
    name: String,
}

/// The path parameter of a kind, for the OpenAPI document.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // read by the derive only
pub(super) struct KindPath {
    /// The objects' kind, e.g. `Policy`.
    #[param(pattern = "^[A-Za-z][A-Za-z0-9-]*$", max_length = 63)]
    kind: String,
}

fn check(kind: &str, name: Option<&str>) -> Result<(), ApiError> {
    validate_kind(kind)?;
    if let Some(name) = name {
        validate_object_name(kind, name)?;
    }
    Ok(())
}

/// API clients never write the host's own kinds (items, reports, agents): they are changed
/// only through the host's paths (reactors' `nimbus` import, agents' registration).
pub(super) fn check_writable(kind: &str) -> Result<(), ApiError> {
    if is_reserved(kind) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!("kind {kind} is reserved to the host: it is written only by the host itself"),
        ));
    }
    Ok(())
}

/// Nobody reads the stored credentials through the objects API or a watch (not even their
/// hashes): `GET /v1/users` lists users.
pub(super) fn check_readable(kind: &str) -> Result<(), ApiError> {
    if kind == reactor_trust::CREDENTIAL_KIND {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!("kind {kind} is never shown: list users with GET /v1/users"),
        ));
    }
    Ok(())
}

/// Applies several objects, all or nothing; a stale `meta.revision` changes nothing (409).
#[utoipa::path(
    operation_id = "applyObjects",
    post,
    path = "/v1/objects",
    tag = "objects",
    request_body = ApplyBody,
    responses((status = 200, description = "Each object as stored, with what the apply did", body = AppliedBody), Refused)
)]
pub async fn apply_many(
    State(state): State<AppState>,
    JsonBody(mut body): JsonBody<ApplyBody>,
) -> Answer<AppliedBody> {
    let warnings = admit(&state, &mut body).await?;
    let items = state.store.apply(body.objects).await?;
    Ok(Json(AppliedBody { items, warnings }))
}

/// What `POST /v1/objects` would do with the same body (validation and admission run, the
/// store's rules decide), storing nothing.
#[utoipa::path(
    operation_id = "dryRunObjects",
    post,
    path = "/v1/dry-run/objects",
    tag = "objects",
    request_body = ApplyBody,
    responses((status = 200, description = "Each object as the apply would leave it (a new one with revision 0), with what the apply would do", body = AppliedBody), Refused)
)]
pub async fn dry_run_many(
    State(state): State<AppState>,
    JsonBody(mut body): JsonBody<ApplyBody>,
) -> Answer<AppliedBody> {
    let warnings = admit(&state, &mut body).await?;
    let items = super::dry_run::plan(&state.store, &body.objects).await?;
    Ok(Json(AppliedBody { items, warnings }))
}

/// Every document well formed and writable by a client, and admitted (defaulted, and
/// validated by its Kind and the reactors); the admission's warnings.
async fn admit(state: &AppState, body: &mut ApplyBody) -> Result<Vec<String>, ApiError> {
    for (i, request) in body.objects.iter().enumerate() {
        request
            .validate()
            .map_err(|e| StoreError::in_document(i + 1, e.into()))?;
        check_writable(&request.kind).map_err(|e| e.in_document(i + 1))?;
    }
    match &state.admission {
        Some(admission) => Ok(admission
            .admit(&mut body.objects)
            .await
            .map_err(super::admission::refused)?),
        None => Ok(Vec::new()),
    }
}

/// Applies one object; the body names the same kind and name as the path.
#[utoipa::path(
    operation_id = "applyObject",
    put,
    path = "/v1/objects/{kind}/{name}",
    tag = "objects",
    params(ObjectPath),
    request_body = reactor_core::object::StoredObject,
    responses((status = 200, description = "The object as stored; a `Warning` header (code 299) for each warning of the admission, e.g. a kind nothing knows of", body = reactor_core::object::StoredObject), Refused)
)]
pub async fn apply_one(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    body: Result<JsonBody<Object>, ApiError>,
) -> Result<(HeaderMap, Json<Object>), ApiError> {
    check(&kind, Some(&name))?;
    check_writable(&kind)?;
    let JsonBody(object) = body?;
    if object.kind != kind || object.name != name {
        return Err(ApiError::invalid(format!(
            "the body names {}/{} but the path names {kind}/{name}",
            object.kind, object.name
        )));
    }
    let mut requests = vec![ApplyRequest::from(object)];
    let warnings = match &state.admission {
        Some(admission) => admission
            .admit(&mut requests)
            .await
            .map_err(super::admission::refused)?,
        None => Vec::new(),
    };
    let mut applied = state.store.apply(requests).await?;
    let applied = applied
        .pop()
        .ok_or_else(|| ApiError::invalid("nothing was applied"))?;
    Ok((warning_headers(&warnings), Json(applied.object)))
}

/// Warnings as HTTP `Warning` headers, code 299 with the text quoted, as Kubernetes sends
/// them (a warning that cannot be a header value is left out).
fn warning_headers(warnings: &[String]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for warning in warnings {
        let quoted = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{quoted}\"")) {
            headers.append(WARNING, value);
        }
    }
    headers
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// A label selector, e.g. `app=web,tier!=db`.
    #[serde(default)]
    selector: Option<String>,
}

/// The objects of a kind, optionally selected by label. A list longer than a page goes out as
/// it is read, a page at a time, every page from the first one's revision.
#[utoipa::path(
    operation_id = "listObjects",
    get,
    path = "/v1/objects/{kind}",
    tag = "objects",
    params(KindPath, ListQuery),
    responses((status = 200, description = "The objects and the revision they reflect", body = Listing), Refused)
)]
pub async fn list(
    State(state): State<AppState>,
    Path(kind): Path<String>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    check(&kind, None)?;
    check_readable(&kind)?;
    let Query(query) = query?;
    let selector: Selector = query
        .selector
        .as_deref()
        .unwrap_or_default()
        .parse()
        .map_err(|e: reactor_core::object::SelectorError| ApiError::invalid(e.to_string()))?;
    let (first, rest) = paged_list::first_page(&state.store, &kind, &selector).await?;
    if !first.more {
        let listing = Listing {
            items: first.items,
            revision: first.revision,
        };
        return Ok(Json(listing).into_response());
    }
    // As a `Listing` is serialized whole.
    let envelope = paged_list::Envelope {
        head: br#"{"items":["#.to_vec(),
        tail: format!(r#"],"revision":{}}}"#, first.revision).into_bytes(),
        item: |object: &Object, out: &mut Vec<u8>| serde_json::to_writer(out, object),
    };
    Ok(paged_list::respond(kind, first, rest, envelope))
}

/// One object.
#[utoipa::path(
    operation_id = "getObject",
    get,
    path = "/v1/objects/{kind}/{name}",
    tag = "objects",
    params(ObjectPath),
    responses((status = 200, description = "The object", body = reactor_core::object::StoredObject), Refused)
)]
pub async fn get_one(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
) -> Answer<Object> {
    check(&kind, Some(&name))?;
    check_readable(&kind)?;
    let found = state.store.get(&kind, &name).await?;
    found
        .map(Json)
        .ok_or_else(|| StoreError::NotFound { kind, name }.into())
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RevisionQuery {
    /// Delete only if the object is at this revision (409 otherwise).
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    revision: Option<Revision>,
}

/// Answers the object still held by finalizers, or `null` once it is gone.
#[utoipa::path(
    operation_id = "deleteObject",
    delete,
    path = "/v1/objects/{kind}/{name}",
    tag = "objects",
    params(ObjectPath, RevisionQuery),
    responses((status = 200, description = "The object held by its finalizers, or null once gone", body = Option<reactor_core::object::StoredObject>), Refused)
)]
pub async fn delete(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    query: Result<Query<RevisionQuery>, QueryRejection>,
) -> Answer<Option<Object>> {
    check(&kind, Some(&name))?;
    check_writable(&kind)?;
    let Query(query) = query?;
    let held = state.store.delete(&kind, &name, query.revision).await?;
    if let Some(object) = &held {
        super::events::deletion_held(&state, object);
    }
    Ok(Json(held))
}

/// Writes the object's status; the host's own keys (`reconcile`) are kept.
#[utoipa::path(
    operation_id = "setStatus",
    put,
    path = "/v1/objects/{kind}/{name}/status",
    tag = "objects",
    params(ObjectPath),
    request_body = StatusBody,
    responses((status = 200, description = "The object with its new status", body = reactor_core::object::StoredObject), Refused)
)]
pub async fn set_status(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    body: Result<JsonBody<StatusBody>, ApiError>,
) -> Answer<Object> {
    check(&kind, Some(&name))?;
    check_writable(&kind)?;
    let JsonBody(body) = body?;
    Ok(Json(
        super::status::write(
            state.store.as_ref(),
            &kind,
            &name,
            body.status,
            body.revision,
        )
        .await?,
    ))
}
