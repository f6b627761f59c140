//! The state of a reactor's rollout: which of its objects a new version has still to
//! reconcile, the canary's verdict, and each version's runs and failures to judge it by.

use parking_lot::Mutex;
use reactor_core::object::ObjectKey;
use reactor_runtime::{RolloutInfo, RolloutPhase};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Where a rollout's progress goes and who rolls a version back (the engine, to the runtime).
pub trait RolloutSink: Send + Sync {
    /// The rollout moved on.
    fn progress(&self, info: RolloutInfo);
    /// The canary did worse than the previous version: serve that one again.
    fn roll_back(&self, version: &str, reason: String);
}

/// A rollout to start: the version, the one it replaced, and the canary fraction if any.
#[derive(Clone)]
pub struct RolloutPlan {
    pub version: String,
    pub previous: Option<String>,
    pub canary: Option<f64>,
    pub sink: Arc<dyn RolloutSink>,
}

/// Runs and failures (errors and traps) of one version.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Tally {
    pub runs: u64,
    pub failures: u64,
}

impl Tally {
    pub fn rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.failures as f64 / self.runs as f64
        }
    }
}

struct Progress {
    plan: RolloutPlan,
    phase: RolloutPhase,
    /// Objects still to be reconciled by the version (of the canary, while it runs).
    pending: HashSet<ObjectKey>,
    /// The objects after the canary.
    held: Vec<ObjectKey>,
    rolled: u64,
    total: u64,
    canary: Tally,
}

impl Progress {
    fn info(&self) -> RolloutInfo {
        RolloutInfo {
            version: self.plan.version.clone(),
            phase: self.phase,
            rolled: self.rolled,
            total: self.total,
        }
    }
}

/// What a run's end asks of the rollout's driver.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// Nothing to do.
    None,
    /// The canary passed: queue these (the rest).
    Continue(Vec<ObjectKey>),
    /// The canary failed: roll the version back, for this reason.
    RollBack(String),
    /// Every object was reconciled by the version.
    Finished,
}

/// One reactor's rollout, if one runs, and its versions' tallies.
#[derive(Default)]
pub struct Rollout {
    state: Mutex<Option<Progress>>,
    tallies: Mutex<HashMap<String, Tally>>,
}

impl Rollout {
    /// Starts rolling `plan.version` out to `todo` (of `total` objects; the others already
    /// show it). Replaces a rollout in progress. Answers the keys to queue now (the canary,
    /// or all); none: it is done already.
    pub fn begin(&self, plan: RolloutPlan, mut todo: Vec<ObjectKey>, total: u64) -> Vec<ObjectKey> {
        let rolled = total.saturating_sub(todo.len() as u64);
        let (phase, held) = match plan.canary {
            Some(fraction) if !todo.is_empty() => {
                let size = ((todo.len() as f64 * fraction).ceil() as usize).clamp(1, todo.len());
                let held = todo.split_off(size);
                (RolloutPhase::Canary, held)
            }
            _ => (RolloutPhase::Rolling, Vec::new()),
        };
        let mut progress = Progress {
            phase,
            pending: todo.iter().cloned().collect(),
            held,
            rolled,
            total,
            canary: Tally::default(),
            plan,
        };
        if progress.pending.is_empty() {
            progress.phase = RolloutPhase::Done;
        }
        progress.plan.sink.progress(progress.info());
        *self.state.lock() = Some(progress);
        todo
    }

    /// The version being rolled out, if `key` is still to be reconciled by it.
    pub fn pending_version(&self, key: &ObjectKey) -> Option<String> {
        let state = self.state.lock();
        let progress = state.as_ref()?;
        progress
            .pending
            .contains(key)
            .then(|| progress.plan.version.clone())
    }

    /// The version of the last rollout and the one it replaced.
    pub fn rolling_or_last(&self) -> Option<(String, Option<String>)> {
        let state = self.state.lock();
        let progress = state.as_ref()?;
        Some((
            progress.plan.version.clone(),
            progress.plan.previous.clone(),
        ))
    }

    /// A run of `key` ended: by `version` (`None`: nothing ran, e.g. the object is gone),
    /// failed or not. Answers what the driver must do next.
    pub fn ran(&self, key: &ObjectKey, version: Option<&str>, failed: bool) -> Step {
        if let Some(version) = version {
            let mut tallies = self.tallies.lock();
            if !tallies.contains_key(version) {
                tallies.insert(version.to_owned(), Tally::default());
            }
            if let Some(tally) = tallies.get_mut(version) {
                tally.runs += 1;
                tally.failures += u64::from(failed);
            }
        }
        let mut state = self.state.lock();
        let Some(progress) = state.as_mut() else {
            return Step::None;
        };
        if version.is_some_and(|v| v != progress.plan.version) || !progress.pending.remove(key) {
            return Step::None;
        }
        progress.rolled += 1;
        if progress.phase == RolloutPhase::Canary {
            progress.canary.runs += 1;
            progress.canary.failures += u64::from(failed);
        }
        let step = if !progress.pending.is_empty() {
            Step::None
        } else if progress.phase == RolloutPhase::Canary {
            self.verdict(progress)
        } else {
            progress.phase = RolloutPhase::Done;
            Step::Finished
        };
        progress.plan.sink.progress(progress.info());
        step
    }

