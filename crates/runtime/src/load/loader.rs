//! The runtime's shared state ([`Loader`]) and how a file becomes the version serving.
//!
//! Read, hash, skip when unchanged, prepare (see `compiler`), and only then swap it in. Any
//! failure leaves the version in service untouched and records the error. A file whose version
//! was rolled back does not serve: the version it was rolled back to does, if it can.

use crate::error::RuntimeError;
use crate::files::{MAX_COMPONENT_BYTES, component_name, is_core_module, read_component};
use crate::load::admission::{Admission, Evidence};
use crate::load::cache::sha256_hex;
use crate::load::compiler::Compiler;
use crate::load::declaration;
use crate::load::engine::EpochTicker;
use crate::load::trust_seen::TrustSeen;
use crate::load::versions::Versions;
use crate::observe::component_event::ComponentEvent;
use crate::runtime_config::RuntimeConfig;
use crate::serve::rollout_info::{Rejection, version_of};
use crate::serve::serving::Serving;
use crate::serve::slots::{ComponentInfo, Slot, Slots};
use crate::settings::{Effective, Merge, RuntimeSettings};
use crate::world::World;
use parking_lot::{Mutex, RwLock};
use reactor_core::component::permissions::widening;
use reactor_core::component::{Permissions, Waiting};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::broadcast;

/// Shared state of a [`crate::Runtime`] and its handles.
pub(crate) struct Loader {
    compiler: Arc<Compiler>,
    pub(crate) slots: Slots,
    pub(crate) settings: RwLock<RuntimeSettings>,
    config_error: Mutex<Option<String>>,
    events: broadcast::Sender<ComponentEvent>,
    watchers: Mutex<Vec<notify::RecommendedWatcher>>,
    /// The wasm of the versions in use, when the config keeps them.
    pub(crate) versions: Option<Arc<Versions>>,
    admission: Option<Arc<dyn Admission>>,
    /// The trust in force when it was last looked at (see [`crate::load::readmit`]).
    pub(super) trust_seen: Mutex<TrustSeen>,
    _ticker: EpochTicker,
}

impl Loader {
    /// Makes the engine, its epoch ticker and both linkers.
    pub(crate) fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        let (engine, ticker) = crate::load::compiler::start_engine()?;
        let (events, _) = broadcast::channel(256);
        let mut compiler = Compiler::new(
            engine,
            config.data_dir.join("cache"),
            config.host,
            config.southbound,
        )?;
        compiler.frozen_clock = config
            .frozen_clock
            .map(|at| at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default());
        let trust_seen = Mutex::new(TrustSeen::of(config.settings.trust.as_ref()));
        Ok(Loader {
            compiler: Arc::new(compiler),
            slots: Slots::default(),
            settings: RwLock::new(config.settings),
            config_error: Mutex::new(None),
            events,
            watchers: Mutex::new(Vec::new()),
            versions: config.versions_dir.map(|dir| Arc::new(Versions::new(dir))),
            admission: config.admission,
            trust_seen,
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
    /// unchanged settings are left alone unless `force`; a file whose version was rolled
    /// back never serves (see [`Loader::instead`]).
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
            Ok(Some(serving)) => self.swap_in(&slot, serving, started),
            // The file is the serving version (again, e.g. put back after a broken one).
            Ok(None) => slot.set_error(None),
            Err(e) => {
                slot.set_error(Some(e.to_string()));
                let serving = slot.current.load().is_some();
                tracing::warn!(component = %name, serving_old_version = serving, "component load failed: {e}");
                metrics::counter!(reactor_core::metrics::COMPONENT_LOAD_FAILURES, "component" => name.clone()).increment(1);
                self.announce(ComponentEvent::Failed {
                    name: name.clone(),
                    error: e.to_string(),
                });
                return Err(e);
            }
        }
        Ok(self.slots.info(&slot))
    }

