//! Approving a version held for its wider declaration.
//!
//! The approval lets that version (and any later one declaring no more) load. The runtime keeps
//! approvals in memory only: whoever owns the store records them and seeds them in at start,
//! as for rollbacks.

use crate::error::RuntimeError;
use reactor_core::component::Approval;
use std::collections::BTreeMap;

impl crate::Runtime {
    /// The approval an admin gives the version of `name` waiting now: refused when none is.
    pub fn approval_for(&self, name: &str) -> Result<Approval, RuntimeError> {
        let waiting = self
            .loader
            .slots
            .get(name)
            .and_then(|slot| slot.waiting.lock().clone())
            .ok_or_else(|| RuntimeError::NothingWaiting(name.to_owned()))?;
        Ok(Approval {
            sha256: waiting.sha256,
            permissions: waiting.permissions,
        })
    }

    /// Records `approval` of component `name` (given here or by another server) and loads
    /// its file again, which then serves if it is within what was approved. Answers once
    /// this is done.
    pub async fn approve(&self, name: &str, approval: Approval) {
        if !self.loader.slots.set_approval(name, approval) {
            return;
        }
        tracing::info!(component = %name, "new permissions approved");
        if let Some(slot) = self.loader.slots.get(name)
            && slot.waiting.lock().is_some()
        {
            // A failure is recorded in the component's state, as for any load.
            let _ = self.loader.load_file(&slot.file(), slot.world, false).await;
            self.loader.prune_versions();
        }
    }

    /// Forgets the approval of component `name` (its record was removed); what serves goes on.
    pub fn forget_approval(&self, name: &str) -> bool {
        self.loader.slots.clear_approval(name)
    }

    /// The approval of each component that has one.
    pub fn approvals(&self) -> BTreeMap<String, Approval> {
        self.loader.slots.approvals()
    }
}
