//! What the store knows to be damaged: the problems its start check, its scrub and its reads
//! found, and which answers they make unsafe ("absent" once the objects are damaged).

use super::check::{Area, Finding};
use crate::{StoreError, StoreHealth};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The most problems kept to be shown; the count goes on past it.
const KEPT: usize = 100;

/// Who found a problem, as `/healthz` says it.
pub const BY_START: &str = "the start check";
pub const BY_SCRUB: &str = "the scrub";
pub const BY_READ: &str = "a read";
pub const BY_WRITE: &str = "a write";

#[derive(Debug, Default)]
pub struct Health {
    /// Set with the first problem found, so a sound store answers without taking a lock.
    damaged: AtomicBool,
    known: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    problems: Vec<String>,
    seen: HashSet<String>,
    found: usize,
    checks: BTreeMap<&'static str, String>,
    /// Where a lookup that finds nothing may have missed a present object, and a list may
    /// miss one: objects of these kinds, or of every kind.
    objects: Damaged,
    /// Where a list by label may miss an object.
    index: Damaged,
}

/// The kinds of objects a damage may concern.
#[derive(Debug, Default)]
struct Damaged {
    every_kind: bool,
    kinds: BTreeSet<String>,
}

impl Damaged {
    fn add(&mut self, kind: Option<&str>) {
        match kind {
            Some(kind) => {
                self.kinds.insert(kind.to_owned());
            }
            None => self.every_kind = true,
        }
    }

    fn concerns(&self, kind: &str) -> bool {
        self.every_kind || self.kinds.contains(kind)
    }
}

impl Health {
    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records `finding`, found by `by`; a problem already known is not counted again.
    pub fn found(&self, finding: &Finding, by: &str) {
        let mut known = self.known();
        let kind = finding.kind.as_deref();
        match finding.area {
            Area::Objects => known.objects.add(kind),
            Area::Index => known.index.add(kind),
            Area::Log => {}
            Area::File => {
                known.objects.add(None);
                known.index.add(None);
            }
        }
        self.damaged.store(true, Ordering::SeqCst);
        if !known.seen.insert(finding.to_string()) {
            return;
        }
        known.found += 1;
        if known.problems.len() < KEPT {
            known.problems.push(format!("{finding} (found by {by})"));
        }
        drop(known);
        tracing::error!(record = %finding.record, problem = %finding.problem, by, "the store is damaged");
        metrics::counter!(reactor_core::metrics::STORE_DAMAGE_FOUND).increment(1);
        metrics::gauge!(reactor_core::metrics::STORE_DAMAGED).set(1.0);
    }

    /// Says what `check` last did (shown on `/healthz`).
    pub fn note(&self, check: &'static str, what: String) {
        self.known().checks.insert(check, what);
    }

    /// Whether a lookup of an object of `kind` that finds nothing may have missed it.
    pub fn objects_damaged(&self, kind: &str) -> bool {
        self.damaged.load(Ordering::SeqCst) && self.known().objects.concerns(kind)
    }

    /// Whether a list of the objects of `kind` may miss one.
    pub fn lists_damaged(&self, kind: &str) -> bool {
        self.damaged.load(Ordering::SeqCst) && {
            let known = self.known();
            known.objects.concerns(kind) || known.index.concerns(kind)
        }
    }

    pub fn found_count(&self) -> usize {
        self.known().found
    }

    pub fn snapshot(&self) -> StoreHealth {
        let known = self.known();
        StoreHealth {
            problems: known.problems.clone(),
            found: known.found,
            checks: known
                .checks
                .iter()
                .map(|(check, what)| format!("{check}: {what}"))
                .collect(),
        }
    }

    /// The error answered instead of "absent" (or a list) while the store is damaged:
    /// `what` is what cannot be told, e.g. `whether Policy/a exists`.
    pub fn unknown(&self, what: String) -> StoreError {
        StoreError::Damaged {
            what,
            found: self.found_count(),
        }
    }

    /// Runs `read`, a read of the file in `area` by `by`, turning a panic inside redb (which it
    /// has on some damaged pages) into a corruption error, and recording any corruption it
    /// meets. `what` names what was read, for the error.
    pub fn guard<T>(
        &self,
        area: Area,
        by: &str,
        what: &dyn Fn() -> String,
        read: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match catch_unwind(AssertUnwindSafe(read)) {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => {
                if matches!(error.root(), StoreError::Corrupt { .. }) {
                    self.found(&Finding::of_error(area, &error), by);
                }
                Err(error)
            }
            Err(payload) => {
                let reason = format!(
                    "the store file is damaged: redb failed reading it ({})",
                    panic_message(payload.as_ref())
                );
                // A page redb cannot read may hold anything: the damage concerns every kind.
                self.found(&Finding::new(area, what(), reason.clone()), by);
                Err(StoreError::Corrupt {
                    record: what(),
                    reason,
                })
            }
        }
    }
}

/// The message of a panic's payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_problem_leaves_absence_trusted_and_an_objects_problem_does_not() {
        let health = Health::default();
        assert!(!health.objects_damaged("A") && !health.lists_damaged("A"));
        health.found(
            &Finding::new(Area::Log, "log entry 3", "checksum mismatch"),
            BY_SCRUB,
        );
        assert!(!health.objects_damaged("A") && !health.lists_damaged("A"));
        assert_eq!(health.snapshot().found, 1, "shown all the same");
        let index = Finding::new(Area::Index, "the label index", "misses A x=y a");
        health.found(&index.of_kind("A"), BY_SCRUB);
        assert!(!health.objects_damaged("A") && health.lists_damaged("A"));
        let record = Finding::new(Area::Objects, "A/a", "checksum mismatch").of_kind("A");
        health.found(&record, BY_READ);
        health.found(&record, BY_SCRUB);
        assert!(health.objects_damaged("A"));
        // Damage confined to kind A leaves the other kinds' answers trusted.
        assert!(!health.objects_damaged("B") && !health.lists_damaged("B"));
        let shown = health.snapshot();
        assert_eq!(shown.found, 3, "the same problem twice counts once");
        assert_eq!(
            shown.problems[2],
            "A/a: checksum mismatch (found by a read)"
        );
        // Damage of unknown extent (a page redb fails on) concerns every kind.
        health.found(
            &Finding::new(Area::File, "the objects table", "redb failed"),
            BY_SCRUB,
        );
        assert!(health.objects_damaged("B") && health.lists_damaged("B"));
    }

    #[test]
    fn a_panic_in_a_read_is_a_corruption_error_and_marks_the_store() {
        let health = Health::default();
        let answer: Result<(), StoreError> =
            health.guard(Area::Objects, BY_READ, &|| "A/a".into(), || {
                panic!("unreachable page type")
            });
        let error = answer.expect_err("a panic is an error");
        assert!(
            error
                .to_string()
                .starts_with("corrupt record A/a: the store file is damaged"),
            "{error}"
        );
        assert!(
            error.to_string().contains("unreachable page type"),
            "{error}"
        );
        assert!(
            health.objects_damaged("B"),
            "a panic's damage may concern any kind"
        );
        assert_eq!(health.snapshot().found, 1);
        // Other errors are passed on and mark nothing.
        let health = Health::default();
        let answer: Result<(), StoreError> =
            health.guard(Area::Objects, BY_READ, &|| "A/a".into(), || {
                Err(StoreError::Closed)
            });
        assert_eq!(answer, Err(StoreError::Closed));
        assert!(!health.objects_damaged("A"));
    }
}
