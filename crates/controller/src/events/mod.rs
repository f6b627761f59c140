//! Events: what happened to an object (a reconcile error, a recovery, a permanent failure, a
//! finalizer holding a delete, an agent failing an item), kept in memory as Kubernetes events
//! are: a repeat of the same event counts up, the number kept and their age are bounded.

pub(crate) mod hooks;

use parking_lot::Mutex;
use reactor_core::object::ObjectKey;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// Events kept at most (the oldest go first).
pub const EVENTS_KEPT: usize = 2000;
/// Events not seen again for this long are dropped.
pub const EVENT_MAX_AGE: Duration = Duration::from_secs(3600);

pub use reactor_core::event::{Event, EventType};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Identity {
    key: ObjectKey,
    reason: String,
    source: String,
    message: String,
}

struct Kept {
    event: Event,
    last: Instant,
}

/// The engine's events, shared by its workers and the API (cheap to clone).
#[derive(Clone)]
pub struct Events {
    inner: Arc<Mutex<HashMap<Identity, Kept>>>,
    kept: usize,
    max_age: Duration,
}

impl Default for Events {
    fn default() -> Self {
        Self::new(EVENTS_KEPT, EVENT_MAX_AGE)
    }
}

fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

impl Events {
    pub fn new(kept: usize, max_age: Duration) -> Self {
        Self {
            inner: Arc::new(Mutex::new(HashMap::new())),
            kept: kept.max(1),
            max_age,
        }
    }

    /// Records an event of `key`; the same one again (reason, source, message) counts up.
    pub fn record(
        &self,
        key: &ObjectKey,
        event_type: EventType,
        reason: &str,
        source: &str,
        message: &str,
    ) {
        let identity = Identity {
            key: key.clone(),
            reason: reason.to_owned(),
            source: source.to_owned(),
            message: message.to_owned(),
        };
        let now_instant = Instant::now();
        let stamp = now();
        let mut events = self.inner.lock();
        self.expire(&mut events, now_instant);
        if let Some(kept) = events.get_mut(&identity) {
            kept.event.count += 1;
            kept.event.last_seen = stamp;
            kept.event.event_type = event_type;
            kept.last = now_instant;
            return;
        }
        if events.len() >= self.kept
            && let Some(oldest) = events
                .iter()
                .min_by_key(|(_, kept)| kept.last)
                .map(|(identity, _)| identity.clone())
        {
            events.remove(&oldest);
        }
        events.insert(
            identity,
            Kept {
                event: Event {
                    kind: key.kind().to_owned(),
                    name: key.name().to_owned(),
                    event_type,
                    reason: reason.to_owned(),
                    source: source.to_owned(),
                    message: message.to_owned(),
                    count: 1,
                    first_seen: stamp.clone(),
                    last_seen: stamp,
                },
                last: now_instant,
            },
        );
    }

    fn expire(&self, events: &mut HashMap<Identity, Kept>, now: Instant) {
        events.retain(|_, kept| now.saturating_duration_since(kept.last) < self.max_age);
    }

    /// The events of `kind` (all kinds if `None`) and `name` (all if `None`), oldest last
    /// seen first.
    pub fn list(&self, kind: Option<&str>, name: Option<&str>) -> Vec<Event> {
        let mut events = self.inner.lock();
        self.expire(&mut events, Instant::now());
        let mut found: Vec<(Instant, Event)> = events
            .iter()
            .filter(|(identity, _)| {
                kind.is_none_or(|k| identity.key.kind() == k)
                    && name.is_none_or(|n| identity.key.name() == n)
            })
            .map(|(_, kept)| (kept.last, kept.event.clone()))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.reason.cmp(&b.1.reason)));
        found.into_iter().map(|(_, event)| event).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::new("Policy", name)
    }

    #[tokio::test(start_paused = true)]
    async fn repeats_count_up_and_the_events_are_bounded_in_number_and_age() {
        let events = Events::new(3, Duration::from_secs(60));
        for _ in 0..3 {
            events.record(&key("a"), EventType::Warning, "ReconcileError", "r", "boom");
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        let listed = events.list(Some("Policy"), Some("a"));
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].count, 3);
        assert_eq!(listed[0].reason, "ReconcileError");

        events.record(
            &key("a"),
            EventType::Warning,
            "ReconcileError",
            "r",
            "other",
        );
        events.record(
            &key("b"),
            EventType::Normal,
            "FinalizerWait",
            "host",
            "held",
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        events.record(
            &key("c"),
            EventType::Normal,
            "FinalizerWait",
            "host",
            "held",
        );
        // Three kept: the oldest ("boom") went first.
        let all = events.list(None, None);
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(all.iter().all(|e| e.message != "boom"), "{all:?}");
        assert_eq!(all.last().map(|e| e.name.as_str()), Some("c"));
        assert_eq!(events.list(Some("Policy"), Some("b")).len(), 1);
        assert!(events.list(Some("Other"), None).is_empty());

        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(
            events.list(None, None).len(),
            1,
            "only c is younger than a minute"
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(events.list(None, None).is_empty());
    }
}
