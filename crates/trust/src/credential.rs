//! Credentials: tokens minted once, shown once, and kept by the server only as hashes.

use super::pki::hex;
use super::role::Role;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The kind of the objects credentials are kept as (one per credential, named by its id).
pub const CREDENTIAL_KIND: &str = "Credential";

#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("the join token is malformed: expected rhj_<id>.<secret>::sha256:<CA fingerprint>")]
    MalformedJoin,
}

/// What a credential is for; the token's prefix says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// A user's (`rhu_`).
    User,
    /// An agent's, after it joined (`rha_`).
    Agent,
    /// A join token, exchanged once for an agent's credential (`rhj_`).
    Join,
}

impl Use {
    fn prefix(self) -> &'static str {
        match self {
            Use::User => "rhu_",
            Use::Agent => "rha_",
            Use::Join => "rhj_",
        }
    }
}

/// What is stored of a credential: who it is and the hash of its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum CredentialSpec {
    /// A user with a role.
    #[serde(rename_all = "camelCase")]
    User {
        user: String,
        role: Role,
        hash: String,
    },
    /// An agent, bound to its id and the labels it was given.
    #[serde(rename_all = "camelCase")]
    Agent {
        agent: String,
        #[serde(default)]
        labels: BTreeMap<String, String>,
        hash: String,
    },
    /// A join token for one agent id, until `expiresMs` (Unix milliseconds).
    #[serde(rename_all = "camelCase")]
    Join {
        agent: String,
        #[serde(default)]
        labels: BTreeMap<String, String>,
        hash: String,
        expires_ms: u64,
        /// Names the agent's API certificate carries beside its id and loopback.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        api_names: Vec<String>,
    },
    /// A credential revoked: kept so that its holder is told why it is refused.
    #[serde(rename_all = "camelCase")]
    Revoked { subject: String, revoked_ms: u64 },
}

impl CredentialSpec {
    pub fn hash(&self) -> &str {
        match self {
            Self::User { hash, .. } | Self::Agent { hash, .. } | Self::Join { hash, .. } => hash,
            Self::Revoked { .. } => "",
        }
    }

    /// What the credential is for; `None` once revoked.
    pub fn use_(&self) -> Option<Use> {
        match self {
            Self::User { .. } => Some(Use::User),
            Self::Agent { .. } => Some(Use::Agent),
            Self::Join { .. } => Some(Use::Join),
            Self::Revoked { .. } => None,
        }
    }

    /// Who holds it: `user:NAME`, `agent:ID`, `join:ID`, or whom a revoked one was for.
    pub fn subject(&self) -> String {
        match self {
            Self::User { user, .. } => format!("user:{user}"),
            Self::Agent { agent, .. } => format!("agent:{agent}"),
            Self::Join { agent, .. } => format!("join:{agent}"),
            Self::Revoked { subject, .. } => subject.clone(),
        }
    }
}

/// A stored credential: its id (the object's name) and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    pub id: String,
    pub spec: CredentialSpec,
}

/// A freshly minted credential: the token to hand out once, and what to store.
pub struct Minted {
    pub id: String,
    pub token: String,
    pub hash: String,
}

impl std::fmt::Debug for Minted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Minted")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

fn random_hex(bytes: usize) -> String {
    hex(&(0..bytes).map(|_| rand::random::<u8>()).collect::<Vec<_>>())
}

/// A new credential for `use_`: 64 bits of id, 256 bits of secret.
pub fn mint(use_: Use) -> Minted {
    let id = random_hex(8);
    let secret = random_hex(32);
    Minted {
        token: format!("{}{id}.{secret}", use_.prefix()),
        hash: hash(&secret),
        id,
    }
}

/// The hash a secret is stored as.
pub fn hash(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// A token as a request presents it, split into its parts.
pub struct Presented<'a> {
    pub use_: Use,
    pub id: &'a str,
    secret: &'a str,
}

impl std::fmt::Debug for Presented<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Presented")
            .field("use", &self.use_)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<'a> Presented<'a> {
    /// The parts of a minted token, or `None` for anything else (such as the bootstrap
    /// admin token).
    pub fn parse(token: &'a str) -> Option<Presented<'a>> {
        [Use::User, Use::Agent, Use::Join]
            .into_iter()
            .find_map(|use_| {
                let rest = token.strip_prefix(use_.prefix())?;
                let (id, secret) = rest.split_once('.')?;
                let hexish = |s: &str, len: usize| {
                    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
                };
                (hexish(id, 16) && hexish(secret, 64)).then_some(Presented { use_, id, secret })
            })
    }

    /// Whether this token's secret is the one `stored` was minted with (in constant time).
    pub fn matches(&self, stored: &CredentialSpec) -> bool {
        stored.use_() == Some(self.use_)
            && constant_time_eq(hash(self.secret).as_bytes(), stored.hash().as_bytes())
    }
}

/// Compares without an early exit, so the time taken does not tell how much of a guess matched.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A join token as handed out: the token, then `::` and the SHA-256 of the CA certificate the
/// agent pins (as kubeadm's `--discovery-token-ca-cert-hash`).
pub fn join_token(token: &str, ca_fingerprint: &str) -> String {
    format!("{token}::sha256:{ca_fingerprint}")
}

/// The token and the CA fingerprint of a join token as handed out (a server without a CA,
/// on plain HTTP, hands out tokens without a pin).
pub fn split_join(join: &str) -> Result<(&str, Option<&str>), CredentialError> {
    let join = join.trim();
    let (token, pin) = match join.split_once("::") {
        Some((token, pin)) => {
            let pin = pin
                .strip_prefix("sha256:")
                .ok_or(CredentialError::MalformedJoin)?;
            if pin.len() != 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(CredentialError::MalformedJoin);
            }
            (token, Some(pin))
        }
        None => (join, None),
    };
    match Presented::parse(token) {
        Some(presented) if presented.use_ == Use::Join => Ok((token, pin)),
        _ => Err(CredentialError::MalformedJoin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_token_matches_only_its_own_hash() {
        let minted = mint(Use::User);
        let stored = CredentialSpec::User {
            user: "alice".into(),
            role: Role::View,
            hash: minted.hash.clone(),
        };
        let presented = Presented::parse(&minted.token).expect("parses");
        assert_eq!(presented.id, minted.id);
        assert!(presented.matches(&stored));
        let other = mint(Use::User);
        assert!(
            !Presented::parse(&other.token)
                .expect("parses")
                .matches(&stored)
        );
        // The same secret presented as another use does not match.
        let as_agent = minted.token.replacen("rhu_", "rha_", 1);
        assert!(
            !Presented::parse(&as_agent)
                .expect("parses")
                .matches(&stored)
        );
        assert!(Presented::parse("0123").is_none());
        assert!(!format!("{presented:?}").contains(&minted.token[21..]));
    }

    #[test]
    fn a_join_token_carries_the_ca_pin() {
        let minted = mint(Use::Join);
        let pin = "ab".repeat(32);
        let handed = join_token(&minted.token, &pin);
        assert_eq!(
            split_join(&handed).expect("splits"),
            (minted.token.as_str(), Some(pin.as_str()))
        );
        assert_eq!(split_join(&minted.token).expect("no pin").1, None);
        assert!(split_join(&format!("{}::sha256:abc", minted.token)).is_err());
        assert!(split_join(&join_token(&mint(Use::User).token, &pin)).is_err());
    }
}
