//! Bearer-token authentication for everything but `/healthz`, `/readyz` and the OpenAPI
//! document.

use super::ApiError;
use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use reactor_core::wire::ErrorCode;

/// Middleware (`from_fn_with_state(token, require_token)`): the request must present the token.
pub async fn require_token(
    State(expected): State<std::sync::Arc<str>>,
    request: Request,
    next: Next,
) -> Response {
    match bearer(request.headers()) {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => {
            next.run(request).await
        }
        Some(_) => ApiError::new(ErrorCode::Unauthorized, "invalid API token").into_response(),
        None => ApiError::new(
            ErrorCode::Unauthorized,
            "missing API token: send 'Authorization: Bearer <token>'",
        )
        .into_response(),
    }
}

/// The token a request presents, if any.
fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Whether a request with `headers` presents the `expected` token.
pub fn presents(headers: &axum::http::HeaderMap, expected: &str) -> bool {
    bearer(headers).is_some_and(|token| constant_time_eq(token.as_bytes(), expected.as_bytes()))
}

/// Compares without an early exit, so the time taken does not tell how much of a guess matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