    /// The canary ran on every object of its fraction: the rest, or a rollback.
    fn verdict(&self, progress: &mut Progress) -> Step {
        let before = progress
            .plan
            .previous
            .as_ref()
            .and_then(|p| self.tallies.lock().get(p).copied())
            .unwrap_or_default();
        let canary = progress.canary;
        if canary.rate() > before.rate() {
            progress.phase = RolloutPhase::RolledBack;
            return Step::RollBack(format!(
                "the canary failed {} of {} reconciles ({:.0}%), the previous version {:.0}%",
                canary.failures,
                canary.runs,
                canary.rate() * 100.0,
                before.rate() * 100.0
            ));
        }
        let rest = std::mem::take(&mut progress.held);
        if rest.is_empty() {
            progress.phase = RolloutPhase::Done;
            return Step::Finished;
        }
        progress.phase = RolloutPhase::Rolling;
        progress.pending.extend(rest.iter().cloned());
        Step::Continue(rest)
    }

    /// The sink of the rollout running, to report on it.
    pub fn sink(&self) -> Option<Arc<dyn RolloutSink>> {
        self.state.lock().as_ref().map(|p| p.plan.sink.clone())
    }

    /// The rollout's progress now.
    pub fn info(&self) -> Option<RolloutInfo> {
        self.state.lock().as_ref().map(Progress::info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Seen(Mutex<Vec<String>>);

    impl RolloutSink for Seen {
        fn progress(&self, info: RolloutInfo) {
            self.0.lock().push(info.cell());
        }
        fn roll_back(&self, _version: &str, _reason: String) {}
    }

    fn keys(n: usize) -> Vec<ObjectKey> {
        (0..n)
            .map(|i| ObjectKey::new("A", &format!("a{i}")))
            .collect()
    }

    fn plan(canary: Option<f64>, sink: Arc<Seen>) -> RolloutPlan {
        RolloutPlan {
            version: "new".into(),
            previous: Some("old".into()),
            canary,
            sink,
        }
    }

    #[test]
    fn counts_the_objects_the_version_ran_and_finishes() {
        let seen = Arc::new(Seen::default());
        let rollout = Rollout::default();
        let todo = rollout.begin(plan(None, seen.clone()), keys(2), 3);
        assert_eq!(todo.len(), 2);
        assert_eq!(
            rollout.ran(&todo[0], Some("old"), false),
            Step::None,
            "another version"
        );
        assert_eq!(rollout.ran(&todo[0], Some("new"), false), Step::None);
        assert_eq!(
            rollout.ran(&todo[0], Some("new"), false),
            Step::None,
            "counted once"
        );
        assert_eq!(rollout.ran(&todo[1], None, false), Step::Finished, "gone");
        assert_eq!(
            *seen.0.lock(),
            vec!["rolled 1/3", "rolled 2/3", "rolled 3/3"]
        );
    }

    #[test]
    fn a_canary_worse_than_the_previous_version_rolls_back() {
        let seen = Arc::new(Seen::default());
        let rollout = Rollout::default();
        rollout.ran(&ObjectKey::new("A", "x"), Some("old"), false);
        let todo = rollout.begin(plan(Some(0.2), seen.clone()), keys(10), 10);
        assert_eq!(todo.len(), 2, "a fifth first");
        assert_eq!(rollout.ran(&todo[0], Some("new"), true), Step::None);
        let step = rollout.ran(&todo[1], Some("new"), false);
        assert!(
            matches!(&step, Step::RollBack(reason) if reason.contains("failed 1 of 2 reconciles (50%), the previous version 0%")),
            "{step:?}"
        );
        assert_eq!(
            seen.0.lock().last().map(String::as_str),
            Some("rolled back 2/10")
        );
    }

    #[test]
    fn a_canary_as_good_as_the_previous_version_continues_with_the_rest() {
        let seen = Arc::new(Seen::default());
        let rollout = Rollout::default();
        let todo = rollout.begin(plan(Some(0.5), seen.clone()), keys(4), 4);
        assert_eq!(todo.len(), 2);
        assert_eq!(rollout.ran(&todo[0], Some("new"), false), Step::None);
        let Step::Continue(rest) = rollout.ran(&todo[1], Some("new"), false) else {
            panic!("the canary passed");
        };
        assert_eq!(rest.len(), 2);
        assert_eq!(rollout.ran(&rest[0], Some("new"), false), Step::None);
        assert_eq!(rollout.ran(&rest[1], Some("new"), false), Step::Finished);
        assert_eq!(
            *seen.0.lock(),
            vec![
                "canary 0/4",
                "canary 1/4",
                "rolled 2/4",
                "rolled 3/4",
                "rolled 4/4"
            ]
        );
    }
}
