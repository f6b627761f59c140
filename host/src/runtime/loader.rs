//! The runtime's shared state and how a file becomes the version serving: read, hash,
//! skip when unchanged, prepare (see `compiler`), and only then swap it in. Any failure
//! leaves the version in service untouched and records the error.

use super::cache::sha256_hex;
use super::compiler::Compiler;
use super::component_event::ComponentEvent;
use super::engine::EpochTicker;
use super::error::RuntimeError;
use super::files::{MAX_COMPONENT_BYTES, component_name, is_core_module, read_component};
use super::registry::{ComponentInfo, Serving, Slot, Slots};
use super::runtime_config::RuntimeConfig;
use super::settings::Merge;
use super::settings::RuntimeSettings;
use super::world::World;
use parking_lot::{Mutex, RwLock};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::broadcast;

/// Shared state of a [`super::Runtime`] and its handles.
pub(crate) struct Loader {
    compiler: Arc<Compiler>,
    pub(crate) slots: Slots,
    pub(crate) settings: RwLock<RuntimeSettings>,
    config_error: Mutex<Option<String>>,
    events: broadcast::Sender<ComponentEvent>,
    watchers: Mutex<Vec<notify::RecommendedWatcher>>,
    _ticker: EpochTicker,
}

impl Loader {
    /// Makes the engine, its epoch ticker and both linkers.
    pub(crate) fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        let (engine, ticker) = super::compiler::start_engine()?;
        let (events, _) = broadcast::channel(256);
        Ok(Loader {
            compiler: Arc::new(Compiler::new(
                engine,
                config.data_dir.join("cache"),
                config.host,
                config.southbound,
            )?),
            slots: Slots::default(),
            settings: RwLock::new(config.settings),
            config_error: Mutex::new(None),
            events,
            watchers: Mutex::new(Vec::new()),
            _ticker: ticker,
        })
    }

    pub(crate) fn compiler(&self) -> &Compiler {
        &self.compiler
    }

    /// Events from now on: versions loaded, loads failed, components detached.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ComponentEvent> {
        self.events.subscribe()
    }

    pub(crate) fn announce(&self, event: ComponentEvent) {
        let _ = self.events.send(event);
    }

    /// Keeps a folder watcher alive as long as the runtime.
    pub(crate) fn keep(&self, watcher: notify::RecommendedWatcher) {
        self.watchers.lock().push(watcher);
    }

    pub(crate) fn config_error(&self) -> Option<String> {
        self.config_error.lock().clone()
    }

    pub(crate) fn set_config_error(&self, error: Option<String>) {
        *self.config_error.lock() = error;
    }

    /// Loads (or reloads) `path` as a component of `world`. Unchanged files with
    /// unchanged settings are left alone unless `force`.
    pub(crate) async fn load_file(
        &self,
        path: &Path,
        world: World,
        force: bool,
    ) -> Result<ComponentInfo, RuntimeError> {
        let name = component_name(path).ok_or_else(|| {
            RuntimeError::InvalidName(
                path.file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )
        })?;
        let slot = self.slots.get_or_insert(&name, world, path);
        let _loading = slot.loading.lock().await;
        *slot.file.lock() = path.to_owned();
        let started = Instant::now();
        match self.build(&slot, path, force).await {
            Ok(Some(serving)) => {
                let described = serving.described.clone();
                let sha256 = serving.loaded.sha256.clone();
                let source = serving.source.as_str();
                let replaced = slot.current.swap(Some(Arc::new(serving)));
                if let Some(old) = replaced.filter(|old| old.loaded.sha256 != sha256) {
                    // Kept for a rollback; a new version clears the last one's.
                    slot.previous.store(Some(old));
                    *slot.rejected.lock() = None;
                    *slot.rolled_back.lock() = None;
                }
                slot.set_error(None);
                metrics::counter!("reactor_component_loads_total", "component" => name.clone())
                    .increment(1);
                tracing::info!(component = %name, %sha256, code = source, elapsed_ms = started.elapsed().as_millis() as u64, "component loaded");
                self.announce(ComponentEvent::Loaded {
                    name: name.clone(),
                    world: slot.world,
                    sha256,
                    described,
                });
            }
            // The file is the serving version (again, e.g. put back after a broken one).
            Ok(None) => slot.set_error(None),
            Err(e) => {
                slot.set_error(Some(e.to_string()));
                let serving = slot.current.load().is_some();
                tracing::warn!(component = %name, serving_old_version = serving, "component load failed: {e}");
                metrics::counter!("reactor_component_load_failures_total", "component" => name.clone()).increment(1);
                self.announce(ComponentEvent::Failed {
                    name: name.clone(),
                    error: e.to_string(),
                });
                return Err(e);
            }
        }
        Ok(slot.info())
    }

    /// The version of `path` to swap in; `None` when the file is the one serving (with the
    /// same settings) or a version rolled back.
    async fn build(
        &self,
        slot: &Slot,
        path: &Path,
        force: bool,
    ) -> Result<Option<Serving>, RuntimeError> {
        let file = path.to_owned();
        let bytes = tokio::task::spawn_blocking(move || read_component(&file, MAX_COMPONENT_BYTES))
            .await
            .map_err(|e| e.to_string())
            .and_then(|read| read)
            .map_err(|message| RuntimeError::Read {
                path: path.to_owned(),
                message,
            })?;
        let effective = self.settings.read().effective(&slot.name);
        let (sha256, bytes) = tokio::task::spawn_blocking(move || (sha256_hex(&bytes), bytes))
            .await
            .map_err(|e| RuntimeError::Compile {
                path: path.to_owned(),
                message: format!("hash task failed: {e}"),
            })?;
        if !force
            && let Some(current) = slot.current.load().as_ref()
            && current.loaded.sha256 == sha256
            && current.loaded.spec.effective == effective
            && current.loaded.file == path
        {
            return Ok(None);
        }
        if !force && slot.rejected.lock().as_deref() == Some(sha256.as_str()) {
            // Rolled back: the file's version stays out until another file arrives.
            return Ok(None);
        }
        if is_core_module(&bytes) {
            return Err(RuntimeError::CoreModule {
                path: path.to_owned(),
            });
        }
        self.compiler
            .prepare(slot, path, bytes, sha256, effective)
            .await
            .map(Some)
    }

    /// Stops serving `name`: calls in flight finish on the version they hold.
    pub(crate) fn detach(&self, name: &str) -> bool {
        match self.slots.remove(name) {
            Some(slot) => {
                slot.current.store(None);
                super::log_ring::forget(name);
                tracing::info!(component = %name, "component detached");
                self.announce(ComponentEvent::Unloaded {
                    name: name.to_owned(),
                });
                true
            }
            None => false,
        }
    }

    /// Merges a new config (entries apply only with a higher revision) and reloads the
    /// components whose settings changed.
    pub(crate) async fn apply_settings(&self, settings: RuntimeSettings) -> Merge {
        let merge = self.settings.write().merge(settings);
        for name in &merge.stale {
            tracing::warn!(component = %name, "config entry changed without a higher revision: not applied");
        }
        for slot in self.slots.all() {
            if merge.defaults_changed || merge.changed.contains(&slot.name) {
                // Unchanged effective settings are a no-op inside load_file.
                let _ = self.load_file(&slot.file(), slot.world, false).await;
            }
        }
        merge
    }
}
