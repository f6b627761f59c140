//! The agent's own HTTP API on `--listen`, named as Ligato's: the scheduler's dump, value
//! status, transaction history, key timeline and graph, resync, southbound notifications,
//! and transactions of local values.

use super::local::LocalValues;
use crate::api::server::{ApiError, require_token};
use crate::kvscheduler::{
    KvScheduler, Resync, TxnError, TxnMode, TxnOptions, TxnRecord, ValueStatus,
};
use crate::runtime::{ComponentInfo, Runtime};
use axum::extract::{Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A transaction of local values: `null` removes a value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TxnRequest {
    pub values: BTreeMap<String, Option<Value>>,
    /// Undo everything at the first failure (Ligato's revert mode) instead of best effort.
    #[serde(default)]
    pub revert: bool,
    #[serde(default)]
    pub description: String,
}

/// How a transaction, a notification or a resync went.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TxnAnswer {
    pub record: TxnRecord,
    /// Why it failed, if it did (per value: see the record's executed operations).
    pub error: Option<String>,
    pub reverted: bool,
}

/// A southbound notification: `value` absent or null means the value went away.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NotifyRequest {
    pub key: String,
    #[serde(default)]
    pub value: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct KeyQuery {
    key: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SeqQuery {
    seq: Option<u64>,
}

#[derive(Clone)]
struct AgentApi {
    scheduler: KvScheduler,
    local: Arc<LocalValues>,
    runtime: Runtime,
    best_effort: TxnOptions,
}

/// The routes, behind the agent's token (all but `/healthz`).
pub fn router(
    scheduler: KvScheduler,
    local: Arc<LocalValues>,
    runtime: Runtime,
    best_effort: TxnOptions,
    token: Arc<str>,
) -> Router {
    let state = AgentApi {
        scheduler,
        local,
        runtime,
        best_effort,
    };
    let api = Router::new()
        .route("/scheduler/dump", get(dump))
        .route("/scheduler/status", get(status))
        .route("/scheduler/txn-history", get(history))
        .route("/scheduler/key-timeline", get(timeline))
        .route("/scheduler/graph", get(graph))
        .route("/scheduler/resync", post(resync))
        .route("/scheduler/notify", post(notify))
        .route("/scheduler/txn", post(txn))
        .route("/scheduler/descriptors", get(descriptors))
        .route_layer(axum::middleware::from_fn_with_state(token, require_token));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(api)
        .fallback(|| async { ApiError::not_found("no such route") })
        .with_state(state)
}

async fn dump(State(api): State<AgentApi>) -> Json<crate::kvscheduler::Dump> {
    Json(api.scheduler.dump().await)
}

/// One value's status with `?key=`, else every value's.
async fn status(
    State(api): State<AgentApi>,
    query: Result<Query<KeyQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<ValueStatus>>, ApiError> {
    let Query(query) = query?;
    Ok(Json(match query.key {
        Some(key) => vec![api.scheduler.status(&key).await],
        None => api.scheduler.statuses().await,
    }))
}

async fn history(
    State(api): State<AgentApi>,
    query: Result<Query<SeqQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<TxnRecord>>, ApiError> {
    let Query(query) = query?;
    let mut records = api.scheduler.history().await;
    if let Some(seq) = query.seq {
        records.retain(|r| r.seq == seq);
        if records.is_empty() {
            return Err(ApiError::not_found(format!(
                "transaction {seq} is not in the history"
            )));
        }
    }
    Ok(Json(records))
}

async fn timeline(
    State(api): State<AgentApi>,
    query: Result<Query<KeyQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<crate::kvscheduler::TimelineEntry>>, ApiError> {
    let Query(query) = query?;
    let key = query
        .key
        .ok_or_else(|| ApiError::invalid("key-timeline needs ?key=KEY"))?;
    Ok(Json(api.scheduler.timeline(&key).await))
}

async fn graph(State(api): State<AgentApi>) -> Json<Vec<crate::kvscheduler::GraphNode>> {
    Json(api.scheduler.graph().await)
}

async fn descriptors(State(api): State<AgentApi>) -> Json<Vec<ComponentInfo>> {
    Json(api.runtime.components())
}

/// Retrieves through every descriptor, compares with the desired state and repairs.
async fn resync(State(api): State<AgentApi>) -> Result<Json<TxnAnswer>, ApiError> {
    answer(api.scheduler.resync(Resync::Downstream).await)
}

async fn notify(
    State(api): State<AgentApi>,
    body: Result<Json<NotifyRequest>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<TxnAnswer>, ApiError> {
    let Json(body) = body?;
    if body.key.is_empty() {
        return Err(ApiError::invalid("notify needs a non-empty key"));
    }
    answer(api.scheduler.notify(body.key, body.value).await)
}

/// Saves the local values first (so that an acknowledged value survives a crash), runs the
/// transaction, and puts the saved values back if revert mode undid it.
async fn txn(
    State(api): State<AgentApi>,
    body: Result<Json<TxnRequest>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<TxnAnswer>, ApiError> {
    let Json(body) = body?;
    if body.values.is_empty() {
        return Err(ApiError::invalid("the transaction has no values"));
    }
    if let Some(key) = body.values.keys().find(|k| k.is_empty()) {
        return Err(ApiError::invalid(format!("invalid key {key:?}")));
    }
    let changes: Vec<(String, Option<Value>)> = body.values.into_iter().collect();
    let before = api
        .local
        .change(&changes)
        .map_err(|e| ApiError::new(crate::api::wire::ErrorCode::Internal, e.to_string()))?;
    let options = TxnOptions {
        mode: if body.revert {
            TxnMode::Revert
        } else {
            api.best_effort.mode
        },
        description: if body.description.is_empty() {
            "agent API".to_owned()
        } else {
            body.description
        },
    };
    let result = api.scheduler.transaction(changes, options).await;
    let undone = match &result {
        Err(TxnError::Failed { reverted, .. }) => *reverted,
        Err(_) => true,
        Ok(_) => false,
    };
    if undone {
        api.local
            .restore(before)
            .map_err(|e| ApiError::new(crate::api::wire::ErrorCode::Internal, e.to_string()))?;
    }
    answer(result)
}

/// A transaction that ran is answered with its record, failed or not; one refused before
/// running (a key owned by the other side) is a bad request.
fn answer(result: Result<TxnRecord, TxnError>) -> Result<Json<TxnAnswer>, ApiError> {
    match result {
        Ok(record) => Ok(Json(TxnAnswer {
            record,
            error: None,
            reverted: false,
        })),
        Err(TxnError::Failed { record, reverted }) => {
            let error = TxnError::Failed {
                record: record.clone(),
                reverted,
            }
            .to_string();
            Ok(Json(TxnAnswer {
                record: *record,
                error: Some(error),
                reverted,
            }))
        }
        Err(error) => Err(ApiError::invalid(error.to_string())),
    }
}
