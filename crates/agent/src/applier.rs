//! Where an agent puts its items: the `Applier` contract, and the plain one writing each
//! item's value as `<southbound>/<key>.json` (removed when the item goes).

use async_trait::async_trait;
use reactor_core::report::ReportState;
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

/// How applying one change went, as reported to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub state: ReportState,
    pub message: Option<String>,
}

impl Outcome {
    pub fn new(state: ReportState, message: Option<String>) -> Self {
        Self { state, message }
    }
}

/// Applies items to the southbound a batch at a time, so that an applier with a dependency
/// graph (the KV scheduler) can order a batch as one transaction.
#[async_trait]
pub trait Applier: Send {
    /// Applies `changes` in order (`None`: the item went); one outcome per change, in order.
    async fn apply_batch(&mut self, changes: Vec<(String, Option<Value>)>) -> Vec<Outcome>;

    /// The keys actually applied in the southbound, whatever the agent's state says (a crash
    /// between applying and saving the state leaves items the state does not know). An
    /// applier that heals drift itself (the KV scheduler's resync) answers none.
    async fn retrieve(&mut self) -> Result<Vec<String>, ApplyError> {
        Ok(Vec::new())
    }

    /// Waits until items may have changed state outside `apply_batch` (a retry that
    /// succeeded, a dependency notified by the southbound, a resync), so that the session
    /// reports them again. An applier whose outcomes never change later waits forever.
    /// Must be cancel-safe: the session waits on it alongside the feed.
    async fn changed(&mut self) -> Changed {
        std::future::pending().await
    }

    /// What the applier knows of an item now; `None`: nothing newer than `apply_batch` said.
    async fn current(&mut self, _key: &str) -> Option<Outcome> {
        None
    }
}

/// Which items [`Applier::changed`] says to look at again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    Keys(Vec<String>),
    /// Too much happened to tell (changes were missed): every item.
    All,
}

#[async_trait]
impl Applier for FolderApplier {
    async fn apply_batch(&mut self, changes: Vec<(String, Option<Value>)>) -> Vec<Outcome> {
        changes
            .into_iter()
            .map(|(key, value)| {
                let (result, done) = match value {
                    Some(value) => (self.apply(&key, &value), ReportState::Applied),
                    None => (self.remove(&key), ReportState::Removed),
                };
                match result {
                    Ok(()) => Outcome::new(done, None),
                    Err(e) => Outcome::new(ReportState::Failed, Some(e.to_string())),
                }
            })
            .collect()
    }

    async fn retrieve(&mut self) -> Result<Vec<String>, ApplyError> {
        let mut keys = Vec::new();
        if let Some(root) = &self.root {
            collect(root, root, &mut keys)?;
        }
        keys.sort();
        Ok(keys)
    }
}

/// Collects `<key>.json` files under `dir` as keys relative to `root`.
fn collect(root: &Path, dir: &Path, keys: &mut Vec<String>) -> Result<(), ApplyError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(ApplyError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, keys)?;
        } else if let Some(key) = path
            .strip_prefix(root)
            .ok()
            .and_then(|p| p.to_str())
            .and_then(|p| p.strip_suffix(".json"))
        {
            keys.push(key.to_owned());
        }
    }
    Ok(())
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

impl FolderApplier {
    pub fn apply(&mut self, key: &str, value: &Value) -> Result<(), ApplyError> {
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

    pub fn remove(&mut self, key: &str) -> Result<(), ApplyError> {
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

    #[tokio::test]
    async fn items_become_files_and_keys_cannot_escape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut applier = FolderApplier::new(Some(dir.path().to_owned()));
        applier
            .apply("policy/p/r", &json!({"a": 1}))
            .expect("apply");
        applier.apply("top", &json!(2)).expect("apply");
        let file = dir.path().join("policy/p/r.json");
        assert!(file.exists());
        assert_eq!(
            applier.retrieve().await.expect("retrieve"),
            vec!["policy/p/r", "top"]
        );
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
