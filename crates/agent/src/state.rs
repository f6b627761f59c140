//! What an agent holds, kept in `<data>/agent-state.redb` so that a restarted agent resumes
//! its feed from the last revision it saw instead of starting over. Each save commits only
//! the items changed since the last one (one redb transaction, durable when it returns), so
//! a batch costs what it changes, not what the agent holds.

use reactor_core::object::Revision;
use reactor_core::report::{AgentReport, ReportState};
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Item key → the held item as JSON.
const ITEMS: TableDefinition<&str, &[u8]> = TableDefinition::new("items");
/// `revision`, `relist` (0 or 1).
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const REVISION: &str = "revision";
const RELIST: &str = "relist";
/// The file name of the state before it moved to redb: read once, migrated, removed.
const LEGACY: &str = "agent-state.json";
const FILE: &str = "agent-state.redb";
/// Pages redb may cache: the agent holds its items in memory anyway.
const CACHE_BYTES: usize = 16 << 20;

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read the agent state {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("the agent state {path} is corrupt: {what}: {reason}")]
    Corrupt {
        path: PathBuf,
        what: String,
        reason: String,
    },
    #[error("cannot write the agent state {path}: {reason}")]
    Write { path: PathBuf, reason: String },
}

/// One item as the agent holds it, with how applying it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldItem {
    pub value: Value,
    pub version: u64,
    pub state: ReportState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The whole state as `agent-state.json` held it.
#[derive(Debug, Default, Deserialize)]
struct Legacy {
    revision: Revision,
    #[serde(default)]
    relist: bool,
    items: BTreeMap<String, HeldItem>,
}

pub struct AgentState {
    /// The last revision of the feed this state reflects; 0: never synced.
    pub revision: Revision,
    /// The server said the revision is too old: start from a fresh snapshot.
    pub relist: bool,
    items: BTreeMap<String, HeldItem>,
    /// Keys put or removed since the last save.
    changed: BTreeSet<String>,
    /// What the file says of `revision` and `relist`.
    saved: (Revision, bool),
    db: redb::Database,
    path: PathBuf,
}

impl std::fmt::Debug for AgentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentState")
            .field("path", &self.path)
            .field("revision", &self.revision)
            .field("items", &self.items.len())
            .finish_non_exhaustive()
    }
}

impl AgentState {
    /// The state saved in `data` (an `agent-state.json` of an older version is migrated
    /// once, then removed), or an empty one.
    pub fn load(data: &Path) -> Result<Self, StateError> {
        let path = data.join(FILE);
        let read = |reason: String| StateError::Read {
            path: path.clone(),
            reason,
        };
        let db = reactor_store::redb_file::open_redb(&path, CACHE_BYTES).map_err(read)?;
        let mut state = Self {
            revision: 0,
            relist: false,
            items: BTreeMap::new(),
            changed: BTreeSet::new(),
            saved: (0, false),
            db,
            path,
        };
        state.migrate(&data.join(LEGACY))?;
        state.read_all()?;
        Ok(state)
    }

