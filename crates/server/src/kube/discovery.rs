//! Discovery routes: what kubectl reads to learn the resources (`kubectl api-resources`).

use super::reply::{Refusal, Refused, Reply, json};
use super::target::catalog;
use crate::AppState;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use reactor_http::Path;
use reactor_kube::KubeError;
use reactor_kube::discovery;
use serde_json::Value;

fn to_json<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// The answer in aggregated form when `headers` ask for it first, else `legacy`.
fn negotiated(headers: &HeaderMap, aggregated: impl FnOnce() -> Value, legacy: Value) -> Response {
    let accept = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if discovery::wants_aggregated(accept) {
        let mut response = json(StatusCode::OK, aggregated(), &[]);
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static(discovery::AGGREGATED),
        );
        return response;
    }
    json(StatusCode::OK, legacy, &[])
}

/// The Kubernetes version whose API shape is served.
#[utoipa::path(
    operation_id = "kubeVersion",
    get,
    path = "/version",
    tag = "kubernetes",
    responses((status = 200, description = "A Kubernetes `version.Info`", body = Object), Refused)
)]
pub async fn version() -> Response {
    json(
        StatusCode::OK,
        to_json(discovery::version(env!("CARGO_PKG_VERSION"))),
        &[],
    )
    .into_response()
}

/// The core group's versions: none (no Pods, no Namespaces).
#[utoipa::path(
    operation_id = "kubeCoreVersions",
    get,
    path = "/api",
    tag = "kubernetes",
    responses((status = 200, description = "An empty `APIVersions`, or an empty `APIGroupDiscoveryList` when asked for", body = Object), Refused)
)]
pub async fn core(headers: HeaderMap) -> Response {
    negotiated(
        &headers,
        || discovery::aggregated(None),
        to_json(discovery::core_versions()),
    )
}

/// The groups served, with their versions.
#[utoipa::path(
    operation_id = "kubeGroups",
    get,
    path = "/apis",
    tag = "kubernetes",
    responses((status = 200, description = "An `APIGroupList`, or an `APIGroupDiscoveryList` (every resource) when asked for", body = Object), Refused)
)]
pub async fn groups(State(state): State<AppState>, headers: HeaderMap) -> Reply {
    let catalog = catalog(&state).await?;
    Ok(negotiated(
        &headers,
        || discovery::aggregated(Some(&catalog)),
        to_json(discovery::groups(&catalog)),
    ))
}

/// One group.
#[utoipa::path(
    operation_id = "kubeGroup",
    get,
    path = "/apis/{group}",
    tag = "kubernetes",
    params(("group" = String, Path, description = "The API group, e.g. `reactor.dev`")),
    responses((status = 200, description = "An `APIGroup`", body = Object), Refused)
)]
pub async fn group(State(state): State<AppState>, Path(group): Path<String>) -> Reply {
    let catalog = catalog(&state).await?;
    let found = discovery::one_group(&catalog, &group)
        .map_err(|e| Refusal::from(KubeError::NotFound(e.to_string())))?;
    Ok(json(StatusCode::OK, to_json(found), &[]))
}

/// The resources of one group version.
#[utoipa::path(
    operation_id = "kubeResources",
    get,
    path = "/apis/{group}/{version}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group, e.g. `reactor.dev`"),
        ("version" = String, Path, description = "The version, e.g. `v1`"),
    ),
    responses((status = 200, description = "An `APIResourceList`", body = Object), Refused)
)]
pub async fn resources(
    State(state): State<AppState>,
    Path((group, version)): Path<(String, String)>,
) -> Reply {
    let catalog = catalog(&state).await?;
    let found = discovery::resources(&catalog, &group, &version)
        .map_err(|e| Refusal::from(KubeError::NotFound(e.to_string())))?;
    Ok(json(StatusCode::OK, to_json(found), &[]))
}

/// The OpenAPI v3 index: where each group version's document is.
#[utoipa::path(
    operation_id = "kubeOpenApiIndex",
    get,
    path = "/openapi/v3",
    tag = "kubernetes",
    responses((status = 200, description = "`{\"paths\": {\"apis/{group}/{version}\": {\"serverRelativeURL\"}}}`", body = Object), Refused)
)]
pub async fn openapi_index(State(state): State<AppState>) -> Reply {
    let catalog = catalog(&state).await?;
    Ok(json(
        StatusCode::OK,
        reactor_kube::openapi::index(&catalog),
        &[],
    ))
}

/// The OpenAPI v3 document of one group version: each Kind's schema and paths (what
/// kubectl validates against and `kubectl explain` reads).
#[utoipa::path(
    operation_id = "kubeOpenApi",
    get,
    path = "/openapi/v3/apis/{group}/{version}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group, e.g. `reactor.dev`"),
        ("version" = String, Path, description = "The version, e.g. `v1`"),
    ),
    responses((status = 200, description = "An OpenAPI 3.0 document", body = Object), Refused)
)]
pub async fn openapi(
    State(state): State<AppState>,
    Path((group, version)): Path<(String, String)>,
) -> Reply {
    let catalog = catalog(&state).await?;
    let document = reactor_kube::openapi::group_version(&catalog, &group, &version)
        .map_err(|e| Refusal::from(KubeError::NotFound(e.to_string())))?;
    Ok(json(StatusCode::OK, document, &[]))
}
