//! Frames, once, the records of a file written before records carried a checksum.

use super::record;
use super::tables::{COUNTERS, LOG, OBJECTS, backend};
use crate::StoreError;
use redb::{ReadableTable, Table};

/// Set in `COUNTERS` once every record of the file is framed.
const FRAMED: &str = "framed";

/// Frames every unframed record in one transaction; a file already framed costs one read.
pub fn frame_records(db: &redb::Database) -> Result<(), StoreError> {
    let txn = db.begin_write().map_err(backend)?;
    {
        let mut counters = txn.open_table(COUNTERS).map_err(backend)?;
        if counters.get(FRAMED).map_err(backend)?.map(|v| v.value()) == Some(1) {
            return Ok(());
        }
        let mut objects = txn.open_table(OBJECTS).map_err(backend)?;
        let framed = frame_objects(&mut objects)?;
        let mut log = txn.open_table(LOG).map_err(backend)?;
        let logged = frame_log(&mut log)?;
        if framed + logged > 0 {
            tracing::info!(
                objects = framed,
                log_entries = logged,
                "added a checksum to every record of the store"
            );
        }
        counters.insert(FRAMED, 1).map_err(backend)?;
    }
    txn.commit().map_err(backend)
}

fn frame_objects(table: &mut Table<&str, &[u8]>) -> Result<usize, StoreError> {
    let mut keys = Vec::new();
    for entry in table.iter().map_err(backend)? {
        let (key, value) = entry.map_err(backend)?;
        if record::unframed(value.value()) {
            keys.push(key.value().to_owned());
        }
    }
    for key in &keys {
        let Some(body) = table
            .get(key.as_str())
            .map_err(backend)?
            .map(|v| v.value().to_vec())
        else {
            continue;
        };
        let framed = record::framed(key.as_bytes(), &body);
        table
            .insert(key.as_str(), framed.as_slice())
            .map_err(backend)?;
    }
    Ok(keys.len())
}

fn frame_log(table: &mut Table<u64, &[u8]>) -> Result<usize, StoreError> {
    let mut revisions = Vec::new();
    for entry in table.iter().map_err(backend)? {
        let (revision, value) = entry.map_err(backend)?;
        if record::unframed(value.value()) {
            revisions.push(revision.value());
        }
    }
    for revision in &revisions {
        let Some(body) = table
            .get(*revision)
            .map_err(backend)?
            .map(|v| v.value().to_vec())
        else {
            continue;
        };
        let framed = record::framed(&revision.to_le_bytes(), &body);
        table
            .insert(*revision, framed.as_slice())
            .map_err(backend)?;
    }
    Ok(revisions.len())
}
