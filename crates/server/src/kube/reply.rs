//! Answers in Kubernetes' shapes: objects as JSON, refusals as `metav1.Status`, including the
//! refusals made before a handler runs (authentication, the policy, a wrong method).

use axum::Json;
use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, WARNING};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use reactor_core::wire::ErrorBody;
use reactor_kube::{About, KubeError};
use serde_json::Value;

/// A `metav1.Status`, for the OpenAPI document.
#[derive(utoipa::ToSchema)]
#[schema(as = KubeStatus)]
#[allow(dead_code)] // read by the derive only
pub(crate) struct KubeStatus {
    kind: String,
    #[schema(rename = "apiVersion")]
    api_version: String,
    /// `Failure`.
    status: String,
    message: String,
    /// `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, `BadRequest`, ...
    reason: String,
    code: u16,
}

/// What any Kubernetes route may answer instead of its result: a `metav1.Status`.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // only its derived description is used
pub(crate) enum Refused {
    /// BadRequest: the query or the body cannot be read
    #[response(status = 400)]
    BadRequest(KubeStatus),
    /// Unauthorized: no token or a wrong one
    #[response(status = 401)]
    Unauthorized(KubeStatus),
    /// Forbidden: the caller's role does not allow it
    #[response(status = 403)]
    Forbidden(KubeStatus),
    /// NotFound: no such resource or object
    #[response(status = 404)]
    NotFound(KubeStatus),
    /// MethodNotAllowed
    #[response(status = 405)]
    MethodNotAllowed(KubeStatus),
    /// AlreadyExists or Conflict: the name is taken, or the resourceVersion is stale
    #[response(status = 409)]
    Conflict(KubeStatus),
    /// Expired: a watch from a compacted resourceVersion
    #[response(status = 410)]
    Expired(KubeStatus),
    /// RequestEntityTooLarge: over the body limit
    #[response(status = 413)]
    TooLarge(KubeStatus),
    /// UnsupportedMediaType: a body or patch format not read here
    #[response(status = 415)]
    UnsupportedMediaType(KubeStatus),
    /// Invalid: the object breaks a rule (names, labels, its Kind's schema, a reactor)
    #[response(status = 422)]
    Invalid(KubeStatus),
    /// InternalError: the store failed
    #[response(status = 500)]
    InternalError(KubeStatus),
}

/// A refusal, about an object when known.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub error: KubeError,
    pub about: Option<(String, String)>,
}

impl From<KubeError> for Refusal {
    fn from(error: KubeError) -> Self {
        Self { error, about: None }
    }
}

impl Refusal {
    pub fn about(error: KubeError, resource: &str, name: &str) -> Self {
        Self {
            error,
            about: Some((resource.to_owned(), name.to_owned())),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (_, code) = self.error.reason_and_code();
        let about = self
            .about
            .as_ref()
            .map(|(resource, name)| About { resource, name });
        let status = serde_json::to_value(self.error.status(about)).unwrap_or_default();
        let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (code, Json(status)).into_response()
    }
}

pub(crate) type Reply = Result<Response, Refusal>;

/// `value` as the answer, with `code` and the admission's warnings as `Warning` headers.
pub(crate) fn json(code: StatusCode, value: Value, warnings: &[String]) -> Response {
    let mut headers = HeaderMap::new();
    for warning in warnings {
        let quoted = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{quoted}\"")) {
            headers.append(WARNING, value);
        }
    }
    (code, headers, Json(value)).into_response()
}

/// The largest refusal body read to reword it as a Status.
const MAX_REFUSAL_BYTES: usize = 64 << 10;

/// Middleware of the Kubernetes routes: a refusal in the `/v1` shape (`{"error", "code"}`,
/// from the authentication, the policy or the router) is answered as a `metav1.Status`
/// with the same HTTP code, as kubectl reads it.
pub(crate) async fn to_status(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if status.is_success() || !is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REFUSAL_BYTES).await else {
        return Response::from_parts(parts, Body::empty());
    };
    match serde_json::from_slice::<ErrorBody>(&bytes) {
        Ok(error) => {
            Refusal::from(KubeError::from_code(status.as_u16(), error.error)).into_response()
        }
        Err(_) => Response::from_parts(parts, Body::from(bytes)),
    }
}
