//! The hook where a component's bytes are admitted before they compile.
//!
//! With a `trust` section in the config, the runtime asks its [`Admission`] whether a version
//! may load.

use crate::settings::TrustSettings;
use std::path::Path;

/// A file that admitted a version (a detached signature), kept beside the version's kept wasm
/// as `<sha256>.wasm<suffix>`, so that the version is admitted again from there when it
/// serves again after a restart or a rollback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// What follows the wasm's file name: `.minisig` for `NAME.wasm.minisig`.
    pub suffix: &'static str,
    /// The file's bytes, as they were checked.
    pub bytes: Vec<u8>,
}

/// Decides whether the wasm of a component may load under a trust policy.
pub trait Admission: Send + Sync {
    /// The files beside `path` that admit `bytes`, read from `path` for component `name`,
    /// under `trust`; otherwise a one-line reason (it stays unloaded, the version serving
    /// goes on). A version kept with them beside it, at `<sha256>.wasm`, is admitted by the
    /// same call again.
    fn admit(
        &self,
        name: &str,
        path: &Path,
        bytes: &[u8],
        trust: &TrustSettings,
    ) -> Result<Vec<Evidence>, String>;
}
