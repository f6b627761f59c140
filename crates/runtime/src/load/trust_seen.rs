//! The trust in force as last looked at: what tells a config reload that it changed.

use crate::load::cache::sha256_hex;
use crate::settings::TrustSettings;
use std::io::Read;
use std::path::PathBuf;

/// The most of a key file read to tell whether it changed; a minisign key is about 100 bytes.
const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

/// The trust in force as last looked at: the section, and each key file's sha256 (`None`:
/// unreadable), so that a key file replaced under the same name counts as a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrustSeen(Option<Vec<(PathBuf, Option<String>)>>);

impl TrustSeen {
    /// A trust that differs from any read (when reading failed): everything is checked.
    pub(crate) fn unknown() -> Self {
        TrustSeen(Some(vec![(PathBuf::new(), None)]))
    }

    /// Reads the key files `trust` names (blocking: a few small files, on a config reload).
    pub(crate) fn of(trust: Option<&TrustSettings>) -> Self {
        TrustSeen(trust.map(|trust| {
            let digest = |path: &PathBuf| {
                let mut bytes = Vec::new();
                std::fs::File::open(path)
                    .and_then(|f| f.take(MAX_KEY_FILE_BYTES).read_to_end(&mut bytes))
                    .ok()
                    .map(|_| sha256_hex(&bytes))
            };
            (trust.keys.iter())
                .map(|path| (path.clone(), digest(path)))
                .collect()
        }))
    }
}
