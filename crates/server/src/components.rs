//! `/v1/components`: what is loaded; clearing a component's rollback; and, only with `serve
//! --allow-component-api`, uploading (`PUT /v1/components/{name}`, the `.wasm` as the body)
//! and removing components — off by default, as controllerbus's ExecController, because it
//! runs code the caller chooses.

use super::auth::Caller;
use super::openapi::Refused;
use super::{ApiError, AppState};
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use reactor_core::wire::ErrorCode;
use reactor_http::Path;
use reactor_runtime::{ComponentInfo, Runtime, World};
use std::path::PathBuf;

/// What the components routes act on.
#[derive(Clone)]
pub struct ComponentsApi {
    pub runtime: Runtime,
    /// The watched folder uploads are written to.
    pub dir: PathBuf,
    /// Whether uploads and removals are allowed.
    pub allow_changes: bool,
}

fn api(state: &AppState) -> Result<&ComponentsApi, ApiError> {
    state
        .components
        .as_ref()
        .ok_or_else(|| ApiError::not_found("this server runs no components"))
}

fn changes(state: &AppState) -> Result<&ComponentsApi, ApiError> {
    let api = api(state)?;
    if !api.allow_changes {
        return Err(ApiError::new(
            ErrorCode::Unauthorized,
            "the component API is off: start serve with --allow-component-api to upload or remove components",
        ));
    }
    Ok(api)
}

/// The path parameter of one component, for the OpenAPI document.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // read by the derive only
struct ComponentPath {
    /// The component's name: its file name without `.wasm`.
    name: String,
}

/// Every component of the watched folders, loaded or not.
#[utoipa::path(
    operation_id = "listComponents",
    get,
    path = "/v1/components",
    tag = "components",
    responses((status = 200, description = "Each component: name, world, file, sha256, state, error, serving, calls, traps, described", body = Vec<Object>), Refused)
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<ComponentInfo>>, ApiError> {
    Ok(Json(api(&state)?.runtime.components()))
}

/// One component.
#[utoipa::path(
    operation_id = "getComponent",
    get,
    path = "/v1/components/{name}",
    tag = "components",
    params(ComponentPath),
    responses((status = 200, description = "The component, as in the list", body = Object), Refused)
)]
pub async fn get_one(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<ComponentInfo>, ApiError> {
    api(&state)?
        .runtime
        .component(&name)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("component {name} not found")))
}

/// Answers the component as loaded; a file that fails to load is kept and reported (409), as
/// it would be had it been dropped in the folder.
#[utoipa::path(
    operation_id = "uploadComponent",
    put,
    path = "/v1/components/{name}",
    tag = "components",
    params(ComponentPath),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The component's `.wasm`"),
    responses((status = 200, description = "The component, loaded", body = Object), Refused)
)]
pub async fn upload(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Json<ComponentInfo>, ApiError> {
    let api = changes(&state)?;
    let info = api
        .runtime
        .install(&api.dir, World::Controller, &name, &body)
        .await
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    match &info.error {
        Some(error) if !info.serving || info.state == reactor_runtime::ComponentState::Failed => {
            Err(ApiError::new(
                ErrorCode::Conflict,
                format!("component {name} failed to load: {error}"),
            ))
        }
        _ => Ok(Json(info)),
    }
}

/// Removes the component's file: its reactor stops.
#[utoipa::path(
    operation_id = "removeComponent",
    delete,
    path = "/v1/components/{name}",
    tag = "components",
    params(ComponentPath),
    responses((status = 200, description = "`true`: it was removed", content_type = "application/json", body = bool), Refused)
)]
pub async fn remove(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<bool>, ApiError> {
    let api = changes(&state)?;
    let existed = api
        .runtime
        .uninstall(&api.dir, &name)
        .await
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    if !existed {
        return Err(ApiError::not_found(format!("component {name} not found")));
    }
    Ok(Json(true))
}

/// Clears the rollback of a component: the version rolled back may serve again. Its record
/// is removed from the store, so every server sharing it loads the file again (which then
/// serves, if it is still that version).
#[utoipa::path(
    operation_id = "clearComponentRollback",
    delete,
    path = "/v1/components/{name}/rollback",
    tag = "components",
    params(ComponentPath),
    responses((status = 200, description = "`true`: the rollback was cleared", content_type = "application/json", body = bool), Refused)
)]
pub async fn clear_rollback(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<bool>, ApiError> {
    let api = api(&state)?;
    let recorded = reactor_controller::clear_rollback(state.store.as_ref(), &name)
        .await
        .map_err(|e| match e {
            reactor_controller::RollbackError::Store { source, .. } => ApiError::from(source),
            other => ApiError::invalid(other.to_string()),
        })?;
    // Here at once; the other servers when they see the record go.
    let known = api.runtime.clear_rejection(&name).await;
    if !recorded && !known {
        return Err(ApiError::not_found(format!(
            "component {name} has no rollback to clear"
        )));
    }
    Ok(Json(true))
}

/// Approves the version of a component held because it declares more permissions than the
/// version serving: the approval is recorded in the store, so it survives a restart and every
/// server sharing the store loads that version. A version running as a shadow is promoted
/// instead (on this server). Answers the component as it is then.
#[utoipa::path(
    operation_id = "approveComponent",
    post,
    path = "/v1/components/{name}/approve",
    tag = "components",
    params(ComponentPath),
    responses((status = 200, description = "The component, its approved version loaded", body = Object), Refused)
)]
pub async fn approve(
    State(state): State<AppState>,
    Extension(Caller(caller)): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<Json<ComponentInfo>, ApiError> {
    let api = api(&state)?;
    // A version running as a shadow is promoted at once (on this server: each compares on
    // the objects it owns).
    if api.runtime.has_shadow(&name) {
        api.runtime
            .promote_shadow(&name)
            .await
            .map_err(|e| ApiError::not_found(e.to_string()))?;
        tracing::info!(component = %name, by = %caller, "shadow promoted by an admin");
        return api
            .runtime
            .component(&name)
            .map(Json)
            .ok_or_else(|| ApiError::not_found(format!("component {name} not found")));
    }
    let approval = api
        .runtime
        .approval_for(&name)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    reactor_controller::record_approval(
        state.store.as_ref(),
        &name,
        &approval,
        &caller.to_string(),
    )
    .await
    .map_err(|e| match e {
        reactor_controller::ApprovalError::Store { source, .. } => ApiError::from(source),
        other => ApiError::invalid(other.to_string()),
    })?;
    // Here at once; the other servers when they see the record.
    api.runtime.approve(&name, approval).await;
    api.runtime
        .component(&name)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("component {name} not found")))
}
