//! A shadow version's run beside the serving one: its writes, kept apart and never committed,
//! compared with the serving version's for the same object and state, and the verdict acted
//! on (an event; a dropped shadow recorded as a rollback, so no restart serves it).
//!
//! The shadow's call runs on a task of its own: the serving version's commit never waits for
//! it. It reads what the serving run read (see `Pending::beside`), so a commit that landed
//! meanwhile does not show to it.

use crate::commit::failure_text::FailureText;
use crate::events::{EventType, Events};
use crate::reactor::{Action, Failure, Reaction, Reactor, ShadowOutcome, ShadowStep};
use crate::rollout::rollbacks::record_rollback;
use crate::rollout::shadow_runs::InFlight;
use crate::rollout::steps::COMPONENT_EVENT_KIND;
use crate::run::pending::Pending;
use reactor_core::object::ObjectKey;
use reactor_runtime::version_of;
use reactor_store::Store;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The most differences kept of one object's comparison.
const LINES_KEPT: usize = 6;
/// A value longer than this is cut in a difference's line.
const VALUE_SHOWN: usize = 80;
/// Two runs of one event write the time each ran (a condition's `lastTransitionTime`): two
/// RFC 3339 times this close count as the same.
const SAME_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Meta fields the store decides, not the reactor: two runs of the same logic differ there.
const DECIDED_BY_THE_STORE: &[&str] = &[
    "uid",
    "revision",
    "created",
    "updated",
    "deleted",
    "managed_fields",
];

/// How long a shadow's call may run on once the serving version's call ended: one still
/// running then (a loop) is abandoned, failed, and so dropped. The serving version does not
/// wait for it.
pub const SHADOW_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// What the serving version's callback did, taken as its call ended, before the host adds its
/// own writes (status, finalizer): what the shadow's run is compared with.
pub struct Served {
    reaction: Reaction,
    written: BTreeMap<ObjectKey, Value>,
    pending: Arc<Pending>,
}

impl Served {
    pub fn of(reaction: &Reaction, pending: &Arc<Pending>) -> Self {
        Served {
            reaction: reaction.clone(),
            written: written(pending),
            pending: pending.clone(),
        }
    }
}

/// A shadow version's call on one object, started on its own task beside the serving
/// version's call.
pub struct Beside {
    pub sha256: String,
    pub pending: Arc<Pending>,
    pub call: tokio::task::JoinHandle<Option<Reaction>>,
    /// Ends when the comparison is done.
    pub _in_flight: InFlight,
}

impl Beside {
    /// Compares the shadow's call, once it ends (at most [`SHADOW_GRACE`] from now), with
    /// what the serving version did, and acts on the verdict; on a task of its own.
    pub fn judge(
        self,
        served: Served,
        verdicts: Verdicts,
        serving: Arc<dyn Reactor>,
        object: ObjectKey,
    ) {
        tokio::spawn(async move {
            let mut beside = self;
            let Some(shadowed) = within(&mut beside.call, SHADOW_GRACE).await else {
                return;
            };
            let shadowed = match beside.pending.over_limit() {
                Some(message) => Err(Failure::Permanent(message)),
                None => shadowed,
            };
            let sha256 = beside.sha256.clone();
            // Its traceback, if it sent one, in the component's log (the diff keeps a line).
            if let Err(failure) = &shadowed {
                let head = format!("shadow {} on {object} failed", version_of(&sha256));
                FailureText::new(&failure.to_string()).log_headed(&verdicts.component, &head);
            }
            let outcome = compare(
                &served,
                Run {
                    reaction: &shadowed,
                    pending: &beside.pending,
                },
            );
            // The object takes a shadow call again while the verdict is acted on.
            drop(beside);
            verdicts
                .judge(serving.as_ref(), &sha256, &object, outcome)
                .await
        });
    }

    /// Stops the shadow's call: the serving run has nothing to compare it with.
    pub fn abandon(self) {
        drop(self);
    }
}

/// A shadow's call is never left running unwatched: dropped unjudged (its serving run
/// cancelled, or with nothing to compare), it is stopped.
impl Drop for Beside {
    fn drop(&mut self) {
        self.call.abort();
    }
}

