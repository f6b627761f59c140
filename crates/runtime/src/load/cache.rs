//! Compiled components cached on disk under `<data>/cache/`.
//!
//! Keyed by the sha256 of the wasm and the engine's compatibility hash, each entry guarded by
//! a checksum of its own.

use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Lowercase hex sha256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds `Hash` output into sha256, so the engine's compatibility hash is stable across
/// processes (std's `DefaultHasher` promises no such thing).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_le_bytes(first)
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The on-disk cache of compiled components.
pub(crate) struct Cache {
    dir: PathBuf,
    engine_hash: String,
}

/// What a cache lookup found.
pub(crate) enum Lookup {
    /// A verified entry.
    Hit(Component),
    /// No entry.
    Miss,
    /// An entry that failed its checksum or did not deserialize; it was deleted.
    Discarded,
}

impl Cache {
    /// A cache in `dir` (created on first store) for components compiled by `engine`.
    pub(crate) fn new(dir: PathBuf, engine: &Engine) -> Self {
        let mut hasher = Sha256Hasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_hash = hex(&hasher.0.finalize()[..8]);
        Cache { dir, engine_hash }
    }

    fn paths(&self, wasm_sha256: &str) -> (PathBuf, PathBuf) {
        let stem = format!("{wasm_sha256}-{}", self.engine_hash);
        (
            self.dir.join(format!("{stem}.cwasm")),
            self.dir.join(format!("{stem}.sha256")),
        )
    }

    /// The cached compilation of the wasm whose sha256 is `wasm_sha256`, if a sound one
    /// exists. An entry whose checksum does not match, or that wasmtime refuses, is
    /// deleted and reported as discarded.
    pub(crate) fn load(&self, engine: &Engine, wasm_sha256: &str) -> Lookup {
        let (code_path, sum_path) = self.paths(wasm_sha256);
        let (Ok(code), Ok(sum)) = (
            std::fs::read(&code_path),
            std::fs::read_to_string(&sum_path),
        ) else {
            if code_path.exists() || sum_path.exists() {
                return self.discard(&code_path, &sum_path, "entry is incomplete");
            }
            return Lookup::Miss;
        };
        if sha256_hex(&code) != sum.trim() {
            return self.discard(&code_path, &sum_path, "checksum does not match");
        }
        // SAFETY: `Component::deserialize` trusts its input to be code wasmtime compiled
        // for this engine. The bytes come only from our own cache folder, written by
        // `store` below from `Component::serialize`, and were just verified against the
        // sha256 checksum written beside them after the code itself; a torn write,
        // truncation or bit flip fails that check and the entry is discarded before it
        // gets here. wasmtime further checks the engine compatibility header itself.
        #[allow(unsafe_code)]
        let component = unsafe { Component::deserialize(engine, &code) };
        match component {
            Ok(component) => Lookup::Hit(component),
            Err(e) => self.discard(&code_path, &sum_path, &format!("wasmtime refused it: {e}")),
        }
    }

    fn discard(&self, code_path: &Path, sum_path: &Path, why: &str) -> Lookup {
        let _ = std::fs::remove_file(code_path);
        let _ = std::fs::remove_file(sum_path);
        tracing::warn!(entry = %code_path.display(), "discarded cache entry: {why}");
        Lookup::Discarded
    }

    /// Removes the entries of the wasm whose sha256 is in `versions`, and every entry
    /// compiled by another engine (no engine of this build can load it).
    pub(crate) fn evict(&self, versions: &BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(stem) = name
                .strip_suffix(".cwasm")
                .or_else(|| name.strip_suffix(".sha256"))
            else {
                continue;
            };
            let Some((sha256, engine)) = stem.split_once('-') else {
                continue;
            };
            if versions.contains(sha256) || engine != self.engine_hash {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => tracing::debug!(entry = %name, "cache entry evicted"),
                    Err(e) => {
                        tracing::warn!(entry = %entry.path().display(), "cannot evict a cache entry: {e}")
                    }
                }
            }
        }
    }

    /// Stores a compiled component; failures only cost a recompilation later, so they are
    /// logged, not returned.
    pub(crate) fn store(&self, wasm_sha256: &str, component: &Component) {
        if let Err(e) = self.try_store(wasm_sha256, component) {
            tracing::warn!(cache = %self.dir.display(), "could not cache a compiled component: {e}");
        }
    }

    fn try_store(&self, wasm_sha256: &str, component: &Component) -> Result<(), String> {
        let code = component
            .serialize()
            .map_err(|e| format!("serialize: {e}"))?;
        // Private like the rest of the data folder (0700, files 0600), whatever the umask.
        reactor_core::private::create_dir(&self.dir)
            .map_err(|e| format!("create {}: {e}", self.dir.display()))?;
        let (code_path, sum_path) = self.paths(wasm_sha256);
        let write = |path: &Path, bytes: &[u8]| -> Result<(), String> {
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, bytes).map_err(|e| format!("write {}: {e}", tmp.display()))?;
            reactor_core::private::restrict_file(&tmp)
                .map_err(|e| format!("restrict {}: {e}", tmp.display()))?;
            std::fs::rename(&tmp, path).map_err(|e| format!("rename {}: {e}", tmp.display()))
        };
        write(&code_path, &code)?;
        // The checksum goes last: an entry without it is never trusted.
        write(&sum_path, sha256_hex(&code).as_bytes())
    }
}