    /// Puts `serving` in service in `slot` (whose loads the caller holds) and announces it.
    /// The version it replaces is kept for a rollback, unless that one was rolled back itself
    /// or `serving` is the kept one coming back.
    pub(crate) fn swap_in(&self, slot: &Slot, serving: Arc<Serving>, started: Instant) {
        let described = serving.described.clone();
        let sha256 = serving.loaded.sha256.clone();
        let source = serving.source.as_str();
        let name = &slot.name;
        let replaced = slot.current.swap(Some(serving.clone()));
        if let Some(old) = replaced.filter(|old| old.loaded.sha256 != sha256) {
            let restored = slot
                .previous
                .load()
                .as_ref()
                .is_some_and(|previous| Arc::ptr_eq(previous, &serving));
            let rejected = self
                .slots
                .rejection(name)
                .is_some_and(|r| r.sha256 == old.loaded.sha256);
            slot.previous.store((!restored && !rejected).then_some(old));
        }
        if let Some(versions) = &self.versions {
            versions.record_serving(name, &sha256);
        }
        slot.set_error(None);
        *slot.waiting.lock() = None;
        // A shadow ends when any version is swapped in (itself, promoted, included).
        *slot.shadow.lock() = None;
        metrics::counter!(reactor_core::metrics::COMPONENT_LOADS, "component" => name.clone())
            .increment(1);
        tracing::info!(component = %name, %sha256, code = source, elapsed_ms = started.elapsed().as_millis() as u64, "component loaded");
        self.announce(ComponentEvent::Loaded {
            name: name.clone(),
            world: slot.world,
            sha256,
            described,
        });
    }

    /// The version of `path` to swap in; `None` when the file is the one serving (with the
    /// same settings). For a file whose version was rolled back, what serves instead.
    async fn build(
        &self,
        slot: &Slot,
        path: &Path,
        force: bool,
    ) -> Result<Option<Arc<Serving>>, RuntimeError> {
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
        // Counted in use before it is kept, so no pruning removes it meanwhile.
        *slot.file_sha256.lock() = Some(sha256.clone());
        if let Some(rejection) = self
            .slots
            .rejection(&slot.name)
            .filter(|r| r.sha256 == sha256)
        {
            return self.instead(slot, &rejection, effective).await;
        }
        self.restore_serving(slot, &sha256, &effective).await;
        if !force
            && let Some(current) = slot.current.load().as_ref()
            && current.loaded.sha256 == sha256
            && current.loaded.spec.effective == effective
            && current.loaded.file == path
        {
            *slot.waiting.lock() = None;
            // The file is the serving version again: a shadow of another is over.
            *slot.shadow.lock() = None;
            return Ok(None);
        }
        if is_core_module(&bytes) {
            return Err(RuntimeError::CoreModule {
                path: path.to_owned(),
            });
        }
        let (bytes, evidence) = self.admit(&slot.name, path, bytes).await?;
        let declared = match declaration::read(&bytes) {
            Ok(declared) => declared,
            // Not a component wasmparser can read: the compiler says why, as for any file.
            Err(e @ declaration::DeclarationError::Parse(_)) => {
                let effective = effective.clone();
                let sha256 = sha256.clone();
                self.compiler
                    .prepare(slot, path, bytes, sha256, None, effective)
                    .await?;
                return Err(RuntimeError::Declaration {
                    path: path.to_owned(),
                    message: e.to_string(),
                });
            }
            Err(e) => {
                return Err(RuntimeError::Declaration {
                    path: path.to_owned(),
                    message: e.to_string(),
                });
            }
        };
        let added = self.added(slot, &sha256, declared.as_ref());
        if !added.is_empty() {
            let version = version_of(&sha256);
            tracing::warn!(component = %slot.name, %version, added = %added.join(", "), "new version declares more than the one serving: held until `reactor-host component approve {}`", slot.name);
            *slot.waiting.lock() = Some(Waiting {
                sha256,
                permissions: declared,
                added,
            });
            return Ok(None);
        }
        let bytes = match &self.versions {
            Some(versions) => {
                let (versions, sha256) = (versions.clone(), sha256.clone());
                tokio::task::spawn_blocking(move || {
                    versions.keep(&sha256, &bytes, &evidence);
                    bytes
                })
                .await
                .map_err(|e| RuntimeError::Compile {
                    path: path.to_owned(),
                    message: format!("keep task failed: {e}"),
                })?
            }
            None => bytes,
        };
        let shadow = self.settings.read().shadow(&slot.name);
        let serving = Arc::new(
            self.compiler
                .prepare(slot, path, bytes, sha256, declared, effective)
                .await?,
        );
        // A new version of a component that asks for it runs as a shadow first, when a
        // version serves to compare it with.
        if let Some(shadow) = shadow.filter(|_| slot.world == World::Controller)
            && (slot.current.load().as_ref())
                .is_some_and(|current| current.loaded.sha256 != serving.loaded.sha256)
        {
            self.hold_shadow(slot, serving, shadow.objects);
            return Ok(None);
        }
        Ok(Some(serving))
    }

