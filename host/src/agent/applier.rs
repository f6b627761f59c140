//! Where an agent puts its items. Until a KV scheduler takes over, a plain apply: each item's
//! value is written as `<southbound>/<key>.json`, and removed when the item goes.

use serde_json::Value;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("item key {0:?} would leave the southbound folder")]
    Escapes(String),
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Applies items to the southbound one at a time.
pub trait Applier: Send {
    fn apply(&mut self, key: &str, value: &Value) -> Result<(), ApplyError>;
    fn remove(&mut self, key: &str) -> Result<(), ApplyError>;
}

/// Items as files under a folder; no folder: items are only held (and reported applied).
#[derive(Debug, Clone)]
pub struct FolderApplier {
    root: Option<PathBuf>,
}

impl FolderApplier {
    pub fn new(root: Option<PathBuf>) -> Self {
        Self { root }
    }

    fn path_of(&self, key: &str) -> Result<Option<PathBuf>, ApplyError> {
        let Some(root) = &self.root else {
            return Ok(None);
        };
        let relative = Path::new(key);
        let plain = relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !plain || key.is_empty() {
            return Err(ApplyError::Escapes(key.to_owned()));
        }
        Ok(Some(root.join(format!("{key}.json"))))
    }
}

impl Applier for FolderApplier {
    fn apply(&mut self, key: &str, value: &Value) -> Result<(), ApplyError> {
        let Some(path) = self.path_of(key)? else {
            return Ok(());
        };
        let io = |source| ApplyError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_vec_pretty(value).map_err(|e| io(std::io::Error::other(e)))?;
        std::fs::write(&path, text).map_err(io)
    }

    fn remove(&mut self, key: &str) -> Result<(), ApplyError> {
        let Some(path) = self.path_of(key)? else {
            return Ok(());
        };
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ApplyError::Io { path, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_become_files_and_keys_cannot_escape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut applier = FolderApplier::new(Some(dir.path().to_owned()));
        applier
            .apply("policy/p/r", &json!({"a": 1}))
            .expect("apply");
        let file = dir.path().join("policy/p/r.json");
        assert!(file.exists());
        applier.remove("policy/p/r").expect("remove");
        assert!(!file.exists());
        applier
            .remove("policy/p/r")
            .expect("removing twice is fine");
        for bad in ["policy/../../x", "/etc/x", "../x"] {
            let error = applier.apply(bad, &json!(1)).expect_err(bad);
            assert!(error.to_string().contains("would leave"), "{error}");
        }
    }
}
