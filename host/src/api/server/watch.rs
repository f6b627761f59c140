//! `/v1/watch[/{kind}]?from=REV`: newline-delimited JSON events over a chunked response.

use super::error::code_of;
use super::objects::KindPath;
use super::openapi::{Compacted, Refused};
use super::path::Path;
use super::{ApiError, AppState};
use crate::api::wire::WatchErrorLine;
use crate::object::{Revision, validate_kind};
use crate::store::{StoreError, WatchEvent};
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use utoipa::IntoParams;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WatchQuery {
    /// Every change after this revision (0: from the start of the log).
    #[serde(default)]
    #[param(value_type = Option<u64>)]
    from: Revision,
}

/// Every change after `from`, of every kind, as it happens; a stream that does not end.
#[utoipa::path(
    operation_id = "watchAll",
    get,
    path = "/v1/watch",
    tag = "watch",
    params(WatchQuery),
    responses((status = 200, description = "One event per line (`created`, `updated`, `deleted`, `bookmark`); a last line `{\"type\": \"error\"}` if the server ends it", content_type = "application/x-ndjson", body = WatchEvent), Refused, Compacted)
)]
pub async fn watch_all(
    State(state): State<AppState>,
    query: Result<Query<WatchQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    stream(state, None, query.from).await
}

/// Every change after `from` of one kind, as it happens; a stream that does not end.
#[utoipa::path(
    operation_id = "watchKind",
    get,
    path = "/v1/watch/{kind}",
    tag = "watch",
    params(KindPath, WatchQuery),
    responses((status = 200, description = "One event per line, as `/v1/watch`", content_type = "application/x-ndjson", body = WatchEvent), Refused, Compacted)
)]
pub async fn watch_kind(
    State(state): State<AppState>,
    Path(kind): Path<String>,
    query: Result<Query<WatchQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    validate_kind(&kind)?;
    let Query(query) = query?;
    stream(state, Some(kind), query.from).await
}

async fn stream(
    state: AppState,
    kind: Option<String>,
    from: Revision,
) -> Result<Response, ApiError> {
    let events = state.store.watch(kind.as_deref(), from).await?;
    Ok(ndjson(events))
}

/// Lines written to the connection at once at most: a burst of events goes out in a few
/// large writes, a lone event at once.
const LINES_PER_WRITE: usize = 512;

/// A stream of events as newline-delimited JSON; an error ends it with an error line.
pub(super) fn ndjson<T: serde::Serialize>(
    events: impl futures::Stream<Item = Result<T, StoreError>> + Send + 'static,
) -> Response {
    let lines = events.ready_chunks(LINES_PER_WRITE).map(|ready| {
        let mut lines = Vec::new();
        for event in ready {
            match event {
                Ok(event) => serde_json::to_writer(&mut lines, &event),
                Err(error) => serde_json::to_writer(&mut lines, &error_line(&error)),
            }
            .map_err(std::io::Error::other)?;
            lines.push(b'\n');
        }
        Ok::<_, std::io::Error>(lines)
    });
    (
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(lines),
    )
        .into_response()
}

/// The store ended the watch (e.g. the watcher fell behind past compaction): say why, last.
fn error_line(error: &StoreError) -> WatchErrorLine {
    WatchErrorLine {
        line_type: "error".into(),
        error: error.to_string(),
        code: code_of(error),
    }
}
