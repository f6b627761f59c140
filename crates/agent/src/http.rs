//! The agent's own HTTP API on `--listen`, named as Ligato's: the scheduler's dump (by
//! view, descriptor and key prefix), value status and its watch, transaction history (by
//! number or time), key timeline and graph, resync, southbound notifications, and
//! transactions (or their simulation) of local values.

use super::local::LocalValues;
use axum::extract::{Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use reactor_core::object::from_map;
use reactor_http::{ApiError, JsonBody};
use reactor_kvscheduler::{
    DumpFilter, DumpView, KvScheduler, Resync, RetryOptions, TxnError, TxnMode, TxnOptions,
    TxnRecord, ValueStatus,
};
use reactor_runtime::{ComponentInfo, Runtime};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// A transaction of local values: `null` removes a value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxnRequest {
    pub values: BTreeMap<String, Option<Value>>,
    /// Undo everything at the first failure (Ligato's revert mode) instead of best effort.
    #[serde(default)]
    pub revert: bool,
    #[serde(default)]
    pub description: String,
    /// Only plan: answer the operations the transaction would do and change nothing
    /// (Ligato's `WithSimulation`).
    #[serde(default)]
    pub simulate: bool,
    /// Retries of failed operations in best effort; by default the agent's
    /// `--retry-period` and `--retries`.
    #[serde(default)]
    pub retry: Option<RetryRequest>,
}

/// How failed operations are retried: `attempts` 0 retries nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct RetryRequest {
    pub period_ms: u64,
    pub attempts: u32,
    /// Double the period at every attempt.
    #[serde(default)]
    pub backoff: bool,
}

from_map!(RetryRequest, "retries (period_ms, attempts, backoff)");

impl RetryRequest {
    fn options(self) -> Option<RetryOptions> {
        (self.attempts > 0).then_some(RetryOptions {
            period: Duration::from_millis(self.period_ms),
            max_attempts: self.attempts,
            exponential_backoff: self.backoff,
        })
    }
}

/// A resync. Without `values`: the southbound is refreshed and repaired against what the
/// agent wants. With them: a full resync, the agent's local values replaced by `values`
/// (the items from the server stay wanted).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResyncRequest {
    #[serde(default)]
    pub values: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    pub retry: Option<RetryRequest>,
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
#[serde(deny_unknown_fields)]
pub struct NotifyRequest {
    pub key: String,
    #[serde(default)]
    pub value: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct KeyQuery {
    key: Option<String>,
}

/// `?seq=N`, or `?since=&until=` in seconds since the Unix epoch (Ligato's).
#[derive(Debug, Deserialize)]
struct HistoryQuery {
    seq: Option<u64>,
    since: Option<u64>,
    until: Option<u64>,
}

/// `?view=NB|SB|cached&descriptor=NAME&key-prefix=PREFIX`, each optional.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct DumpQuery {
    view: Option<DumpView>,
    descriptor: Option<String>,
    key_prefix: Option<String>,
}

#[derive(Clone)]
struct AgentApi {
    scheduler: KvScheduler,
    local: Arc<LocalValues>,
    runtime: Runtime,
    best_effort: TxnOptions,
}

/// The routes, for the server's admins only (all but `/healthz`).
pub fn router(
    scheduler: KvScheduler,
    local: Arc<LocalValues>,
    runtime: Runtime,
    best_effort: TxnOptions,
    reviewer: super::review::Reviewer,
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
        .route("/scheduler/status/watch", get(status_watch))
        .route("/scheduler/txn-history", get(history))
        .route("/scheduler/key-timeline", get(timeline))
        .route("/scheduler/graph", get(graph))
        .route("/scheduler/resync", post(resync))
        .route("/scheduler/notify", post(notify))
        .route("/scheduler/txn", post(txn))
        .route("/scheduler/descriptors", get(descriptors))
        .route_layer(axum::middleware::from_fn_with_state(
            reviewer,
            super::review::require_admin,
        ));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(api)
        .fallback(|| async { ApiError::not_found("no such route") })
        .with_state(state)
}

