//! Where a harness finds the mock southbound: in memory beside native mock descriptors, or
//! the JSON file that the WASM mock descriptors share (in process or in an agent).

use super::descriptor::MockSouthbound;
use super::southbound::SouthboundState;
use std::path::{Path, PathBuf};

/// The name of the state file in the folder granted to the WASM mock descriptors.
pub const STATE_FILE: &str = "southbound.json";

/// Reads and changes the southbound state between a scenario's steps.
pub trait SouthboundAccess {
    fn update<R>(&self, change: impl FnOnce(&mut SouthboundState) -> R) -> anyhow::Result<R>;
}

impl SouthboundAccess for MockSouthbound {
    fn update<R>(&self, change: impl FnOnce(&mut SouthboundState) -> R) -> anyhow::Result<R> {
        Ok(change(&mut self.lock()))
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
    fn update<R>(&self, change: impl FnOnce(&mut SouthboundState) -> R) -> anyhow::Result<R> {
        let mut state = self.load()?;
        let result = change(&mut state);
        self.save(&state)?;
        Ok(result)
    }
}
