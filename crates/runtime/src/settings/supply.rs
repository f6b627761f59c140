//! The config file's `supply` and `trust` sections.
//!
//! Where components from OCI registries are pulled from (with what credentials, CA and pace)
//! and which keys must have signed a component before it loads. The runtime only carries
//! them; `reactor-supply` acts on them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The `supply` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SupplySettings {
    /// How often a component named by tag is looked up again (e.g. `5m`).
    #[serde(with = "duration")]
    pub interval: Duration,
    /// The longest any one registry call may take (e.g. `10s`).
    #[serde(with = "duration")]
    pub timeout: Duration,
    /// How to reach each registry, by `HOST[:PORT]` as in the references.
    pub registries: BTreeMap<String, RegistrySettings>,
}

impl Default for SupplySettings {
    fn default() -> Self {
        SupplySettings {
            interval: Duration::from_secs(300),
            timeout: Duration::from_secs(10),
            registries: BTreeMap::new(),
        }
    }
}

/// How to reach one registry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrySettings {
    /// Speak plain HTTP instead of HTTPS (a registry on loopback only).
    #[serde(default)]
    pub plain_http: bool,
    /// A PEM file of the CA(s) that signed the registry's certificate, trusted on top of
    /// the system's roots.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// A file holding `USER:PASSWORD` (basic auth); its text never reaches a log.
    #[serde(default)]
    pub credentials: Option<PathBuf>,
}

/// The `trust` section: with it set, a component loads only if a signature by one of
/// `keys` covers its bytes (see `reactor-supply`'s policy).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustSettings {
    /// minisign public key files (`minisign -G` or `reactor-host component keygen`).
    pub keys: Vec<PathBuf>,
}

mod duration {
    use super::*;

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        let parsed = humantime::parse_duration(&text).map_err(|e| {
            serde::de::Error::custom(format!("{text:?} is not a duration like 30s: {e}"))
        })?;
        if parsed.is_zero() {
            return Err(serde::de::Error::custom("a duration must be above 0"));
        }
        Ok(parsed)
    }
}
