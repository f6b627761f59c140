//! The redb tables of the embedded store and the reads over them.

use crate::object::{Object, ObjectKey, Revision, Selector};
use crate::store::{StoreError, WatchEvent};
use redb::{ReadableDatabase, TableDefinition};

/// `kind/name` → the object as JSON.
pub const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
/// revision → the watch event of that change as JSON; compacted from the oldest end.
pub const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("log");
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

/// Only the labels of a stored object: a selector is checked on these before the whole object
/// is decoded, so a selective list costs a scan, not a full decode of every object.
#[derive(serde::Deserialize)]
struct Labels {
    #[serde(default)]
    labels: std::collections::BTreeMap<String, String>,
}

/// The objects of `kind` that `selector` matches, with the revision of the snapshot they were
/// read from.
pub fn list_kind(
    db: &redb::Database,
    kind: &str,
    selector: &Selector,
) -> Result<(Vec<Object>, Revision), StoreError> {
    let txn = db.begin_read().map_err(backend)?;
    let counters = txn.open_table(COUNTERS).map_err(backend)?;
    let revision = counters
        .get(REVISION)
        .map_err(backend)?
        .map(|v| v.value())
        .unwrap_or(0);
    let table = txn.open_table(OBJECTS).map_err(backend)?;
    let (start, end) = ObjectKey::kind_range(kind);
    let mut objects = Vec::new();
    for entry in table.range(start.as_str()..end.as_str()).map_err(backend)? {
        let (_, value) = entry.map_err(backend)?;
        let bytes = value.value();
        if !selector.is_empty() {
            let labels: Labels = serde_json::from_slice(bytes)
                .map_err(|e| StoreError::Backend(format!("corrupt object record: {e}")))?;
            if !selector.matches(&labels.labels) {
                continue;
            }
        }
        objects.push(decode_object(bytes)?);
    }
    Ok((objects, revision))
}

/// Up to `limit` log entries after `after`, or `Compacted` if some of them are gone.
pub fn read_log(
    db: &redb::Database,
    after: Revision,
    limit: usize,
) -> Result<Vec<WatchEvent>, StoreError> {
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
    let mut events = Vec::new();
    for entry in table.range(after + 1..).map_err(backend)?.take(limit) {
        let (_, value) = entry.map_err(backend)?;
        events.push(decode_event(value.value())?);
    }
    Ok(events)
}
