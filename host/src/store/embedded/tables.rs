//! The redb tables of the embedded store and the reads over them.

use crate::object::{Object, ObjectKey, Revision};
use crate::store::{StoreError, WatchEvent};
use redb::{ReadableDatabase, TableDefinition};

/// `kind/name` → the object as JSON.
pub const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
/// revision → the watch event of that change as JSON; compacted from the oldest end.
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

pub fn decode_object(bytes: &[u8]) -> Result<Object, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::Backend(format!("corrupt object record: {e}")))
}

pub fn decode_event(bytes: &[u8]) -> Result<WatchEvent, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::Backend(format!("corrupt log record: {e}")))
}

pub fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(backend)
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
    let txn = db.begin_read().map_err(backend)?;
    let table = txn.open_table(OBJECTS).map_err(backend)?;
    let found = table.get(key.as_str()).map_err(backend)?;
    found.map(|v| decode_object(v.value())).transpose()
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

/// The log entries after `after` (up to `limit` read), or `Compacted` if some of them are
/// gone: those of `kind` (all if `None`) decoded, and the last revision read. Entries of
/// other kinds are only skimmed, so a watch of one kind does not pay for the others.
pub fn read_log(
    db: &redb::Database,
    after: Revision,
    limit: usize,
    kind: Option<&str>,
) -> Result<(Vec<WatchEvent>, Option<Revision>), StoreError> {
    let txn = db.begin_read().map_err(backend)?;
    let counters = txn.open_table(COUNTERS).map_err(backend)?;
    let oldest = counters
        .get(OLDEST)
        .map_err(backend)?
        .map(|v| v.value())
        .unwrap_or(0);
    if after < oldest {
        return Err(StoreError::Compacted {
            requested: after,
            oldest,
        });
    }
    let table = txn.open_table(LOG).map_err(backend)?;
    let kinds = txn.open_table(LOG_KINDS).map_err(backend)?;
    let mut events = Vec::new();
    let mut last = None;
    for entry in table.range(after + 1..).map_err(backend)?.take(limit) {
        let (revision, value) = entry.map_err(backend)?;
        let revision = revision.value();
        last = Some(revision);
        if let Some(kind) = kind {
            match kinds.get(revision).map_err(backend)? {
                Some(logged) if logged.value() != kind => continue,
                Some(_) => {}
                // Logged before kinds were: read the entry's kind from the entry.
                None => {
                    let header: LogHeader = serde_json::from_slice(value.value())
                        .map_err(|e| StoreError::Backend(format!("corrupt log record: {e}")))?;
                    if header.object.is_some_and(|o| o.kind != kind) {
                        continue;
                    }
                }
            }
        }
        events.push(decode_event(value.value())?);
    }
    Ok((events, last))
}
