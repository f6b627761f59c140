//! `/v1/agents` and `/v1/nimbus`: agents register, send heartbeats, receive their items as a
//! snapshot and a feed of changes, and report on them.

use super::body::JsonBody;
use super::{ApiError, AppState};
use crate::api::wire::{FeedBody, HeartbeatBody, RecordedBody, RegisterBody, ReportBody};
use crate::nimbus::{self, AgentView, NimbusError, Recipient, Snapshot};
use crate::object::Object;
use crate::store::StoreError;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use serde::Deserialize;
use std::time::Duration;

impl From<NimbusError> for ApiError {
    fn from(error: NimbusError) -> Self {
        match error {
            NimbusError::Store(e) => e.into(),
            NimbusError::Invalid(m) => ApiError::invalid(m),
            NimbusError::Denied(m) => ApiError::new(crate::api::wire::ErrorCode::Conflict, m),
        }
    }
}

pub async fn register(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<RegisterBody>,
) -> Result<Json<Object>, ApiError> {
    Ok(Json(
        nimbus::register(state.store.as_ref(), &id, body.labels).await?,
    ))
}

pub async fn heartbeat(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<HeartbeatBody>,
) -> Result<Json<serde_json::Value>, ApiError> {
    nimbus::heartbeat(
        state.store.as_ref(),
        &id,
        Duration::from_millis(body.ttl_ms),
    )
    .await?;
    Ok(Json(serde_json::json!({})))
}

pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<AgentView>>, ApiError> {
    Ok(Json(nimbus::list_agents(state.store.as_ref()).await?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemsQuery {
    agent: String,
}

async fn recipient(state: &AppState, id: &str) -> Result<Recipient, ApiError> {
    let labels = nimbus::labels_of(state.store.as_ref(), id)
        .await
        .map_err(|e| match e {
            NimbusError::Store(StoreError::NotFound { .. }) => {
                ApiError::not_found(format!("agent {id} is not registered"))
            }
            e => e.into(),
        })?;
    Ok(Recipient {
        id: id.to_owned(),
        labels,
    })
}

pub async fn items(
    State(state): State<AppState>,
    query: Result<Query<ItemsQuery>, QueryRejection>,
) -> Result<Json<Snapshot>, ApiError> {
    let Query(query) = query?;
    let recipient = recipient(&state, &query.agent).await?;
    Ok(Json(
        nimbus::snapshot(state.store.as_ref(), &recipient).await?,
    ))
}

/// The agent's feed as newline-delimited JSON; a store error ends it with an error line
/// (`compacted`: the agent re-lists).
pub async fn feed(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<FeedBody>,
) -> Result<Response, ApiError> {
    let recipient = recipient(&state, &body.agent).await?;
    let events = nimbus::follow(state.store.as_ref(), recipient, body.from, body.known).await?;
    Ok(super::watch::ndjson(events))
}

pub async fn report(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<ReportBody>,
) -> Result<Json<RecordedBody>, ApiError> {
    if let Some(other) = body.reports.iter().find(|r| r.agent != body.agent) {
        return Err(ApiError::invalid(format!(
            "agent {} cannot report for agent {}",
            body.agent, other.agent
        )));
    }
    let recorded = state.reporter.record(body.reports).await?;
    Ok(Json(RecordedBody { recorded }))
}
