//! The hook where a component's bytes are admitted before they compile.
//!
//! With a `trust` section in the config, the runtime asks its [`Admission`] whether a version
//! may load.

use crate::settings::TrustSettings;
use std::path::Path;

/// Decides whether the wasm of a component may load under a trust policy.
pub trait Admission: Send + Sync {
    /// `Ok` if `bytes`, read from `path` for component `name`, may load under `trust`;
    /// otherwise a one-line reason (it stays unloaded, the version serving goes on).
    fn admit(
        &self,
        name: &str,
        path: &Path,
        bytes: &[u8],
        trust: &TrustSettings,
    ) -> Result<(), String>;
}
