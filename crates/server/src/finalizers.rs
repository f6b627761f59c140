//! `PUT /v1/objects/{kind}/{name}/finalizers`: a client removes finalizers that hold an
//! object (`reactor-host finalize`); it cannot add one, as finalizers belong to reactors.

use super::objects::ObjectPath;
use super::openapi::Refused;
use super::{ApiError, AppState};
use axum::Json;
use axum::extract::State;
use reactor_core::object::{Object, validate_kind, validate_object_name};
use reactor_core::wire::FinalizersBody;
use reactor_http::JsonBody;
use reactor_http::Path;
use reactor_store::{StoreError, retry_on_conflict};

/// Keeps only the finalizers named in the body; a deleting object that loses its last one
/// is removed (the answer is then `null`).
#[utoipa::path(
    put,
    operation_id = "setFinalizers",
    path = "/v1/objects/{kind}/{name}/finalizers",
    tag = "objects",
    params(ObjectPath),
    request_body = FinalizersBody,
    responses((status = 200, description = "The object, or null once it is gone", body = Option<reactor_core::object::StoredObject>), Refused)
)]
pub async fn remove(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    body: Result<JsonBody<FinalizersBody>, ApiError>,
) -> Result<Json<Option<Object>>, ApiError> {
    validate_kind(&kind)?;
    validate_object_name(&kind, &name)?;
    super::objects::check_writable(&kind)?;
    let JsonBody(body) = body?;
    let (store, kind, name) = (state.store.as_ref(), kind.as_str(), name.as_str());
    let keep = &body.finalizers;
    let attempt = || async move {
        let current = store
            .get(kind, name)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                kind: kind.to_owned(),
                name: name.to_owned(),
            })?;
        if let Some(added) = keep.iter().find(|f| !current.meta.finalizers.contains(f)) {
            return Err(StoreError::Invalid(format!(
                "finalizer {added} is not on {kind}/{name}: finalizers can only be removed"
            )));
        }
        let kept = current
            .meta
            .finalizers
            .iter()
            .filter(|f| keep.contains(f))
            .cloned()
            .collect();
        let expected = body.revision.unwrap_or(current.meta.revision);
        store.set_finalizers(kind, name, kept, Some(expected)).await
    };
    let answer = match body.revision {
        Some(_) => attempt().await,
        None => retry_on_conflict(|| format!("finalizers of {kind}/{name}"), attempt).await,
    };
    let answer = answer?;
    super::events::finalizers_removed(&state, kind, name, keep);
    Ok(Json(answer))
}
