//! Who a request is from and whether it may do what it asks: the bearer token resolved to an
//! identity without a store read, the route checked against the policy, the request audited.

mod credentials;
pub mod policy;

pub use credentials::Credentials;

use super::{ApiError, AppState};
use axum::body::Body;
use axum::extract::{MatchedPath, RawPathParams, Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use reactor_core::wire::ErrorCode;
use reactor_trust::credential::constant_time_eq;
use reactor_trust::{CredentialSpec, Identity, Presented, Role};
use std::sync::Arc;
use tokio::sync::watch;

/// The name the data folder's token (the bootstrap admin credential) is known by.
pub const BOOTSTRAP_ADMIN: &str = "admin";

/// What requests are authenticated against: the bootstrap admin token and the stored
/// credentials.
#[derive(Clone)]
pub struct Auth {
    admin_token: Arc<str>,
    pub(crate) credentials: Arc<Credentials>,
}

/// The identity of the request, for handlers (`Extension<Caller>`).
#[derive(Debug, Clone)]
pub struct Caller(pub Identity);

impl Auth {
    pub fn new(admin_token: &str, credentials: Arc<Credentials>) -> Self {
        Self {
            admin_token: admin_token.into(),
            credentials,
        }
    }

    /// Whether a request with `headers` presents the bootstrap admin token.
    pub fn admin_in(&self, headers: &axum::http::HeaderMap) -> bool {
        bearer(headers).is_some_and(|token| self.is_admin_token(token))
    }

    /// Whether `token` is the bootstrap admin token.
    pub fn is_admin_token(&self, token: &str) -> bool {
        constant_time_eq(token.as_bytes(), self.admin_token.as_bytes())
    }

    /// Who `token` is, and a receiver told when that credential is revoked (none for the
    /// bootstrap token); a one-line refusal otherwise that never repeats the token.
    pub async fn identify(
        &self,
        token: &str,
    ) -> Result<(Identity, Option<watch::Receiver<bool>>), ApiError> {
        if self.is_admin_token(token) {
            return Ok((
                Identity::User {
                    name: BOOTSTRAP_ADMIN.into(),
                    role: Role::Admin,
                },
                None,
            ));
        }
        let unauthorized = |m: String| ApiError::new(ErrorCode::Unauthorized, m);
        let Some(presented) = Presented::parse(token) else {
            return Err(unauthorized("invalid API token".into()));
        };
        let Some((spec, revoked)) = self.credentials.lookup(presented.id).await else {
            return Err(unauthorized(format!(
                "unknown credential {} (deleted, or never made here)",
                presented.id
            )));
        };
        if let CredentialSpec::Revoked { subject, .. } = &spec {
            return Err(unauthorized(format!(
                "the credential {} of {subject} was revoked",
                presented.id
            )));
        }
        if !presented.matches(&spec) {
            return Err(unauthorized(format!(
                "invalid secret for credential {}",
                presented.id
            )));
        }
        match spec {
            CredentialSpec::User { user, role, .. } => {
                Ok((Identity::User { name: user, role }, Some(revoked)))
            }
            CredentialSpec::Agent { agent, labels, .. } => {
                Ok((Identity::Agent { id: agent, labels }, Some(revoked)))
            }
            CredentialSpec::Join { agent, .. } => Err(unauthorized(format!(
                "a join token (for agent {agent}) is only for `reactor-host agent --join`"
            ))),
            CredentialSpec::Revoked { .. } => Err(unauthorized("revoked".into())),
        }
    }
}

/// The token a request presents, if any.
pub(crate) fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Middleware on every route but the open ones: authenticates, authorizes by the policy, and
/// ends a streamed answer when the caller's credential is revoked. Every refusal and every
/// change is audited.
pub(crate) async fn authenticate(
    State(state): State<AppState>,
    matched: Option<MatchedPath>,
    params: Result<RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
    mut request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let route = matched.map(|m| m.as_str().to_owned()).unwrap_or_default();
    let params: Vec<(String, String)> = params
        .map(|p| {
            p.iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let agent = (route.starts_with("/v1/agents/{id}"))
        .then(|| param("id"))
        .flatten();
    let audit = super::audit::Entry::new(
        &method,
        request.uri().path(),
        param("kind").or(param("plural")).as_deref(),
        param("name").or(param("id")).as_deref(),
    );
    let authorized = authorize(&state, &method, &route, agent.as_deref(), request.headers()).await;
    let (identity, revoked) = match authorized {
        Ok(allowed) => allowed,
        Err((error, identity)) => {
            let response = error.into_response();
            state
                .audit
                .record(audit.finish(identity.as_ref(), response.status()));
            return response;
        }
    };
    request.extensions_mut().insert(Caller(identity.clone()));
    let response = next.run(request).await;
    if super::audit::audited(&method, &route) || !response.status().is_success() {
        state
            .audit
            .record(audit.finish(Some(&identity), response.status()));
    }
    match revoked {
        Some(revoked) if streamed(&response) => end_when_revoked(response, revoked),
        _ => response,
    }
}

type Refusal = (ApiError, Option<Identity>);

/// The caller of `method` `route`, if the policy lets it call it; else the refusal and who
/// was refused, if known.
async fn authorize(
    state: &AppState,
    method: &axum::http::Method,
    route: &str,
    agent: Option<&str>,
    headers: &axum::http::HeaderMap,
) -> Result<(Identity, Option<watch::Receiver<bool>>), Refusal> {
    let rule = policy::rule(method, route).ok_or_else(|| {
        let message = format!("{method} {route} has no entry in the authorization policy");
        (ApiError::new(ErrorCode::Forbidden, message), None)
    })?;
    let token = bearer(headers).ok_or_else(|| {
        let message = "missing API token: send 'Authorization: Bearer <token>'";
        (ApiError::new(ErrorCode::Unauthorized, message), None)
    })?;
    let (identity, revoked) = state.auth.identify(token).await.map_err(|e| (e, None))?;
    match policy::allow(rule, &identity, agent) {
        Ok(()) => Ok((identity, revoked)),
        Err(e) => Err((e, Some(identity))),
    }
}

/// Marks a response streamed in another type than `application/x-ndjson` (the Kubernetes
/// API's watches), so that it too ends when its caller's credential is revoked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Streamed;

fn streamed(response: &Response) -> bool {
    response.extensions().get::<Streamed>().is_some()
        || response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/x-ndjson"))
}

/// The same answer, ended as soon as `revoked` says so (or its credential is forgotten).
fn end_when_revoked(response: Response, mut revoked: watch::Receiver<bool>) -> Response {
    let (parts, body) = response.into_parts();
    let ended = async move {
        let _ = revoked.wait_for(|r| *r).await;
    };
    let stream = body.into_data_stream().take_until(ended);
    Response::from_parts(parts, Body::from_stream(stream))
}
