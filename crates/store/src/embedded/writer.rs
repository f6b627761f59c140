//! Group commit: one writer thread gathers the writes that arrive together into one durable
//! redb transaction, then answers them all and publishes their events to the watchers.

use super::acked::Acked;
use super::check::{Area, Finding};
use super::health::BY_WRITE;
use super::labels::LABELS;
use super::live::{LIVE_BATCH_BYTES, Live};
use super::record;
use super::state::StoreState;
use super::tables::{
    COUNTERS, LOG, LOG_KINDS, LogEntry, OBJECTS, OLDEST, REVISION, backend, encode_object,
    log_entry, lookup, object_body, reference_record,
};
use crate::{
    Change, EventType, StoreError, WatchEvent, Write, Written, plan_apply, plan_writes, targets,
};
use reactor_core::object::{ApplyRequest, Object, Revision};
use redb::{ReadableTable, Table};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::{mpsc, oneshot};

/// One write as a client asked for it.
#[derive(Debug)]
pub enum Op {
    Apply(Vec<ApplyRequest>),
    /// A transaction: every write decided on the state the ones before it left.
    Commit(Vec<Write>),
}

pub type Outcome = Result<Vec<Written>, StoreError>;

pub struct WriteRequest {
    pub op: Op,
    pub reply: oneshot::Sender<Outcome>,
}

/// How the log is kept short: entries older than the newest `retention` are removed.
#[derive(Debug, Clone, Copy)]
pub struct WriterSettings {
    pub retention: u64,
    pub max_batch: usize,
    /// The largest object record accepted, in bytes of JSON.
    pub max_object_bytes: usize,
}

/// Commits the writes of `requests` until every sender is gone, recording each durable
/// revision in `acked` before it is acknowledged.
pub fn run(
    shared: Arc<StoreState>,
    mut requests: mpsc::Receiver<WriteRequest>,
    settings: WriterSettings,
    mut acked: Option<Acked>,
) {
    while let Some(first) = requests.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < settings.max_batch {
            match requests.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        commit_batch(&shared, batch, settings, acked.as_mut());
    }
}

fn commit_batch(
    shared: &StoreState,
    mut batch: Vec<WriteRequest>,
    settings: WriterSettings,
    acked: Option<&mut Acked>,
) {
    let size = batch.len();
    let _commit = tracing::debug_span!("store_commit", requests = size).entered();
    // A panic inside redb (a damaged page) fails this batch with a corruption error and
    // marks the store damaged; the writer goes on with the next one.
    let written = shared
        .health
        .guard(Area::File, BY_WRITE, &|| "the store file".into(), || {
            write_batch(shared, &mut batch, settings)
        });
    match written {
        Ok((outcomes, live, latest, oldest)) => {
            if let Some(acked) = acked {
                acked.record(latest);
            }
            shared.oldest.store(oldest, Ordering::SeqCst);
            shared.latest.store(latest, Ordering::SeqCst);
            metrics::counter!(reactor_core::metrics::STORE_COMMITS).increment(1);
            metrics::histogram!(reactor_core::metrics::STORE_COMMIT_BATCH_SIZE).record(size as f64);
            metrics::gauge!(reactor_core::metrics::STORE_REVISION).set(latest as f64);
            if let Some(live) = live {
                // No receivers is fine: nobody is watching.
                let _ = shared.events.send(Arc::new(live));
            }
            for (request, outcome) in batch.into_iter().zip(outcomes) {
                if let Err(e) = &outcome
                    && let StoreError::Corrupt { record, .. } = e.root()
                {
                    // A damaged log entry (one a write had to make whole) leaves the objects
                    // and their absence trusted.
                    let area = match record.starts_with("log entry ") {
                        true => Area::Log,
                        false => Area::Objects,
                    };
                    shared.health.found(&Finding::of_error(area, e), BY_WRITE);
                }
                let _ = request.reply.send(outcome);
            }
        }
        Err(e) => {
            tracing::error!(error = %e, "store commit failed");
            metrics::counter!(reactor_core::metrics::STORE_COMMIT_FAILURES).increment(1);
            for request in batch {
                let _ = request.reply.send(Err(e.clone()));
            }
        }
    }
}

type BatchResult = (Vec<Outcome>, Option<Live>, Revision, Revision);

