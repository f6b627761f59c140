//! The wasm of the versions in use, kept on disk, and which version serves each component.
//!
//! The versions in use (serving, replaced, in the folder, rolled back to) are kept by sha256 as
//! `<versions>/<sha256>.wasm`, so a version rolled back to serves again after a restart while
//! the rolled-back file is still in the folder; and which version serves each component is
//! recorded (`<versions>/serving/<name>`), so a restart serves it again first. Beside each
//! kept version is what admitted it under a trust policy (`<sha256>.wasm.minisig`), so that it
//! is admitted again before it serves again.

use crate::files::valid_name;
use crate::load::admission::Evidence;
use crate::load::cache::sha256_hex;
use parking_lot::Mutex;
use reactor_core::component::is_sha256;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The folder of kept versions. A write and a pruning exclude each other, so a version being
/// kept is never removed by a pruning that did not yet count it in use.
pub(crate) struct Versions {
    dir: PathBuf,
    lock: Mutex<()>,
}

impl Versions {
    /// Versions kept in `dir` (created on the first write).
    pub(crate) fn new(dir: PathBuf) -> Self {
        Versions {
            dir,
            lock: Mutex::new(()),
        }
    }

    /// Where the version `sha256` is kept; `None` for a text that is no sha256.
    pub(crate) fn path(&self, sha256: &str) -> Option<PathBuf> {
        is_sha256(sha256).then(|| self.dir.join(format!("{sha256}.wasm")))
    }

    /// Keeps `bytes`, whose sha256 is `sha256`, unless kept already, and beside it what
    /// admitted it, replacing what admitted it before (blocking). A failure is only logged:
    /// the version serves all the same, it just cannot be restored after a restart.
    pub(crate) fn keep(&self, sha256: &str, bytes: &[u8], evidence: &[Evidence]) {
        let Some(path) = self.path(sha256) else {
            return;
        };
        // What admits the version is in place before the version is: a version kept is
        // never read without it.
        for beside in evidence {
            let mut name = path.clone().into_os_string();
            name.push(beside.suffix);
            let name = PathBuf::from(name);
            // The same file kept already (the version loaded again) is not written again.
            if std::fs::read(&name).is_ok_and(|kept| kept == beside.bytes) {
                continue;
            }
            self.write(sha256, &name, &beside.bytes);
        }
        {
            // Checked with prunings excluded: a pruning either counted it in use already or
            // has removed it, and then it is written again.
            let _pruning = self.lock.lock();
            if path.is_file() {
                return;
            }
        }
        self.write(sha256, &path, bytes);
    }

