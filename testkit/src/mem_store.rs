//! An in-memory [`Store`] with the same write rules as the real ones (`store::plan_writes`), no
//! disk and no serialization: under it, the engine's per-event cost is dispatch and the
//! reactor, not fsync.

use async_trait::async_trait;
use futures::StreamExt;
use parking_lot::Mutex;
use reactor_host::object::{ApplyRequest, Object, ObjectKey, Revision, Selector};
use reactor_host::store::{
    Applied, ApplyOutcome, Change, EventType, Listing, Store, StoreError, WatchEvent, WatchStream,
    Write, Written, plan_apply, plan_writes, targets,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};

#[derive(Default)]
struct State {
    objects: BTreeMap<String, Arc<Object>>,
    /// (kind, label, value) → names: a selector with an equality term is looked up, as the
    /// embedded store's label index does.
    labelled: HashMap<(String, String, String), BTreeSet<String>>,
    /// Every change, oldest first; revision `n` is at index `n - 1`.
    log: Vec<Arc<WatchEvent>>,
}

/// The in-memory store; `MemStore::default()` is empty at revision 0.
pub struct MemStore {
    state: Arc<Mutex<State>>,
    /// Each change once, shared by every watcher (each copies only the events it wants),
    /// as the embedded store shares its batches.
    live: broadcast::Sender<Arc<WatchEvent>>,
}

impl Default for MemStore {
    fn default() -> Self {
        Self {
            state: Arc::default(),
            live: broadcast::channel(4096).0,
        }
    }
}

impl MemStore {
    fn state(&self) -> parking_lot::MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn record(
        state: &mut State,
        live: &broadcast::Sender<Arc<WatchEvent>>,
        change: Change,
    ) -> (Option<Arc<Object>>, Option<EventType>) {
        let mut object = change.object;
        object.meta.revision = state.log.len() as u64 + 1;
        let key = object.key().as_str().to_owned();
        let object = Arc::new(object);
        let event = WatchEvent {
            event_type: change.event_type,
            revision: object.meta.revision,
            object: Some(object.clone()),
        };
        let event = Arc::new(event);
        state.log.push(event.clone());
        let _ = live.send(event);
        if let Some(before) = state.objects.get(&key).cloned() {
            for (label, value) in &before.labels {
                let entry = (before.kind.clone(), label.clone(), value.clone());
                if let Some(names) = state.labelled.get_mut(&entry) {
                    names.remove(&before.name);
                }
            }
        }
        if change.event_type != EventType::Deleted {
            for (label, value) in &object.labels {
                let entry = (object.kind.clone(), label.clone(), value.clone());
                state
                    .labelled
                    .entry(entry)
                    .or_default()
                    .insert(object.name.clone());
            }
        }
        if change.event_type == EventType::Deleted {
            state.objects.remove(&key);
            (None, Some(change.event_type))
        } else {
            state.objects.insert(key, object.clone());
            (Some(object), Some(change.event_type))
        }
    }
}

fn lock(state: &Mutex<State>) -> parking_lot::MutexGuard<'_, State> {
    state.lock()
}

/// The logged changes after `position` (a watcher that fell behind the live feed).
fn since(state: &Mutex<State>, position: Revision) -> Vec<Arc<WatchEvent>> {
    lock(state)
        .log
        .iter()
        .skip(position as usize)
        .cloned()
        .collect()
}

#[async_trait]
impl Store for MemStore {
    async fn get(&self, kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        let key = ObjectKey::new(kind, name);
        Ok(self
            .state()
            .objects
            .get(key.as_str())
            .map(|o| (**o).clone()))
    }

    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError> {
        let state = self.state();
        let revision = state.log.len() as u64;
        let rarest = selector
            .equalities()
            .into_iter()
            .map(|(label, value)| (kind.to_owned(), label.to_owned(), value.to_owned()))
            .min_by_key(|entry| state.labelled.get(entry).map_or(0, |names| names.len()));
        if let Some(entry) = rarest {
            let items = state
                .labelled
                .get(&entry)
                .into_iter()
                .flatten()
                .filter_map(|name| state.objects.get(ObjectKey::new(kind, name).as_str()))
                .filter(|o| selector.matches(&o.labels))
                .map(|o| (**o).clone())
                .collect();
            return Ok(Listing { items, revision });
        }
        let (start, end) = ObjectKey::kind_range(kind);
        let items = state
            .objects
            .range(start..end)
            .map(|(_, o)| o)
            .filter(|o| selector.matches(&o.labels))
            .map(|o| (**o).clone())
            .collect();
        Ok(Listing {
            items,
            revision: state.log.len() as u64,
        })
    }