    /// Moves the items of an `agent-state.json` into the file, then removes it. The JSON is
    /// removed only once its content is committed, so a crash in between migrates again.
    fn migrate(&mut self, legacy: &Path) -> Result<(), StateError> {
        let text = match std::fs::read(legacy) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(StateError::Read {
                    path: legacy.to_owned(),
                    reason: e.to_string(),
                });
            }
        };
        let old: Legacy = serde_json::from_slice(&text).map_err(|e| StateError::Corrupt {
            path: legacy.to_owned(),
            what: "the file".into(),
            reason: e.to_string(),
        })?;
        self.revision = old.revision;
        self.relist = old.relist;
        self.changed = old.items.keys().cloned().collect();
        self.items = old.items;
        self.commit(true)?;
        std::fs::remove_file(legacy).map_err(|e| StateError::Write {
            path: legacy.to_owned(),
            reason: format!("migrated, but cannot remove it: {e}"),
        })?;
        tracing::info!(from = %legacy.display(), to = %self.path.display(), items = self.items.len(), "agent state migrated");
        Ok(())
    }

    fn read_all(&mut self) -> Result<(), StateError> {
        let path = &self.path;
        let read = |e: &dyn std::fmt::Display| StateError::Read {
            path: path.clone(),
            reason: e.to_string(),
        };
        let txn = self.db.begin_read().map_err(|e| read(&e))?;
        let meta = |name: &str| -> Result<u64, StateError> {
            match txn.open_table(META) {
                Ok(table) => Ok(table
                    .get(name)
                    .map_err(|e| read(&e))?
                    .map_or(0, |v| v.value())),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
                Err(e) => Err(read(&e)),
            }
        };
        self.revision = meta(REVISION)?;
        self.relist = meta(RELIST)? != 0;
        self.saved = (self.revision, self.relist);
        self.items.clear();
        let table = match txn.open_table(ITEMS) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
            Err(e) => return Err(read(&e)),
        };
        for entry in table.iter().map_err(|e| read(&e))? {
            let (key, value) = entry.map_err(|e| read(&e))?;
            let key = key.value().to_owned();
            let held: HeldItem =
                serde_json::from_slice(value.value()).map_err(|e| StateError::Corrupt {
                    path: path.clone(),
                    what: format!("item {key:?}"),
                    reason: e.to_string(),
                })?;
            self.items.insert(key, held);
        }
        Ok(())
    }

    /// Commits what changed since the last save, durably: after a crash the state is this
    /// one or the one before, never a mix.
    pub fn save(&mut self) -> Result<(), StateError> {
        self.commit(false)
    }

    /// Commits the changed items (`all`: replaces every item of the file by those held).
    fn commit(&mut self, all: bool) -> Result<(), StateError> {
        if !all && self.changed.is_empty() && self.saved == (self.revision, self.relist) {
            return Ok(());
        }
        let path = &self.path;
        let write = |e: &dyn std::fmt::Display| StateError::Write {
            path: path.clone(),
            reason: e.to_string(),
        };
        let txn = self.db.begin_write().map_err(|e| write(&e))?;
        {
            let mut items = txn.open_table(ITEMS).map_err(|e| write(&e))?;
            if all {
                items.retain(|_, _| false).map_err(|e| write(&e))?;
            }
            for key in &self.changed {
                match self.items.get(key) {
                    Some(held) => {
                        let bytes = serde_json::to_vec(held).map_err(|e| write(&e))?;
                        items
                            .insert(key.as_str(), bytes.as_slice())
                            .map_err(|e| write(&e))?;
                    }
                    None => {
                        items.remove(key.as_str()).map_err(|e| write(&e))?;
                    }
                }
            }
            let mut meta = txn.open_table(META).map_err(|e| write(&e))?;
            meta.insert(REVISION, self.revision)
                .map_err(|e| write(&e))?;
            meta.insert(RELIST, u64::from(self.relist))
                .map_err(|e| write(&e))?;
        }
        txn.commit().map_err(|e| write(&e))?;
        self.changed.clear();
        self.saved = (self.revision, self.relist);
        Ok(())
    }

    /// Every held item, by key.
    pub fn items(&self) -> &BTreeMap<String, HeldItem> {
        &self.items
    }

    pub fn insert(&mut self, key: String, held: HeldItem) {
        self.changed.insert(key.clone());
        self.items.insert(key, held);
    }

    pub fn remove(&mut self, key: &str) -> Option<HeldItem> {
        let held = self.items.remove(key)?;
        self.changed.insert(key.to_owned());
        Some(held)
    }

    /// The held item of `key`, to change (saved with the next save).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut HeldItem> {
        let held = self.items.get_mut(key)?;
        self.changed.insert(key.to_owned());
        Some(held)
    }

    /// Key → version of every held item, for resuming the feed.
    pub fn known(&self) -> HashMap<String, u64> {
        self.items
            .iter()
            .map(|(key, item)| (key.clone(), item.version))
            .collect()
    }

    /// The report on every held item.
    pub fn reports(&self, agent: &str) -> Vec<AgentReport> {
        self.items
            .iter()
            .map(|(key, item)| report(agent, key, item))
            .collect()
    }
}

