//! The digest cache under `<data>/supply/`: each wasm pulled by its layer digest
//! (`blobs/sha256-HEX.wasm`, checked against its name when read), which layer each manifest
//! digest names (`manifests/sha256-HEX`), and the signature found for it
//! (`signatures/sha256-HEX.minisig`). A component pinned by digest and cached loads after a
//! restart without a call to its registry. Pruned after each pull to the versions serving and
//! the newest [`KEPT`] others, so a tag that moves often does not fill the disk.

use crate::pull::hex;
use crate::reference::is_sha256_digest;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Versions (manifest digests) kept beside those serving, newest first: what a rollback or a
/// tag moved back finds without a pull.
pub const KEPT: usize = 8;

/// The digest cache.
#[derive(Debug, Clone)]
pub struct DigestCache {
    dir: PathBuf,
}

/// `sha256:HEX` as a file name, `sha256-HEX`; `None` for anything else.
fn file_name(digest: &str) -> Option<String> {
    is_sha256_digest(digest).then(|| digest.replacen(':', "-", 1))
}

impl DigestCache {
    /// A cache in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DigestCache { dir: dir.into() }
    }

    fn path(&self, kind: &str, digest: &str, extension: &str) -> Option<PathBuf> {
        Some(
            self.dir
                .join(kind)
                .join(format!("{}{extension}", file_name(digest)?)),
        )
    }

    /// The wasm whose digest is `layer_digest`, if kept and sound (a corrupt one is removed).
    pub fn wasm(&self, layer_digest: &str) -> Option<Vec<u8>> {
        let path = self.path("blobs", layer_digest, ".wasm")?;
        let bytes = std::fs::read(&path).ok()?;
        if format!("sha256:{}", hex(&Sha256::digest(&bytes))) != layer_digest {
            tracing::warn!(path = %path.display(), "a cached component is corrupt: removed");
            let _ = std::fs::remove_file(&path);
            return None;
        }
        Some(bytes)
    }

    /// The layer digest the manifest `manifest_digest` names, if known.
    pub fn layer_of(&self, manifest_digest: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.path("manifests", manifest_digest, "")?).ok()?;
        let layer = text.trim();
        is_sha256_digest(layer).then(|| layer.to_owned())
    }

    /// The signature kept for `manifest_digest`, if any.
    pub fn signature(&self, manifest_digest: &str) -> Option<String> {
        std::fs::read_to_string(self.path("signatures", manifest_digest, ".minisig")?).ok()
    }

    /// Keeps a pulled component: its wasm and which layer its manifest names.
    pub fn keep(&self, manifest_digest: &str, layer_digest: &str, wasm: &[u8]) {
        if let Some(path) = self.path("blobs", layer_digest, ".wasm")
            && !path.is_file()
        {
            write(&path, wasm);
        }
        if let Some(path) = self.path("manifests", manifest_digest, "") {
            write(&path, layer_digest.as_bytes());
        }
    }

    /// Removes every version but `serving` (manifest digests) and the `kept` newest others
    /// (by when they were last kept), with their signatures and the wasm no version left names.
    pub fn prune(&self, serving: &BTreeSet<String>, kept: usize) {
        let manifests = self.dir.join("manifests");
        let Ok(entries) = std::fs::read_dir(&manifests) else {
            return;
        };
        let mut others: Vec<(SystemTime, String)> = entries
            .flatten()
            .filter_map(|entry| {
                let digest = entry.file_name().to_string_lossy().replacen('-', ":", 1);
                let modified = entry.metadata().and_then(|m| m.modified()).ok()?;
                (is_sha256_digest(&digest) && !serving.contains(&digest))
                    .then_some((modified, digest))
            })
            .collect();
        if others.len() <= kept {
            return;
        }
        others.sort_by(|a, b| b.cmp(a));
        for (_, digest) in others.split_off(kept) {
            for path in [
                self.path("manifests", &digest, ""),
                self.path("signatures", &digest, ".minisig"),
            ]
            .into_iter()
            .flatten()
            {
                let _ = std::fs::remove_file(path);
            }
        }
        // The wasm no manifest left names.
        let named: BTreeSet<String> = (std::fs::read_dir(&manifests).into_iter().flatten())
            .flatten()
            .filter_map(|entry| {
                let digest = entry.file_name().to_string_lossy().replacen('-', ":", 1);
                self.layer_of(&digest)
            })
            .filter_map(|layer| file_name(&layer))
            .collect();
        let blobs = self.dir.join("blobs");
        for entry in (std::fs::read_dir(&blobs).into_iter().flatten()).flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let stem = file.strip_suffix(".wasm").unwrap_or(&file);
            if !named.contains(stem) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Keeps the signature found for `manifest_digest`.
    pub fn keep_signature(&self, manifest_digest: &str, signature: &str) {
        if let Some(path) = self.path("signatures", manifest_digest, ".minisig") {
            write(&path, signature.as_bytes());
        }
    }
}

