//! `/v1/watch[/{kind}]?from=REV`: newline-delimited JSON events over a chunked response.

use super::objects::KindPath;
use super::openapi::{Compacted, Refused};
use super::{ApiError, AppState};
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use reactor_core::object::{Revision, validate_kind};
use reactor_core::wire::WatchErrorLine;
use reactor_http::Path;
use reactor_http::code_of;
use reactor_store::{StoreError, WatchEvent};
use serde::Deserialize;
use std::task::Poll;
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
    super::objects::check_readable(&kind)?;
    let Query(query) = query?;
    stream(state, Some(kind), query.from).await
}

async fn stream(
    state: AppState,
    kind: Option<String>,
    from: Revision,
) -> Result<Response, ApiError> {
    let events = state.store.watch(kind.as_deref(), from).await?;
    // Every kind but the credentials, which no watcher is shown.
    let events = events.filter(|event| {
        let secret = matches!(event, Ok(e) if e.object.as_ref().is_some_and(|o| o.kind == reactor_trust::CREDENTIAL_KIND));
        std::future::ready(!secret)
    });
    Ok(ndjson(events))
}

/// Lines written to the connection at once at most: a burst of events goes out in a few
/// large writes, a lone event at once.
/// The most bytes of lines gathered into one write: events already waiting are sent together
/// (one write for many small ones), but a watcher that does not read holds at most this much
/// beyond what its store watch buffers (one line more when a single event is larger).
const BYTES_PER_WRITE: usize = 256 * 1024;

pub(super) fn ndjson<T: Line>(
    events: impl futures::Stream<Item = Result<T, StoreError>> + Send + 'static,
) -> Response {
    (
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(writes(events, BYTES_PER_WRITE)),
    )
        .into_response()
}

/// What can be written as one line of a stream: a value serialized as JSON, or a line
/// serialized before (the Nimbus fan-out's, shared by every agent it is meant for).
pub(super) trait Line: Send + 'static {
    fn write_line(&self, out: &mut Vec<u8>) -> serde_json::Result<()>;
}

impl<T: serde::Serialize + Send + 'static> Line for T {
    fn write_line(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.push(b'\n');
        Ok(())
    }
}

/// A newline-terminated JSON line as it goes on the wire.
pub(super) struct Serialized(pub bytes::Bytes);

impl Line for Serialized {
    fn write_line(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(&self.0);
        Ok(())
    }
}

/// The events as newline-terminated JSON lines, as many of those ready as fit in
/// `max_bytes` per item (at least one).
fn writes<T: Line>(
    events: impl futures::Stream<Item = Result<T, StoreError>> + Send + 'static,
    max_bytes: usize,
) -> impl futures::Stream<Item = std::io::Result<Vec<u8>>> + Send + 'static {
    let mut events = Box::pin(events.fuse());
    futures::stream::poll_fn(move |cx| {
        let mut lines = Vec::new();
        loop {
            let next = match events.as_mut().poll_next_unpin(cx) {
                Poll::Ready(Some(next)) => next,
                Poll::Ready(None) if lines.is_empty() => return Poll::Ready(None),
                Poll::Pending if lines.is_empty() => return Poll::Pending,
                Poll::Ready(None) | Poll::Pending => return Poll::Ready(Some(Ok(lines))),
            };
            let written = match next {
                Ok(event) => event.write_line(&mut lines),
                Err(error) => error_line(&error).write_line(&mut lines),
            };
            if let Err(e) = written {
                return Poll::Ready(Some(Err(std::io::Error::other(e))));
            }
            if lines.len() >= max_bytes {
                return Poll::Ready(Some(Ok(lines)));
            }
        }
    })
}

fn error_line(error: &StoreError) -> WatchErrorLine {
    WatchErrorLine {
        line_type: "error".into(),
        error: error.to_string(),
        code: code_of(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(max_bytes: usize, events: Vec<Result<String, StoreError>>) -> Vec<usize> {
        let writes = writes(futures::stream::iter(events), max_bytes);
        let writes: Vec<std::io::Result<Vec<u8>>> = futures::executor::block_on(writes.collect());
        writes
            .into_iter()
            .map(|w| w.expect("written").len())
            .collect()
    }

    #[test]
    fn ready_events_share_a_write_up_to_the_byte_limit() {
        // Each event is `"xxxxxxxx"` and a newline: 11 bytes.
        let events = || (0..10).map(|_| Ok("x".repeat(8))).collect::<Vec<_>>();
        assert_eq!(sizes(1000, events()), vec![110]);
        assert_eq!(sizes(30, events()), vec![33, 33, 33, 11]);
        // An event larger than the limit is one write of its own.
        assert_eq!(
            sizes(5, vec![Ok("x".repeat(20)), Ok("y".into())]),
            vec![23, 4]
        );
    }

    #[test]
    fn an_error_is_a_line_of_its_own_kind() {
        let events: Vec<Result<String, StoreError>> = vec![Err(StoreError::Compacted {
            requested: 1,
            oldest: 5,
        })];
        let writes = writes(futures::stream::iter(events), 1000);
        let writes: Vec<std::io::Result<Vec<u8>>> = futures::executor::block_on(writes.collect());
        let line = String::from_utf8(writes[0].as_ref().expect("written").clone()).expect("utf-8");
        assert!(line.starts_with(r#"{"type":"error""#), "{line}");
        assert!(line.ends_with('\n'), "{line}");
    }
}
