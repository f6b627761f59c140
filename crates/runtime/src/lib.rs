//! The wasmtime runtime: components loaded from watched folders, sandboxed, swapped, called.
//!
//! It loads WebAssembly components from watched folders, sandboxes them, swaps new versions
//! in while running, and calls their exports.
//!
//! # The flow of a component
//!
//! Each stage is a folder of this crate, in the order a component goes through them:
//!
//! ```text
//!   <folder>/<name>.wasm            reactor.yaml (--config)
//!           │                                │
//!   files/     names, safe reads,   settings/  the config file: limits, grants,
//!              debounced watchers              rollout, supply, trust
//!           └───────────────┬────────────────┘
//!                           ▼
//!   load/      read, hash, admit (trust), read the declaration; compile (through
//!              the cache), link, describe; keep the wasm of the versions in use
//!                           │
//!                           ▼
//!   serve/     a slot per name: swap the version in, or hold it as a shadow or for
//!              an approval; roll back
//!                           │
//!                           ▼
//!   call/      handle → warm instance of the version serving (host state,
//!              deadline, memory cap)
//!                           │  the guest calls its imports
//!                           ▼
//!   host/      one file per WIT interface: store, nimbus, log, config, types;
//!              stdio; v0_1 (reactor:host@0.1.0); the linker; the ControllerHost
//!                           │
//!                           ▼
//!   observe/   out: component events, usage per version, guest log lines
//! ```
//!
//! Beside the stages: [`Runtime`] here, [`RuntimeConfig`] (how to make one), the errors
//! ([`RuntimeError`], [`CallError`]), [`World`], the generated WIT types ([`bindings`]) and,
//! with the `bench` feature, the benchmark's measurements.
//!
//! # Public API
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use reactor_runtime::{Runtime, RuntimeConfig, RuntimeSettings, World};
//! use std::path::Path;
//!
//! let mut config = RuntimeConfig::new("./data");       // compiled code cached in ./data/cache
//! config.settings = RuntimeSettings::read(Path::new("reactor.yaml"))?; // or watch_config
//! // config.host = Arc::new(my_engine);              // store + nimbus for the guests
//! let runtime = Runtime::new(config)?;
//! runtime.watch_dir(Path::new("./components"), World::Controller).await?;
//! let mut events = runtime.subscribe();              // Loaded / Failed / Unloaded
//! for info in runtime.components() {                 // GET /v1/components
//!     println!("{} {:?} {:?}", info.name, info.state, info.error);
//! }
//! let policy = runtime.controller("policy-rust");    // calls by name, newest version
//! # let obj: reactor_runtime::Object = todo!();
//! let reaction = policy.on_create(&obj).await?;     // Ok(Ok(Action)) / Ok(Err(guest error))
//! # let _ = (events.recv().await, reaction);
//! # Ok(())
//! # }
//! ```
//!
//! - [`Runtime::new`] makes the one [`wasmtime::Engine`] and its epoch ticker thread.
//! - [`Runtime::watch_dir`] loads every `<name>.wasm` of a folder as a component of one
//!   [`World`], then follows the folder (debounced: [`watch::SETTLE`] after a file is
//!   closed from writing or renamed in, [`watch::DEBOUNCE`] otherwise). A new or changed
//!   file is compiled off the async threads (through the cache in `<data>/cache/`), its
//!   world checked, linked, `describe()`d and then swapped in atomically; a failure at any
//!   step leaves the previous version serving and sets [`ComponentInfo::error`]. A removed
//!   file detaches its component.
//! - [`Runtime::load_file`] does the same for one file, now; [`Runtime::install`] and
//!   [`Runtime::uninstall`] write or remove a file in a folder and load or detach it (for
//!   the component API behind `serve --allow-component-api`).
//! - [`Runtime::controller`] and [`Runtime::descriptor`] return handles whose methods call
//!   the exports of the version in service: [`CallError`] says why a call gave no value
//!   (deadline, memory cap, trap, not loaded).
//! - [`Runtime::watch_config`] / [`Runtime::apply_settings`]: the YAML config of
//!   [`settings`]; an entry is applied only with a higher revision, without a restart.
//! - [`Runtime::rejection`] / [`Runtime::reject`] / [`Runtime::clear_rejection`]: a version
//!   rolled back never serves again, its file included, until cleared; the version it
//!   replaced serves instead (kept loaded, or read back from [`RuntimeConfig::versions_dir`]
//!   after a restart). The runtime keeps rejections in memory only: whoever owns the store
//!   records them and seeds them in at start.
//! - [`Runtime::components`], [`Runtime::subscribe`], [`Runtime::stats`].
//!
//! # Sandbox and choices
//!
//! - Calls run with wasmtime's async support on the caller's tokio task. The epoch
//!   ticker (every [`TICK`]) makes a running guest yield to the executor at each
//!   tick, so a guest never holds a worker thread for more than one tick, and stops it
//!   with [`CallError::Deadline`] once past its deadline. This was chosen over
//!   `spawn_blocking`, which would pin one blocking thread per running call (a guest
//!   looping until its deadline would hold it all that time) and could not be cancelled.
//!   Compilation, which is long and not interruptible, runs on `spawn_blocking`.
//! - Each component gets a memory cap per linear memory (`StoreLimits`, trapping on a
//!   refused growth: [`CallError::MemoryCap`]), up to `concurrency` calls at once, and no
//!   WASI capability but the folders its config grants (no network, no environment).
//! - Instances are made from an [`wasmtime::component::InstancePre`] with the default
//!   on-demand allocator, and kept warm between calls (up to `concurrency` per version).
//!   An instance whose call failed in any way is discarded;
//!   a new version starts with a new pool, so a reload discards the old instances once
//!   their calls end. The pooling allocator was measured against this (`bench`, figures in
//!   docs/src/performance.md): it saves little once instances are reused, and would reserve
//!   every slot's memory up front with one memory size and core-instance count for all
//!   components, which fits neither per-component caps nor 12-18 MB componentize-py
//!   components. Hence on-demand + `InstancePre` + warm reuse.
//! - Hot reload: a completed write waits [`watch::SETTLE`], other events [`watch::DEBOUNCE`]
//!   (figures in docs/src/performance.md).
//! - Guest stdout, stderr and `log` calls go to `tracing` (target `guest`) with a
//!   `component` field.

