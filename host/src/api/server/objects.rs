//! `/v1/objects`: apply, get, list, delete, and status.

use super::body::JsonBody;
use super::{ApiError, AppState};
use crate::api::wire::ErrorCode;
use crate::api::wire::{AppliedBody, ApplyBody, StatusBody};
use crate::object::{
    ApplyRequest, Object, Revision, Selector, is_reserved, validate_kind, validate_name,
};
use crate::store::{Listing, StoreError};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Deserialize;

type Answer<T> = Result<Json<T>, ApiError>;

fn check(kind: &str, name: Option<&str>) -> Result<(), ApiError> {
    validate_kind(kind)?;
    if let Some(name) = name {
        validate_name(name)?;
    }
    Ok(())
}

/// API clients never write the host's own kinds (items, reports, agents): they are changed
/// only through the host's paths (reactors' `nimbus` import, agents' registration).
fn check_writable(kind: &str) -> Result<(), ApiError> {
    if is_reserved(kind) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!("kind {kind} is reserved to the host: it is written only by the host itself"),
        ));
    }
    Ok(())
}

pub async fn apply_many(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<ApplyBody>,
) -> Answer<AppliedBody> {
    for (i, request) in body.objects.iter().enumerate() {
        request
            .validate()
            .map_err(|e| StoreError::in_document(i + 1, e.into()))?;
        check_writable(&request.kind).map_err(|e| e.in_document(i + 1))?;
    }
    if let Some(admission) = &state.admission {
        admission.admit(&body.objects).await?;
    }
    let items = state.store.apply(body.objects).await?;
    Ok(Json(AppliedBody { items }))
}

pub async fn apply_one(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    body: Result<JsonBody<Object>, ApiError>,
) -> Answer<Object> {
    check(&kind, Some(&name))?;
    check_writable(&kind)?;
    let JsonBody(object) = body?;
    if object.kind != kind || object.name != name {
        return Err(ApiError::invalid(format!(
            "the body names {}/{} but the path names {kind}/{name}",
            object.kind, object.name
        )));
    }
    let requests = vec![ApplyRequest::from(object)];
    if let Some(admission) = &state.admission {
        admission.admit(&requests).await?;
    }
    let mut applied = state.store.apply(requests).await?;
    let applied = applied
        .pop()
        .ok_or_else(|| ApiError::invalid("nothing was applied"))?;
    Ok(Json(applied.object))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    #[serde(default)]
    selector: Option<String>,
}

pub async fn list(
    State(state): State<AppState>,
    Path(kind): Path<String>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Answer<Listing> {
    check(&kind, None)?;
    let Query(query) = query?;
    let selector: Selector = query
        .selector
        .as_deref()
        .unwrap_or_default()
        .parse()
        .map_err(|e: crate::object::SelectorError| ApiError::invalid(e.to_string()))?;
    Ok(Json(state.store.list(&kind, &selector).await?))
}

pub async fn get_one(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
) -> Answer<Object> {
    check(&kind, Some(&name))?;
    let found = state.store.get(&kind, &name).await?;
    found
        .map(Json)
        .ok_or_else(|| StoreError::NotFound { kind, name }.into())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevisionQuery {
    #[serde(default)]
    revision: Option<Revision>,
}

/// Answers the object still held by finalizers, or `null` once it is gone.
pub async fn delete(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    query: Result<Query<RevisionQuery>, QueryRejection>,
) -> Answer<Option<Object>> {
    check(&kind, Some(&name))?;
    check_writable(&kind)?;
    let Query(query) = query?;
    Ok(Json(
        state.store.delete(&kind, &name, query.revision).await?,
    ))
}

pub async fn set_status(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    body: Result<JsonBody<StatusBody>, ApiError>,
) -> Answer<Object> {
    check(&kind, Some(&name))?;
    check_writable(&kind)?;
    let JsonBody(body) = body?;
    Ok(Json(
        state
            .store
            .set_status(&kind, &name, body.status, body.revision)
            .await?,
    ))
}