    /// Writes `bytes` to `path`, a file of version `sha256`, through a temporary file renamed
    /// in with prunings excluded (blocking); a failure is logged.
    fn write(&self, sha256: &str, path: &Path, bytes: &[u8]) {
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let tmp = self.dir.join(format!(
            ".{sha256}.{}.{}.tmp",
            WRITES.fetch_add(1, Ordering::Relaxed),
            std::process::id()
        ));
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| std::fs::write(&tmp, bytes))
            .and_then(|()| {
                let _pruning = self.lock.lock();
                std::fs::rename(&tmp, path)
            });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!(path = %path.display(), "cannot keep this version for a restart: {e}");
        }
    }

    /// The kept wasm of `sha256` (blocking); `None` if it is not kept. A file that does not
    /// hash to its name is removed and counts as not kept.
    pub(crate) fn read(&self, sha256: &str) -> Option<Vec<u8>> {
        let path = self.path(sha256)?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %path.display(), "cannot read a kept version: {e}");
                return None;
            }
        };
        if sha256_hex(&bytes) != sha256 {
            tracing::warn!(path = %path.display(), "a kept version is corrupt: removed");
            let _ = std::fs::remove_file(&path);
            return None;
        }
        Some(bytes)
    }

    /// Where the version serving `name` is recorded; `None` for a text that is no name.
    fn serving_path(&self, name: &str) -> Option<PathBuf> {
        valid_name(name).then(|| self.dir.join("serving").join(name))
    }

    /// Records that version `sha256` serves `name` (blocking; written whole and synced, so a
    /// crash leaves the old record or the new one). A failure is only logged: after a restart
    /// the folder's version then loads as a first version would.
    pub(crate) fn record_serving(&self, name: &str, sha256: &str) {
        let Some(path) = self.serving_path(name).filter(|_| is_sha256(sha256)) else {
            return;
        };
        if self.serving(name).as_deref() == Some(sha256) {
            return;
        }
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let written = (path.parent().map_or(Ok(()), std::fs::create_dir_all))
            .and_then(|()| {
                let mut file = std::fs::File::create(&tmp)?;
                std::io::Write::write_all(&mut file, sha256.as_bytes())?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!(path = %path.display(), "cannot record the version serving for a restart: {e}");
        }
    }

    /// The version recorded as serving `name`, if any (blocking).
    pub(crate) fn serving(&self, name: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.serving_path(name)?).ok()?;
        let sha256 = text.trim();
        is_sha256(sha256).then(|| sha256.to_owned())
    }

    /// Every version recorded as serving some component.
    fn recorded(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("serving")) else {
            return Vec::new();
        };
        (entries.flatten())
            .filter_map(|entry| self.serving(entry.file_name().to_str()?))
            .collect()
    }

    /// Forgets which version serves `name` (its file was removed): a file put back later
    /// loads as a first version.
    pub(crate) fn forget_serving(&self, name: &str) {
        if let Some(path) = self.serving_path(name) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Removes every kept version not in the set `in_use` answers (computed once the writes
    /// have been excluded), and the temporary files of other processes (left by a crash).
    pub(crate) fn prune(&self, in_use: impl FnOnce() -> BTreeSet<String>) {
        let _writes = self.lock.lock();
        let mut in_use = in_use();
        // A version recorded as serving is needed by the next start, whatever is loaded now
        // (nothing yet, while a config is read before the folder).
        in_use.extend(self.recorded());
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let ours = format!(".{}.tmp", std::process::id());
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            // A version's wasm, `<sha256>.wasm`, and what admitted it, `<sha256>.wasm.*`.
            let stale = match name.split_once(".wasm") {
                Some((sha256, _)) => is_sha256(sha256) && !in_use.contains(sha256),
                None => name.starts_with('.') && name.ends_with(".tmp") && !name.ends_with(&ours),
            };
            if stale && let Err(e) = std::fs::remove_file(entry.path()) {
                tracing::warn!(file = %entry.path().display(), "cannot remove a version no longer in use: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_versions_in_use_are_kept_and_a_corrupt_one_is_not_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let versions = Versions::new(dir.path().join("versions"));
        let (a, b) = (b"version a".to_vec(), b"version b".to_vec());
        let (sha_a, sha_b) = (sha256_hex(&a), sha256_hex(&b));
        let signed = |text: &str| Evidence {
            suffix: ".minisig",
            bytes: text.as_bytes().to_vec(),
        };
        let signature = |sha: &str| dir.path().join(format!("versions/{sha}.wasm.minisig"));
        versions.keep(&sha_a, &a, &[signed("by the old key")]);
        versions.keep(&sha_b, &b, &[signed("b's")]);
        assert_eq!(versions.read(&sha_a), Some(a.clone()));
        // Kept again, admitted by another signature: that one is beside it now.
        versions.keep(&sha_a, &a, &[signed("by the new key")]);
        let kept = std::fs::read_to_string(signature(&sha_a)).expect("a's signature");
        assert_eq!(kept, "by the new key");
        // Kept again by the same signature: the file is left as it is, not written again.
        let inode = |path: &Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(path).expect("signature").ino()
        };
        let before = inode(&signature(&sha_a));
        versions.keep(&sha_a, &a, &[signed("by the new key")]);
        assert_eq!(inode(&signature(&sha_a)), before, "not replaced");
        std::fs::write(dir.path().join("versions/.x.1.tmp"), b"left by a crash").expect("tmp");
        versions.prune(|| BTreeSet::from([sha_a.clone()]));
        assert_eq!(versions.read(&sha_a), Some(a));
        assert!(signature(&sha_a).is_file());
        assert_eq!(versions.read(&sha_b), None, "not in use: removed");
        assert!(!signature(&sha_b).exists(), "with its signature");
        assert!(!dir.path().join("versions/.x.1.tmp").exists());

        let path = versions.path(&sha_a).expect("a sha256");
        std::fs::write(&path, b"flipped").expect("corrupt it");
        assert_eq!(versions.read(&sha_a), None);
        assert!(!path.exists(), "a corrupt version is removed");
    }

    #[test]
    fn the_version_serving_is_recorded_replaced_and_forgotten_per_component() {
        let dir = tempfile::tempdir().expect("tempdir");
        let versions = Versions::new(dir.path().join("versions"));
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        assert_eq!(versions.serving("echo"), None);
        versions.record_serving("echo", &a);
        versions.record_serving("other", &b);
        assert_eq!(versions.serving("echo"), Some(a.clone()));
        versions.record_serving("echo", &b);
        assert_eq!(versions.serving("echo"), Some(b.clone()));
        versions.prune(BTreeSet::new);
        assert_eq!(
            versions.serving("echo"),
            Some(b),
            "no pruning removes a record"
        );
        versions.forget_serving("echo");
        assert_eq!(versions.serving("echo"), None);
        assert_eq!(versions.serving("other"), Some("b".repeat(64)));
        versions.record_serving("../x", &a);
        versions.record_serving("echo", "not a sha256");
        assert_eq!(versions.serving("../x"), None);
        assert_eq!(versions.serving("echo"), None);
    }

    #[test]
    fn a_name_that_is_no_sha256_leads_nowhere() {
        let versions = Versions::new(PathBuf::from("/v"));
        assert_eq!(versions.path("../../etc/passwd"), None);
        assert_eq!(versions.path(&"A".repeat(64)), None);
        assert!(versions.path(&"a".repeat(64)).is_some());
        assert_eq!(versions.read("../x"), None);
    }
}
