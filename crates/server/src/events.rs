//! `GET /v1/events`: the events the engine kept (in memory, bounded) of objects, optionally
//! of one kind or one object; and the hooks by which the API records its own.

use super::openapi::Refused;
use super::{ApiError, AppState};
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use reactor_controller::EventType;
use reactor_core::object::{Object, ObjectKey, validate_kind, validate_object_name};
use reactor_core::wire::EventsBody;
use serde::Deserialize;
use utoipa::IntoParams;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events of objects of this kind.
    #[serde(default)]
    #[param(pattern = "^[A-Za-z][A-Za-z0-9-]*$", max_length = 63)]
    kind: Option<String>,
    /// Only events of the object of this name (with `kind`).
    #[serde(default)]
    #[param(
        pattern = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?|[A-Za-z][A-Za-z0-9-]*)$",
        max_length = 63
    )]
    name: Option<String>,
}

/// The events kept, oldest last seen first.
#[utoipa::path(
    operation_id = "listEvents",
    get,
    path = "/v1/events",
    tag = "objects",
    params(EventsQuery),
    responses((status = 200, description = "The events kept of the objects asked for", body = EventsBody), Refused)
)]
pub async fn list(
    State(state): State<AppState>,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Json<EventsBody>, ApiError> {
    let Query(query) = query?;
    if let Some(kind) = &query.kind {
        validate_kind(kind)?;
    }
    if let Some(name) = &query.name {
        let Some(kind) = &query.kind else {
            return Err(ApiError::invalid("name needs a kind"));
        };
        validate_object_name(kind, name)?;
    }
    let items = state
        .events
        .as_ref()
        .map(|events| events.list(query.kind.as_deref(), query.name.as_deref()))
        .unwrap_or_default();
    Ok(Json(EventsBody { items }))
}

/// A delete left the object to its finalizers.
pub(super) fn deletion_held(state: &AppState, object: &Object) {
    if let Some(events) = &state.events {
        events.record(
            &object.key(),
            EventType::Normal,
            "FinalizerWait",
            "host",
            &format!(
                "deletion waits for finalizers: {}",
                object.meta.finalizers.join(", ")
            ),
        );
    }
}

/// A client removed finalizers by hand: the cleanups they held for will not run.
pub(super) fn finalizers_removed(state: &AppState, kind: &str, name: &str, kept: &[String]) {
    if let Some(events) = &state.events {
        let kept = if kept.is_empty() {
            "none".to_owned()
        } else {
            kept.join(", ")
        };
        events.record(
            &ObjectKey::new(kind, name),
            EventType::Warning,
            "FinalizerRemoved",
            "host",
            &format!("finalizers removed by hand (kept: {kept}); their cleanup will not run"),
        );
    }
}
