//! Conditions as Kubernetes keeps them in `status.conditions`: one per `type`, its
//! `lastTransitionTime` moved only when its `status` changes, so that `kubectl wait
//! --for=condition=Ready` and `reactor-host wait` read them.
//!
//! ```
//! use reactor_sdk::conditions::{Condition, set_condition_at};
//! use serde_json::json;
//!
//! let before = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "PlanNotFound",
//!     "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}]});
//! let mut status = json!({"plan": "gold"});
//! let ready = Condition::new("Ready", "True").reason("PlanFound").observed_generation(2);
//! set_condition_at(&mut status, Some(&before), ready, "2026-01-02T00:00:00Z");
//! assert_eq!(status["conditions"][0]["lastTransitionTime"], "2026-01-02T00:00:00Z");
//! ```

use serde_json::{Map, Value, json};

/// One condition: `status` is `"True"`, `"False"` or `"Unknown"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub observed_generation: Option<u64>,
}

impl Condition {
    pub fn new(type_: impl Into<String>, status: impl Into<String>) -> Self {
        Self {
            type_: type_.into(),
            status: status.into(),
            reason: String::new(),
            message: String::new(),
            observed_generation: None,
        }
    }

    /// A one-word CamelCase reason (`PlanFound`).
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }

    /// A sentence for people.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// The object's `generation` this condition was decided from (`obj.generation()`).
    pub fn observed_generation(mut self, generation: u64) -> Self {
        self.observed_generation = Some(generation);
        self
    }
}

/// Sets `condition` in `status` (the status about to be written), among the conditions of
/// `previous` (the object's status as read: `obj.status::<Value>()?`), stamped with the
/// time now when its status changed.
pub fn set_condition(status: &mut Value, previous: Option<&Value>, condition: Condition) {
    set_condition_at(status, previous, condition, &now());
}

/// [`set_condition`] at the time `now` (RFC 3339).
pub fn set_condition_at(
    status: &mut Value,
    previous: Option<&Value>,
    condition: Condition,
    now: &str,
) {
    let mut conditions: Vec<Value> = status
        .get("conditions")
        .or_else(|| previous.and_then(|p| p.get("conditions")))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let old = conditions
        .iter()
        .position(|c| c.get("type").and_then(Value::as_str) == Some(&condition.type_));
    let since = old
        .and_then(|i| conditions.get(i))
        .filter(|c| c.get("status").and_then(Value::as_str) == Some(&condition.status))
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(now));
    let mut entry = Map::new();
    entry.insert("type".into(), json!(condition.type_));
    entry.insert("status".into(), json!(condition.status));
    entry.insert("reason".into(), json!(condition.reason));
    entry.insert("message".into(), json!(condition.message));
    entry.insert("lastTransitionTime".into(), since);
    if let Some(generation) = condition.observed_generation {
        entry.insert("observedGeneration".into(), json!(generation));
    }
    match old {
        Some(i) => conditions[i] = Value::Object(entry),
        None => conditions.push(Value::Object(entry)),
    }
    if !status.is_object() {
        *status = Value::Object(Map::new());
    }
    if let Value::Object(map) = status {
        map.insert("conditions".into(), Value::Array(conditions));
    }
}

/// The condition of `type_` in `status`, if there is one.
pub fn find_condition<'a>(status: &'a Value, type_: &str) -> Option<&'a Value> {
    status
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Whether `status` has the condition `type_` with status `"True"`.
pub fn is_condition_true(status: &Value, type_: &str) -> bool {
    find_condition(status, type_)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

/// The wall clock now (the host's, or the one `reactor-host test` fixes), RFC 3339 to the
/// second.
pub fn now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(seconds)
}

/// `seconds` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (the civil calendar of
/// Howard Hinnant's `civil_from_days`).
fn rfc3339(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let time = seconds % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        time / 3_600,
        time % 3_600 / 60,
        time % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transition_time_moves_only_with_the_status() {
        let mut status = json!({"plan": "gold"});
        let waiting = Condition::new("Ready", "False")
            .reason("PlanNotFound")
            .message("plan gold not found")
            .observed_generation(1);
        set_condition_at(&mut status, None, waiting, "2026-01-01T00:00:00Z");
        assert_eq!(
            status,
            json!({"plan": "gold", "conditions": [{"type": "Ready", "status": "False",
                "reason": "PlanNotFound", "message": "plan gold not found",
                "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}]})
        );
        // The same status later keeps its time; the reason and generation follow.
        let previous = status.clone();
        let mut next = json!({"plan": "gold"});
        let still = Condition::new("Ready", "False")
            .reason("PlanMissing")
            .observed_generation(2);
        set_condition_at(&mut next, Some(&previous), still, "2026-01-05T00:00:00Z");
        let ready = find_condition(&next, "Ready").expect("kept");
        assert_eq!(ready["lastTransitionTime"], "2026-01-01T00:00:00Z");
        assert_eq!(ready["reason"], "PlanMissing");
        assert_eq!(ready["observedGeneration"], 2);
        assert!(!is_condition_true(&next, "Ready"));
        // A new status moves it; another type is added beside.
        let previous = next.clone();
        let mut last = json!({});
        set_condition_at(
            &mut last,
            Some(&previous),
            Condition::new("Ready", "True"),
            "2026-01-06T00:00:00Z",
        );
        set_condition_at(
            &mut last,
            None,
            Condition::new("Synced", "True"),
            "2026-01-07T00:00:00Z",
        );
        assert!(is_condition_true(&last, "Ready"));
        assert_eq!(
            find_condition(&last, "Ready").expect("ready")["lastTransitionTime"],
            "2026-01-06T00:00:00Z"
        );
        assert_eq!(last["conditions"].as_array().map(Vec::len), Some(2));
        assert!(find_condition(&last, "Gone").is_none());
    }

    #[test]
    fn times_in_the_civil_calendar() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(946_684_800), "2000-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(4_102_444_799), "2099-12-31T23:59:59Z");
    }
}
