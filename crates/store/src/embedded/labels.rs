//! The label index of the embedded store: a selector with an equality term lists the objects
//! carrying that label, not every object of the kind.

use super::tables::{COUNTERS, OBJECTS, backend, decode_object, lookup, storage};
use crate::StoreError;
use reactor_core::object::{Object, ObjectKey};
use redb::{ReadableTable, Table, TableDefinition};
use std::collections::BTreeMap;

/// `kind \0 label=value \0 name` → nothing: one entry per label of every object.
pub const LABELS: TableDefinition<&str, ()> = TableDefinition::new("labels");

/// Set once every object of the file is in the index (files written before it existed are
/// indexed when first opened).
const INDEXED: &str = "labels-indexed";

pub fn entry(kind: &str, label: &str, value: &str, name: &str) -> String {
    format!("{kind}\0{label}={value}\0{name}")
}

/// The first key of the entries of `kind` carrying `label=value`, and the first after them.
fn range(kind: &str, label: &str, value: &str) -> (String, String) {
    (
        format!("{kind}\0{label}={value}\0"),
        format!("{kind}\0{label}={value}\u{1}"),
    )
}

/// Keeps the index in step with one object's change: `before` is what was stored under
/// its key, `after` what is stored there now (`None`: nothing). Labels on both sides stay.
pub fn update(
    index: &mut Table<&str, ()>,
    before: Option<&Object>,
    after: Option<&Object>,
) -> Result<(), StoreError> {
    let empty = BTreeMap::new();
    let old = before.map_or(&empty, |o| &o.labels);
    let new = after.map_or(&empty, |o| &o.labels);
    if let Some(object) = before {
        for (label, value) in old.iter().filter(|(l, v)| new.get(*l) != Some(*v)) {
            let key = entry(&object.kind, label, value, &object.name);
            index.remove(key.as_str()).map_err(backend)?;
        }
    }
    if let Some(object) = after {
        for (label, value) in new.iter().filter(|(l, v)| old.get(*l) != Some(*v)) {
            let key = entry(&object.kind, label, value, &object.name);
            index.insert(key.as_str(), ()).map_err(backend)?;
        }
    }
    Ok(())
}

/// Indexes every stored object if this file was written before the index existed.
pub fn build_if_missing(db: &redb::Database) -> Result<(), StoreError> {
    let txn = db.begin_write().map_err(backend)?;
    {
        let mut counters = txn.open_table(COUNTERS).map_err(backend)?;
        let done = counters.get(INDEXED).map_err(backend)?.map(|v| v.value());
        if done == Some(1) {
            return Ok(());
        }
        let objects = txn.open_table(OBJECTS).map_err(backend)?;
        let mut index = txn.open_table(LABELS).map_err(backend)?;
        for stored in objects.iter().map_err(backend)? {
            let (key, value) = stored.map_err(backend)?;
            let object = decode_object(key.value(), value.value())?;
            update(&mut index, None, Some(&object))?;
        }
        counters.insert(INDEXED, 1).map_err(backend)?;
    }
    txn.commit().map_err(backend)
}

/// The names of the objects of `kind` carrying every `label=value` of `terms`, in name
/// order, after the name `after` if given. The terms' entries are walked together, each jumping to the furthest name another
/// has reached, so a rare label among common ones costs a few lookups, not a scan.
pub fn names_with_all(
    txn: &redb::ReadTransaction,
    kind: &str,
    terms: &[(&str, &str)],
    after: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    let index = txn.open_table(LABELS).map_err(storage)?;
    let ranges: Vec<(String, String)> = terms
        .iter()
        .map(|(label, value)| range(kind, label, value))
        .collect();
    // The first name at or after `from` carrying one term's label.
    let first_from = |(start, end): &(String, String), from: &str| {
        let lower = format!("{start}{from}");
        let found = index
            .range(lower.as_str()..end.as_str())
            .map_err(storage)?
            .next()
            .transpose()
            .map_err(storage)?;
        Ok::<_, StoreError>(
            found.and_then(|(key, _)| key.value().strip_prefix(start.as_str()).map(str::to_owned)),
        )
    };
    let mut names = Vec::new();
    // Names hold no NUL: the first candidate after a name is that name and a NUL.
    let mut from = after.map_or_else(String::new, |after| format!("{after}\0"));
    loop {
        let mut furthest: Option<String> = None;
        let mut agreed = true;
        for term in &ranges {
            let Some(name) = first_from(term, &from)? else {
                return Ok(names);
            };
            if name != from {
                agreed = false;
            }
            if furthest.as_ref().is_none_or(|f| name > *f) {
                furthest = Some(name);
            }
        }
        match furthest {
            Some(name) if agreed => {
                // Names hold no NUL: the next candidate is the first name after this one.
                from = format!("{name}\0");
                names.push(name);
            }
            Some(name) => from = name,
            None => return Ok(names),
        }
    }
}

/// The stored object of `kind` named `name`, read in the transaction the index was. The
/// index and the objects are written together, so a name the index gives that the objects
/// table does not have is damage (to the index or to the object's key), never skipped.
pub fn object_named(
    table: &redb::ReadOnlyTable<&'static str, &'static [u8]>,
    kind: &str,
    name: &str,
) -> Result<Object, StoreError> {
    let key = ObjectKey::new(kind, name);
    lookup(table, key.as_str())?.ok_or_else(|| StoreError::Corrupt {
        record: key.to_string(),
        reason: "the label index names it but the objects table does not have it: \
                 the index or the object's key is damaged"
            .into(),
    })
}
