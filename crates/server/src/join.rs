//! Agents join: an admin makes a join token for one agent id and its labels (`POST
//! /v1/tokens`); the agent, pinning the CA, exchanges it once for its own credential and a
//! certificate for its API (`POST /v1/join`); an admin revokes an agent.

use super::openapi::Refused;
use super::users::{credential_request, revoke_where};
use super::{ApiError, AppState};
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use reactor_core::clock::{now_ms, rfc3339_seconds};
use reactor_core::object::{validate_labels, validate_name};
use reactor_core::wire::{ErrorCode, JoinBody, JoinTokenBody, JoinTokenCreatedBody, JoinedBody};
use reactor_http::JsonBody;
use reactor_http::Path;
use reactor_store::Write;
use reactor_trust::{CREDENTIAL_KIND, CredentialSpec, Presented, Usage, Use, join_token, mint};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// A join token's life when the request names none.
const DEFAULT_TTL: Duration = Duration::from_secs(3600);
/// The longest life a join token may be given.
const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// A join token for one agent id and the labels it will carry.
#[utoipa::path(
    operation_id = "createJoinToken",
    post,
    path = "/v1/tokens",
    tag = "agents",
    request_body = JoinTokenBody,
    responses((status = 200, description = "The join token, shown this once", body = JoinTokenCreatedBody), Refused)
)]
pub async fn create(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<JoinTokenBody>,
) -> Result<Json<JoinTokenCreatedBody>, ApiError> {
    validate_name(&body.agent)
        .map_err(|e| ApiError::invalid(format!("agent id {:?}: {e}", body.agent)))?;
    validate_labels(&body.labels).map_err(|e| ApiError::invalid(e.to_string()))?;
    let ttl = body.ttl_seconds.map_or(DEFAULT_TTL, Duration::from_secs);
    if ttl.is_zero() || ttl > MAX_TTL {
        return Err(ApiError::invalid(format!(
            "ttl {}: a join token lives between 1 second and {}",
            humantime::format_duration(ttl),
            humantime::format_duration(MAX_TTL)
        )));
    }
    for name in &body.api_names {
        reactor_trust::pki::san(name).map_err(|e| ApiError::invalid(format!("apiNames: {e}")))?;
    }
    let minted = mint(Use::Join);
    let expires_ms = now_ms() + ttl.as_millis() as u64;
    let spec = CredentialSpec::Join {
        agent: body.agent.clone(),
        labels: body.labels,
        hash: minted.hash.clone(),
        expires_ms,
        api_names: body.api_names,
    };
    super::users::store_credential(state.store.as_ref(), &minted.id, &spec).await?;
    let token = match &state.ca {
        Some(ca) => join_token(&minted.token, &ca.fingerprint),
        None => minted.token,
    };
    Ok(Json(JoinTokenCreatedBody {
        agent: body.agent,
        token,
        expires: rfc3339_seconds(expires_ms).to_string(),
    }))
}

/// An agent exchanges its join token, once, for its own credential.
#[utoipa::path(
    operation_id = "join",
    post,
    path = "/v1/join",
    tag = "agents",
    security(()),
    request_body = JoinBody,
    responses((status = 200, description = "The agent's credential and its API's certificate", body = JoinedBody), Refused)
)]
pub async fn join(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<JoinBody>,
) -> Result<Json<JoinedBody>, ApiError> {
    let refused = |m: String| ApiError::new(ErrorCode::Unauthorized, m);
    let token = body.token.split("::").next().unwrap_or_default();
    let presented = Presented::parse(token)
        .filter(|p| p.use_ == Use::Join)
        .ok_or_else(|| refused("malformed join token: expected rhj_<id>.<secret>".into()))?;
    let stored = state.store.get(CREDENTIAL_KIND, presented.id).await?;
    let revision = stored.as_ref().map_or(0, |o| o.meta.revision);
    let spec = stored
        .and_then(|o| serde_json::from_value::<CredentialSpec>(o.spec).ok())
        .filter(|spec| presented.matches(spec));
    let Admitted {
        agent,
        labels,
        api_names,
    } = admit(spec, presented.id, now_ms()).map_err(refused)?;
    let (api_cert_pem, api_key_pem) = match &state.ca {
        Some(ca) => {
            let mut names = vec![
                agent.clone(),
                "localhost".into(),
                "127.0.0.1".into(),
                "::1".into(),
            ];
            // Only names the admin gave with the token: an agent choosing its own could ask
            // for the server's and stand in for it.
            names.extend(api_names);
            names.sort();
            names.dedup();
            let issued = ca
                .ca
                .issue(&format!("agent {agent}"), &names, Usage::Server)
                .map_err(|e| ApiError::invalid(format!("cannot certify the agent's API: {e}")))?;
            (Some(issued.cert_pem), Some(issued.key_pem))
        }
        None => (None, None),
    };
    let minted = mint(Use::Agent);
    let credential = CredentialSpec::Agent {
        agent: agent.clone(),
        labels: labels.clone(),
        hash: minted.hash.clone(),
    };
    // One transaction: the join token goes (used once, whichever replica is asked) as the
    // agent's credential comes.
    let writes = vec![
        Write::Delete {
            kind: CREDENTIAL_KIND.into(),
            name: presented.id.to_owned(),
            expected: Some(revision),
        },
        Write::Apply(credential_request(&minted.id, &credential, Some(0))?),
    ];
    state.store.commit(writes).await.map_err(|e| {
        if reactor_http::code_of(&e) == ErrorCode::Conflict {
            refused(unknown(presented.id))
        } else {
            e.into()
        }
    })?;
    Ok(Json(JoinedBody {
        agent,
        labels,
        token: minted.token,
        api_cert_pem,
        api_key_pem,
    }))
}

