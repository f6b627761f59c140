//! How to make a [`crate::Runtime`]: its data folder, settings, host and southbound.

use crate::host::{ControllerHost, Detached};
use crate::load::admission::Admission;
use crate::settings::RuntimeSettings;
use std::path::PathBuf;
use std::sync::Arc;

/// How to make a [`crate::Runtime`].
#[derive(Clone)]
pub struct RuntimeConfig {
    /// The data folder; compiled components are cached in `<data>/cache/`.
    pub data_dir: PathBuf,
    /// Per-component config, limits and grants (the config file).
    pub settings: RuntimeSettings,
    /// Where guests' `store` and `nimbus` calls go (by default: [`Detached`]).
    pub host: Arc<dyn ControllerHost>,
    /// For an agent: each descriptor gets `<southbound>/<descriptor-name>/` preopened
    /// read-write as its root.
    pub southbound: Option<PathBuf>,
    /// Where the wasm of the versions in use is kept (serve: `<data>/versions`), so that a
    /// version rolled back to serves after a restart while the file rolled back is still in
    /// the folder; `None`: not kept, only the replaced version loaded in memory can.
    pub versions_dir: Option<PathBuf>,
    /// Guests' wall clock stopped at this time (`reactor-host test`, so that statuses
    /// stamped with the time are the same on every run); `None`: the real clock.
    pub frozen_clock: Option<std::time::SystemTime>,
    /// Asked before a version compiles when the config has a `trust` section; with none
    /// set, a `trust` section refuses every component (nothing can check a signature).
    pub admission: Option<Arc<dyn Admission>>,
}

impl RuntimeConfig {
    /// Defaults: no config entries, detached host, no southbound, no versions kept.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        RuntimeConfig {
            data_dir: data_dir.into(),
            settings: RuntimeSettings::default(),
            host: Arc::new(Detached),
            southbound: None,
            versions_dir: None,
            frozen_clock: None,
            admission: None,
        }
    }
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("data_dir", &self.data_dir)
            .field("settings", &self.settings)
            .field("southbound", &self.southbound)
            .field("versions_dir", &self.versions_dir)
            .field("frozen_clock", &self.frozen_clock)
            .finish_non_exhaustive()
    }
}
