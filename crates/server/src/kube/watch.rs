//! `?watch=1`: the changes of a resource's objects as Kubernetes watch events, one JSON
//! document per line, from `resourceVersion` (or from the objects as they are now, each an
//! `ADDED`), with `BOOKMARK`s when asked for and an end after `timeoutSeconds`.

use super::reply::Reply;
use super::target::{Target, bad_query};
use crate::AppState;
use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use futures::StreamExt;
use reactor_core::object::Object;
use reactor_kube::KubeError;
use reactor_kube::events::{Shape, bookmark, error, from_store, object_event};
use reactor_kube::query::{NameField, Query};
use reactor_store::StoreError;
use serde_json::Value;
use std::convert::Infallible;
use std::time::Duration;

fn line(value: &Value) -> Result<Bytes, Infallible> {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    Ok(Bytes::from(bytes))
}

/// The watch a list request with `watch=1` asks for.
pub(super) async fn serve(state: AppState, target: Target, query: Query, shape: Shape) -> Reply {
    let selector = query.selector().map_err(bad_query)?;
    let names = query.name_fields().map_err(bad_query)?;
    let timeout = query.timeout_seconds().map_err(bad_query)?;
    let bookmarks = query.bookmarks();
    let selected = move |object: &Object| {
        selector.matches(&object.labels)
            && names.iter().all(|n: &NameField| n.matches(&object.name))
    };
    let mut initial = Vec::new();
    let from = match query.revision().map_err(bad_query)? {
        Some(revision) if !query.send_initial_events() => revision,
        _ => {
            // No revision (or `sendInitialEvents`): the objects as they are now first.
            let listing = state
                .store
                .list(target.kind(), &Default::default())
                .await
                .map_err(|e| target.store_error(&e, ""))?;
            for object in listing.items.iter().filter(|o| selected(o)) {
                initial.push(object_event(
                    "ADDED",
                    object,
                    &target.resource,
                    &target.catalog,
                    shape,
                ));
            }
            if query.send_initial_events() && bookmarks {
                initial.push(bookmark(listing.revision, &target.resource, true));
            }
            listing.revision
        }
    };
    let events = match state.store.watch(Some(target.kind()), from).await {
        Ok(events) => events,
        // As Kubernetes answers it: the watch starts (200) and its one event is an `ERROR`
        // with the 410 `Status`; informers (client-go's, kube-rs's `watcher`) re-list on that
        // event, while a 410 answer to the request itself makes kube-rs retry the same
        // revision for ever.
        Err(e @ StoreError::Compacted { .. }) => {
            let expired = error(&KubeError::Expired(format!(
                "too old resource version: {e}"
            )));
            let body = Body::from_stream(futures::stream::once(async move { line(&expired) }));
            return Ok((StatusCode::OK, [(CONTENT_TYPE, "application/json")], body).into_response());
        }
        Err(e) => return Err(target.store_error(&e, "")),
    };
    let Target { catalog, resource } = target;
    let changes = events
        .scan(false, move |ended, event| {
            if *ended {
                return std::future::ready(None);
            }
            let shown = match event {
                Ok(event) => match event.object.as_deref() {
                    Some(object) if !selected(object) => None,
                    _ => match from_store(&event, &resource, &catalog, shape, bookmarks) {
                        Ok(line) => line,
                        Err(e) => Some(error(&KubeError::InternalError(e.to_string()))),
                    },
                },
                Err(e) => {
                    *ended = true;
                    let kube = match e {
                        StoreError::Compacted { .. } => KubeError::Expired(e.to_string()),
                        other => KubeError::InternalError(other.to_string()),
                    };
                    Some(error(&kube))
                }
            };
            std::future::ready(Some(shown))
        })
        .filter_map(std::future::ready);
    let lines = futures::stream::iter(initial)
        .chain(changes)
        .map(|v| line(&v));
    let body = match timeout {
        Some(seconds) => {
            Body::from_stream(lines.take_until(tokio::time::sleep(Duration::from_secs(seconds))))
        }
        None => Body::from_stream(lines),
    };
    // Kubernetes streams watch events as `application/json`: marked, so that the stream ends
    // when the caller's credential is revoked, as a `/v1` watch does.
    let mut response = (StatusCode::OK, [(CONTENT_TYPE, "application/json")], body).into_response();
    response.extensions_mut().insert(crate::auth::Streamed);
    Ok(response)
}
