//! The HTTP server: routes, shared state, and the listener.

mod agents;
mod auth;
mod body;
mod components;
mod error;
mod metrics_route;
mod objects;
mod watch;

pub use auth::require_token;
pub use components::ComponentsApi;
pub use error::ApiError;

/// Installs the process-wide metrics recorder now (it is otherwise installed at the first
/// request), so that what happens before the server listens, such as loading the
/// components found at start, is counted too.
pub fn install_metrics() {
    metrics_route::handle();
}

use crate::store::Store;
use axum::Router;
use axum::routing::{get, post, put};
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
}

/// What the server needs to answer requests.
pub struct ServerConfig {
    pub listen: String,
    pub token: String,
    pub store: Arc<dyn Store>,
    pub admission: Option<Arc<dyn crate::controller::Admission>>,
    pub components: Option<ComponentsApi>,
    /// The largest request body any route reads (component uploads excepted).
    pub max_request_bytes: usize,
}

/// The request body limit that fits objects of `max_object_bytes`: a few such objects in
/// one apply, and never less than 2 MiB.
pub fn request_limit(max_object_bytes: usize) -> usize {
    max_object_bytes.saturating_mul(4).max(2 << 20)
}

#[derive(Clone)]
pub(crate) struct AppState {
    pub store: Arc<dyn Store>,
    pub token: Arc<str>,
    pub admission: Option<Arc<dyn crate::controller::Admission>>,
    pub components: Option<ComponentsApi>,
    /// The one writer of agents' reports.
    pub reporter: crate::nimbus::Reporter,
}

/// A bound, not yet running, server.
pub struct Server {
    listener: tokio::net::TcpListener,
    router: Router,
}

impl Server {
    pub async fn bind(config: ServerConfig) -> Result<Self, ServeError> {
        let listener = tokio::net::TcpListener::bind(&config.listen)
            .await
            .map_err(|source| ServeError::Bind {
                addr: config.listen.clone(),
                source,
            })?;
        let state = AppState {
            store: config.store.clone(),
            token: config.token.into(),
            admission: config.admission,
            components: config.components,
            reporter: crate::nimbus::Reporter::start(config.store.clone()),
        };
        Ok(Self {
            listener,
            router: router(state, config.max_request_bytes),
        })
    }

    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener.local_addr().map_err(ServeError::Serve)
    }

    /// Serves until `shutdown` completes.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(ServeError::Serve)
    }
}

fn router(state: AppState, max_request_bytes: usize) -> Router {
    let api = Router::new()
        .route("/v1/objects", axum::routing::post(objects::apply_many))
        .route("/v1/objects/{kind}", get(objects::list))
        .route(
            "/v1/objects/{kind}/{name}",
            get(objects::get_one)
                .put(objects::apply_one)
                .delete(objects::delete),
        )
        .route("/v1/objects/{kind}/{name}/status", put(objects::set_status))
        .route("/v1/watch", get(watch::watch_all))
        .route("/v1/watch/{kind}", get(watch::watch_kind))
        .route("/v1/components", get(components::list))
        .route(
            "/v1/components/{name}",
            get(components::get_one)
                .put(components::upload)
                .delete(components::remove)
                // componentize-py and componentize-js components are 12-18 MB.
                .layer(axum::extract::DefaultBodyLimit::max(64 << 20)),
        )
        .route("/v1/agents", get(agents::list))
        .route("/v1/agents/{id}", put(agents::register))
        .route("/v1/agents/{id}/heartbeat", post(agents::heartbeat))
        .route("/v1/nimbus/items", get(agents::items))
        .route("/v1/nimbus/watch", post(agents::feed))
        .route("/v1/nimbus/status", post(agents::report))
        .route("/metrics", get(metrics_route::render))
        .layer(axum::extract::DefaultBodyLimit::max(max_request_bytes))
        .route_layer(axum::middleware::from_fn_with_state(
            state.token.clone(),
            auth::require_token,
        ));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(api)
        .fallback(|| async { ApiError::not_found("no such route") })
        .layer(axum::middleware::from_fn(metrics_route::count_requests))
        .with_state(state)
}
