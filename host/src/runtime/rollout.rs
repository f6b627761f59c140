//! The rollback of a component's new version to the one it replaced (kept loaded for that
//! until the next version arrives), and the rollout progress the runtime shows.

use super::rollout_info::{RolloutInfo, version_of};
use super::{ComponentEvent, Inner, RuntimeError};

impl Inner {
    pub(crate) fn set_rollout(&self, name: &str, info: Option<RolloutInfo>) {
        if let Some(slot) = self.slot(name) {
            *slot.rollout.lock() = info;
        }
    }

    /// Serves again the version that `version` replaced, and keeps the file's version from
    /// serving until another file arrives. Answers the version serving now.
    pub(crate) async fn roll_back(
        &self,
        name: &str,
        version: &str,
        reason: &str,
    ) -> Result<String, RuntimeError> {
        let refused = |message: &str| RuntimeError::RollBack {
            name: name.to_owned(),
            message: message.to_owned(),
        };
        let slot = self.slot(name).ok_or_else(|| refused("it is not loaded"))?;
        let _loading = slot.loading.lock().await;
        let current = slot
            .current
            .load_full()
            .ok_or_else(|| refused("it is not loaded"))?;
        if version_of(&current.loaded.sha256) != version {
            return Err(refused(&format!("version {version} no longer serves")));
        }
        let previous = slot
            .previous
            .load_full()
            .ok_or_else(|| refused("no previous version is loaded"))?;
        slot.current.store(Some(previous.clone()));
        slot.previous.store(None);
        *slot.rejected.lock() = Some(current.loaded.sha256.clone());
        *slot.rolled_back.lock() = Some(format!("{version}: {reason}"));
        let restored = version_of(&previous.loaded.sha256);
        tracing::warn!(component = %name, from = %version, to = %restored, "rolled back: {reason}");
        let _ = self.events.send(ComponentEvent::Loaded {
            name: name.to_owned(),
            world: slot.world,
            sha256: previous.loaded.sha256.clone(),
            described: previous.described.clone(),
        });
        Ok(restored)
    }
}

impl super::Runtime {
    /// Shows `info` as the rollout of component `name` (`None`: no rollout).
    pub fn set_rollout(&self, name: &str, info: Option<RolloutInfo>) {
        self.inner.set_rollout(name, info);
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
        self.inner.roll_back(name, version, reason).await
    }
}
