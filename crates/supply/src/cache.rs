//! The digest cache under `<data>/supply/`: each wasm pulled by its layer digest
//! (`blobs/sha256-HEX.wasm`, checked against its name when read), which layer each manifest
//! digest names (`manifests/sha256-HEX`), and the signature found for it
//! (`signatures/sha256-HEX.minisig`). A component pinned by digest and cached loads after a
//! restart without a call to its registry.

use crate::pull::hex;
use crate::reference::is_sha256_digest;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

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
}