pub fn report(agent: &str, key: &str, item: &HeldItem) -> AgentReport {
    AgentReport {
        key: key.to_owned(),
        agent: agent.to_owned(),
        state: item.state,
        message: item.message.clone(),
        revision: item.version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn held(version: u64) -> HeldItem {
        HeldItem {
            value: json!({"v": version}),
            version,
            state: ReportState::Applied,
            message: None,
        }
    }

    #[test]
    fn a_save_keeps_what_changed_and_a_load_reads_it_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut state = AgentState::load(dir.path()).expect("empty");
        assert_eq!(state.revision, 0);
        state.revision = 7;
        state.insert("a".into(), held(1));
        state.insert("b".into(), held(2));
        state.save().expect("save");
        state.remove("a");
        if let Some(b) = state.get_mut("b") {
            b.state = ReportState::Failed;
            b.message = Some("no route".into());
        }
        state.insert("c".into(), held(3));
        state.revision = 9;
        state.save().expect("save");
        let expected = state.items().clone();
        drop(state);
        let loaded = AgentState::load(dir.path()).expect("load");
        assert_eq!(loaded.revision, 9);
        assert!(!loaded.relist);
        assert_eq!(loaded.items(), &expected);
        assert_eq!(
            loaded.known(),
            HashMap::from([("b".to_owned(), 2), ("c".to_owned(), 3)])
        );
    }

    #[test]
    fn what_was_not_saved_is_not_there_after_a_load() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut state = AgentState::load(dir.path()).expect("empty");
        state.insert("a".into(), held(1));
        state.save().expect("save");
        state.insert("b".into(), held(2));
        state.relist = true;
        drop(state);
        let loaded = AgentState::load(dir.path()).expect("load");
        assert_eq!(loaded.items().keys().collect::<Vec<_>>(), ["a"]);
        assert!(!loaded.relist);
    }

    #[test]
    fn an_old_json_state_is_migrated_once_and_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let legacy = dir.path().join(LEGACY);
        let old = json!({
            "revision": 42,
            "relist": false,
            "items": {"fan/1": {"value": {"x": 1}, "version": 3, "state": "applied"},
                      "fan/2": {"value": 2, "version": 4, "state": "failed", "message": "no"}},
        });
        std::fs::write(&legacy, old.to_string()).expect("write");
        let state = AgentState::load(dir.path()).expect("migrated");
        assert_eq!(state.revision, 42);
        assert_eq!(state.items().len(), 2);
        assert_eq!(state.items()["fan/2"].message.as_deref(), Some("no"));
        assert!(!legacy.exists(), "the JSON state is removed once migrated");
        drop(state);
        let again = AgentState::load(dir.path()).expect("reloaded");
        assert_eq!(again.revision, 42);
        assert_eq!(again.known()["fan/1"], 3);
    }

    #[test]
    fn a_corrupt_state_is_one_line_naming_the_file_and_left_as_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let legacy = dir.path().join(LEGACY);
        std::fs::write(&legacy, "{").expect("write");
        let error = AgentState::load(dir.path()).expect_err("corrupt JSON");
        let message = error.to_string();
        assert!(message.contains("agent-state.json is corrupt"), "{message}");
        assert!(!message.contains('\n'), "{message}");
        assert_eq!(std::fs::read(&legacy).expect("kept"), b"{");
        std::fs::remove_file(&legacy).expect("remove");

        let file = dir.path().join(FILE);
        std::fs::write(&file, vec![0x5a; 8192]).expect("garbage");
        let error = AgentState::load(dir.path()).expect_err("damaged file");
        let message = error.to_string();
        assert!(
            message.starts_with("cannot read the agent state") && message.contains(FILE),
            "{message}"
        );
        assert!(!message.contains('\n'), "{message}");
        assert_eq!(std::fs::read(&file).expect("kept"), vec![0x5a; 8192]);
    }
}
