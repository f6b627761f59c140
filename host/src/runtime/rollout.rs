//! The rollback of a component's new version to the one it replaced (kept loaded for that
//! until the next version arrives), and the rollout progress the runtime shows.

use super::component_event::ComponentEvent;
use super::error::RuntimeError;
use super::registry::{Serving, Slot};
use super::rollout_info::{RolloutInfo, version_of};
use std::sync::Arc;

impl Slot {
    /// Serves again the version that `version` replaced, and keeps the file's version from
    /// serving until another file arrives. Answers the version serving now.
    async fn roll_back(&self, version: &str, reason: &str) -> Result<Arc<Serving>, String> {
        let _loading = self.loading.lock().await;
        let current = self.current.load_full().ok_or("it is not loaded")?;
        if version_of(&current.loaded.sha256) != version {
            return Err(format!("version {version} no longer serves"));
        }
        let previous = self
            .previous
            .load_full()
            .ok_or("no previous version is loaded")?;
        self.current.store(Some(previous.clone()));
        self.previous.store(None);
        *self.rejected.lock() = Some(current.loaded.sha256.clone());
        *self.rolled_back.lock() = Some(format!("{version}: {reason}"));
        Ok(previous)
    }
}

impl super::Runtime {
    /// Shows `info` as the rollout of component `name` (`None`: no rollout).
    pub fn set_rollout(&self, name: &str, info: Option<RolloutInfo>) {
        if let Some(slot) = self.inner.slots.get(name) {
            *slot.rollout.lock() = info;
        }
    }

    /// Rolls component `name` back from `version` to the version it replaced, for `reason`
    /// (shown by `components` as `rolled back: <reason>`). The file's version does not serve
    /// again until a different file arrives. Answers the version serving now.
    pub async fn roll_back(
        &self,
        name: &str,
        version: &str,
        reason: &str,
    ) -> Result<String, RuntimeError> {
        let refused = |message: String| RuntimeError::RollBack {
            name: name.to_owned(),
            message,
        };
        let slot = self
            .inner
            .slots
            .get(name)
            .ok_or_else(|| refused("it is not loaded".into()))?;
        let previous = slot.roll_back(version, reason).await.map_err(refused)?;
        let restored = version_of(&previous.loaded.sha256);
        tracing::warn!(component = %name, from = %version, to = %restored, "rolled back: {reason}");
        self.inner.announce(ComponentEvent::Loaded {
            name: name.to_owned(),
            world: slot.world,
            sha256: previous.loaded.sha256.clone(),
            described: previous.described.clone(),
        });
        Ok(restored)
    }
}
