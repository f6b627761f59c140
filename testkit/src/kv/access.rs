//! Where a harness finds the mock southbound: in memory beside native mock descriptors, or
//! the JSON file that the WASM mock descriptors share (in process or in an agent).

use super::descriptor::MockSouthbound;
use super::scenario::Action;
use super::southbound::{MockOperation, Origin, PlannedError, SouthboundState};
use reactor_host::kvscheduler::{Key, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The name of the state file in the folder granted to the WASM mock descriptors.
pub const STATE_FILE: &str = "southbound.json";

/// Reads and changes the southbound state between a scenario's steps.
pub trait SouthboundAccess: Send + Sync {
    /// Runs `change` on the state: read, changed, written back.
    fn update_with(&self, change: &mut dyn FnMut(&mut SouthboundState)) -> anyhow::Result<()>;
}

impl dyn SouthboundAccess + '_ {
    /// Runs `change` on the state and returns what it returned.
    pub fn update<R>(&self, change: impl FnOnce(&mut SouthboundState) -> R) -> anyhow::Result<R> {
        let mut change = Some(change);
        let mut result = None;
        self.update_with(&mut |state| {
            if let Some(change) = change.take() {
                result = Some(change(state));
            }
        })?;
        result.ok_or_else(|| anyhow::anyhow!("the southbound state was not reached"))
    }

    /// What the southbound holds.
    pub fn contents(&self) -> anyhow::Result<BTreeMap<Key, Value>> {
        self.update(|state| state.contents())
    }

    /// Operations done since the last call.
    pub fn pop_ops(&self) -> anyhow::Result<Vec<MockOperation>> {
        self.update(|state| std::mem::take(&mut state.history))
    }

    /// Keys operated on wrongly (see `SouthboundState::invalid`).
    pub fn invalid_keys(&self) -> anyhow::Result<Vec<Key>> {
        self.update(|state| state.invalid.iter().cloned().collect())
    }

    /// Applies a southbound-side action (the same on every harness); false for the others.
    pub fn act(&self, action: &Action) -> anyhow::Result<bool> {
        match action {
            Action::SbSet {
                key,
                value,
                from_sb,
                metadata,
            } => {
                let origin = if *from_sb {
                    Origin::FromSouthbound
                } else {
                    Origin::FromNorthbound
                };
                self.update(|state| state.set(key, value.clone(), metadata.clone(), origin))?;
                Ok(true)
            }
            Action::PlanError {
                key,
                error,
                then_set,
            } => {
                let planned = PlannedError {
                    error: error.clone(),
                    then_set: then_set.clone(),
                };
                self.update(|state| state.plan_error(key, planned))?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl SouthboundAccess for MockSouthbound {
    fn update_with(&self, change: &mut dyn FnMut(&mut SouthboundState)) -> anyhow::Result<()> {
        change(&mut self.lock());
        Ok(())
    }
}

/// The state file of the WASM mock descriptors, `<folder>/southbound.json`.
#[derive(Debug, Clone)]
pub struct FileSouthbound {
    path: PathBuf,
}

impl FileSouthbound {
    /// The state in `folder` (the folder granted to the guests as `/mock`), created empty.
    pub fn create(folder: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(folder)?;
        let southbound = Self {
            path: folder.join(STATE_FILE),
        };
        southbound.save(&SouthboundState::default())?;
        Ok(southbound)
    }

    fn load(&self) -> anyhow::Result<SouthboundState> {
        let text = std::fs::read(&self.path)
            .map_err(|e| anyhow::anyhow!("read {}: {e}", self.path.display()))?;
        serde_json::from_slice(&text)
            .map_err(|e| anyhow::anyhow!("{} is not the mock state: {e}", self.path.display()))
    }

    fn save(&self, state: &SouthboundState) -> anyhow::Result<()> {
        let partial = self.path.with_extension("partial");
        std::fs::write(&partial, serde_json::to_vec(state)?)?;
        std::fs::rename(&partial, &self.path)?;
        Ok(())
    }
}

impl SouthboundAccess for FileSouthbound {
    fn update_with(&self, change: &mut dyn FnMut(&mut SouthboundState)) -> anyhow::Result<()> {
        let mut state = self.load()?;
        change(&mut state);
        self.save(&state)
    }
}
