//! The client's side of trust: who am I, users, join tokens, joining, revoking, the audit log.

use super::client::{Client, ClientError, reason};
use reactor_core::wire::{
    JoinBody, JoinTokenBody, JoinTokenCreatedBody, JoinedBody, UserBody, UserCreatedBody, UserView,
    WhoAmIBody,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

impl Client {
    pub async fn whoami(&self) -> Result<WhoAmIBody, ClientError> {
        self.json(self.request(reqwest::Method::GET, "/v1/whoami"))
            .await
    }

    pub async fn users(&self) -> Result<Vec<UserView>, ClientError> {
        self.json(self.request(reqwest::Method::GET, "/v1/users"))
            .await
    }

    pub async fn create_user(
        &self,
        name: &str,
        role: &str,
    ) -> Result<UserCreatedBody, ClientError> {
        let body = UserBody {
            name: name.to_owned(),
            role: role.to_owned(),
        };
        self.json(self.request(reqwest::Method::POST, "/v1/users").json(&body))
            .await
    }

    pub async fn revoke_user(&self, name: &str) -> Result<Value, ClientError> {
        self.json(self.request(reqwest::Method::DELETE, &format!("/v1/users/{name}")))
            .await
    }

    pub async fn create_join_token(
        &self,
        agent: &str,
        labels: BTreeMap<String, String>,
        ttl: Option<Duration>,
        api_names: Vec<String>,
    ) -> Result<JoinTokenCreatedBody, ClientError> {
        let body = JoinTokenBody {
            agent: agent.to_owned(),
            labels,
            ttl_seconds: ttl.map(|t| t.as_secs().max(1)),
            api_names,
        };
        self.json(
            self.request(reqwest::Method::POST, "/v1/tokens")
                .json(&body),
        )
        .await
    }

    /// Exchanges a join token (without its pin) for the agent's own credential.
    pub async fn join(&self, token: &str) -> Result<JoinedBody, ClientError> {
        let body = JoinBody {
            token: token.to_owned(),
        };
        self.json(self.request(reqwest::Method::POST, "/v1/join").json(&body))
            .await
    }

    pub async fn revoke_agent(&self, id: &str) -> Result<Value, ClientError> {
        self.json(self.request(reqwest::Method::POST, &format!("/v1/agents/{id}/revoke")))
            .await
    }

    pub async fn audit(&self, limit: usize) -> Result<Vec<Value>, ClientError> {
        self.json(self.request(reqwest::Method::GET, &format!("/v1/audit?limit={limit}")))
            .await
    }
}

/// The CA certificate `base` serves at `/v1/ca`, fetched without checking the server's
/// certificate: only for a caller that then checks what it got against a pin (a joining
/// agent, against its join token's fingerprint).
pub async fn fetch_ca_unverified(base: &str) -> Result<String, ClientError> {
    let base = base.trim_end_matches('/');
    let unreachable = |reason: String| ClientError::Unreachable {
        url: base.to_owned(),
        reason,
    };
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| unreachable(reason(&e)))?;
    let response = http
        .get(format!("{base}/v1/ca"))
        .send()
        .await
        .map_err(|e| unreachable(reason(&e)))?;
    if !response.status().is_success() {
        return Err(ClientError::Server {
            status: response.status().as_u16(),
            code: None,
            message: format!("{base} serves no CA certificate (is it plain HTTP?)"),
        });
    }
    response.text().await.map_err(|e| unreachable(reason(&e)))
}
