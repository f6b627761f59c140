//! Listing the objects of one kind: through the label index when the selector has a
//! `key=value` term, otherwise a scan of the kind that decodes labels before whole objects.

use super::labels::{names_with_all, objects_named};
use super::tables::{COUNTERS, OBJECTS, REVISION, decode_object, object_body, storage};
use crate::StoreError;
use reactor_core::object::{Object, ObjectKey, Revision, Selector};
use redb::ReadableDatabase;

/// Only the labels of a stored object: a selector is checked on these before the whole object
/// is decoded, so a selective list costs a scan, not a full decode of every object.
#[derive(serde::Deserialize)]
struct Labels {
    #[serde(default)]
    labels: std::collections::BTreeMap<String, String>,
}

/// The objects of `kind` that `selector` matches, with the revision of the snapshot they were
/// read from: through the label index if the selector has a `key=value` term.
pub fn list_kind(
    db: &redb::Database,
    kind: &str,
    selector: &Selector,
) -> Result<(Vec<Object>, Revision), StoreError> {
    let txn = db.begin_read().map_err(storage)?;
    let counters = txn.open_table(COUNTERS).map_err(storage)?;
    let revision = counters
        .get(REVISION)
        .map_err(storage)?
        .map(|v| v.value())
        .unwrap_or(0);
    let terms = selector.equalities();
    if !terms.is_empty() {
        let names = names_with_all(&txn, kind, &terms)?;
        let mut objects = objects_named(&txn, kind, &names)?;
        objects.retain(|o| selector.matches(&o.labels));
        return Ok((objects, revision));
    }
    let table = txn.open_table(OBJECTS).map_err(storage)?;
    let (start, end) = ObjectKey::kind_range(kind);
    let mut objects = Vec::new();
    for entry in table.range(start.as_str()..end.as_str()).map_err(storage)? {
        let (key, value) = entry.map_err(storage)?;
        let (key, record) = (key.value(), value.value());
        if !selector.is_empty() {
            let labels: Labels =
                serde_json::from_slice(object_body(key, record)?).map_err(|e| {
                    StoreError::Corrupt {
                        record: key.to_owned(),
                        reason: e.to_string(),
                    }
                })?;
            if !selector.matches(&labels.labels) {
                continue;
            }
        }
        objects.push(decode_object(key, record)?);
    }
    Ok((objects, revision))
}
