//! `GET /v1/components/{name}/logs`: the newest lines a component logged or printed, kept in
//! memory (a bounded ring per component); `after` resumes from the last line read.

use super::openapi::Refused;
use super::{ApiError, AppState};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use reactor_core::wire::LogsBody;
use reactor_http::Path;
use reactor_runtime::log_ring;
use serde::Deserialize;
use utoipa::IntoParams;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LogsQuery {
    /// Only lines numbered after this one (`seq`).
    #[serde(default)]
    after: u64,
    /// At most this many lines, the newest (default: all kept).
    #[serde(default)]
    tail: Option<usize>,
}

/// The component's kept log lines, oldest first.
#[utoipa::path(
    operation_id = "componentLogs",
    get,
    path = "/v1/components/{name}/logs",
    tag = "components",
    params(("name" = String, Path, description = "The component's name: its file name without `.wasm`"), LogsQuery),
    responses((status = 200, description = "The lines kept after `after`", body = LogsBody), Refused)
)]
pub async fn lines(
    State(state): State<AppState>,
    Path(name): Path<String>,
    query: Result<Query<LogsQuery>, QueryRejection>,
) -> Result<Json<LogsBody>, ApiError> {
    let Query(query) = query?;
    let limit = query.tail.unwrap_or(usize::MAX);
    // A removed component's lines went with it, even if a call it had in flight logged since.
    let known = (state.components.as_ref()).is_some_and(|c| c.runtime.component(&name).is_some());
    if !known {
        return Err(ApiError::not_found(format!("no component named {name}")));
    }
    let lines = log_ring::lines(&name, query.after, limit).unwrap_or_default();
    Ok(Json(LogsBody { lines }))
}