    /// After a restart, before `slot`'s first version `sha256` (its file's) loads: the version
    /// that served before the restart serves again first, if it was another and is kept, and
    /// was not rolled back. The file's version then follows as any new version does — held as
    /// a shadow, held for an approval, rolled out — as it would have been without the
    /// restart. The version restored is admitted again, from what admitted it when it first
    /// loaded here (its signature, kept beside it): a key no longer trusted serves nothing.
    async fn restore_serving(&self, slot: &Slot, sha256: &str, effective: &Effective) {
        let Some(versions) = self.versions.clone() else {
            return;
        };
        if slot.current.load().is_some() {
            return;
        }
        let name = slot.name.clone();
        let recorded = tokio::task::spawn_blocking(move || versions.serving(&name))
            .await
            .ok()
            .flatten();
        let Some(recorded) = recorded.filter(|r| r != sha256) else {
            return;
        };
        if (self.slots.rejection(&slot.name)).is_some_and(|r| r.sha256 == recorded) {
            return;
        }
        let started = Instant::now();
        let version = version_of(&recorded);
        match self.rebuild(slot, &recorded, effective.clone()).await {
            Ok(Some(serving)) => {
                tracing::info!(component = %slot.name, %version, file = %version_of(sha256), "the version serving before the restart serves again; the file's version follows as a new version");
                self.swap_in(slot, serving, started);
            }
            Ok(None) => {
                tracing::warn!(component = %slot.name, %version, "the version serving before the restart is not kept here: the file's version loads as a first version");
            }
            Err(e) => {
                tracing::warn!(component = %slot.name, %version, "the version serving before the restart cannot serve again ({e}): the file's version loads as a first version");
            }
        }
    }

    /// What version `sha256` of `slot`, declaring `declared`, may do beyond what the version
    /// serving and the version approved last may do together; empty when it may load.
    /// Nothing is held when neither is known (a component's first version).
    fn added(&self, slot: &Slot, sha256: &str, declared: Option<&Permissions>) -> Vec<String> {
        let approval = self.slots.approval(&slot.name);
        if approval.as_ref().is_some_and(|a| a.sha256 == sha256) {
            return Vec::new();
        }
        let serving = slot.current.load_full();
        let mut granted: Vec<Option<Permissions>> = Vec::new();
        granted.extend(serving.map(|s| s.declared.clone()));
        granted.extend(approval.map(|a| a.permissions));
        if granted.is_empty() || granted.iter().any(Option::is_none) {
            return Vec::new();
        }
        let ceiling = granted
            .into_iter()
            .flatten()
            .reduce(|a, b| a.union(&b))
            .unwrap_or_default();
        widening(declared, Some(&ceiling))
    }

    /// `bytes` if the trust policy in force (if any) admits them, with what admitted them,
    /// else why not.
    pub(super) async fn admit(
        &self,
        name: &str,
        path: &Path,
        bytes: Vec<u8>,
    ) -> Result<(Vec<u8>, Vec<Evidence>), RuntimeError> {
        let Some(trust) = self.settings.read().trust.clone() else {
            return Ok((bytes, Vec::new()));
        };
        let refused = |reason: String| RuntimeError::Untrusted {
            name: name.to_owned(),
            reason,
        };
        let Some(admission) = self.admission.clone() else {
            return Err(refused(
                "the config has a trust section but nothing here checks signatures".into(),
            ));
        };
        let (name, file) = (name.to_owned(), path.to_owned());
        let (checked, bytes) = tokio::task::spawn_blocking(move || {
            (admission.admit(&name, &file, &bytes, &trust), bytes)
        })
        .await
        .map_err(|e| refused(format!("signature check task failed: {e}")))?;
        let evidence = checked.map_err(refused)?;
        Ok((bytes, evidence))
    }

    /// What serves in `slot` instead of the version `rejection` rolled back, with `effective`
    /// settings: the version serving, unless it is the rejected one; else the version it was
    /// rolled back to — still loaded as the previous one, or from the kept versions; else the
    /// previous one loaded. `None`: the one serving goes on. An error when none can serve.
    pub(crate) async fn instead(
        &self,
        slot: &Slot,
        rejection: &Rejection,
        effective: Effective,
    ) -> Result<Option<Arc<Serving>>, RuntimeError> {
        let same = |serving: &Arc<Serving>, sha256: &str| {
            serving.loaded.sha256 == sha256 && serving.loaded.spec.effective == effective
        };
        let current = slot.current.load_full();
        if let Some(current) = current.filter(|c| c.loaded.sha256 != rejection.sha256) {
            // Another version serves: it goes on, with the settings in force if it can.
            let sha256 = &current.loaded.sha256;
            if same(&current, sha256) {
                return Ok(None);
            }
            return self.rebuild(slot, sha256, effective.clone()).await;
        }
        let previous = slot.previous.load_full();
        if let Some(restore) = &rejection.restore {
            if let Some(previous) = previous.clone().filter(|p| same(p, restore)) {
                return Ok(Some(previous));
            }
            if let Some(kept) = self.rebuild(slot, restore, effective.clone()).await? {
                return Ok(Some(kept));
            }
        }
        if let Some(previous) = previous.filter(|p| p.loaded.sha256 != rejection.sha256) {
            return Ok(Some(previous));
        }
        Err(RuntimeError::RolledBack {
            name: slot.name.clone(),
            version: version_of(&rejection.sha256),
            reason: rejection.reason.clone(),
            why: match &rejection.restore {
                Some(restore) => format!(
                    "the version it was rolled back to, {}, is not kept here",
                    version_of(restore)
                ),
                None => "no version before it is known".into(),
            },
        })
    }

