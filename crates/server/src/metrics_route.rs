//! `/metrics` in Prometheus text, and the request counter every route feeds.

use super::AppState;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;

/// The process-wide recorder; installed on first use so every metric from then on is kept.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed (e.g. by an embedding program): then ours
        // renders only what it was given, which is still a valid page.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
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
        metrics::gauge!("store_revision").set(revision as f64);
    }
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4")],
        handle().render(),
    )
        .into_response()
}

pub async fn count_requests(request: Request, next: Next) -> Response {
    handle();
    let method = request.method().to_string();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!("http_requests_total", "method" => method, "status" => status).increment(1);
    response
}
