//! `/v1/agents` and `/v1/nimbus`: agents register, send heartbeats, receive their items as a
//! snapshot and a feed of changes, and report on them.

use super::auth::Caller;
use super::auth::policy::act_for_agent;
use super::openapi::{BodyLate, Compacted, Refused};
use super::{ApiError, AppState};
use axum::body::{Bytes, HttpBody};
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, Query, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures::StreamExt;
use reactor_core::object::Object;
use reactor_core::wire::{
    ErrorCode, FeedBody, HeartbeatBody, RecordedBody, RegisterBody, ReportBody,
};
use reactor_http::JsonBody;
use reactor_http::Path;
use reactor_nimbus as nimbus;
use reactor_nimbus::{AgentView, NimbusError, Recipient};
use reactor_store::StoreError;
use reactor_trust::Identity;
use serde::Deserialize;
use std::time::Duration;

/// The path parameter of one agent, for the OpenAPI document.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // read by the derive only
pub(super) struct AgentPath {
    /// The agent's id.
    #[param(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length = 63)]
    id: String,
}

/// An agent registers, or re-registers with new labels.
#[utoipa::path(
    operation_id = "registerAgent",
    put,
    path = "/v1/agents/{id}",
    tag = "agents",
    params(AgentPath),
    request_body(content = Option<RegisterBody>, description = "The agent's labels; no body registers it without labels"),
    responses((status = 200, description = "The agent's `Agent` object", body = reactor_core::object::StoredObject), Refused)
)]
pub async fn register(
    State(state): State<AppState>,
    Extension(Caller(caller)): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<RegisterBody>,
) -> Result<Json<Object>, ApiError> {
    let labels = match caller {
        // An agent carries the labels it was given at join; changing them is an admin's act.
        Identity::Agent { labels, .. } if body.labels.is_empty() || body.labels == labels => labels,
        Identity::Agent { labels, .. } => {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                format!(
                    "agent {id} may not set its own labels: it carries {} (given with its join token)",
                    show_labels(&labels)
                ),
            ));
        }
        Identity::User { .. } => body.labels,
    };
    Ok(Json(
        nimbus::register(state.store.as_ref(), &id, labels).await?,
    ))
}

fn show_labels(labels: &std::collections::BTreeMap<String, String>) -> String {
    if labels.is_empty() {
        return "no labels".into();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Removes a decommissioned agent: its `Agent` object goes and its reports on items are
/// withdrawn (the owners' reactors hear them as `removed`; their propagation stops counting
/// it). An agent still running that registers again comes back as a new one.
#[utoipa::path(
    operation_id = "removeAgent",
    delete,
    path = "/v1/agents/{id}",
    tag = "agents",
    params(AgentPath),
    responses((status = 200, description = "`{}`: the agent is removed", body = Object), Refused)
)]
pub async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    nimbus::remove_agent(state.store.as_ref(), &state.reports, &id)
        .await
        .map_err(|e| match e {
            NimbusError::Store(StoreError::NotFound { .. }) => {
                ApiError::not_found(format!("agent {id} is not registered"))
            }
            e => e.into(),
        })?;
    Ok(Json(serde_json::json!({})))
}

/// The agent is alive: it counts as connected for `ttlMs`.
#[utoipa::path(
    operation_id = "heartbeat",
    post,
    path = "/v1/agents/{id}/heartbeat",
    tag = "agents",
    params(AgentPath),
    request_body = HeartbeatBody,
    responses((status = 200, description = "`{}`", body = Object), Refused)
)]
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