    /// Version `sha256` of `slot` made again from its kept wasm, with `effective` settings,
    /// once the trust policy in force admits it again; `None` if its wasm is not kept.
    async fn rebuild(
        &self,
        slot: &Slot,
        sha256: &str,
        effective: Effective,
    ) -> Result<Option<Arc<Serving>>, RuntimeError> {
        let Some((path, bytes)) = self.kept(sha256).await? else {
            return Ok(None);
        };
        let (bytes, _) = self.admit(&slot.name, &path, bytes).await?;
        let declared = declared(&path, &bytes)?;
        self.compiler
            .prepare(slot, &path, bytes, sha256.to_owned(), declared, effective)
            .await
            .map(|serving| Some(Arc::new(serving)))
    }

    /// Where version `sha256` is kept and its wasm; `None` if it is not kept.
    pub(super) async fn kept(
        &self,
        sha256: &str,
    ) -> Result<Option<(std::path::PathBuf, Vec<u8>)>, RuntimeError> {
        let Some((versions, path)) = self
            .versions
            .as_ref()
            .and_then(|v| Some((v.clone(), v.path(sha256)?)))
        else {
            return Ok(None);
        };
        let wanted = sha256.to_owned();
        let read = tokio::task::spawn_blocking(move || versions.read(&wanted))
            .await
            .map_err(|e| RuntimeError::Read {
                path: path.clone(),
                message: format!("read task failed: {e}"),
            })?;
        Ok(read.map(|bytes| (path, bytes)))
    }

    /// Removes the kept versions no component needs any more. Called after loads, not within
    /// each: a folder's first scan prunes once every file in it was read.
    pub(crate) fn prune_versions(&self) {
        if let Some(versions) = &self.versions {
            versions.prune(|| self.slots.in_use());
        }
        // The compile cache keeps the versions in use and the ones rolled back (a cleared
        // rollback loads it again at once).
        let mut keep = self.slots.in_use();
        keep.extend(self.slots.rejections().into_values().map(|r| r.sha256));
        self.compiler.evict(&keep);
    }

    /// Stops serving `name`: calls in flight finish on the version they hold.
    pub(crate) fn detach(&self, name: &str) -> bool {
        match self.slots.remove(name) {
            Some(slot) => {
                slot.current.store(None);
                if let Some(versions) = &self.versions {
                    versions.forget_serving(name);
                }
                crate::observe::log_ring::forget(name);
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
    /// components whose settings changed. When the trust in force changed, every version
    /// loaded is checked against it again first (see [`crate::load::readmit`]).
    pub(crate) async fn apply_settings(&self, settings: RuntimeSettings) -> Merge {
        let merge = self.settings.write().merge(settings);
        for name in &merge.stale {
            tracing::warn!(component = %name, "config entry changed without a higher revision: not applied");
        }
        let trust_changed = self.trust_changed().await;
        let slots = self.slots.all();
        // At start the config is applied before any component loads: nothing to check.
        if trust_changed && !slots.is_empty() {
            tracing::info!(
                "the trust in force changed: every version loaded is checked against it again"
            );
        }
        for slot in slots {
            let mut reload = merge.defaults_changed || merge.changed.contains(&slot.name);
            if trust_changed {
                reload |= self.readmit(&slot).await;
            }
            if reload {
                // Unchanged effective settings are a no-op inside load_file.
                let _ = self.load_file(&slot.file(), slot.world, false).await;
            }
        }
        self.prune_versions();
        merge
    }
}

/// The permissions the component in `bytes` (read from `path`) declares.
fn declared(path: &Path, bytes: &[u8]) -> Result<Option<Permissions>, RuntimeError> {
    declaration::read(bytes).map_err(|e| RuntimeError::Declaration {
        path: path.to_owned(),
        message: e.to_string(),
    })
}
