//! Who may call the agent's own API: admins of its server, as the server says when asked with
//! the caller's token (`GET /v1/whoami`, as a kubelet asks the apiserver), remembered briefly.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use reactor_client::Client;
use reactor_core::wire::ErrorCode;
use reactor_http::ApiError;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long an answer of the server is remembered.
const REMEMBER: Duration = Duration::from_secs(10);
/// Answers remembered at most: a caller sending fresh tokens cannot grow the agent's memory.
const MAX_REMEMBERED: usize = 256;

/// The server's answer about a token (`Err`: why it may not call the API), and when.
type Answer = (Instant, Result<(), String>);

/// Asks the server who a token is.
#[derive(Clone)]
pub struct Reviewer {
    server: String,
    ca_pem: Option<Arc<str>>,
    /// The server's answers, by the hash of the token asked about.
    remembered: Arc<parking_lot::Mutex<HashMap<String, Answer>>>,
}

impl Reviewer {
    pub fn new(server: &str, ca_pem: Option<&str>) -> Self {
        Self {
            server: server.to_owned(),
            ca_pem: ca_pem.map(Into::into),
            remembered: Default::default(),
        }
    }

    /// Whether `token` is an admin's; the refusal otherwise.
    async fn review(&self, token: &str) -> Result<(), ApiError> {
        let key = reactor_trust::credential::hash(token);
        if let Some((at, answer)) = self.remembered.lock().get(&key)
            && at.elapsed() < REMEMBER
        {
            return answer.clone().map_err(forbidden);
        }
        let client = Client::with_ca(&self.server, Some(token.to_owned()), self.ca_pem.as_deref())
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        let answer = match client.whoami().await {
            Ok(me) if me.role.as_deref() == Some("admin") => Ok(()),
            Ok(me) => Err(format!(
                "{} may not call an agent's API: it needs the role admin",
                me.identity
            )),
            Err(e) if e.code() == Some(ErrorCode::Unauthorized) => {
                Err(format!("the server refused the token: {e}"))
            }
            Err(e) => {
                return Err(ApiError::new(
                    ErrorCode::Internal,
                    format!("cannot ask the server who the caller is: {e}"),
                ));
            }
        };
        let mut remembered = self.remembered.lock();
        if remembered.len() >= MAX_REMEMBERED {
            remembered.retain(|_, (at, _)| at.elapsed() < REMEMBER);
            if remembered.len() >= MAX_REMEMBERED {
                remembered.clear();
            }
        }
        remembered.insert(key, (Instant::now(), answer.clone()));
        answer.map_err(forbidden)
    }
}

fn forbidden(message: String) -> ApiError {
    ApiError::new(ErrorCode::Forbidden, message)
}

/// Middleware: the request must present an admin's token of the agent's server.
pub async fn require_admin(
    State(reviewer): State<Reviewer>,
    request: Request,
    next: Next,
) -> Response {
    let token = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(token) = token else {
        return ApiError::new(
            ErrorCode::Unauthorized,
            "missing API token: send 'Authorization: Bearer <token>' (an admin's of the agent's server)",
        )
        .into_response();
    };
    match reviewer.review(token).await {
        Ok(()) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}