#[cfg(feature = "bench")]
pub mod bench;
pub mod bindings;
mod call;
mod error;
mod files;
pub mod host;
mod load;
mod observe;
mod runtime_config;
mod serve;
pub mod settings;
mod world;

pub use bindings::reactor::host::log::Level as LogLevel;
pub use bindings::{
    Action, ItemState, ItemStatus, Meta, Object, ReactorError, descriptor_api, reactor_api,
};
pub use call::handle::{ControllerHandle, DescriptorHandle, Reaction};
pub use error::{CallError, RuntimeError};
pub use files::{MAX_COMPONENT_BYTES, watch};
pub use host::convert::{from_guest, to_guest};
pub use host::log::log_for_component;
pub use host::{Caller, ControllerHost, Detached, InCallback, ObjectRef};
pub use load::admission::{Admission, Evidence};
pub use load::compiler::RuntimeStats;
pub use load::declaration;
pub use load::described::{Described, DescriptorDescription, ReactorDescription, Watch};
pub use load::engine::TICK;
pub use observe::component_event::ComponentEvent;
pub use observe::log_ring;
pub use runtime_config::RuntimeConfig;
pub use serve::rollout_info::{Rejection, RolloutInfo, RolloutPhase, version_of};
pub use serve::shadow::ShadowStep;
pub use serve::slots::{ComponentInfo, ComponentState};
pub use settings::{
    Access, ComponentSettings, DirGrant, Grants, Limits, Merge, RegistrySettings, RolloutSettings,
    RuntimeSettings, SupplySettings, TrustSettings,
};
pub use world::World;

use load::loader::Loader;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::broadcast;

/// The component runtime. Cheap to clone; everything stops when the last clone and
/// handle are dropped.
#[derive(Clone)]
pub struct Runtime {
    loader: Arc<Loader>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("components", &self.components().len())
            .finish()
    }
}

