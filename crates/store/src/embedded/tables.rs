//! The redb tables of the embedded store and the reads over them.

use crate::{EventType, StoreError, WatchEvent};
use reactor_core::object::{Object, ObjectKey, Revision};
use redb::{ReadableDatabase, ReadableTable, TableDefinition};

/// `kind/name` → the object as JSON.
pub const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
/// revision → the watch event of that change as JSON, or — while the change is its object's
/// latest — a reference to the object's record, which holds the same JSON (see [`LogEntry`]);
/// compacted from the oldest end.
pub const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
/// revision → the kind its change was of, so a watch of one kind replays only its entries.
pub const LOG_KINDS: TableDefinition<u64, &str> = TableDefinition::new("log-kinds");
/// Counters: `revision` (latest committed) and `oldest` (the oldest revision a watch may start from).
pub const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("counters");

pub const REVISION: &str = "revision";
pub const OLDEST: &str = "oldest";

pub fn backend<E: std::fmt::Display>(e: E) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// A redb error met while reading: redb's own finding that the file is corrupt is a
/// corruption error, every other one a backend failure.
pub fn storage<E: Into<redb::Error>>(e: E) -> StoreError {
    match e.into() {
        redb::Error::Corrupted(reason) => StoreError::Corrupt {
            record: "the store file".into(),
            reason,
        },
        other => StoreError::Backend(other.to_string()),
    }
}

/// The JSON body of the object record stored under `key`, its checksum checked.
pub fn object_body<'a>(key: &str, record: &'a [u8]) -> Result<&'a [u8], StoreError> {
    super::record::open(&|| key.to_owned(), key.as_bytes(), record)
}

/// A log entry as stored. The latest change of an object that is still stored is logged as a
/// reference: the change's type and the object's key, the event's object being the object's
/// record as it is (stored once, not twice). When the object changes again or is deleted, the
/// writer writes the entry whole, in the same transaction, from the record before it changes;
/// so in any snapshot a reference at revision R names an object stored at revision R.
#[derive(Debug, PartialEq, Eq)]
pub enum LogEntry<'a> {
    /// The watch event's JSON.
    Whole(&'a [u8]),
    /// The change that made the object under `key` what is stored now.
    Latest { event_type: EventType, key: &'a str },
}

/// The log entry of `revision`, its checksum checked.
pub fn log_entry(revision: Revision, record: &[u8]) -> Result<LogEntry<'_>, StoreError> {
    use super::record::{FORMAT, REFERENCE};
    let name = || format!("log entry {revision}");
    let (format, body) =
        super::record::open_as(&[FORMAT, REFERENCE], &name, &revision.to_le_bytes(), record)?;
    if format == FORMAT {
        return Ok(LogEntry::Whole(body));
    }
    let corrupt = |reason: String| StoreError::Corrupt {
        record: name(),
        reason,
    };
    let (code, key) = body
        .split_first()
        .ok_or_else(|| corrupt("an empty reference".into()))?;
    let event_type = match *code {
        b'c' => EventType::Created,
        b'u' => EventType::Updated,
        b'd' => EventType::Deleted,
        b'b' => EventType::Bookmark,
        other => return Err(corrupt(format!("a reference to an unknown change {other}"))),
    };
    let key = std::str::from_utf8(key)
        .map_err(|_| corrupt("a reference to a key that is not UTF-8".into()))?;
    Ok(LogEntry::Latest { event_type, key })
}

/// The log entry of `revision` that refers to the latest change, of `event_type`, of the object
/// under `key` (see [`LogEntry::Latest`]).
pub fn reference_record(event_type: EventType, revision: Revision, key: &str) -> Vec<u8> {
    let code = match event_type {
        EventType::Created => b'c',
        EventType::Updated => b'u',
        EventType::Deleted => b'd',
        EventType::Bookmark => b'b',
    };
    let mut record = super::record::buffer(key.len() + 1);
    record.push(code);
    record.extend_from_slice(key.as_bytes());
    super::record::seal_as(
        super::record::REFERENCE,
        &revision.to_le_bytes(),
        &mut record,
    );
    record
}

