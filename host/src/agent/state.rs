//! What an agent holds, kept in `<data>/agent-state.json` so that a restarted agent resumes
//! its feed from the last revision it saw instead of starting over.

use crate::nimbus::{AgentReport, ReportState};
use crate::object::Revision;
use crate::private::write_durably;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read the agent state {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the agent state {path} is corrupt: {source}")]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write the agent state {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    /// The last revision of the feed this state reflects; 0: never synced.
    pub revision: Revision,
    /// The server said the revision is too old: start from a fresh snapshot.
    #[serde(default)]
    pub relist: bool,
    pub items: BTreeMap<String, HeldItem>,
    #[serde(skip)]
    path: PathBuf,
}

impl AgentState {
    /// The state saved in `data`, or an empty one.
    pub fn load(data: &Path) -> Result<Self, StateError> {
        let path = data.join("agent-state.json");
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path,
                    ..Self::default()
                });
            }
            Err(source) => return Err(StateError::Read { path, source }),
        };
        let mut state: Self =
            serde_json::from_slice(&text).map_err(|source| StateError::Corrupt {
                path: path.clone(),
                source,
            })?;
        state.path = path;
        Ok(state)
    }

    /// Writes the state atomically (a crash leaves the old or the new one, never half).
    pub fn save(&self) -> Result<(), StateError> {
        let write = |source| StateError::Write {
            path: self.path.clone(),
            source,
        };
        let text = serde_json::to_vec(self).map_err(|e| write(std::io::Error::other(e)))?;
        write_durably(&self.path, &text).map_err(write)
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

    #[test]
    fn state_survives_a_save_and_a_corrupt_file_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut state = AgentState::load(dir.path()).expect("empty");
        assert_eq!(state.revision, 0);
        state.revision = 7;
        state.items.insert(
            "k".into(),
            HeldItem {
                value: json!(1),
                version: 2,
                state: ReportState::Applied,
                message: None,
            },
        );
        state.save().expect("save");
        let loaded = AgentState::load(dir.path()).expect("load");
        assert_eq!(loaded, state);
        assert_eq!(loaded.known(), HashMap::from([("k".to_owned(), 2)]));
        std::fs::write(dir.path().join("agent-state.json"), "{").expect("write");
        let error = AgentState::load(dir.path()).expect_err("corrupt");
        assert!(
            error.to_string().contains("agent-state.json is corrupt"),
            "{error}"
        );
    }
}
