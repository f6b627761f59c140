//! A new version held as a shadow: it runs beside the serving one on the same events, the
//! host commits none of its writes, and it is promoted once its writes matched the serving
//! version's on enough objects, or dropped (as a rollback) if they differed on any.

use super::component_event::ComponentEvent;
use super::error::RuntimeError;
use super::loader::Loader;
use super::registry::{Serving, Slot};
use super::rollout_info::{Rejection, version_of};
use reactor_core::component::{SHADOW_DIFFS_KEPT, ShadowDiff, ShadowInfo, ShadowOutcome};
use std::collections::HashMap;
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

/// The shadow of one component: the version, and how its objects compared so far.
pub(crate) struct Shadowing {
    /// The version; `None` once dropped (kept to show why).
    serving: Option<Arc<Serving>>,
    sha256: String,
    needed: u64,
    /// Each object compared, by `Kind/name`: whether its writes differed.
    seen: HashMap<String, bool>,
    diffs: Vec<ShadowDiff>,
}

/// A shadow's verdict, once it compared `needed` objects.
enum Verdict {
    Promote,
    Drop(String),
}

impl Shadowing {
    pub(crate) fn new(serving: Arc<Serving>, needed: u64) -> Self {
        Shadowing {
            sha256: serving.loaded.sha256.clone(),
            serving: Some(serving),
            needed: needed.max(1),
            seen: HashMap::new(),
            diffs: Vec::new(),
        }
    }

    /// The version, while it runs as a shadow.
    pub(crate) fn running(&self) -> Option<Arc<Serving>> {
        self.serving.clone()
    }

    fn is(&self, sha256: &str) -> bool {
        self.serving.is_some() && self.sha256 == sha256
    }

    pub(crate) fn info(&self) -> ShadowInfo {
        let differed = self.seen.values().filter(|d| **d).count() as u64;
        ShadowInfo {
            sha256: self.sha256.clone(),
            needed: self.needed,
            matched: self.seen.len() as u64 - differed,
            differed,
            dropped: self.serving.is_none(),
            diffs: self.diffs.clone(),
        }
    }

    /// Counts one comparison on `object`: the verdict once `needed` objects were compared,
    /// or at once when the shadow failed (a loop costs the serving version one deadline).
    fn count(&mut self, object: &str, outcome: ShadowOutcome) -> Option<Verdict> {
        let (lines, failed) = match outcome {
            ShadowOutcome::Matched => {
                self.seen.entry(object.to_owned()).or_insert(false);
                (None, None)
            }
            ShadowOutcome::Differed(lines) => (Some(lines), None),
            ShadowOutcome::Failed(why) => {
                let line = format!("the shadow failed: {why}");
                (Some(vec![line.clone()]), Some(line))
            }
        };
        if let Some(lines) = lines {
            let before = self.seen.insert(object.to_owned(), true);
            if before != Some(true) && self.diffs.len() < SHADOW_DIFFS_KEPT {
                self.diffs.push(ShadowDiff {
                    object: object.to_owned(),
                    lines,
                });
            }
        }
        if let Some(line) = failed {
            return Some(Verdict::Drop(format!("as a shadow on {object}, {line}")));
        }
        let compared = self.seen.len() as u64;
        if compared < self.needed {
            return None;
        }
        let info = self.info();
        Some(match info.diffs.first() {
            None => Verdict::Promote,
            Some(first) => Verdict::Drop(format!(
                "as a shadow its writes differed from the serving version's on {} of {compared} objects (first {}: {})",
                info.differed,
                first.object,
                first.lines.first().map_or("", String::as_str)
            )),
        })
    }
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

    /// See [`super::ControllerHandle::shadow_compared`].
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
            shadow.serving = None;
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

impl super::Runtime {
    /// Promotes the version of component `name` running as a shadow now (an admin's
    /// approval); refused when none is.
    pub async fn promote_shadow(&self, name: &str) -> Result<(), RuntimeError> {
        let slot =
            (self.inner.slots.get(name)).ok_or_else(|| RuntimeError::NoShadow(name.to_owned()))?;
        let sha256 = (slot.shadow.lock().as_ref())
            .filter(|s| s.serving.is_some())
            .map(|s| s.sha256.clone())
            .ok_or_else(|| RuntimeError::NoShadow(name.to_owned()))?;
        match self.inner.promote(&slot, &sha256).await {
            true => Ok(()),
            false => Err(RuntimeError::NoShadow(name.to_owned())),
        }
    }

    /// Whether a version of component `name` runs as a shadow now.
    pub fn has_shadow(&self, name: &str) -> bool {
        (self.inner.slots.get(name)).is_some_and(|slot| {
            slot.shadow
                .lock()
                .as_ref()
                .is_some_and(|s| s.serving.is_some())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shadow(needed: u64) -> Shadowing {
        Shadowing {
            serving: None,
            sha256: "a".repeat(64),
            needed,
            seen: HashMap::new(),
            diffs: Vec::new(),
        }
    }

    #[test]
    fn matching_on_enough_distinct_objects_promotes() {
        let mut s = shadow(2);
        assert!(s.count("Echo/a", ShadowOutcome::Matched).is_none());
        assert!(
            s.count("Echo/a", ShadowOutcome::Matched).is_none(),
            "one object counts once"
        );
        assert!(matches!(
            s.count("Echo/b", ShadowOutcome::Matched),
            Some(Verdict::Promote)
        ));
    }

    #[test]
    fn one_difference_in_the_window_drops_it_with_the_first_diff() {
        let mut s = shadow(3);
        let line = r#"Echo/a status.v: "1" → "2""#.to_owned();
        let differed = ShadowOutcome::Differed(vec![line.clone()]);
        assert!(s.count("Echo/a", differed).is_none());
        assert!(s.count("Echo/a", ShadowOutcome::Matched).is_none());
        assert!(s.count("Echo/b", ShadowOutcome::Matched).is_none());
        let Some(Verdict::Drop(why)) = s.count("Echo/c", ShadowOutcome::Matched) else {
            panic!("dropped");
        };
        assert_eq!(
            why,
            format!(
                "as a shadow its writes differed from the serving version's on 1 of 3 objects (first Echo/a: {line})"
            )
        );
        let info = s.info();
        assert_eq!((info.matched, info.differed), (2, 1), "a difference stays");
    }

    #[test]
    fn a_failure_drops_it_at_once() {
        let mut s = shadow(100);
        let failed = ShadowOutcome::Failed("trapped".into());
        let Some(Verdict::Drop(why)) = s.count("Echo/a", failed) else {
            panic!("dropped");
        };
        assert_eq!(why, "as a shadow on Echo/a, the shadow failed: trapped");
    }
}