/// Every registered agent: connected, last seen, items applied / pending / failed.
#[utoipa::path(
    operation_id = "listAgents",
    get,
    path = "/v1/agents",
    tag = "agents",
    responses((status = 200, description = "Each agent: id, labels, connected, lastSeenMs, applied, pending, failed", body = Vec<Object>), Refused)
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<AgentView>>, ApiError> {
    Ok(Json(
        nimbus::list_agents(state.store.as_ref(), &state.fanout, &state.reports).await?,
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ItemsQuery {
    /// The agent's id.
    #[param(pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length = 63)]
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

/// The items meant for an agent, and the revision to follow them from.
#[utoipa::path(
    operation_id = "agentItems",
    get,
    path = "/v1/nimbus/items",
    tag = "agents",
    params(ItemsQuery),
    responses((status = 200, description = "`{\"items\": [{key, value, version}], \"revision\"}`", body = Object), Refused)
)]
pub async fn items(
    State(state): State<AppState>,
    Extension(Caller(caller)): Extension<Caller>,
    query: Result<Query<ItemsQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    act_for_agent(&caller, &query.agent)?;
    let recipient = recipient(&state, &query.agent).await?;
    let body = state.fanout.snapshot_json(&recipient).await?;
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}

/// The agent's feed as newline-delimited JSON; a store error ends it with an error line
/// (`compacted`: the agent re-lists).
#[utoipa::path(
    operation_id = "agentFeed",
    post,
    path = "/v1/nimbus/watch",
    tag = "agents",
    request_body = FeedBody,
    responses((status = 200, description = "One line per change: `put`, `delete`, `bookmark`; a stream that does not end", content_type = "application/x-ndjson", body = Object), Refused, Compacted)
)]
pub async fn feed(
    State(state): State<AppState>,
    Extension(Caller(caller)): Extension<Caller>,
    JsonBody(body): JsonBody<FeedBody>,
) -> Result<Response, ApiError> {
    act_for_agent(&caller, &body.agent)?;
    let recipient = recipient(&state, &body.agent).await?;
    let lines = state
        .fanout
        .follow(recipient, body.from, body.known)
        .await?;
    Ok(super::watch::ndjson(
        lines.map(|line| line.map(super::watch::Serialized)),
    ))
}

/// The refusal of a report whose body did not arrive `within` its deadline.
fn body_late(within: std::time::Duration) -> ApiError {
    let mut error = ApiError::invalid(format!(
        "the report's body did not arrive within {} of its share of the budget (serve --report-body-timeout): send it again",
        humantime::format_duration(within)
    ));
    error.status = axum::http::StatusCode::REQUEST_TIMEOUT;
    error
}

/// An agent's reports on its items. The request takes its share of the reporter's budget
/// (`serve --reports-in-flight-bytes`), its body's declared length, before its body is read:
/// while the reports in flight fill the budget, agents wait with their bodies unread (the
/// connection holds them back) and the server's memory does not grow. A body that does not
/// arrive within `serve --report-body-timeout` is refused (408) and its share freed.
#[utoipa::path(
    operation_id = "agentReports",
    post,
    path = "/v1/nimbus/status",
    tag = "agents",
    request_body = ReportBody,
    responses((status = 200, description = "How many reports were recorded", body = RecordedBody), Refused, BodyLate)
)]
pub async fn report(
    State(state): State<AppState>,
    Extension(Caller(caller)): Extension<Caller>,
    request: Request,
) -> Result<Json<RecordedBody>, ApiError> {
    // A body of unknown length (chunked) takes what the largest may be, until it is read.
    let limit = state.max_request_bytes;
    let declared = request.body().size_hint().exact();
    let declared = declared.map_or(limit, |n| usize::try_from(n).unwrap_or(limit));
    let mut held = state.reporter.reserve(declared.min(limit)).await?;
    // A body that does not come gives its share back (`serve --report-body-timeout`).
    let within = state.report_body_timeout;
    let bytes = tokio::time::timeout(within, Bytes::from_request(request, &state))
        .await
        .map_err(|_| body_late(within))?
        .map_err(reactor_http::refused)?;
    held.shrink_to(bytes.len());
    let body: ReportBody = reactor_http::parse(&bytes)?;
    drop(bytes);
    act_for_agent(&caller, &body.agent)?;
    reactor_core::object::validate_name(&body.agent)
        .map_err(|e| ApiError::invalid(format!("agent id {:?}: {e}", body.agent)))?;
    if let Some(other) = body.reports.iter().find(|r| r.agent != body.agent) {
        return Err(ApiError::invalid(format!(
            "agent {} cannot report for agent {}",
            body.agent, other.agent
        )));
    }
    let complete = body.complete.then_some(body.agent);
    let recorded = (state.reporter)
        .record_reserved(body.reports, complete, held)
        .await?;
    Ok(Json(RecordedBody { recorded }))
}
