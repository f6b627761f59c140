//! The HTTP server: routes, shared state, and the listener.

mod admission;
mod agents;
mod audit;
mod auth;
mod components;
mod dry_run;
mod events;
mod finalizers;
mod join;
mod kube;
mod logs;
mod metrics_route;
mod objects;
mod openapi;
mod paged_list;
mod state_metrics;
mod status;
mod users;
mod watch;

pub use audit::{AuditLog, DEFAULT_MAX_BYTES as AUDIT_MAX_BYTES};
pub use auth::{Auth, Caller, Credentials};
pub use components::ComponentsApi;

/// Installs the process-wide metrics recorder now (it is otherwise installed at the first
/// request), so that what happens before the server listens, such as loading the
/// components found at start, is counted too.
pub fn install_metrics() {
    metrics_route::handle();
}

use axum::Router;
use reactor_http::{ApiError, TlsListener};
use reactor_store::Store;
use std::net::SocketAddr;
use std::sync::Arc;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
    #[error("cannot write the OpenAPI document: {0}")]
    Document(serde_json::Error),
    #[error("cannot open the audit log {path}: {source}")]
    Audit {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("the CA cannot be used: {0}")]
    Ca(#[from] reactor_trust::PkiError),
}

/// What the server needs to answer requests.
pub struct ServerConfig {
    pub listen: String,
    /// The bootstrap admin token (`<data>/token`).
    pub token: String,
    /// Serve HTTPS with this configuration; `None`: plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The cluster's CA: join tokens pin it and agents' API certificates are issued from it.
    pub ca: Option<reactor_trust::Ca>,
    /// The CA the server's own certificate is checked against, when not `ca` (the operator's
    /// own certificates): what `/v1/ca` serves and join tokens pin.
    pub ca_anchor: Option<String>,
    /// Where the audit log is written; `None`: nowhere.
    pub audit: Option<std::path::PathBuf>,
    pub store: Arc<dyn Store>,
    pub admission: Option<Arc<dyn reactor_controller::Admission>>,
    pub components: Option<ComponentsApi>,
    /// The engine's events (`GET /v1/events`); the API records its own there too.
    pub events: Option<reactor_controller::Events>,
    /// The engine's report book, which agents' reports go to; a server without an engine
    /// keeps its own.
    pub reports: Option<reactor_nimbus::ReportBook>,
    /// The largest request body any route reads (component uploads excepted).
    pub max_request_bytes: usize,
    /// The budget of agents' reports in flight, in bytes of their requests' bodies: a
    /// report request waits, unread, until its share is free.
    pub reports_in_flight_bytes: usize,
    /// How long a report request's body may take to arrive once its share is granted.
    pub report_body_timeout: std::time::Duration,
    /// How far back agents' feeds can resume from the fan-out's log of item changes.
    pub fanout: reactor_nimbus::FanoutLimits,
    /// The API group the Kubernetes API serves kinds in when their Kind objects name none.
    pub api_group: String,
}

/// The request body limit that fits objects of `max_object_bytes`: a few such objects in
/// one apply, and never less than 2 MiB.
pub fn request_limit(max_object_bytes: usize) -> usize {
    max_object_bytes.saturating_mul(4).max(2 << 20)
}

#[derive(Clone)]
pub(crate) struct AppState {
    pub store: Arc<dyn Store>,
    pub auth: Auth,
    pub audit: Arc<AuditLog>,
    pub ca: Option<Arc<join::ServerCa>>,
    pub admission: Option<Arc<dyn reactor_controller::Admission>>,
    pub components: Option<ComponentsApi>,
    pub events: Option<reactor_controller::Events>,
    /// The one writer of agents' reports.
    pub reporter: reactor_nimbus::Reporter,
    /// Agents' latest reports, in memory.
    pub reports: reactor_nimbus::ReportBook,
    /// The items, followed once for every agent's feed.
    pub fanout: reactor_nimbus::Fanout,
    /// The Kubernetes API's default group (`serve --api-group`).
    pub api_group: String,
    /// The largest request body any route reads (component uploads excepted).
    pub max_request_bytes: usize,
    /// How long a report request's body may take to arrive once its share is granted.
    pub report_body_timeout: std::time::Duration,
}

