//! Loading one file: read, hash, compile (or take from the cache) off the async threads,
//! check its world, link, describe, and only then swap it in. Any failure leaves the
//! version in service untouched and records the error.

use super::bindings::{DESCRIPTOR_EXPORT, OLDER_EXPORTS, REACTOR_EXPORT};
use super::cache::{Lookup, sha256_hex};
use super::described::Described;
use super::instance::{Exports, Indices, Loaded};
use super::registry::{Serving, Slot, Source};
use super::settings::{Access, DirGrant};
use super::state::InstanceSpec;
use super::{CallError, ComponentEvent, ComponentInfo, Inner, RuntimeError, World};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;
use wasmtime::component::Component;

/// The component name of a file: its name without `.wasm`; `None` for files the runtime
/// ignores (other extensions, hidden or temporary files, names that are not
/// `[A-Za-z0-9_-]+`).
pub(crate) fn component_name(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let stem = file.strip_suffix(".wasm")?;
    valid_name(stem).then(|| stem.to_owned())
}

/// Whether `name` can be a component name (and so a file name).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The largest component file read (componentize-py and componentize-js make 12-18 MB).
pub(crate) const MAX_COMPONENT_BYTES: u64 = 64 << 20;

/// Why a file in a components folder that looks meant as a component (its name ends in
/// `.wasm` in any case, and it is not hidden) is not loaded; `None` for a loadable name and
/// for files that are not meant as components at all.
pub(crate) fn ignored_reason(path: &Path) -> Option<String> {
    let file = path.file_name()?;
    let Some(file) = file.to_str() else {
        let lossy = file.to_string_lossy();
        return lossy
            .to_ascii_lowercase()
            .ends_with(".wasm")
            .then(|| "its file name is not UTF-8".to_owned());
    };
    if file.starts_with('.') || !file.to_ascii_lowercase().ends_with(".wasm") {
        return None;
    }
    let Some(stem) = file.strip_suffix(".wasm") else {
        return Some("the extension must be `.wasm`, in lower case".to_owned());
    };
    (!valid_name(stem)).then(|| {
        format!(
            "{stem:?} is not a component name: use ASCII letters, digits, `-` and `_` (at most 128, not first `-`)"
        )
    })
}

/// Reads a component file: only a regular file (or a symlink to one) of at most `limit`
/// bytes, opened without blocking, so a FIFO or a device in the folder is refused, not waited
/// on or read forever.
pub(crate) fn read_component(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let check = |meta: &std::fs::Metadata| -> Result<(), String> {
        if !meta.is_file() {
            return Err(format!("not a regular file ({})", file_type(meta)));
        }
        if meta.len() > limit {
            return Err(format!(
                "too big: {} bytes, the limit is {limit}",
                meta.len()
            ));
        }
        Ok(())
    };
    check(&std::fs::metadata(path).map_err(|e| e.to_string())?)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(|e| e.to_string())?;
    // The file may have been replaced between the check and the open.
    let meta = file.metadata().map_err(|e| e.to_string())?;
    check(&meta)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("too big: over the limit of {limit} bytes"));
    }
    Ok(bytes)
}

