//! `/metrics` in Prometheus text, and the request counter every route feeds.

use super::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use reactor_core::metrics;
use std::sync::OnceLock;

/// The process-wide recorder; installed on first use so every metric from then on is kept.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        // Histograms with buckets (a summary cannot be summed across replicas): the size
        // buckets by default, controller-runtime's for times (`_seconds`). Only an empty
        // bucket list is refused, and the catalog has none.
        let builder = PrometheusBuilder::new()
            .set_buckets(metrics::SIZE_BUCKETS)
            .and_then(|b| {
                b.set_buckets_for_metric(Matcher::Suffix("_seconds".into()), metrics::TIME_BUCKETS)
            })
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed (e.g. by an embedding program): then ours
        // renders only what it was given, which is still a valid page.
        let _ = ::metrics::set_global_recorder(recorder);
        metrics::describe();
        process().describe();
        handle
    })
}

/// The `process_*` families (CPU, memory, open files, threads, start time), read at scrape.
fn process() -> &'static metrics_process::Collector {
    static PROCESS: OnceLock<metrics_process::Collector> = OnceLock::new();
    PROCESS.get_or_init(metrics_process::Collector::default)
}

/// The server's metrics.
#[utoipa::path(
    operation_id = "metrics",
    get,
    path = "/metrics",
    tag = "server",
    responses((status = 200, description = "Prometheus text", content_type = "text/plain", body = String), super::openapi::Refused)
)]
pub async fn render(State(state): State<AppState>) -> Response {
    // Read at scrape time, so the gauge is the same on every backend and, on etcd, counts
    // the writes of the other replicas too. An unreachable store keeps the last value.
    if let Ok(revision) = state.store.revision().await {
        ::metrics::gauge!(metrics::STORE_REVISION).set(revision as f64);
    }
    let handle = handle();
    process().collect();
    let mut page = handle.render();
    page.push_str(&super::state_metrics::render(&state).await);
    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], page).into_response()
}

pub async fn count_requests(request: Request, next: Next) -> Response {
    handle();
    let method = request.method().to_string();
    // The route's pattern (`/v1/objects/{kind}/{name}`), never the path: a label per object
    // would grow without bound.
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    ::metrics::counter!(metrics::HTTP_REQUESTS, "method" => method, "route" => route, "status" => status)
        .increment(1);
    response
}