    async fn apply(&self, requests: Vec<ApplyRequest>) -> Result<Vec<Applied>, StoreError> {
        let mut state = self.state();
        let mut planned = Vec::with_capacity(requests.len());
        for (i, request) in requests.into_iter().enumerate() {
            let current = state.objects.get(request.key().as_str()).cloned();
            let change = plan_apply(current.as_deref(), request)
                .map_err(|e| StoreError::in_document(i + 1, e))?;
            planned.push((current, change));
        }
        let mut applied = Vec::with_capacity(planned.len());
        for (current, change) in planned {
            let Some(change) = change else {
                let object = current.ok_or_else(|| StoreError::Backend("lost".into()))?;
                let object = Arc::unwrap_or_clone(object);
                applied.push(Applied {
                    outcome: ApplyOutcome::Unchanged,
                    object,
                });
                continue;
            };
            let outcome = match change.event_type {
                EventType::Created => ApplyOutcome::Created,
                _ => ApplyOutcome::Updated,
            };
            let (object, _) = Self::record(&mut state, &self.live, change);
            let object = object.ok_or_else(|| StoreError::Backend("apply removed".into()))?;
            let object = Arc::unwrap_or_clone(object);
            applied.push(Applied { outcome, object });
        }
        Ok(applied)
    }

    async fn commit(&self, writes: Vec<Write>) -> Result<Vec<Written>, StoreError> {
        let mut state = self.state();
        let keys = targets(&writes);
        let current: Vec<Option<Arc<Object>>> = keys
            .iter()
            .map(|key| state.objects.get(key.as_str()).cloned())
            .collect();
        let changes = plan_writes(writes, &keys, &current)?;
        Ok(current
            .into_iter()
            .zip(changes)
            .map(|(object, change)| match change {
                None => Written {
                    revision: object.as_ref().map_or(0, |o| o.meta.revision),
                    object,
                    change: None,
                },
                Some(change) => {
                    let (object, change) = Self::record(&mut state, &self.live, change);
                    let revision = state.log.len() as u64;
                    Written {
                        object,
                        change,
                        revision,
                    }
                }
            })
            .collect())
    }

    async fn watch(&self, kind: Option<&str>, from: Revision) -> Result<WatchStream, StoreError> {
        let (replay, mut live, mut position) = {
            let state = self.state();
            let replay: Vec<Arc<WatchEvent>> =
                state.log.iter().skip(from as usize).cloned().collect();
            (replay, self.live.subscribe(), state.log.len() as u64)
        };
        let kind = kind.map(str::to_owned);
        let wanted = move |e: &WatchEvent| kind.is_none() || e.kind() == kind.as_deref();
        let (tx, rx) = mpsc::channel(1024);
        let state = self.state.clone();
        tokio::spawn(async move {
            for event in replay.iter().filter(|e| wanted(e)) {
                if tx.send(Ok(WatchEvent::clone(event))).await.is_err() {
                    return;
                }
            }
            let _ = tx.send(Ok(WatchEvent::bookmark(position))).await;
            loop {
                let events = match live.recv().await {
                    Ok(event) => vec![event],
                    Err(broadcast::error::RecvError::Lagged(_)) => since(&state, position),
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                for event in events {
                    if event.revision <= position {
                        continue;
                    }
                    position = event.revision;
                    if wanted(&event) && tx.send(Ok(WatchEvent::clone(&event))).await.is_err() {
                        return;
                    }
                }
            }
        });
        Ok(
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) })
                .boxed(),
        )
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        Ok(self.state().log.len() as u64)
    }
}