/// A bound, not yet running, server.
pub struct Server {
    listener: tokio::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
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
        let reports = config
            .reports
            .unwrap_or_else(|| reactor_nimbus::ReportBook::start(config.store.clone()));
        let audit = match &config.audit {
            Some(path) => {
                AuditLog::open(path, AUDIT_MAX_BYTES).map_err(|source| ServeError::Audit {
                    path: path.clone(),
                    source,
                })?
            }
            None => AuditLog::disabled(),
        };
        let ca = match config.ca {
            Some(ca) => Some(Arc::new(join::ServerCa::new(ca, config.ca_anchor)?)),
            None => None,
        };
        let state = AppState {
            store: config.store.clone(),
            auth: Auth::new(&config.token, Credentials::follow(config.store.clone())),
            audit: Arc::new(audit),
            ca,
            admission: config.admission,
            components: config.components,
            events: config.events,
            reporter: reactor_nimbus::Reporter::with_budget(
                config.store.clone(),
                reports.clone(),
                config.reports_in_flight_bytes,
            ),
            reports,
            fanout: reactor_nimbus::Fanout::start(config.store.clone(), config.fanout),
            api_group: config.api_group,
            max_request_bytes: config.max_request_bytes,
            report_body_timeout: config.report_body_timeout,
        };
        Ok(Self {
            listener,
            tls: config.tls,
            router: router(state, config.max_request_bytes)?,
        })
    }

    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener.local_addr().map_err(ServeError::Serve)
    }

    /// `https` or `http`: what the listener speaks.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Serves until `shutdown` completes.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        match self.tls {
            Some(tls) => {
                let listener = TlsListener::new(self.listener, tls).map_err(ServeError::Serve)?;
                axum::serve(listener, self.router)
                    .with_graceful_shutdown(shutdown)
                    .await
            }
            None => {
                axum::serve(self.listener, self.router)
                    .with_graceful_shutdown(shutdown)
                    .await
            }
        }
        .map_err(ServeError::Serve)
    }
}

/// The routes and their OpenAPI document, built from one list: a route is registered only
/// with its `#[utoipa::path]`, so the document names every route the router serves.
fn router(state: AppState, max_request_bytes: usize) -> Result<Router, ServeError> {
    let (api, mut document) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(objects::apply_many))
        .routes(routes!(objects::dry_run_many))
        .routes(routes!(objects::list))
        .routes(routes!(
            objects::get_one,
            objects::apply_one,
            objects::delete
        ))
        .routes(routes!(objects::set_status))
        .routes(routes!(finalizers::remove))
        .routes(routes!(watch::watch_all))
        .routes(routes!(watch::watch_kind))
        .routes(routes!(components::list))
        .routes(
            routes!(components::get_one, components::upload, components::remove)
                // componentize-py and componentize-js components are 12-18 MB.
                .layer(axum::extract::DefaultBodyLimit::max(64 << 20)),
        )
        .routes(routes!(components::clear_rollback))
        .routes(routes!(components::approve))
        .routes(routes!(logs::lines))
        .routes(routes!(events::list))
        .routes(routes!(agents::list))
        .routes(routes!(agents::register, agents::remove))
        .routes(routes!(agents::heartbeat))
        .routes(routes!(agents::items))
        .routes(routes!(agents::feed))
        .routes(routes!(agents::report))
        .routes(routes!(metrics_route::render))
        .routes(routes!(users::whoami))
        .routes(routes!(users::list, users::create))
        .routes(routes!(users::revoke))
        .routes(routes!(join::create))
        .routes(routes!(join::revoke))
        .routes(routes!(audit::list))
        .layer(axum::extract::DefaultBodyLimit::max(max_request_bytes))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .split_for_parts();
    let (open, open_document) = OpenApiRouter::default()
        .routes(routes!(openapi::healthz))
        .routes(routes!(openapi::readyz))
        .routes(routes!(openapi::document))
        .routes(routes!(join::ca))
        .routes(routes!(join::join))
        .layer(axum::extract::DefaultBodyLimit::max(64 << 10))
        .split_for_parts();
    document.merge(open_document);
    // The Kubernetes API: behind the same authentication, policy and audit as `/v1`, and
    // every refusal answered as a `metav1.Status`.
    let (kube_api, kube_document) = kube::routes()
        .layer(axum::extract::DefaultBodyLimit::max(max_request_bytes))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .split_for_parts();
    document.merge(kube_document);
    let kube_api = kube_api.layer(axum::middleware::map_response(kube::to_status));
    let document = openapi::Document(document.to_json().map_err(ServeError::Document)?.into());
    Ok(open
        .layer(axum::Extension(document))
        .merge(api)
        .merge(kube_api)
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            let mut error = ApiError::invalid(format!(
                "method {method} is not allowed on this route (see the Allow header)"
            ));
            error.status = axum::http::StatusCode::METHOD_NOT_ALLOWED;
            error
        })
        .layer(axum::middleware::from_fn(metrics_route::count_requests))
        .with_state(state))
}
