//! A shadow version's run beside the serving one: its writes, kept apart and never committed,
//! compared with the serving version's for the same object and state, and the verdict acted
//! on (an event; a dropped shadow recorded as a rollback, so no restart serves it).

use super::events::{EventType, Events};
use super::pending::Pending;
use super::reactor::{Action, Reaction, Reactor, ShadowOutcome, ShadowStep};
use super::rollbacks::record_rollback;
use super::rollout_steps::COMPONENT_EVENT_KIND;
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

/// What one version's callback did: its result and the objects its writes left.
pub struct Run<'a> {
    pub reaction: &'a Reaction,
    pub pending: &'a Pending,
}

/// How `shadow` did against `serving`: failed, or each difference between what they would
/// have committed (results, objects written, deleted, published).
pub fn compare(serving: Run<'_>, shadow: Run<'_>) -> ShadowOutcome {
    let mut lines = Vec::new();
    match (serving.reaction, shadow.reaction) {
        (_, Err(failure)) => {
            // One line, as `lastError` shows a failure (a traceback is the guest's detail).
            let text = super::failure_text::FailureText::new(&failure.to_string());
            return ShadowOutcome::Failed(text.line);
        }
        (Ok(a), Ok(b)) if a != b => lines.push(format!("result: {} → {}", action(a), action(b))),
        _ => {}
    }
    let (a, b) = (written(serving.pending), written(shadow.pending));
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