/// The shadow's result, waited for at most `grace`; past it, the call is stopped (its
/// instance dropped with it, never reused) and answers a failure.
async fn within(
    call: &mut tokio::task::JoinHandle<Option<Reaction>>,
    grace: std::time::Duration,
) -> Option<Reaction> {
    match tokio::time::timeout(grace, &mut *call).await {
        Ok(Ok(reaction)) => reaction,
        Ok(Err(e)) => Some(Err(Failure::Crashed(format!(
            "the shadow's call ended: {e}"
        )))),
        Err(_) => {
            call.abort();
            Some(Err(Failure::Crashed(format!(
                "abandoned: still running {grace:?} after the serving version's call ended"
            ))))
        }
    }
}

/// What the shadow's callback did: its result and the objects its writes left.
pub struct Run<'a> {
    pub reaction: &'a Reaction,
    pub pending: &'a Pending,
}

/// How `shadow` did against `serving`: failed, or each difference between what they would
/// have committed (results, objects written, deleted, published).
pub fn compare(serving: &Served, shadow: Run<'_>) -> ShadowOutcome {
    let mut lines = Vec::new();
    match (&serving.reaction, shadow.reaction) {
        (_, Err(failure)) => {
            // One line, as `lastError` shows a failure (a traceback is the guest's detail).
            let text = FailureText::new(&failure.to_string());
            return ShadowOutcome::Failed(text.line);
        }
        (Ok(a), Ok(b)) if a != b => lines.push(format!("result: {} → {}", action(a), action(b))),
        _ => {}
    }
    let (a, b) = (&serving.written, written(shadow.pending));
    let keys: std::collections::BTreeSet<&ObjectKey> = a.keys().chain(b.keys()).collect();
    for key in keys {
        if lines.len() >= LINES_KEPT {
            break;
        }
        // A write that changed nothing is no write: an object one version wrote is compared
        // with the object as both read it, which is what the other left.
        let before = || {
            (serving.pending.as_read(key))
                .or_else(|| shadow.pending.as_read(key))
                .map(normal)
        };
        let name = key.to_string();
        match (a.get(key), b.get(key)) {
            (Some(x), Some(y)) => differences(&name, "", x, y, &mut lines),
            (Some(x), None) => match before() {
                Some(y) => differences(&name, "", x, &y, &mut lines),
                None => lines.push(format!("{name}: written by the serving version only")),
            },
            (None, Some(y)) => match before() {
                Some(x) => differences(&name, "", &x, y, &mut lines),
                None => lines.push(format!("{name}: written by the shadow only")),
            },
            (None, None) => {}
        }
    }
    lines.truncate(LINES_KEPT);
    match lines.is_empty() {
        true => ShadowOutcome::Matched,
        false => ShadowOutcome::Differed(lines),
    }
}

fn action(action: &Action) -> String {
    match action {
        Action::Done => "done".into(),
        Action::RequeueAfter(after) => format!("requeue after {after:?}"),
    }
}

/// The objects a run's writes left, by key, each as [`normal`].
fn written(pending: &Pending) -> BTreeMap<ObjectKey, Value> {
    (pending.touched().into_iter())
        .map(|(key, object)| (key, normal(object)))
        .collect()
}

/// An object as JSON without what the store decides (`null`: absent or deleted).
fn normal(object: Option<Arc<reactor_core::object::Object>>) -> Value {
    let mut value = object
        .and_then(|o| serde_json::to_value(&*o).ok())
        .unwrap_or(Value::Null);
    if let Some(meta) = value.get_mut("meta").and_then(Value::as_object_mut) {
        for field in DECIDED_BY_THE_STORE {
            meta.remove(*field);
        }
    }
    value
}

/// Adds a line per leaf where `a` and `b` differ, under `key` at `path`.
fn differences(key: &str, path: &str, a: &Value, b: &Value, lines: &mut Vec<String>) {
    if lines.len() >= LINES_KEPT || a == b || same_time(a, b) {
        return;
    }
    if let (Value::Object(x), Value::Object(y)) = (a, b) {
        let fields: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
        for field in fields {
            let inner = match path {
                "" => field.clone(),
                _ => format!("{path}.{field}"),
            };
            let (p, q) = (x.get(field), y.get(field));
            differences(
                key,
                &inner,
                p.unwrap_or(&Value::Null),
                q.unwrap_or(&Value::Null),
                lines,
            );
        }
        return;
    }
    let at = match path {
        "" => String::new(),
        _ => format!(" {path}"),
    };
    lines.push(format!("{key}{at}: {} → {}", shown(a), shown(b)));
}

