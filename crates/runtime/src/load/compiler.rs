//! From checked bytes to a version ready to serve.
//!
//! Compile (or take from the on-disk cache) off the async threads, check the world, link,
//! describe, and grant a descriptor its southbound folder. Holds what every load shares: the
//! engine, both linkers, the cache and its counts.

use crate::bindings::{DESCRIPTOR_EXPORT, OLDER_EXPORTS, REACTOR_EXPORT, compatible};
use crate::call::host_state::{HostState, InstanceSpec};
use crate::call::instance::{Exports, Indices, Loaded};
use crate::error::{CallError, RuntimeError};
use crate::host::ControllerHost;
use crate::host::enforce::Enforced;
use crate::host::linker;
use crate::load::cache::{Cache, Lookup};
use crate::load::described::Described;
use crate::load::engine;
use crate::serve::serving::{Serving, Source};
use crate::serve::slots::Slot;
use crate::settings::{Access, DirGrant, Effective};
use crate::world::World;
use reactor_core::component::Permissions;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

/// Counts of the compile cache since the runtime started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeStats {
    /// Components compiled from wasm.
    pub compiled: u64,
    /// Components taken from the on-disk cache.
    pub cache_hits: u64,
    /// Cache entries found corrupt and deleted.
    pub cache_discarded: u64,
}

/// The engine, the linkers and the compile cache, shared by every load.
pub(crate) struct Compiler {
    engine: Engine,
    controller_linker: Linker<HostState>,
    descriptor_linker: Linker<HostState>,
    cache: Cache,
    host: Arc<dyn ControllerHost>,
    southbound: Option<PathBuf>,
    /// See [`crate::RuntimeConfig::frozen_clock`], as a time since the Unix epoch.
    pub(crate) frozen_clock: Option<std::time::Duration>,
    stats: Stats,
    /// The versions this runtime compiled or took from the cache: the ones whose entries it
    /// evicts once no component uses them (see [`Compiler::evict`]).
    seen: parking_lot::Mutex<BTreeSet<String>>,
}

#[derive(Default)]
struct Stats {
    compiled: AtomicU64,
    cache_hits: AtomicU64,
    cache_discarded: AtomicU64,
}

impl Compiler {
    /// Both linkers for `engine`; compiled components are cached in `cache_dir`.
    pub(crate) fn new(
        engine: Engine,
        cache_dir: PathBuf,
        host: Arc<dyn ControllerHost>,
        southbound: Option<PathBuf>,
    ) -> Result<Self, RuntimeError> {
        Ok(Compiler {
            controller_linker: linker::linker(&engine, World::Controller)?,
            descriptor_linker: linker::linker(&engine, World::Descriptor)?,
            cache: Cache::new(cache_dir, &engine),
            engine,
            host,
            southbound,
            frozen_clock: None,
            stats: Stats::default(),
            seen: Default::default(),
        })
    }

    /// Compile and cache counts since the runtime started.
    pub(crate) fn stats(&self) -> RuntimeStats {
        RuntimeStats {
            compiled: self.stats.compiled.load(Ordering::Relaxed),
            cache_hits: self.stats.cache_hits.load(Ordering::Relaxed),
            cache_discarded: self.stats.cache_discarded.load(Ordering::Relaxed),
        }
    }