/// What a join token admits: the agent it is for, its labels, its API's names.
#[derive(Debug, PartialEq)]
struct Admitted {
    agent: String,
    labels: BTreeMap<String, String>,
    api_names: Vec<String>,
}

/// Whether `spec`, what is stored for join token `id` (when its secret matched), admits an
/// agent at `now_ms`; else why not.
fn admit(spec: Option<CredentialSpec>, id: &str, now_ms: u64) -> Result<Admitted, String> {
    match spec {
        Some(CredentialSpec::Join {
            agent,
            labels,
            expires_ms,
            api_names,
            ..
        }) => {
            if now_ms >= expires_ms {
                return Err(format!(
                    "the join token for agent {agent} expired at {}",
                    rfc3339_seconds(expires_ms)
                ));
            }
            Ok(Admitted {
                agent,
                labels,
                api_names,
            })
        }
        _ => Err(unknown(id)),
    }
}

fn unknown(id: &str) -> String {
    format!("unknown or already used join token {id}")
}

/// The cluster's CA certificate, which a joining agent checks against its join token's pin.
#[utoipa::path(
    operation_id = "caCertificate",
    get,
    path = "/v1/ca",
    tag = "server",
    security(()),
    responses((status = 200, description = "The CA certificate (PEM)", content_type = "application/x-pem-file", body = String), (status = 404, description = "The server has no CA (plain HTTP, or certificates given without --tls-ca)"))
)]
pub async fn ca(State(state): State<AppState>) -> Response {
    match &state.ca {
        Some(ca) => (
            [(axum::http::header::CONTENT_TYPE, "application/x-pem-file")],
            ca.anchor_pem.clone(),
        )
            .into_response(),
        None => ApiError::not_found("this server has no CA").into_response(),
    }
}

/// Revokes an agent's credentials and unused join tokens: its feed ends at once and it is
/// refused from then on.
#[utoipa::path(
    operation_id = "revokeAgent",
    post,
    path = "/v1/agents/{id}/revoke",
    tag = "agents",
    params(super::agents::AgentPath),
    responses((status = 200, description = "How many credentials were revoked", body = Object), Refused)
)]
pub async fn revoke(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let revoked = revoke_where(&state, |spec| match spec {
        CredentialSpec::Agent { agent, .. } | CredentialSpec::Join { agent, .. } => *agent == id,
        _ => false,
    })
    .await?;
    if revoked == 0 {
        return Err(ApiError::not_found(format!(
            "agent {id} holds no credential"
        )));
    }
    Ok(Json(json!({ "revoked": revoked })))
}

/// The cluster's CA, which issues agents' API certificates, and the CA clients check the
/// server's certificate against (the same one unless the operator brought their own),
/// which join tokens pin by its fingerprint.
pub struct ServerCa {
    pub ca: reactor_trust::Ca,
    pub anchor_pem: String,
    pub fingerprint: String,
}

impl ServerCa {
    pub fn new(
        ca: reactor_trust::Ca,
        anchor_pem: Option<String>,
    ) -> Result<Self, reactor_trust::PkiError> {
        let anchor_pem = anchor_pem.unwrap_or_else(|| ca.cert_pem().to_owned());
        let fingerprint = reactor_trust::fingerprint(&anchor_pem)?;
        Ok(Self {
            ca,
            anchor_pem,
            fingerprint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(expires_ms: u64) -> CredentialSpec {
        CredentialSpec::Join {
            agent: "edge-1".into(),
            labels: BTreeMap::from([("zone".into(), "a".into())]),
            hash: "h".into(),
            expires_ms,
            api_names: vec!["edge-1.example".into()],
        }
    }

    /// The clock is the caller's: a token admits up to the millisecond before it expires,
    /// and is refused from then on, naming when it expired.
    #[test]
    fn a_join_token_admits_until_its_time_to_live_ends() {
        let expires = 1_800_000_000_000;
        assert_eq!(
            admit(Some(token(expires)), "t1", expires - 1),
            Ok(Admitted {
                agent: "edge-1".into(),
                labels: BTreeMap::from([("zone".into(), "a".into())]),
                api_names: vec!["edge-1.example".into()],
            })
        );
        for now in [expires, expires + 3_600_000] {
            assert_eq!(
                admit(Some(token(expires)), "t1", now),
                Err("the join token for agent edge-1 expired at 2027-01-15T08:00:00Z".into())
            );
        }
    }

    #[test]
    fn only_a_stored_join_token_admits() {
        let user = CredentialSpec::User {
            user: "alice".into(),
            role: reactor_trust::Role::Admin,
            hash: "h".into(),
        };
        for spec in [None, Some(user)] {
            assert_eq!(
                admit(spec, "t1", 0),
                Err("unknown or already used join token t1".into())
            );
        }
    }
}
