//! `/v1/whoami` and `/v1/users`: who a credential is, and the users an admin makes and revokes.

use super::auth::Caller;
use super::openapi::Refused;
use super::{ApiError, AppState};
use axum::extract::State;
use axum::{Extension, Json};
use reactor_core::object::{ApplyRequest, validate_name};
use reactor_core::wire::{ErrorCode, UserBody, UserCreatedBody, UserView, WhoAmIBody};
use reactor_http::JsonBody;
use reactor_http::Path;
use reactor_store::Store;
use reactor_trust::{CREDENTIAL_KIND, CredentialSpec, Role, Use, mint};
use serde_json::json;

/// Who the request's credential is.
#[utoipa::path(
    operation_id = "whoami",
    get,
    path = "/v1/whoami",
    tag = "users",
    responses((status = 200, description = "The caller's identity and role", body = WhoAmIBody), Refused)
)]
pub async fn whoami(Extension(Caller(caller)): Extension<Caller>) -> Json<WhoAmIBody> {
    Json(WhoAmIBody {
        identity: caller.to_string(),
        role: caller.role().map(|r| r.to_string()),
    })
}

/// Every user (not their tokens, which the server never keeps).
#[utoipa::path(
    operation_id = "listUsers",
    get,
    path = "/v1/users",
    tag = "users",
    responses((status = 200, description = "Each user: name, role, credential id", body = Vec<UserView>), Refused)
)]
pub async fn list(State(state): State<AppState>) -> Json<Vec<UserView>> {
    let mut users: Vec<UserView> = state
        .auth
        .credentials
        .all()
        .into_iter()
        .filter_map(|(id, spec)| match spec {
            CredentialSpec::User { user, role, .. } => Some(UserView {
                name: user,
                role: role.to_string(),
                id,
            }),
            _ => None,
        })
        .collect();
    users.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    Json(users)
}

/// A new user with a role; the answer holds its token, shown this once.
#[utoipa::path(
    operation_id = "createUser",
    post,
    path = "/v1/users",
    tag = "users",
    request_body = UserBody,
    responses((status = 200, description = "The user and its token", body = UserCreatedBody), Refused)
)]
pub async fn create(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<UserBody>,
) -> Result<Json<UserCreatedBody>, ApiError> {
    validate_name(&body.name)
        .map_err(|e| ApiError::invalid(format!("user name {:?}: {e}", body.name)))?;
    let role: Role = body.role.parse().map_err(ApiError::invalid)?;
    if body.name == super::auth::BOOTSTRAP_ADMIN || has_user(&state, &body.name) {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "user {} exists: revoke it first to give it a new token",
                body.name
            ),
        ));
    }
    let minted = mint(Use::User);
    let spec = CredentialSpec::User {
        user: body.name.clone(),
        role,
        hash: minted.hash.clone(),
    };
    store_credential(state.store.as_ref(), &minted.id, &spec).await?;
    Ok(Json(UserCreatedBody {
        name: body.name,
        role: role.to_string(),
        id: minted.id,
        token: minted.token,
    }))
}

fn has_user(state: &AppState, name: &str) -> bool {
    state
        .auth
        .credentials
        .all()
        .iter()
        .any(|(_, spec)| matches!(spec, CredentialSpec::User { user, .. } if user == name))
}

/// The path parameter of one user, for the OpenAPI document.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // read by the derive only
pub(super) struct UserPath {
    /// The user's name.
    name: String,
}

/// Revokes a user: its requests are refused from now on, and its open watches end.
#[utoipa::path(
    operation_id = "revokeUser",
    delete,
    path = "/v1/users/{name}",
    tag = "users",
    params(UserPath),
    responses((status = 200, description = "How many credentials were revoked", body = Object), Refused)
)]
pub async fn revoke(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let revoked = revoke_where(
        &state,
        |spec| matches!(spec, CredentialSpec::User { user, .. } if *user == name),
    )
    .await?;
    if revoked == 0 {
        return Err(ApiError::not_found(format!("no user {name}")));
    }
    Ok(Json(json!({ "revoked": revoked })))
}

/// Replaces every credential `which` selects by a revocation record; how many it replaced.
pub(crate) async fn revoke_where(
    state: &AppState,
    which: impl Fn(&CredentialSpec) -> bool,
) -> Result<usize, ApiError> {
    let now = reactor_core::clock::now_ms();
    let mut revoked = 0;
    for (id, spec) in state.auth.credentials.all() {
        if !which(&spec) {
            continue;
        }
        let record = CredentialSpec::Revoked {
            subject: spec.subject(),
            revoked_ms: now,
        };
        let request = credential_request(&id, &record, None)?;
        state.store.apply(vec![request]).await?;
        revoked += 1;
    }
    Ok(revoked)
}

/// Stores a new credential under `id` (which must be new).
pub(crate) async fn store_credential(
    store: &dyn Store,
    id: &str,
    spec: &CredentialSpec,
) -> Result<(), ApiError> {
    store
        .apply(vec![credential_request(id, spec, Some(0))?])
        .await?;
    Ok(())
}

/// The write that stores `spec` as credential `id`; `expected` as in [`ApplyRequest`]
/// (`Some(0)`: it must be new).
pub(crate) fn credential_request(
    id: &str,
    spec: &CredentialSpec,
    expected: Option<u64>,
) -> Result<ApplyRequest, ApiError> {
    Ok(ApplyRequest {
        kind: CREDENTIAL_KIND.into(),
        name: id.to_owned(),
        labels: Default::default(),
        annotations: Default::default(),
        spec: serde_json::to_value(spec)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?,
        expected_revision: expected,
        owner: None,
    })
}
