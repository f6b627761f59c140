//! A new version held as a shadow beside the serving one.
//!
//! It runs beside the serving one on the same events, the host commits none of its writes, and
//! it is promoted once its writes matched the serving version's on enough objects, or dropped
//! (as a rollback) if they differed on any.

use crate::error::RuntimeError;
use crate::load::loader::Loader;
use crate::observe::component_event::ComponentEvent;
use crate::serve::rollout_info::{Rejection, version_of};
use crate::serve::serving::Serving;
use crate::serve::shadow_tally::{Shadowing, Verdict};
use crate::serve::slots::Slot;
use reactor_core::component::ShadowOutcome;
use std::sync::Arc;
use std::time::Instant;

/// What follows a comparison of a shadow's writes with the serving version's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShadowStep {
    /// The shadow runs on (or is no longer the one compared).
    Running,
    /// It matched on enough objects and serves now.
    Promoted,
    /// It differed: rolled back as this rejection, for its caller to record.
    Dropped(Rejection),
}

impl Loader {
    /// Holds `serving`, a new version of `slot`'s component, as its shadow until `needed`
    /// objects compared (replacing a shadow held before).
    pub(crate) fn hold_shadow(&self, slot: &Slot, serving: Arc<Serving>, needed: u64) {
        let version = version_of(&serving.loaded.sha256);
        tracing::info!(component = %slot.name, %version, needed, "new version runs as a shadow first: its writes are compared, not committed");
        let sha256 = serving.loaded.sha256.clone();
        *slot.shadow.lock() = Some(Shadowing::new(serving, needed));
        self.announce(ComponentEvent::Shadowing {
            name: slot.name.clone(),
            sha256,
        });
    }

    /// See [`crate::ControllerHandle::shadow_compared`].
    pub(crate) async fn shadow_compared(
        &self,
        name: &str,
        sha256: &str,
        object: &str,
        outcome: ShadowOutcome,
    ) -> ShadowStep {
        let Some(slot) = self.slots.get(name) else {
            return ShadowStep::Running;
        };
        let verdict = {
            let mut held = slot.shadow.lock();
            match held.as_mut().filter(|s| s.is(sha256)) {
                Some(shadow) => shadow.count(object, outcome),
                None => return ShadowStep::Running,
            }
        };
        match verdict {
            None => ShadowStep::Running,
            Some(Verdict::Promote) => match self.promote(&slot, sha256).await {
                true => ShadowStep::Promoted,
                false => ShadowStep::Running,
            },
            Some(Verdict::Drop(reason)) => match self.drop_shadow(&slot, sha256, reason).await {
                Some(rejection) => ShadowStep::Dropped(rejection),
                None => ShadowStep::Running,
            },
        }
    }

    /// Puts shadow `sha256` of `slot` in service; false if it is not the shadow any more.
    async fn promote(&self, slot: &Slot, sha256: &str) -> bool {
        let _loading = slot.loading.lock().await;
        let serving = {
            let mut held = slot.shadow.lock();
            match held.as_ref().filter(|s| s.is(sha256)) {
                Some(shadow) => {
                    let serving = shadow.running();
                    *held = None;
                    serving
                }
                None => None,
            }
        };
        let Some(serving) = serving else {
            return false;
        };
        tracing::info!(component = %slot.name, version = %version_of(sha256), "shadow promoted: it serves now");
        self.swap_in(slot, serving, Instant::now());
        true
    }

    /// Drops shadow `sha256` of `slot` as a rollback for `reason` (its counts stay shown).
    async fn drop_shadow(&self, slot: &Slot, sha256: &str, reason: String) -> Option<Rejection> {
        {
            let mut held = slot.shadow.lock();
            let shadow = held.as_mut().filter(|s| s.is(sha256))?;
            shadow.stop();
        }
        let rejection = Rejection {
            sha256: sha256.to_owned(),
            reason,
            restore: (slot.current.load().as_ref()).map(|c| c.loaded.sha256.clone()),
        };
        tracing::warn!(component = %slot.name, version = %version_of(sha256), "shadow dropped: {}", rejection.reason);
        self.reject(&slot.name, rejection.clone()).await;
        Some(rejection)
    }
}

impl crate::Runtime {
    /// Promotes the version of component `name` running as a shadow now (an admin's
    /// approval); refused when none is.
    pub async fn promote_shadow(&self, name: &str) -> Result<(), RuntimeError> {
        let slot =
            (self.loader.slots.get(name)).ok_or_else(|| RuntimeError::NoShadow(name.to_owned()))?;
        let sha256 = (slot.shadow.lock().as_ref())
            .and_then(|s| s.running_sha256().map(str::to_owned))
            .ok_or_else(|| RuntimeError::NoShadow(name.to_owned()))?;
        match self.loader.promote(&slot, &sha256).await {
            true => Ok(()),
            false => Err(RuntimeError::NoShadow(name.to_owned())),
        }
    }

    /// Whether a version of component `name` runs as a shadow now.
    pub fn has_shadow(&self, name: &str) -> bool {
        (self.loader.slots.get(name)).is_some_and(|slot| {
            slot.shadow
                .lock()
                .as_ref()
                .is_some_and(|s| s.running_sha256().is_some())
        })
    }
}