async fn dump(
    State(api): State<AgentApi>,
    query: Result<Query<DumpQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<reactor_kvscheduler::Dump>, ApiError> {
    let Query(query) = query?;
    let filter = DumpFilter {
        view: query.view,
        descriptor: query.descriptor,
        key_prefix: query.key_prefix,
    };
    Ok(Json(api.scheduler.dump_filtered(&filter).await))
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
    query: Result<Query<HistoryQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<TxnRecord>>, ApiError> {
    let Query(query) = query?;
    let time = |seconds: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(seconds);
    let mut records = api
        .scheduler
        .history_between(query.since.map(time), query.until.map(time))
        .await;
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
) -> Result<Json<Vec<reactor_kvscheduler::TimelineEntry>>, ApiError> {
    let Query(query) = query?;
    let key = query
        .key
        .ok_or_else(|| ApiError::invalid("key-timeline needs ?key=KEY"))?;
    Ok(Json(api.scheduler.timeline(&key).await))
}

async fn status_watch(State(api): State<AgentApi>) -> axum::response::Response {
    super::watch::status_watch(api.scheduler).await
}

async fn graph(State(api): State<AgentApi>) -> Json<Vec<reactor_kvscheduler::GraphNode>> {
    Json(api.scheduler.graph().await)
}

async fn descriptors(State(api): State<AgentApi>) -> Json<Vec<ComponentInfo>> {
    Json(api.runtime.components())
}

/// Retrieves through every descriptor, compares with the desired state and repairs; with
/// values, first replaces the local values by them (a full resync).
async fn resync(
    State(api): State<AgentApi>,
    JsonBody(body): JsonBody<ResyncRequest>,
) -> Result<Json<TxnAnswer>, ApiError> {
    let options = api.options(false, body.retry, "agent API resync");
    let Some(values) = body.values else {
        return answer(api.scheduler.resync_with(Resync::Downstream, options).await);
    };
    if let Some(key) = values.keys().find(|k| k.is_empty()) {
        return Err(ApiError::invalid(format!("invalid key {key:?}")));
    }
    let old = api.local.all();
    // What is wanted but not local came from the server: it stays.
    let mut desired: BTreeMap<String, Value> = api
        .scheduler
        .dump_filtered(&DumpFilter {
            view: Some(DumpView::Nb),
            ..DumpFilter::default()
        })
        .await
        .desired
        .into_iter()
        .filter(|(key, _)| !old.contains_key(key))
        .collect();
    let mut changes: Vec<(String, Option<Value>)> = old
        .keys()
        .filter(|k| !values.contains_key(*k))
        .map(|k| (k.clone(), None))
        .collect();
    changes.extend(values.iter().map(|(k, v)| (k.clone(), Some(v.clone()))));
    api.local.change(&changes).map_err(internal)?;
    desired.extend(values);
    answer(
        api.scheduler
            .resync_with(Resync::Full(desired.into_iter().collect()), options)
            .await,
    )
}

fn internal(error: impl std::fmt::Display) -> ApiError {
    ApiError::new(reactor_core::wire::ErrorCode::Internal, error.to_string())
}

impl AgentApi {
    /// Revert mode, or best effort with the retries asked for (else the agent's).
    fn options(&self, revert: bool, retry: Option<RetryRequest>, description: &str) -> TxnOptions {
        let mode = match (revert, retry) {
            (true, _) => TxnMode::Revert,
            (false, Some(retry)) => TxnMode::BestEffort(retry.options()),
            (false, None) => self.best_effort.mode,
        };
        TxnOptions {
            mode,
            description: description.to_owned(),
        }
    }
}

async fn notify(
    State(api): State<AgentApi>,
    JsonBody(body): JsonBody<NotifyRequest>,
) -> Result<Json<TxnAnswer>, ApiError> {
    if body.key.is_empty() {
        return Err(ApiError::invalid("notify needs a non-empty key"));
    }
    answer(api.scheduler.notify(body.key, body.value).await)
}

/// Saves the local values first (so that an acknowledged value survives a crash), runs the
/// transaction, and puts the saved values back if revert mode undid it.
async fn txn(
    State(api): State<AgentApi>,
    JsonBody(body): JsonBody<TxnRequest>,
) -> Result<Json<TxnAnswer>, ApiError> {
    if body.values.is_empty() {
        return Err(ApiError::invalid("the transaction has no values"));
    }
    if let Some(key) = body.values.keys().find(|k| k.is_empty()) {
        return Err(ApiError::invalid(format!("invalid key {key:?}")));
    }
    let changes: Vec<(String, Option<Value>)> = body.values.into_iter().collect();
    let description = if body.description.is_empty() {
        "agent API"
    } else {
        body.description.as_str()
    };
    let options = api.options(body.revert, body.retry, description);
    if body.simulate {
        return answer(api.scheduler.simulate(changes, options).await);
    }
    let before = api.local.change(&changes).map_err(internal)?;
    let result = api.scheduler.transaction(changes, options).await;
    match &result {
        Ok(_) => {}
        // The values the scheduler refused (the southbound's own) are not kept either.
        Err(TxnError::Failed {
            record,
            reverted: false,
        }) => {
            let refused: Vec<String> = record.refusals().into_iter().map(|(k, _)| k).collect();
            if !refused.is_empty() {
                api.local
                    .restore_keys(&before, &refused)
                    .map_err(internal)?;
            }
        }
        Err(_) => api.local.restore(before).map_err(internal)?,
    }
    answer(result)
}

/// A transaction that ran is answered with its record, failed or not (a value the
/// southbound owns is one of its failures, refused alone); a notification refused before
/// running (a key the scheduler manages) is a bad request.
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