    /// Makes `bytes` (read from `path`, hashed to `sha256`, declaring `declared`) a version
    /// of `slot` that can serve with `effective` settings: compiled, of the slot's world,
    /// linked and described, its declared permissions in force from `describe` on.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn prepare(
        self: &Arc<Self>,
        slot: &Slot,
        path: &Path,
        bytes: Vec<u8>,
        sha256: String,
        declared: Option<Permissions>,
        effective: Effective,
    ) -> Result<Serving, RuntimeError> {
        // Shown as `compiling VERSION` until this returns, whatever it returns.
        let _compiling = Compiling::start(slot, &sha256);
        let (component, source) = self.compile(path.to_owned(), bytes, sha256.clone()).await?;
        let counter = match source {
            Source::Compiled => reactor_core::metrics::COMPONENT_COMPILES,
            Source::Cache => reactor_core::metrics::COMPONENT_CACHE_HITS,
        };
        metrics::counter!(counter, "component" => slot.name.clone()).increment(1);
        self.check_world(path, &component, slot.world)?;
        let linker = match slot.world {
            World::Controller => &self.controller_linker,
            World::Descriptor => &self.descriptor_linker,
        };
        let link = |e: wasmtime::Error| RuntimeError::Link {
            path: path.to_owned(),
            message: format!("{e:#}"),
        };
        let pre = linker.instantiate_pre(&component).map_err(link)?;
        let indices = Indices::find(&pre, slot.world).map_err(link)?;
        let spec = InstanceSpec {
            component: slot.name.as_str().into(),
            effective,
            implicit_dirs: Vec::new(),
            host: self.host.clone(),
            frozen_clock: self.frozen_clock,
            version: crate::serve::rollout_info::version_of(&sha256).into(),
            blocking_fs: slot.world == World::Descriptor,
            permissions: declared.clone().map(|declared| {
                Arc::new(Enforced {
                    declared,
                    own: Default::default(),
                })
            }),
        };
        let mut loaded = Loaded::new(
            slot.world,
            path.to_owned(),
            sha256,
            spec,
            slot.counters.clone(),
            self.engine.clone(),
            pre,
            indices,
        );
        let described = describe(&loaded)
            .await
            .map_err(|source| RuntimeError::Describe {
                name: slot.name.clone(),
                source,
            })?;
        if let Described::Controller(info) = &described
            && let Some(kind) = info
                .kinds
                .iter()
                .map(String::as_str)
                .chain(info.watches.iter().map(|w| w.kind()))
                .find(|kind| reactor_core::object::is_reserved(kind))
        {
            return Err(RuntimeError::ReservedKind {
                name: slot.name.clone(),
                kind: kind.to_owned(),
            });
        }
        if let Some(declared) = &declared {
            withheld_grants(&slot.name, declared, &effective_dirs(&loaded));
            if let Described::Controller(info) = &described {
                if let Some(watch) = info
                    .watches
                    .iter()
                    .find(|w| !declared.watches.contains(w.kind()))
                {
                    return Err(RuntimeError::UndeclaredWatch {
                        name: slot.name.clone(),
                        kind: watch.kind().to_owned(),
                    });
                }
                loaded.spec.permissions = Some(Arc::new(Enforced {
                    declared: declared.clone(),
                    own: info.kinds.iter().cloned().collect(),
                }));
                loaded.drain_warm();
            }
        }
        if let (Described::Descriptor(info), Some(southbound)) = (&described, &self.southbound) {
            loaded.spec.implicit_dirs = vec![southbound_grant(&slot.name, southbound, &info.name)?];
            loaded.drain_warm();
        }
        Ok(Serving {
            loaded,
            described,
            source,
            declared,
        })
    }

    /// Compiles off the async threads, through the on-disk cache.
    async fn compile(
        self: &Arc<Self>,
        path: PathBuf,
        bytes: Vec<u8>,
        sha256: String,
    ) -> Result<(Component, Source), RuntimeError> {
        let this = self.clone();
        let task_path = path.clone();
        tokio::task::spawn_blocking(move || {
            this.seen.lock().insert(sha256.clone());
            match this.cache.load(&this.engine, &sha256) {
                Lookup::Hit(component) => {
                    this.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
                    return Ok((component, Source::Cache));
                }
                Lookup::Discarded => {
                    this.stats.cache_discarded.fetch_add(1, Ordering::Relaxed);
                }
                Lookup::Miss => {}
            }
            let component = Component::from_binary(&this.engine, &bytes).map_err(|e| {
                RuntimeError::Compile {
                    path: task_path,
                    message: format!("{e:#}"),
                }
            })?;
            this.stats.compiled.fetch_add(1, Ordering::Relaxed);
            this.cache.store(&sha256, &component);
            Ok((component, Source::Compiled))
        })
        .await
        .map_err(|e| RuntimeError::Compile {
            path,
            message: format!("compiler task failed: {e}"),
        })?
    }

    /// Evicts from the compile cache the versions this runtime loaded that are not in
    /// `keep` (in use, or rolled back), and the entries of other engines. Entries of versions
    /// it never loaded (another component's, not loaded yet after a restart) stay.
    pub(crate) fn evict(&self, keep: &BTreeSet<String>) {
        let retired: BTreeSet<String> = {
            let mut seen = self.seen.lock();
            let retired = seen.difference(keep).cloned().collect();
            seen.retain(|sha| keep.contains(sha));
            retired
        };
        self.cache.evict(&retired);
    }

    fn check_world(
        &self,
        path: &Path,
        component: &Component,
        expected: World,
    ) -> Result<(), RuntimeError> {
        let ty = component.component_type();
        let mut reactor = false;
        let mut descriptor = false;
        for (name, _) in ty.exports(&self.engine) {
            reactor |=
                compatible(name, REACTOR_EXPORT) || OLDER_EXPORTS.iter().any(|(r, _)| name == *r);
            descriptor |= compatible(name, DESCRIPTOR_EXPORT)
                || OLDER_EXPORTS.iter().any(|(_, d)| name == *d);
        }
        let found = match (reactor, descriptor) {
            (true, false) => World::Controller,
            (false, true) => World::Descriptor,
            (true, true) => {
                return Err(RuntimeError::WrongWorld {
                    path: path.to_owned(),
                    found: "a component exporting both worlds".into(),
                    expected,
                });
            }
            (false, false) => {
                return Err(RuntimeError::WrongWorld {
                    path: path.to_owned(),
                    found: format!(
                        "a component exporting neither {REACTOR_EXPORT} nor {DESCRIPTOR_EXPORT}"
                    ),
                    expected,
                });
            }
        };
        if found != expected {
            return Err(RuntimeError::WrongWorld {
                path: path.to_owned(),
                found: format!("a {found} component"),
                expected,
            });
        }
        Ok(())
    }
}