impl Runtime {
    /// Makes the engine, its epoch ticker and both linkers.
    pub fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        Ok(Runtime {
            loader: Arc::new(Loader::new(config)?),
        })
    }

    /// Loads every `*.wasm` in `dir` (created if missing) as a component of `world`, then
    /// follows the folder: new and changed files are loaded, removed ones detached. Load
    /// failures do not fail this call; they show in [`Runtime::components`].
    pub async fn watch_dir(&self, dir: &Path, world: World) -> Result<(), RuntimeError> {
        watch::watch_dir(&self.loader, dir, world).await
    }

    /// Loads `path` as a component of `world` now (named after the file). On failure the
    /// previous version, if any, keeps serving and the error is recorded.
    pub async fn load_file(
        &self,
        path: &Path,
        world: World,
    ) -> Result<ComponentInfo, RuntimeError> {
        let loaded = self.loader.load_file(path, world, false).await;
        self.loader.prune_versions();
        loaded
    }

    /// Writes `bytes` as `<dir>/<name>.wasm` (atomically) and loads it. If it fails to
    /// load, the file stays (the error is recorded as for any file in the folder).
    pub async fn install(
        &self,
        dir: &Path,
        world: World,
        name: &str,
        bytes: &[u8],
    ) -> Result<ComponentInfo, RuntimeError> {
        if !files::valid_name(name) {
            return Err(RuntimeError::InvalidName(name.to_owned()));
        }
        let path = dir.join(format!("{name}.wasm"));
        let tmp = dir.join(format!(".{name}.wasm.{}.tmp", std::process::id()));
        let io = |e: std::io::Error| RuntimeError::Watch {
            path: path.clone(),
            message: e.to_string(),
        };
        tokio::fs::create_dir_all(dir).await.map_err(io)?;
        tokio::fs::write(&tmp, bytes).await.map_err(io)?;
        tokio::fs::rename(&tmp, &path).await.map_err(io)?;
        let loaded = self.loader.load_file(&path, world, false).await;
        self.loader.prune_versions();
        loaded
    }

    /// Removes `<dir>/<name>.wasm` and detaches the component; false if it was not there.
    pub async fn uninstall(&self, dir: &Path, name: &str) -> Result<bool, RuntimeError> {
        if !files::valid_name(name) {
            return Err(RuntimeError::InvalidName(name.to_owned()));
        }
        let path = dir.join(format!("{name}.wasm"));
        let existed = match tokio::fs::remove_file(&path).await {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                return Err(RuntimeError::Watch {
                    path,
                    message: e.to_string(),
                });
            }
        };
        Ok(self.loader.detach(name) || existed)
    }

    /// Stops serving `name` (the file, if any, stays); false if it was not known.
    pub fn detach(&self, name: &str) -> bool {
        self.loader.detach(name)
    }

    /// Every known component, by name.
    pub fn components(&self) -> Vec<ComponentInfo> {
        self.loader.slots.infos()
    }

    /// One component, if known.
    pub fn component(&self, name: &str) -> Option<ComponentInfo> {
        self.loader
            .slots
            .get(name)
            .map(|slot| self.loader.slots.info(&slot))
    }

    /// A handle calling controller `name` (resolved at each call).
    pub fn controller(&self, name: &str) -> ControllerHandle {
        ControllerHandle {
            loader: self.loader.clone(),
            name: name.to_owned(),
            pinned: None,
            shadow: false,
        }
    }

    /// A handle calling descriptor `name` (resolved at each call).
    pub fn descriptor(&self, name: &str) -> DescriptorHandle {
        DescriptorHandle {
            loader: self.loader.clone(),
            name: name.to_owned(),
        }
    }

    /// Events from now on: versions loaded, loads failed, components detached.
    pub fn subscribe(&self) -> broadcast::Receiver<ComponentEvent> {
        self.loader.subscribe()
    }

    /// Compile and cache counts.
    pub fn stats(&self) -> RuntimeStats {
        self.loader.compiler().stats()
    }

    /// Merges a new config (entries apply only with a higher revision) and reloads the
    /// components whose settings changed.
    pub async fn apply_settings(&self, settings: RuntimeSettings) -> Merge {
        self.loader.apply_settings(settings).await
    }

    /// Applies the config file now and again whenever it changes; a file that fails to
    /// parse leaves the previous config in force (see [`Runtime::config_error`]).
    pub async fn watch_config(&self, path: &Path) -> Result<(), RuntimeError> {
        watch::watch_config(&self.loader, path).await
    }

    /// The settings in force.
    pub fn settings(&self) -> RuntimeSettings {
        self.loader.settings.read().clone()
    }

    /// Records (or, with `None`, clears) why the source of `name` — a registry — could not
    /// give its newest version; `components` shows it beside any load error. A component
    /// not yet known is shown with it, as a component of `world` read from `file`.
    pub fn set_source_error(&self, name: &str, world: World, file: &Path, error: Option<String>) {
        let slot = match (self.loader.slots.get(name), &error) {
            (Some(slot), _) => slot,
            (None, None) => return,
            (None, Some(_)) => self.loader.slots.get_or_insert(name, world, file),
        };
        *slot.source_error.lock() = error;
    }

    /// Why the last change of the watched config file was not applied, if it was not.
    pub fn config_error(&self) -> Option<String> {
        self.loader.config_error()
    }
}
