//! Running reconciles to quiescence: until no change is unseen, nothing is queued or running,
//! twice in a row at the same store revision. Time is skipped forward for failures: a
//! retry runs as soon as everything else is idle, not after its backoff, up to `attempts`
//! runs in all; then the object is reported as still retrying. Timed requeues and resyncs
//! are not waited for.

use crate::controller::status::RECONCILE;
use crate::controller::{Activity, Engine};
use crate::object::ObjectKey;
use crate::store::{Store, StoreError};
use serde_json::Value;
use std::time::Duration;
use tokio::time::Instant;

/// How often the engine is looked at.
const POLL: Duration = Duration::from_millis(10);
/// A requeue due this soon is waited for: the engine's own lock retries are such (a
/// reactor's requeue-after that short is too).
const SOON: Duration = Duration::from_millis(50);

/// What was left when the engine settled.
#[derive(Debug, Default)]
pub struct Settled {
    /// Objects whose reconcile failed every time they ran, with the times they ran.
    pub retrying: Vec<(ObjectKey, u32)>,
    /// Objects a reactor asked to run again later (not waited for), with how soon.
    pub later: Vec<(ObjectKey, Duration)>,
}

impl Settled {
    /// Says on stderr what the result does not wait for.
    pub fn report(&self, attempts: u32) {
        for (key, runs) in &self.retrying {
            eprintln!(
                "warning: {key}: still retrying after {runs} failed runs (the limit is --attempts {attempts}); see its status.reconcile"
            );
        }
        for (key, due) in &self.later {
            eprintln!(
                "note: {key}: asked to run again in {}: timed requeues and resyncs are not waited for",
                humantime::format_duration(round(*due))
            );
        }
    }
}

fn round(due: Duration) -> Duration {
    Duration::from_millis(due.as_millis().try_into().unwrap_or(u64::MAX))
}

/// Waits until `engine` is quiet, running failed objects again at once up to `attempts` runs.
/// What is left due later then (retries past the limit, requeues) is cancelled, so that
/// nothing runs behind the result's back: such an object runs again only when it, or
/// something its reactor watches, changes.
pub async fn settle(engine: &Engine, attempts: u32, timeout: Duration) -> anyhow::Result<Settled> {
    let deadline = Instant::now() + timeout;
    let store = engine.context().store.clone();
    let mut settled = Settled::default();
    let mut quiet_at = None;
    loop {
        if Instant::now() >= deadline {
            anyhow::bail!(
                "the reconciles did not settle within {} (objects that keep changing each other, or a reactor that requeues itself at once?)",
                humantime::format_duration(timeout)
            );
        }
        let activity = engine.activity().await?;
        if !activity.is_idle() || hurry(engine, &activity, attempts) || waits_soon(&activity) {
            quiet_at = None;
            tokio::time::sleep(POLL).await;
            continue;
        }
        park(engine, activity, &mut settled);
        // Idle: the same again a moment later, with nothing written meanwhile, is quiescence
        // (a task the engine spawned, e.g. collecting an owner's children, would write).
        let revision = store.revision().await?;
        if quiet_at == Some(revision) {
            still_failing(store.as_ref(), &mut settled.retrying).await?;
            return Ok(settled);
        }
        quiet_at = Some(revision);
        tokio::time::sleep(POLL * 2).await;
    }
}

/// Keeps the objects whose status still records a failure to retry: one cancelled earlier
/// may have run again since (something it watches changed) and succeeded.
async fn still_failing(
    store: &dyn Store,
    retrying: &mut Vec<(ObjectKey, u32)>,
) -> Result<(), StoreError> {
    let mut failing = Vec::new();
    for (key, runs) in retrying.drain(..) {
        let Some(object) = store.get(key.kind(), key.name()).await? else {
            continue;
        };
        let reconcile = object.status.get(RECONCILE).and_then(Value::as_object);
        let fails = reconcile.is_some_and(|reactors| {
            reactors.values().any(|entry| {
                entry["attempts"].as_u64().is_some_and(|n| n > 0) && entry["permanent"] != true
            })
        });
        if fails {
            failing.push((key, runs));
        }
    }
    *retrying = failing;
    Ok(())
}

/// Cancels what is due later, remembering it for the report.
fn park(engine: &Engine, activity: Activity, settled: &mut Settled) {
    for (key, failures) in activity.retrying {
        if engine.cancel_delayed(&key) {
            settled.retrying.retain(|(k, _)| *k != key);
            settled.later.retain(|(k, _)| *k != key);
            settled.retrying.push((key, failures));
        }
    }
    for (key, due) in activity.later {
        if engine.cancel_delayed(&key) {
            settled.retrying.retain(|(k, _)| *k != key);
            settled.later.retain(|(k, _)| *k != key);
            settled.later.push((key, due));
        }
    }
    settled.retrying.sort();
    settled.later.sort_by(|a, b| a.0.cmp(&b.0));
}

/// Runs now the failed objects that have runs left; whether any was.
fn hurry(engine: &Engine, activity: &Activity, attempts: u32) -> bool {
    let mut hurried = false;
    for (key, failures) in &activity.retrying {
        if *failures < attempts {
            hurried |= engine.run_now(key);
        }
    }
    hurried
}

fn waits_soon(activity: &Activity) -> bool {
    activity.later.iter().any(|(_, due)| *due <= SOON)
}
