//! Values put through the agent's own API (not through Nimbus), kept in
//! `<data>/local-values.json` so that a restarted agent configures them again.

use parking_lot::Mutex;
use reactor_core::private::write_durably;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("cannot read the agent's local values {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the agent's local values {path} are corrupt: {source}")]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write the agent's local values {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The desired values the agent's API was given, by key.
#[derive(Debug)]
pub struct LocalValues {
    path: PathBuf,
    values: Mutex<BTreeMap<String, Value>>,
}

impl LocalValues {
    /// The values saved in `data`, or none.
    pub fn load(data: &Path) -> Result<Self, LocalError> {
        let path = data.join("local-values.json");
        let values = match std::fs::read(&path) {
            Ok(text) => serde_json::from_slice(&text).map_err(|source| LocalError::Corrupt {
                path: path.clone(),
                source,
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(LocalError::Read { path, source }),
        };
        Ok(Self {
            path,
            values: Mutex::new(values),
        })
    }

    pub fn all(&self) -> BTreeMap<String, Value> {
        self.lock().clone()
    }

    /// Applies `changes` (`None` removes) and saves; answers the values before, for undoing.
    pub fn change(
        &self,
        changes: &[(String, Option<Value>)],
    ) -> Result<BTreeMap<String, Value>, LocalError> {
        let mut values = self.lock();
        let before = values.clone();
        for (key, value) in changes {
            match value {
                Some(value) => values.insert(key.clone(), value.clone()),
                None => values.remove(key),
            };
        }
        if let Err(error) = self.save(&values) {
            *values = before;
            return Err(error);
        }
        Ok(before)
    }

    /// Puts back what [`LocalValues::change`] answered (a reverted transaction).
    pub fn restore(&self, before: BTreeMap<String, Value>) -> Result<(), LocalError> {
        let mut values = self.lock();
        self.save(&before)?;
        *values = before;
        Ok(())
    }

    /// Puts back what [`LocalValues::change`] answered for `keys` only (values the
    /// transaction refused), keeping the other changes.
    pub fn restore_keys(
        &self,
        before: &BTreeMap<String, Value>,
        keys: &[String],
    ) -> Result<(), LocalError> {
        let mut values = self.lock();
        let mut restored = values.clone();
        for key in keys {
            match before.get(key) {
                Some(value) => restored.insert(key.clone(), value.clone()),
                None => restored.remove(key),
            };
        }
        self.save(&restored)?;
        *values = restored;
        Ok(())
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, BTreeMap<String, Value>> {
        self.values.lock()
    }

    fn save(&self, values: &BTreeMap<String, Value>) -> Result<(), LocalError> {
        let write = |source| LocalError::Write {
            path: self.path.clone(),
            source,
        };
        let text = serde_json::to_vec(values).map_err(|e| write(std::io::Error::other(e)))?;
        write_durably(&self.path, &text).map_err(write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_values_survive_a_restart_and_a_revert_or_a_refusal_restores_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let local = LocalValues::load(dir.path()).expect("empty");
        local
            .change(&[("a".into(), Some(json!(1))), ("b".into(), Some(json!(2)))])
            .expect("put");
        let before = local
            .change(&[("a".into(), None), ("c".into(), Some(json!(3)))])
            .expect("change");
        assert_eq!(
            LocalValues::load(dir.path()).expect("reload").all(),
            BTreeMap::from([("b".into(), json!(2)), ("c".into(), json!(3))])
        );
        local.restore(before).expect("restore");
        assert_eq!(
            LocalValues::load(dir.path()).expect("reload").all(),
            BTreeMap::from([("a".into(), json!(1)), ("b".into(), json!(2))])
        );
        // A refused value alone is put back, the rest of the change stays.
        let before = local
            .change(&[("a".into(), Some(json!(10))), ("d".into(), Some(json!(4)))])
            .expect("change");
        local
            .restore_keys(&before, &["a".into()])
            .expect("restore a");
        assert_eq!(
            LocalValues::load(dir.path()).expect("reload").all(),
            BTreeMap::from([
                ("a".into(), json!(1)),
                ("b".into(), json!(2)),
                ("d".into(), json!(4))
            ])
        );
        std::fs::write(dir.path().join("local-values.json"), "[").expect("write");
        let error = LocalValues::load(dir.path()).expect_err("corrupt");
        assert!(
            error.to_string().contains("local-values.json are corrupt"),
            "{error}"
        );
    }
}
