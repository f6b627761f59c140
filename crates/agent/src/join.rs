//! Joining: a join token exchanged once, over a connection checked against the CA the token
//! pins, for the agent's own credential and its API's certificate, kept in the data folder.

use reactor_client::{Client, ClientError, fetch_ca_unverified};
use reactor_trust::{CertFiles, PkiError, fingerprint, split_join, write_private};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error("{0}")]
    Token(#[from] reactor_trust::CredentialError),
    #[error(
        "the server at {server} shows the CA sha256:{found}, not the one the join token pins (sha256:{pinned}): refusing to join"
    )]
    Pin {
        server: String,
        found: String,
        pinned: String,
    },
    #[error("joining {server}: {source}")]
    Client { server: String, source: ClientError },
    #[error("the join token is for agent {token}, not --id {id}")]
    OtherAgent { token: String, id: String },
    #[error("{path} holds the credential of agent {held}, not of --id {id}")]
    HeldByOther {
        path: PathBuf,
        held: String,
        id: String,
    },
    #[error("cannot read the agent's credential {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error(transparent)]
    Pki(#[from] PkiError),
}

/// What an agent holds after joining (`<data>/credential.json`, 0600).
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Credential {
    pub agent: String,
    pub token: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The CA the server's certificate is checked against.
    #[serde(default)]
    pub ca_pem: Option<String>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("agent", &self.agent)
            .field("labels", &self.labels)
            .finish_non_exhaustive()
    }
}

fn path(data: &Path) -> PathBuf {
    data.join("credential.json")
}

/// Where the agent's API certificate and key are kept.
pub fn api_cert_files(data: &Path) -> CertFiles {
    CertFiles {
        cert: data.join("api.crt"),
        key: data.join("api.key"),
    }
}

/// The credential kept in `data`, if the agent joined before.
pub fn kept(data: &Path, id: &str) -> Result<Option<Credential>, JoinError> {
    let path = path(data);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(JoinError::Read {
                path,
                reason: e.to_string(),
            });
        }
    };
    let credential: Credential = serde_json::from_str(&text).map_err(|e| JoinError::Read {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if credential.agent != id {
        return Err(JoinError::HeldByOther {
            path,
            held: credential.agent,
            id: id.to_owned(),
        });
    }
    Ok(Some(credential))
}

/// Joins `server` as agent `id` with `join` (`rhj_…::sha256:…`), and keeps the credential
/// and the API certificate in `data` (valid for the agent's id, loopback and the names the
/// token was made with).
pub async fn join(
    data: &Path,
    server: &str,
    id: &str,
    join: &str,
) -> Result<Credential, JoinError> {
    let (token, pin) = split_join(join)?;
    let client_error = |source| JoinError::Client {
        server: server.to_owned(),
        source,
    };
    let ca_pem = match pin {
        Some(pinned) => {
            let pem = fetch_ca_unverified(server).await.map_err(client_error)?;
            let found = fingerprint(&pem)?;
            if !found.eq_ignore_ascii_case(pinned) {
                return Err(JoinError::Pin {
                    server: server.to_owned(),
                    found,
                    pinned: pinned.to_owned(),
                });
            }
            Some(pem)
        }
        None => None,
    };
    let client = Client::with_ca(server, None, ca_pem.as_deref()).map_err(client_error)?;
    let joined = client.join(token).await.map_err(client_error)?;
    if joined.agent != id {
        return Err(JoinError::OtherAgent {
            token: joined.agent,
            id: id.to_owned(),
        });
    }
    if let (Some(cert), Some(key)) = (&joined.api_cert_pem, &joined.api_key_pem) {
        let files = api_cert_files(data);
        write_private(&files.key, key)?;
        write_private(&files.cert, cert)?;
    }
    let credential = Credential {
        agent: joined.agent,
        token: joined.token,
        labels: joined.labels,
        ca_pem,
    };
    let text = serde_json::to_vec_pretty(&credential).map_err(|e| JoinError::Read {
        path: path(data),
        reason: e.to_string(),
    })?;
    reactor_core::private::write_durably(&path(data), &text).map_err(|e| JoinError::Read {
        path: path(data),
        reason: e.to_string(),
    })?;
    Ok(credential)
}