/// Writes the ops of `batch` (taken out of it: what they carry moves into the objects).
fn write_batch(
    shared: &StoreState,
    batch: &mut [WriteRequest],
    settings: WriterSettings,
) -> Result<BatchResult, StoreError> {
    let txn = shared.db.begin_write().map_err(backend)?;
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut events = Vec::new();
    let mut latest = shared.latest.load(Ordering::SeqCst);
    let mut oldest = shared.oldest.load(Ordering::SeqCst);
    let mut bytes = 0;
    {
        let mut objects = txn.open_table(OBJECTS).map_err(backend)?;
        let mut log = txn.open_table(LOG).map_err(backend)?;
        let mut log_kinds = txn.open_table(LOG_KINDS).map_err(backend)?;
        let mut counters = txn.open_table(COUNTERS).map_err(backend)?;
        let mut labels = txn.open_table(LABELS).map_err(backend)?;
        for request in batch.iter_mut() {
            let op = std::mem::replace(&mut request.op, Op::Commit(Vec::new()));
            let planned = match plan_op(&objects, op) {
                Ok(planned) => planned,
                Err(e) => {
                    outcomes.push(Err(e));
                    continue;
                }
            };
            // Every record of the op is made before any is written, so an op with one object
            // over the size limit writes nothing.
            let before = latest;
            let encoded = match encode_op(planned, &mut latest, settings.max_object_bytes) {
                Ok(encoded) => encoded,
                Err(e) => {
                    latest = before;
                    outcomes.push(Err(e));
                    continue;
                }
            };
            // The log entries the op supersedes are made whole before anything is written,
            // so an op that meets a damaged one writes nothing.
            let wholes = match superseded(&log, &objects, &encoded) {
                Ok(wholes) => wholes,
                Err(e) => {
                    latest = before;
                    outcomes.push(Err(e));
                    continue;
                }
            };
            for (revision, whole) in wholes {
                log.insert(revision, whole.as_slice()).map_err(backend)?;
            }
            let mut states = Vec::with_capacity(encoded.len());
            for (current, change) in encoded {
                let Some((change, record)) = change else {
                    states.push(Written {
                        revision: current.as_ref().map_or(0, |o| o.meta.revision),
                        object: current.map(Arc::new),
                        change: None,
                    });
                    continue;
                };
                // One copy, shared by the watch event and the writer's answer.
                let object = Arc::new(change.object);
                let revision = object.meta.revision;
                let key = object.key();
                let stays = change.event_type != EventType::Deleted;
                // The change refers to the object's record while it is the latest.
                let logged = match stays {
                    true => reference_record(change.event_type, revision, key.as_str()),
                    false => event_record(change.event_type, revision, &record[record::HEADER..])?,
                };
                log.insert(revision, logged.as_slice()).map_err(backend)?;
                log_kinds
                    .insert(revision, object.kind.as_str())
                    .map_err(backend)?;
                let size = logged.len().max(record.len());
                bytes += size;
                super::labels::update(&mut labels, current.as_ref(), stays.then_some(&*object))?;
                if stays {
                    objects
                        .insert(key.as_str(), record.as_slice())
                        .map_err(backend)?;
                } else {
                    objects.remove(key.as_str()).map_err(backend)?;
                }
                states.push(Written {
                    object: stays.then(|| object.clone()),
                    change: Some(change.event_type),
                    revision,
                });
                let event = WatchEvent {
                    event_type: change.event_type,
                    revision,
                    object: Some(object),
                };
                events.push((event, size));
            }
            outcomes.push(Ok(states));
        }
        counters.insert(REVISION, latest).map_err(backend)?;
        if latest.saturating_sub(oldest) > settings.retention + settings.retention / 8 {
            let new_oldest = latest - settings.retention;
            log.retain_in(..=new_oldest, |_, _| false)
                .map_err(backend)?;
            log_kinds
                .retain_in(..=new_oldest, |_, _| false)
                .map_err(backend)?;
            counters.insert(OLDEST, new_oldest).map_err(backend)?;
            oldest = new_oldest;
        }
    }
    txn.commit().map_err(backend)?;
    let live = match events.last() {
        None => None,
        Some(_) if bytes <= LIVE_BATCH_BYTES => Some(Live::Batch(events)),
        Some((last, _)) => Some(Live::Skipped { to: last.revision }),
    };
    Ok((outcomes, live, latest, oldest))
}

type Encoded = Vec<(Option<Object>, Option<(Change, Vec<u8>)>)>;

/// Stamps each change of one op with the next revision and makes its record, refusing the
/// op if one record is over `limit` bytes of JSON.
fn encode_op(planned: Planned, latest: &mut Revision, limit: usize) -> Result<Encoded, StoreError> {
    let mut encoded = Vec::with_capacity(planned.len());
    for (current, change) in planned {
        let Some(mut change) = change else {
            encoded.push((current, None));
            continue;
        };
        *latest += 1;
        change.object.meta.revision = *latest;
        // The object is serialized once, for its record and its log entry alike.
        let record = encode_object(&change.object)?;
        let size = record.len() - record::HEADER;
        if size > limit {
            return Err(StoreError::TooLarge {
                key: change.object.key().to_string(),
                size,
                limit,
            });
        }
        encoded.push((current, Some((change, record))));
    }
    Ok(encoded)
}

