//! What `serve` runs for the config entries with a `source`: each component is pulled (or
//! read from the digest cache), checked, and written with its signature into
//! `<data>/supply/components/`, a folder the runtime watches like the components folder — so
//! a new digest becomes a new version through the same load and rollout path as a changed
//! file. A tag is looked up again every `supply.interval`; when its registry is down, slow
//! or answers garbage, the version loaded before keeps serving and `components` shows why.
//! Replicas sharing a store serve the digest recorded there ([`crate::agreement`]): the one
//! that sees a tag move records it, and the others follow within a tick.

use crate::access::Access;
use crate::agreement::Agreement;
use crate::cache::{DigestCache, KEPT};
use crate::policy::signature_path;
use crate::pull::{self, hex};
use crate::reference::{ComponentRef, Version};
use reactor_runtime::{MAX_COMPONENT_BYTES, Runtime, RuntimeSettings, World};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How often the config is looked at for entries added, changed or removed.
pub const TICK: Duration = Duration::from_millis(250);

/// Why following could not start.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// The folder of pulled components could not be made or watched.
    #[error("the folder of pulled components {path}: {message}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// Follows the config's sources until dropped.
#[derive(Debug)]
pub struct Follower {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The entries of `settings` that name a source, by component name.
fn sources(settings: &RuntimeSettings) -> BTreeMap<String, String> {
    settings
        .components
        .iter()
        .filter_map(|(name, entry)| Some((name.clone(), entry.source.clone()?)))
        .collect()
}

/// Starts following: files of entries no longer in the config are removed, the folder of
/// pulled components is loaded (from the compile cache: no recompile after a restart) and
/// watched, and every source is brought up to date from then on. `components` is the
/// components folder, whose files must not share a name with a pulled component; `agreement`
/// the digests recorded in the store the server shares with its replicas.
pub async fn start(
    runtime: Runtime,
    data: &Path,
    components: &Path,
    agreement: Arc<Agreement>,
) -> Result<Follower, FollowError> {
    let root = data.join("supply");
    let dir = root.join("components");
    let folder = |e: &dyn std::fmt::Display| FollowError::Folder {
        path: dir.clone(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(|e| folder(&e))?;
    let wanted = sources(&runtime.settings());
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let name = file
                .strip_suffix(".wasm.minisig")
                .or(file.strip_suffix(".wasm"));
            if name.is_none_or(|name| !wanted.contains_key(name)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    runtime
        .watch_dir(&dir, World::Controller)
        .await
        .map_err(|e| folder(&e))?;
    let follow = Follow {
        runtime,
        dir,
        components: components.to_owned(),
        cache: DigestCache::new(root),
        agreement,
        tracked: BTreeMap::new(),
    };
    Ok(Follower {
        task: tokio::spawn(supervised(follow)),
    })
}

/// Runs `follow`, starting it again (everything looked up afresh) if it panics: a bug in a
/// dependency (as oci-client's default client was) must not end the following silently.
async fn supervised(follow: Follow) {
    use futures::FutureExt;
    loop {
        let fresh = Follow {
            runtime: follow.runtime.clone(),
            dir: follow.dir.clone(),
            components: follow.components.clone(),
            cache: follow.cache.clone(),
            agreement: follow.agreement.clone(),
            tracked: BTreeMap::new(),
        };
        // It loops until dropped: it only ends by a panic.
        if std::panic::AssertUnwindSafe(fresh.run())
            .catch_unwind()
            .await
            .is_ok()
        {
            return;
        }
        tracing::error!("following the config's sources failed (a panic); starting again in 1s");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

struct Follow {
    runtime: Runtime,
    dir: PathBuf,
    components: PathBuf,
    cache: DigestCache,
    agreement: Arc<Agreement>,
    tracked: BTreeMap<String, Tracked>,
}

/// What was last done for one entry.
struct Tracked {
    source: String,
    /// When to look again.
    next: Instant,
    /// The reason last shown, so that it is logged once.
    error: Option<String>,
    /// The manifest digest the tag named when last looked up here.
    seen: Option<String>,
    /// The digest recorded in the store when last brought up to date: another one recorded
    /// since makes it due at once.
    agreed: Option<String>,
    /// The manifest digest last written to the folder: kept by the cache's prune.
    digest: Option<String>,
}

/// What a component was brought up to date with.
struct Synced {
    /// The manifest digest its tag named here (`None`: pinned by digest).
    seen: Option<String>,
    /// The manifest digest written to the folder.
    digest: String,
}

impl Follow {
    async fn run(mut self) {
        loop {
            let settings = self.runtime.settings();
            let wanted = sources(&settings);
            let gone: Vec<String> = self
                .tracked
                .keys()
                .filter(|name| !wanted.contains_key(*name))
                .cloned()
                .collect();
            for name in gone {
                self.tracked.remove(&name);
                let wasm = self.dir.join(format!("{name}.wasm"));
                let _ = std::fs::remove_file(signature_path(&wasm));
                let _ = std::fs::remove_file(&wasm);
                self.runtime
                    .set_source_error(&name, World::Controller, &wasm, None);
            }
            let (wanted_count, mut synced) = (wanted.len(), false);
            for (name, source) in wanted {
                let agreed = self.agreement.agreed(&name, &source);
                let due = self.tracked.get(&name).is_none_or(|t| {
                    t.source != source || Instant::now() >= t.next || t.agreed != agreed
                });
                if !due {
                    continue;
                }
                let tracked = self.tracked.remove(&name);
                let seen = tracked.as_ref().and_then(|t| t.seen.clone());
                let digest = tracked.as_ref().and_then(|t| t.digest.clone());
                let previous = tracked.and_then(|t| t.error);
                let outcome = self.sync(&name, &source, &settings, seen.as_deref()).await;
                let (seen, digest) = match &outcome {
                    Ok(synced) => (synced.seen.clone(), Some(synced.digest.clone())),
                    Err(_) => (seen, digest),
                };
                let wasm = self.dir.join(format!("{name}.wasm"));
                let error = match outcome {
                    Ok(_) => {
                        if previous.is_some() {
                            tracing::info!(component = %name, %source, "registry reached again");
                        }
                        None
                    }
                    Err(reason) => {
                        let serving = self.runtime.component(&name).is_some_and(|c| c.serving);
                        let reason = format!(
                            "source {source}: {reason}; {}",
                            if serving {
                                "the version loaded before keeps serving"
                            } else {
                                "no version of it serves yet"
                            }
                        );
                        if previous.as_deref() != Some(reason.as_str()) {
                            tracing::warn!(component = %name, "{reason}");
                        }
                        Some(reason)
                    }
                };
                self.runtime
                    .set_source_error(&name, World::Controller, &wasm, error.clone());
                let agreed = self.agreement.agreed(&name, &source);
                self.tracked.insert(
                    name,
                    Tracked {
                        source,
                        next: Instant::now() + settings.supply.interval,
                        error,
                        seen,
                        agreed,
                        digest,
                    },
                );
                synced = true;
            }
            // Once every entry was looked at: every version but those written and the newest
            // others goes.
            if synced && self.tracked.len() == wanted_count {
                let written = self.tracked.values().filter_map(|t| t.digest.clone());
                self.cache.prune(&written.collect(), KEPT);
            }
            tokio::time::sleep(TICK).await;
        }
    }

    /// Brings component `name` in line with `source`: pulls what the cache lacks and writes
    /// the wasm (and its signature) into the folder if they changed. A tag serves the digest
    /// recorded in the store, unless it moved here since `seen` (the digest it named when
    /// looked up before): then this server records the new one for every replica.
    async fn sync(
        &self,
        name: &str,
        source: &str,
        settings: &RuntimeSettings,
        seen: Option<&str>,
    ) -> Result<Synced, String> {
        if self.components.join(format!("{name}.wasm")).exists() {
            return Err(format!(
                "{} has the same name; remove one of the two",
                self.components.join(format!("{name}.wasm")).display()
            ));
        }
        let reference = ComponentRef::parse(source).map_err(|e| e.to_string())?;
        let registry = settings
            .supply
            .registries
            .get(&reference.registry)
            .cloned()
            .unwrap_or_default();
        let access = Access::new(&reference.registry, &registry, settings.supply.timeout)
            .map_err(|e| e.to_string())?;
        let (manifest_digest, bytes, seen) = match &reference.version {
            Version::Digest(digest) => {
                let (digest, bytes) = self.by_digest(&access, &reference, digest).await?;
                (digest, bytes, None)
            }
            Version::Tag(_) => {
                let (named, bytes) = self.pull(&access, &reference).await?;
                let agreed = self.agreement.agreed(name, source);
                let moved = seen != Some(named.as_str()) && agreed.as_ref() != Some(&named);
                let (digest, bytes) = match agreed {
                    Some(agreed) if !moved && agreed != named => {
                        let pinned = reference.at(Version::Digest(agreed.clone()));
                        self.by_digest(&access, &pinned, &agreed).await?
                    }
                    _ => (named.clone(), bytes),
                };
                if moved {
                    tracing::info!(component = %name, %source, digest = %named, "the tag moved: its digest recorded for every replica");
                    (self.agreement.record(name, source, &named).await)
                        .map_err(|e| e.to_string())?;
                }
                (digest, bytes, Some(named))
            }
        };
        let signature = match (&settings.trust, self.cache.signature(&manifest_digest)) {
            (None, _) => None,
            (Some(_), Some(kept)) => Some(kept),
            (Some(_), None) => {
                let found = pull::signature(&access, &reference, &manifest_digest)
                    .await
                    .map_err(|e| e.to_string())?;
                if let Some(signature) = &found {
                    self.cache.keep_signature(&manifest_digest, signature);
                }
                found
            }
        };
        self.write(name, &bytes, signature.as_deref())?;
        Ok(Synced {
            seen,
            digest: manifest_digest,
        })
    }

    /// The wasm of manifest `digest` (named by `reference`), from the cache or pulled.
    async fn by_digest(
        &self,
        access: &Access,
        reference: &ComponentRef,
        digest: &str,
    ) -> Result<(String, Vec<u8>), String> {
        let cached = (self.cache.layer_of(digest)).and_then(|layer| self.cache.wasm(&layer));
        match cached {
            Some(bytes) => Ok((digest.to_owned(), bytes)),
            None => self.pull(access, reference).await,
        }
    }

    /// Pulls `reference` (its layer from the cache when kept) and keeps it: its manifest
    /// digest and wasm.
    async fn pull(
        &self,
        access: &Access,
        reference: &ComponentRef,
    ) -> Result<(String, Vec<u8>), String> {
        let pulled = pull::component(access, reference, MAX_COMPONENT_BYTES, |layer| {
            self.cache.wasm(layer)
        })
        .await
        .map_err(|e| e.to_string())?;
        (self.cache).keep(&pulled.manifest_digest, &pulled.layer_digest, &pulled.bytes);
        Ok((pulled.manifest_digest, pulled.bytes))
    }

    /// Writes the signature (or removes a stale one), then the wasm, each only if changed,
    /// each atomically, so the runtime's watcher loads the wasm with its signature beside it.
    fn write(&self, name: &str, bytes: &[u8], signature: Option<&str>) -> Result<(), String> {
        let wasm = self.dir.join(format!("{name}.wasm"));
        let sig = signature_path(&wasm);
        let io = |path: &Path, e: std::io::Error| format!("write {}: {e}", path.display());
        match signature {
            Some(text) if std::fs::read_to_string(&sig).ok().as_deref() != Some(text) => {
                replace(&self.dir, &sig, text.as_bytes()).map_err(|e| io(&sig, e))?;
            }
            None if sig.exists() => std::fs::remove_file(&sig).map_err(|e| io(&sig, e))?,
            _ => {}
        }
        let same = std::fs::read(&wasm)
            .is_ok_and(|on_disk| hex(&Sha256::digest(&on_disk)) == hex(&Sha256::digest(bytes)));
        if !same {
            replace(&self.dir, &wasm, bytes).map_err(|e| io(&wasm, e))?;
        }
        Ok(())
    }
}

/// Writes `bytes` to `path` through a hidden temporary file in `dir`, renamed into place.
fn replace(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