fn file_type(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

/// Whether `bytes` start like a core wasm module (version 1) rather than a component.
fn is_core_module(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && bytes[..4] == *b"\0asm" && bytes[4..8] == [1, 0, 0, 0]
}

impl Inner {
    /// The slot of `name`, created for `world` and `file` if new.
    pub(crate) fn slot_for(&self, name: &str, world: World, file: &Path) -> Arc<Slot> {
        let mut slots = self.slots.write();
        slots
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(Slot::new(name.to_owned(), world, file.to_owned())))
            .clone()
    }

    pub(crate) fn slot(&self, name: &str) -> Option<Arc<Slot>> {
        self.slots.read().get(name).cloned()
    }

    /// Loads (or reloads) `path` as a component of `world`. Unchanged files with
    /// unchanged settings are left alone unless `force`.
    pub(crate) async fn load_file(
        self: &Arc<Self>,
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
        let slot = self.slot_for(&name, world, path);
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
                let _ = self.events.send(ComponentEvent::Loaded {
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
                let _ = self.events.send(ComponentEvent::Failed {
                    name: name.clone(),
                    error: e.to_string(),
                });
                return Err(e);
            }
        }
        Ok(slot.info())
    }

    async fn build(
        self: &Arc<Self>,
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
        let (component, source) = self.compile(path.to_owned(), bytes, sha256.clone()).await?;
        let counter = match source {
            Source::Compiled => "reactor_component_compiles_total",
            Source::Cache => "reactor_component_cache_hits_total",
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
                .find(|kind| crate::object::is_reserved(kind))
        {
            return Err(RuntimeError::ReservedKind {
                name: slot.name.clone(),
                kind: kind.to_owned(),
            });
        }
        if let (Described::Descriptor(info), Some(southbound)) = (&described, &self.southbound) {
            loaded.spec.implicit_dirs =
                vec![self.southbound_grant(&slot.name, southbound, &info.name)?];
            loaded.drain_warm();
        }
        Ok(Some(Serving {
            loaded,
            described,
            source,
        }))
    }

    /// A descriptor's own southbound folder, `<southbound>/<descriptor-name>/`, created if
    /// missing and preopened read-write as its root.
    fn southbound_grant(
        &self,
        component: &str,
        southbound: &Path,
        descriptor: &str,
    ) -> Result<DirGrant, RuntimeError> {
        let host: PathBuf = southbound.join(descriptor);
        if !super::load::valid_name(descriptor) {
            return Err(RuntimeError::InvalidName(descriptor.to_owned()));
        }
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

    /// Compiles off the async threads, through the on-disk cache.
    async fn compile(
        self: &Arc<Self>,
        path: PathBuf,
        bytes: Vec<u8>,
        sha256: String,
    ) -> Result<(Component, Source), RuntimeError> {
        let inner = self.clone();
        let task_path = path.clone();
        tokio::task::spawn_blocking(move || {
            match inner.cache.load(&inner.engine, &sha256) {
                Lookup::Hit(component) => {
                    inner.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
                    return Ok((component, Source::Cache));
                }
                Lookup::Discarded => {
                    inner.stats.cache_discarded.fetch_add(1, Ordering::Relaxed);
                }
                Lookup::Miss => {}
            }
            let component = Component::from_binary(&inner.engine, &bytes).map_err(|e| {
                RuntimeError::Compile {
                    path: task_path,
                    message: format!("{e:#}"),
                }
            })?;
            inner.stats.compiled.fetch_add(1, Ordering::Relaxed);
            inner.cache.store(&sha256, &component);
            Ok((component, Source::Compiled))
        })
        .await
        .map_err(|e| RuntimeError::Compile {
            path,
            message: format!("compiler task failed: {e}"),
        })?
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
            reactor |= name == REACTOR_EXPORT || OLDER_EXPORTS.iter().any(|(r, _)| name == *r);
            descriptor |=
                name == DESCRIPTOR_EXPORT || OLDER_EXPORTS.iter().any(|(_, d)| name == *d);
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

    /// Stops serving `name`: calls in flight finish on the version they hold.
    pub(crate) fn detach(&self, name: &str) -> bool {
        let slot = self.slots.write().remove(name);
        match slot {
            Some(slot) => {
                slot.current.store(None);
                tracing::info!(component = %name, "component detached");
                let _ = self.events.send(ComponentEvent::Unloaded {
                    name: name.to_owned(),
                });
                true
            }
            None => false,
        }
    }
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

#[cfg(test)]
mod folder_tests {
    use super::*;

    #[test]
    fn names_meant_as_components_say_why_they_are_not_loaded() {
        for name in [
            "my comp.wasm",
            "ünïcode.wasm",
            "a.b.wasm",
            "x.WASM",
            "-x.wasm",
        ] {
            let reason = ignored_reason(Path::new(name));
            assert!(reason.is_some(), "{name} is reported");
        }
        for name in ["ok.wasm", "README.md", ".x.wasm.12.tmp", "x.wasm~"] {
            assert_eq!(ignored_reason(Path::new(name)), None, "{name}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("x.wasm");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let err = read_component(&fifo, 1 << 20).expect_err("a FIFO");
        assert!(err.contains("FIFO"), "{err}");
        let zero = dir.path().join("z.wasm");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
        let err = read_component(&zero, 1 << 20).expect_err("a device");
        assert!(err.contains("device"), "{err}");
        let big = dir.path().join("big.wasm");
        std::fs::write(&big, vec![0u8; 2048]).expect("write");
        let err = read_component(&big, 1024).expect_err("too big");
        assert!(err.contains("too big"), "{err}");
        assert_eq!(read_component(&big, 2048).expect("fits").len(), 2048);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_wasm_names_are_components() {
        assert_eq!(
            component_name(Path::new("/c/policy-rust.wasm")).as_deref(),
            Some("policy-rust")
        );
        assert_eq!(
            component_name(Path::new("/c/a_b.wasm")).as_deref(),
            Some("a_b")
        );
        assert_eq!(component_name(Path::new("/c/.policy.wasm")), None);
        assert_eq!(component_name(Path::new("/c/policy.wasm.tmp")), None);
        assert_eq!(component_name(Path::new("/c/po licy.wasm")), None);
        assert_eq!(component_name(Path::new("/c/.wasm")), None);
    }

    #[test]
    fn core_modules_are_told_from_components() {
        assert!(is_core_module(b"\0asm\x01\0\0\0"));
        assert!(!is_core_module(b"\0asm\x0d\0\x01\0"));
        assert!(!is_core_module(b"\0as"));
    }
}
