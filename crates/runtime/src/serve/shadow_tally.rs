//! One component's shadow: the version, and how its writes compared with the serving one's.

use crate::serve::serving::Serving;
use reactor_core::component::{SHADOW_DIFFS_KEPT, ShadowDiff, ShadowInfo, ShadowOutcome};
use std::collections::HashMap;
use std::sync::Arc;

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
pub(crate) enum Verdict {
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

    /// Stops the shadow (its counts stay shown).
    pub(crate) fn stop(&mut self) {
        self.serving = None;
    }

    /// The version's digest, while it runs as a shadow.
    pub(crate) fn running_sha256(&self) -> Option<&str> {
        self.serving.as_ref().map(|_| self.sha256.as_str())
    }

    /// The version, while it runs as a shadow.
    pub(crate) fn running(&self) -> Option<Arc<Serving>> {
        self.serving.clone()
    }

    pub(crate) fn is(&self, sha256: &str) -> bool {
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
    /// or at once when the shadow failed (a loop is abandoned a grace after the serving call, then counted as failed).
    pub(crate) fn count(&mut self, object: &str, outcome: ShadowOutcome) -> Option<Verdict> {
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
