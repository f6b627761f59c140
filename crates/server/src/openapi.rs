//! The OpenAPI 3 document of the API, generated from the routes and the wire types (utoipa),
//! and served without a token at `/v1/openapi.json`.

use axum::Extension;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use reactor_core::wire::{ErrorBody, ErrorCode};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoResponses, Modify, OpenApi};

/// The security scheme every route but `/healthz`, `/readyz` and this document requires.
pub const TOKEN: &str = "token";

/// The document's fixed parts; the router adds each route's path as it registers it.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "reactor-host",
        description = "The HTTP API of `reactor-host serve`. Errors are `{\"error\", \"code\"}`; \
                       every body is one JSON object of the route's shape, unknown fields refused."
    ),
    components(schemas(ErrorBody, ErrorCode)),
    modifiers(&BearerToken),
    security(("token" = [])),
    tags(
        (name = "objects", description = "Objects: apply, get, list, delete, status"),
        (name = "watch", description = "Changes as newline-delimited JSON"),
        (name = "components", description = "The WASM components the server runs"),
        (name = "agents", description = "Agents and the items meant for them"),
        (name = "server", description = "Health, metrics and this document"),
        (name = "kubernetes", description = "The Kubernetes API for kubectl: discovery, and each Kind's objects as a cluster-scoped resource; errors are `metav1.Status`"),
    )
)]
pub struct ApiDoc;

struct BearerToken;

impl Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                TOKEN,
                SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
            );
    }
}

/// What any route behind the token may answer instead of its result.
#[derive(IntoResponses)]
#[allow(dead_code)] // only its derived description is used
pub enum Refused {
    /// invalid: the request, its query or its body is wrong; the message says what and where
    #[response(status = 400)]
    Invalid(ErrorBody),
    /// unauthorized: no token, a wrong one, or the component API is off
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// forbidden: the host's own kinds (NimbusItem, NimbusReport, Agent, ComponentRollback, Credential, ComponentApproval) are written only by the host
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// not_found: no such object, agent, component or route
    #[response(status = 404)]
    NotFound(ErrorBody),
    /// conflict: a stale revision, or a change the object's state does not allow
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// invalid: the body is over the request limit
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// internal: the store failed
    #[response(status = 500)]
    Internal(ErrorBody),
}

/// What a watch may answer besides [`Refused`].
#[derive(IntoResponses)]
#[allow(dead_code)] // only its derived description is used
pub enum Compacted {
    /// compacted: the revision is older than the log keeps; list again and watch from there
    #[response(status = 410)]
    Gone(ErrorBody),
}

/// What an agents' report may answer besides [`Refused`].
#[derive(IntoResponses)]
#[allow(dead_code)] // only its derived description is used
pub enum BodyLate {
    /// invalid: the body did not arrive within `serve --report-body-timeout`; send it again
    #[response(status = 408)]
    Late(ErrorBody),
}

/// The document itself, written once when the router is built.
#[derive(Clone)]
pub struct Document(pub bytes::Bytes);

#[utoipa::path(
    operation_id = "openapi",
    get,
    path = "/v1/openapi.json",
    tag = "server",
    security(()),
    responses((status = 200, description = "This document (OpenAPI 3)", content_type = "application/json", body = Object))
)]
pub async fn document(Extension(document): Extension<Document>) -> Response {
    ([(CONTENT_TYPE, "application/json")], document.0).into_response()
}

#[utoipa::path(
    operation_id = "healthz",
    get,
    path = "/healthz",
    tag = "server",
    security(()),
    responses(
        (status = 200, description = "The server answers and its store is sound: `ok`", content_type = "text/plain", body = String),
        (status = 503, description = "The store found itself damaged: `store damaged: N problem(s) found`, then, to a request with the token, one line per problem and what each check did", content_type = "text/plain", body = String)
    )
)]
pub async fn healthz(
    axum::extract::State(state): axum::extract::State<super::AppState>,
    headers: axum::http::HeaderMap,
) -> Response {
    let health = state.store.health();
    if !health.damaged() {
        return "ok\n".into_response();
    }
    let mut text = format!("store damaged: {} problem(s) found\n", health.found);
    // What was found names objects: only a caller with the token is told.
    if state.auth.admin_in(&headers) {
        for problem in &health.problems {
            text.push_str(&format!("problem: {problem}\n"));
        }
        if health.found > health.problems.len() {
            text.push_str(&format!(
                "problem: ... and {} more\n",
                health.found - health.problems.len()
            ));
        }
        for check in &health.checks {
            text.push_str(&format!("check: {check}\n"));
        }
    }
    (axum::http::StatusCode::SERVICE_UNAVAILABLE, text).into_response()
}

/// How long `/readyz` waits for the store's answer.
const READY_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

#[utoipa::path(
    operation_id = "readyz",
    get,
    path = "/readyz",
    tag = "server",
    security(()),
    responses(
        (status = 200, description = "The server can serve: its store answers a read within 2 s and is sound: `ok`", content_type = "text/plain", body = String),
        (status = 503, description = "It cannot now: `store unreachable: …` or `store damaged: N problem(s) found` (`/healthz` tells whether the process itself is alive)", content_type = "text/plain", body = String)
    )
)]
pub async fn readyz(
    axum::extract::State(state): axum::extract::State<super::AppState>,
) -> Response {
    let unready =
        |text: String| (axum::http::StatusCode::SERVICE_UNAVAILABLE, text).into_response();
    let health = state.store.health();
    if health.damaged() {
        return unready(format!(
            "store damaged: {} problem(s) found\n",
            health.found
        ));
    }
    // One read: whether such an object exists does not matter, only that the store answers.
    match tokio::time::timeout(READY_WITHIN, state.store.get("Kind", "readyz")).await {
        Ok(Ok(_)) => "ok\n".into_response(),
        Ok(Err(e)) => unready(format!("store unreachable: {e}\n")),
        Err(_) => unready(format!(
            "store unreachable: no answer within {} s\n",
            READY_WITHIN.as_secs()
        )),
    }
}