/// The event of the log entry `Latest { event_type, key }` of `revision`, read from `objects`,
/// and the size of the object's record: corrupt if that object is not stored at `revision`.
pub fn resolve(
    objects: &impl ReadableTable<&'static str, &'static [u8]>,
    revision: Revision,
    event_type: EventType,
    key: &str,
) -> Result<(WatchEvent, usize), StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        record: format!("log entry {revision}"),
        reason,
    };
    let stored = objects
        .get(key)
        .map_err(storage)?
        .ok_or_else(|| corrupt(format!("refers to {key}, which is not stored")))?;
    let object = decode_object(key, stored.value())?;
    if object.meta.revision != revision {
        return Err(corrupt(format!(
            "refers to {key}, which is stored at revision {}",
            object.meta.revision
        )));
    }
    let event = WatchEvent {
        event_type,
        revision,
        object: Some(std::sync::Arc::new(object)),
    };
    Ok((event, stored.value().len()))
}

/// The object stored under `key`: its checksum checked, and its kind and name those of the key.
pub fn decode_object(key: &str, record: &[u8]) -> Result<Object, StoreError> {
    let object: Object =
        serde_json::from_slice(object_body(key, record)?).map_err(|e| StoreError::Corrupt {
            record: key.to_owned(),
            reason: e.to_string(),
        })?;
    if object.key().as_str() != key {
        return Err(StoreError::Corrupt {
            record: key.to_owned(),
            reason: format!("it holds {}", object.key()),
        });
    }
    Ok(object)
}

/// The watch event whose JSON is `body`, logged whole at `revision`.
pub fn decode_event(revision: Revision, body: &[u8]) -> Result<WatchEvent, StoreError> {
    serde_json::from_slice(body).map_err(|e| StoreError::Corrupt {
        record: format!("log entry {revision}"),
        reason: e.to_string(),
    })
}

/// The framed record of `object`, stored under its key.
pub fn encode_object(object: &Object) -> Result<Vec<u8>, StoreError> {
    let mut record = super::record::buffer(256);
    serde_json::to_writer(&mut record, object).map_err(backend)?;
    super::record::seal(object.key().as_str().as_bytes(), &mut record);
    Ok(record)
}

/// The latest committed revision and the oldest watchable one, as last committed.
pub fn read_counters(db: &redb::Database) -> Result<(Revision, Revision), StoreError> {
    let txn = db.begin_read().map_err(backend)?;
    let table = match txn.open_table(COUNTERS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok((0, 0)),
        Err(e) => return Err(backend(e)),
    };
    let get = |name| -> Result<u64, StoreError> {
        Ok(table
            .get(name)
            .map_err(backend)?
            .map(|v| v.value())
            .unwrap_or(0))
    };
    Ok((get(REVISION)?, get(OLDEST)?))
}

pub fn get_object(db: &redb::Database, key: &ObjectKey) -> Result<Option<Object>, StoreError> {
    let txn = db.begin_read().map_err(storage)?;
    let table = txn.open_table(OBJECTS).map_err(storage)?;
    lookup(&table, key.as_str())
}

/// The object stored under `key`, its record checked; `None` only if the records beside
/// where it would be are sound and in order. A bit flipped in a stored key moves its record
/// out of a lookup's reach, and a lookup of the real key stops right beside the damaged one
/// (redb's search compares with it on the way), so "absent" is answered only when the
/// neighbours show no such damage; otherwise the answer is an error naming corruption.
pub fn lookup(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<Object>, StoreError> {
    if let Some(found) = table.get(key).map_err(storage)? {
        return decode_object(key, found.value()).map(Some);
    }
    let before = table
        .range(..key)
        .map_err(storage)?
        .next_back()
        .transpose()
        .map_err(storage)?;
    let after = table
        .range(key..)
        .map_err(storage)?
        .next()
        .transpose()
        .map_err(storage)?;
    let neighbours = [
        (before, std::cmp::Ordering::Less),
        (after, std::cmp::Ordering::Greater),
    ];
    for (neighbour, side) in neighbours {
        let Some((stored, record)) = neighbour else {
            continue;
        };
        let (stored, record) = (stored.value(), record.value());
        let corrupt = |reason: String| StoreError::Corrupt {
            record: key.to_owned(),
            reason,
        };
        if stored.cmp(key) != side {
            return Err(corrupt(format!(
                "a lookup does not find it, but the table's order is broken beside it \
                 ({stored:?} is where a key {} it belongs): it may be present",
                if side.is_lt() { "before" } else { "after" }
            )));
        }
        if let Err(e) = super::record::open(&|| stored.to_owned(), stored.as_bytes(), record) {
            let found = super::finding::damaged_object(stored, record, &e);
            return Err(corrupt(format!(
                "a lookup does not find it, and the record beside where it would be is \
                 damaged ({found}): it may be present"
            )));
        }
    }
    Ok(None)
}

/// What a replay needs to know of a log entry before decoding it whole.
#[derive(serde::Deserialize)]
struct LogHeader<'a> {
    #[serde(borrow)]
    object: Option<KindOnly<'a>>,
}

