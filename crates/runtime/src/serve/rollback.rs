//! Rolling a component's new version back.
//!
//! The version rolled back (a [`Rejection`]) does not serve again until it is cleared; the
//! version it replaced serves instead — kept loaded for that, or from the kept versions after a
//! restart. Also the rollout progress shown.

use crate::error::RuntimeError;
use crate::load::loader::Loader;
use crate::observe::component_event::ComponentEvent;
use crate::serve::rollout_info::{Rejection, RolloutInfo, version_of};
use std::collections::BTreeMap;
use std::time::Instant;

impl Loader {
    /// Records `rejection` for `name`; if its version serves, puts what serves instead in its
    /// place, or stops serving `name` when nothing can (the error says why).
    pub(crate) async fn reject(&self, name: &str, rejection: Rejection) {
        self.slots.set_rejection(name, rejection.clone());
        let Some(slot) = self.slots.get(name) else {
            return;
        };
        let loading = slot.loading.lock().await;
        let serving_it = slot
            .current
            .load()
            .as_ref()
            .is_some_and(|c| c.loaded.sha256 == rejection.sha256);
        if serving_it {
            let started = Instant::now();
            let effective = self.settings.read().effective(name);
            let version = version_of(&rejection.sha256);
            let reason = &rejection.reason;
            match self.instead(&slot, &rejection, effective).await {
                Ok(Some(serving)) => {
                    let to = version_of(&serving.loaded.sha256);
                    tracing::warn!(component = %name, from = %version, %to, "rolled back: {reason}");
                    self.swap_in(&slot, serving, started);
                }
                // Not reached: the rejected version serves, so something else must.
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(component = %name, from = %version, "rolled back, nothing serves: {e}");
                    slot.current.store(None);
                    slot.previous.store(None);
                    slot.set_error(Some(e.to_string()));
                    self.announce(ComponentEvent::Unloaded {
                        name: name.to_owned(),
                    });
                }
            }
        }
        drop(loading);
        self.prune_versions();
    }
}

impl crate::Runtime {
    /// Shows `info` as the rollout of component `name` (`None`: no rollout).
    pub fn set_rollout(&self, name: &str, info: Option<RolloutInfo>) {
        if let Some(slot) = self.loader.slots.get(name) {
            *slot.rollout.lock() = info;
        }
    }

    /// What rolling component `name` back from `version` (as [`version_of`] shows it) for
    /// `reason` rejects: its version serving, to return to the version it replaced. Refused
    /// if `version` no longer serves or no replaced version is loaded.
    pub fn rejection(
        &self,
        name: &str,
        version: &str,
        reason: &str,
    ) -> Result<Rejection, RuntimeError> {
        let refused = |message: &str| RuntimeError::RollBack {
            name: name.to_owned(),
            message: message.to_owned(),
        };
        let slot = self
            .loader
            .slots
            .get(name)
            .ok_or_else(|| refused("it is not loaded"))?;
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
        Ok(Rejection {
            sha256: current.loaded.sha256.clone(),
            reason: reason.to_owned(),
            restore: Some(previous.loaded.sha256.clone()),
        })
    }

    /// Rejects a version of component `name` (a rollback, here or recorded by another
    /// server): it does not serve again, its file included, until it is cleared.
    /// If it serves, the version it was rolled back to serves instead — the one kept loaded, or
    /// the kept wasm after a restart — or, when neither is there, nothing does (`components`
    /// says why). A different file still serves. Answers once this is done.
    pub async fn reject(&self, name: &str, rejection: Rejection) {
        self.loader.reject(name, rejection).await;
    }

    /// Forgets the version rolled back of component `name` and loads its file again (which
    /// then serves, if it is that version); false if none was rolled back.
    pub async fn clear_rejection(&self, name: &str) -> bool {
        if self.loader.slots.clear_rejection(name).is_none() {
            return false;
        }
        tracing::info!(component = %name, "rollback cleared");
        if let Some(slot) = self.loader.slots.get(name) {
            // A failure is recorded in the component's state, as for any load.
            let _ = self.loader.load_file(&slot.file(), slot.world, false).await;
        }
        self.loader.prune_versions();
        true
    }

    /// The version rolled back of each component that has one.
    pub fn rejections(&self) -> BTreeMap<String, Rejection> {
        self.loader.slots.rejections()
    }
}