/// The log entries that the changes of `encoded` supersede and that still refer to their
/// object's record, each made whole from the record before it changes (see [`LogEntry`]).
/// Only reads.
fn superseded(
    log: &Table<u64, &'static [u8]>,
    objects: &Table<&'static str, &'static [u8]>,
    encoded: &Encoded,
) -> Result<Vec<(Revision, Vec<u8>)>, StoreError> {
    let mut wholes = Vec::new();
    for (current, change) in encoded {
        let (Some(current), Some(_)) = (current, change) else {
            continue;
        };
        let revision = current.meta.revision;
        if let Some(whole) = log_whole(log, objects, current.key().as_str(), revision)? {
            wholes.push((revision, whole));
        }
    }
    Ok(wholes)
}

/// The log entry of `revision` made whole, if it refers to the object under `key`, from that
/// object's record; `None` for an entry compacted away or whole already.
fn log_whole(
    log: &Table<u64, &'static [u8]>,
    objects: &Table<&'static str, &'static [u8]>,
    key: &str,
    revision: Revision,
) -> Result<Option<Vec<u8>>, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        record: format!("log entry {revision}"),
        reason,
    };
    let event_type = match log.get(revision).map_err(backend)? {
        None => return Ok(None),
        Some(entry) => match log_entry(revision, entry.value())? {
            LogEntry::Whole(_) => return Ok(None),
            LogEntry::Latest {
                event_type,
                key: named,
            } if named == key => event_type,
            LogEntry::Latest { key: named, .. } => {
                return Err(corrupt(format!(
                    "refers to {named}, but {key} was changed at it"
                )));
            }
        },
    };
    let stored = (objects.get(key).map_err(backend)?)
        .ok_or_else(|| corrupt(format!("refers to {key}, which is not stored")))?;
    event_record(event_type, revision, object_body(key, stored.value())?).map(Some)
}

/// The log record of a change: the watch event as `serde_json` would write it, around the
/// object's already serialized JSON (the body of its record), framed for `revision`.
fn event_record(
    event_type: EventType,
    revision: Revision,
    object: &[u8],
) -> Result<Vec<u8>, StoreError> {
    let event_type = serde_json::to_string(&event_type).map_err(backend)?;
    let mut logged = record::buffer(object.len() + 64);
    logged.extend_from_slice(
        format!(r#"{{"type":{event_type},"revision":{revision},"object":"#).as_bytes(),
    );
    logged.extend_from_slice(object);
    logged.push(b'}');
    record::seal(&revision.to_le_bytes(), &mut logged);
    Ok(logged)
}

type Planned = Vec<(Option<Object>, Option<Change>)>;

/// Decides every change of one op before any is written, so a failing op writes nothing.
fn plan_op(objects: &Table<&'static str, &'static [u8]>, op: Op) -> Result<Planned, StoreError> {
    let load = |key: &reactor_core::object::ObjectKey| lookup(objects, key.as_str());
    match op {
        Op::Apply(requests) => {
            let mut seen = HashSet::new();
            let mut planned = Vec::with_capacity(requests.len());
            for (i, request) in requests.into_iter().enumerate() {
                let index = i + 1;
                let key = request.key();
                if seen.contains(&key) {
                    return Err(StoreError::in_document(
                        index,
                        StoreError::Invalid(format!("{key} appears twice in one apply")),
                    ));
                }
                let current = load(&key).map_err(|e| StoreError::in_document(index, e))?;
                seen.insert(key);
                let change = plan_apply(current.as_ref(), request)
                    .map_err(|e| StoreError::in_document(index, e))?;
                planned.push((current, change));
            }
            Ok(planned)
        }
        Op::Commit(writes) => {
            let keys = targets(&writes);
            let current = keys.iter().map(load).collect::<Result<Vec<_>, _>>()?;
            let changes = plan_writes(writes, &keys, &current)?;
            Ok(current.into_iter().zip(changes).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::tables::decode_event;

    #[test]
    fn event_record_is_the_encoded_event() {
        let object: Object = serde_json::from_value(serde_json::json!({
            "kind": "A", "name": "a", "labels": {"x": "y"}, "spec": {"s": [1, "two"]},
            "meta": {"revision": 7, "generation": 2}
        }))
        .expect("object");
        for event_type in [EventType::Created, EventType::Updated, EventType::Deleted] {
            let event = WatchEvent {
                event_type,
                revision: 7,
                object: Some(Arc::new(object.clone())),
            };
            let encoded = encode_object(&object).expect("encode");
            let logged = event_record(event_type, 7, &encoded[record::HEADER..]).expect("record");
            assert_eq!(
                &logged[record::HEADER..],
                serde_json::to_vec(&event).expect("encode")
            );
            assert_eq!(
                decode_event(7, &logged[record::HEADER..]).expect("decode"),
                event
            );
        }
    }
}