/// A slot's version being made ready to serve, shown by the components view until dropped.
struct Compiling<'a>(&'a Slot);

impl<'a> Compiling<'a> {
    fn start(slot: &'a Slot, sha256: &str) -> Self {
        *slot.compiling.lock() = Some(sha256.to_owned());
        Compiling(slot)
    }
}

impl Drop for Compiling<'_> {
    fn drop(&mut self) {
        *self.0.compiling.lock() = None;
    }
}

/// The guest folders the config grants a version.
fn effective_dirs(loaded: &Loaded) -> Vec<String> {
    let dirs = &loaded.spec.effective.grants.dirs;
    dirs.iter().map(|grant| grant.guest.clone()).collect()
}

/// Logs the configured folders a declared component does not get, because it did not
/// declare them.
fn withheld_grants(name: &str, declared: &Permissions, granted: &[String]) {
    for guest in granted.iter().filter(|g| !declared.wasi.contains(*g)) {
        tracing::warn!(component = %name, folder = %guest, "config grant withheld: the component's declaration does not list it in wasi");
    }
}

/// The engine and its epoch ticker, started together.
pub(crate) fn start_engine() -> Result<(Engine, engine::EpochTicker), RuntimeError> {
    let engine = engine::new_engine()?;
    let ticker = engine::EpochTicker::start(&engine)?;
    Ok((engine, ticker))
}

/// A descriptor's own southbound folder, `<southbound>/<descriptor-name>/`, created if
/// missing and preopened read-write as its root.
fn southbound_grant(
    component: &str,
    southbound: &Path,
    descriptor: &str,
) -> Result<DirGrant, RuntimeError> {
    if !crate::files::valid_name(descriptor) {
        return Err(RuntimeError::InvalidName(descriptor.to_owned()));
    }
    let host: PathBuf = southbound.join(descriptor);
    std::fs::create_dir_all(&host).map_err(|e| RuntimeError::Grant {
        name: component.to_owned(),
        path: host.clone(),
        message: e.to_string(),
    })?;
    Ok(DirGrant {
        host,
        guest: "/".into(),
        mode: Access::ReadWrite,
    })
}

/// Calls `describe()` on a new version, as the last check before it serves.
async fn describe(loaded: &Loaded) -> Result<Described, CallError> {
    loaded
        .call(None, |exports, store| {
            Box::pin(async move {
                match exports {
                    Exports::Controller(guest) => {
                        let info = guest.call_describe(store).await?;
                        Ok(Described::Controller(info.into()))
                    }
                    Exports::Descriptor(guest) => {
                        let info = guest.call_describe(store).await?;
                        Ok(Described::Descriptor(info.into()))
                    }
                    Exports::ControllerV0_1(guest) => {
                        let info = guest.call_describe(store).await?;
                        Ok(Described::Controller(info.into()))
                    }
                    Exports::DescriptorV0_1(guest) => {
                        let info = guest.call_describe(store).await?;
                        Ok(Described::Descriptor(info.into()))
                    }
                }
            })
        })
        .await
}