/// Whether `a` and `b` are both RFC 3339 times at most [`SAME_TIME`] apart.
fn same_time(a: &Value, b: &Value) -> bool {
    let time = |v: &Value| humantime::parse_rfc3339_weak(v.as_str()?).ok();
    match (time(a), time(b)) {
        (Some(x), Some(y)) => {
            let apart = x.duration_since(y).or_else(|_| y.duration_since(x));
            apart.is_ok_and(|apart| apart <= SAME_TIME)
        }
        _ => false,
    }
}

fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(VALUE_SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Where a verdict goes: the component's events, and the store for a rollback's record.
pub struct Verdicts {
    pub component: String,
    pub events: Events,
    pub store: Arc<dyn Store>,
}

impl Verdicts {
    /// Hands the comparison on `object` of shadow `sha256` to `reactor` (the runtime counts
    /// it) and acts on what follows.
    pub async fn judge(
        &self,
        reactor: &dyn Reactor,
        sha256: &str,
        object: &ObjectKey,
        outcome: ShadowOutcome,
    ) {
        let version = version_of(sha256);
        match reactor
            .shadow_compared(sha256, &object.to_string(), outcome)
            .await
        {
            ShadowStep::Running => {}
            ShadowStep::Promoted => self.event(
                EventType::Normal,
                "ShadowPromoted",
                &format!("{version} matched the serving version as a shadow: it serves now"),
            ),
            ShadowStep::Dropped(rejection) => {
                self.event(
                    EventType::Warning,
                    "ShadowDropped",
                    &format!("{version} dropped: {}", rejection.reason),
                );
                // So that no restart and no other replica serves it (a record refused costs
                // only that: the shadow is dropped here all the same).
                if let Err(e) =
                    record_rollback(self.store.as_ref(), &self.component, &rejection).await
                {
                    tracing::warn!(component = %self.component, error = %e, "dropped shadow not recorded: a restart would run {version} again");
                }
            }
        }
    }

    fn event(&self, event_type: EventType, reason: &str, message: &str) {
        let key = ObjectKey::new(COMPONENT_EVENT_KIND, &self.component);
        self.events
            .record(&key, event_type, reason, "host", message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_shadow_is_waited_for_within_the_grace_and_stopped_past_it() {
        let grace = Duration::from_secs(1);
        let later = |after: Duration| {
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                Some(Ok(Action::RequeueAfter(after)))
            })
        };
        let shadowed = within(&mut later(grace / 2), grace).await;
        assert_eq!(shadowed, Some(Ok(Action::RequeueAfter(grace / 2))));

        // One that runs on is stopped at the grace: its task ends, dropping what it held.
        let (held, dropped) = tokio::sync::oneshot::channel::<()>();
        let looping = tokio::spawn(async move {
            let _held = held;
            std::future::pending::<Option<Reaction>>().await
        });
        let started = tokio::time::Instant::now();
        let mut looping = looping;
        let Some(Err(Failure::Crashed(why))) = within(&mut looping, grace).await else {
            panic!("not abandoned");
        };
        assert!(why.starts_with("abandoned: still running 1s"), "{why}");
        assert_eq!(started.elapsed(), grace, "waited the grace, no more");
        assert!(dropped.await.is_err(), "the shadow's call was stopped");
    }

    #[test]
    fn differences_name_each_leaf_with_both_values() {
        let mut lines = Vec::new();
        differences(
            "Widget/a",
            "",
            &json!({"status": {"ready": true, "n": 2}, "spec": {"x": 1}}),
            &json!({"status": {"ready": false, "n": 2}, "spec": {"x": 1, "y": "new"}}),
            &mut lines,
        );
        assert_eq!(
            lines,
            vec![
                r#"Widget/a spec.y: null → "new""#.to_owned(),
                "Widget/a status.ready: true → false".to_owned(),
            ]
        );
    }

    #[test]
    fn times_a_few_seconds_apart_are_the_same_and_further_apart_differ() {
        let mut lines = Vec::new();
        let (a, b, c) = (
            json!({"t": "2026-01-01T00:00:00Z"}),
            json!({"t": "2026-01-01T00:00:01Z"}),
            json!({"t": "2026-01-01T00:01:00Z"}),
        );
        differences("X/x", "", &a, &b, &mut lines);
        assert!(lines.is_empty(), "{lines:?}");
        differences("X/x", "", &a, &c, &mut lines);
        assert_eq!(lines.len(), 1, "{lines:?}");
    }

    #[test]
    fn a_long_value_is_cut_on_a_character() {
        let long = json!("é".repeat(200));
        let shown = shown(&long);
        assert_eq!(shown.chars().count(), VALUE_SHOWN + 1);
        assert!(shown.ends_with('…'));
    }
}