/// Writes `bytes` to `path` atomically (a temporary file renamed); a failure costs only a
/// pull later, so it is logged.
pub(crate) fn write(path: &Path, bytes: &[u8]) {
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path))
        });
    if let Err(e) = written {
        tracing::warn!(path = %path.display(), "cannot keep a pulled file: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_components_come_back_and_corrupt_ones_do_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = DigestCache::new(dir.path());
        let wasm = b"\0asm component".to_vec();
        let layer = format!("sha256:{}", hex(&Sha256::digest(&wasm)));
        let manifest = format!("sha256:{}", "b".repeat(64));
        cache.keep(&manifest, &layer, &wasm);
        assert_eq!(cache.layer_of(&manifest), Some(layer.clone()));
        assert_eq!(cache.wasm(&layer), Some(wasm));
        let blob = dir
            .path()
            .join("blobs")
            .join(format!("{}.wasm", layer.replace(':', "-")));
        std::fs::write(&blob, b"flipped").expect("corrupt");
        assert_eq!(cache.wasm(&layer), None);
        assert!(!blob.exists());
        assert_eq!(cache.wasm("../../etc/passwd"), None);
    }

    #[test]
    fn a_prune_keeps_what_serves_and_the_newest_others_with_their_wasm() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = DigestCache::new(dir.path());
        let epoch = SystemTime::UNIX_EPOCH;
        let mut versions = Vec::new();
        for i in 0..6u64 {
            let wasm = format!("\0asm version {i}").into_bytes();
            let layer = format!("sha256:{}", hex(&Sha256::digest(&wasm)));
            let manifest = format!("sha256:{}", format!("{i:x}").repeat(64));
            cache.keep(&manifest, &layer, &wasm);
            cache.keep_signature(&manifest, "signed");
            // Kept one second apart, version 0 first: controlled, not the clock's.
            let file = std::fs::File::options()
                .write(true)
                .open(cache.path("manifests", &manifest, "").expect("a path"))
                .expect("the manifest file");
            file.set_modified(epoch + std::time::Duration::from_secs(i))
                .expect("set its time");
            versions.push((manifest, layer));
        }
        // A layer also named by a version kept stays.
        let shared = format!("sha256:{}", "9".repeat(64));
        cache.keep(&shared, &versions[4].1, b"\0asm version 4");
        let serving = BTreeSet::from([versions[0].0.clone()]);
        cache.prune(&serving, 2);
        let kept: Vec<bool> = (versions.iter())
            .map(|(manifest, _)| cache.layer_of(manifest).is_some())
            .collect();
        // Serving (0), the two newest others (5, and `shared` kept last), the rest removed.
        assert_eq!(kept, [true, false, false, false, false, true]);
        assert!(cache.layer_of(&shared).is_some());
        assert!(cache.wasm(&versions[0].1).is_some() && cache.wasm(&versions[5].1).is_some());
        assert!(
            cache.wasm(&versions[2].1).is_none(),
            "a wasm no version names is removed"
        );
        assert!(
            cache.wasm(&versions[4].1).is_some(),
            "version 4 is removed, its wasm is still named by a version kept"
        );
        assert!(cache.signature(&versions[2].0).is_none());
        assert!(cache.signature(&versions[0].0).is_some());
    }
}