#[derive(serde::Deserialize)]
struct KindOnly<'a> {
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
}

/// Log entries as a replay reads them: each event and the size of its record.
pub type Chunk = Vec<(WatchEvent, usize)>;

/// The log entries after `after` (up to `limit` entries or `byte_limit` bytes of decoded
/// entries, whichever comes first, but at least one), or `Compacted` if some of them are
/// gone: those of `kind` (all if `None`) decoded, and the last revision read. Entries of
/// other kinds are only skimmed, so a watch of one kind does not pay for the others.
pub fn read_log(
    db: &redb::Database,
    after: Revision,
    limit: usize,
    byte_limit: usize,
    kind: Option<&str>,
) -> Result<(Chunk, Option<Revision>), StoreError> {
    let txn = db.begin_read().map_err(storage)?;
    let counters = txn.open_table(COUNTERS).map_err(storage)?;
    let counter = |name| -> Result<u64, StoreError> {
        Ok(counters
            .get(name)
            .map_err(storage)?
            .map(|v| v.value())
            .unwrap_or(0))
    };
    let (oldest, latest) = (counter(OLDEST)?, counter(REVISION)?);
    if after < oldest {
        return Err(StoreError::Compacted {
            requested: after,
            oldest,
        });
    }
    let table = txn.open_table(LOG).map_err(storage)?;
    let kinds = txn.open_table(LOG_KINDS).map_err(storage)?;
    let objects = txn.open_table(OBJECTS).map_err(storage)?;
    let mut events = Vec::new();
    let mut last = None;
    let Some(start) = after.checked_add(1) else {
        return Ok((events, last));
    };
    // The log holds every revision after the oldest watchable one, without a gap: a missing
    // entry is one that damage hides, never one to skip.
    let missing = |revision: Revision| StoreError::Corrupt {
        record: format!("log entry {revision}"),
        reason: "it is missing from the log (damage hides it): a watch would miss its change"
            .into(),
    };
    let (mut read, mut bytes) = (0, 0);
    let mut exhausted = true;
    for entry in table.range(start..).map_err(storage)? {
        if read >= limit || bytes >= byte_limit {
            exhausted = false;
            break;
        }
        read += 1;
        let (revision, value) = entry.map_err(storage)?;
        let revision = revision.value();
        let expected = last.map_or(start, |l: Revision| l + 1);
        if revision != expected {
            return Err(missing(expected));
        }
        last = Some(revision);
        if let Some(kind) = kind {
            match kinds.get(revision).map_err(storage)? {
                Some(logged) if logged.value() != kind => continue,
                Some(_) => {}
                // Logged before kinds were (whole, then): read the entry's kind from the entry.
                None => match log_entry(revision, value.value())? {
                    LogEntry::Whole(body) => {
                        let header: LogHeader =
                            serde_json::from_slice(body).map_err(|e| StoreError::Corrupt {
                                record: format!("log entry {revision}"),
                                reason: e.to_string(),
                            })?;
                        if header.object.is_some_and(|o| o.kind != kind) {
                            continue;
                        }
                    }
                    LogEntry::Latest { key, .. } => {
                        if key.split_once('/').map(|(k, _)| k) != Some(kind) {
                            continue;
                        }
                    }
                },
            }
        }
        // Checked only for the entries the watch reads: other kinds' are skipped unread.
        let (event, size) = match log_entry(revision, value.value())? {
            LogEntry::Whole(body) => (decode_event(revision, body)?, value.value().len()),
            LogEntry::Latest { event_type, key } => resolve(&objects, revision, event_type, key)?,
        };
        bytes += size;
        events.push((event, size));
    }
    let reached = last.unwrap_or(after);
    if exhausted && reached < latest {
        return Err(missing(reached + 1));
    }
    Ok((events, last))
}
