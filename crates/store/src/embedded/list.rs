//! Listing the objects of one kind, whole or a page at a time: through the label index when
//! the selector has a `key=value` term, otherwise a scan of the kind (from the page's first
//! name) that decodes labels before whole objects.

use super::labels::{names_with_all, object_named};
use super::snapshots::Snapshots;
use super::tables::{COUNTERS, OBJECTS, REVISION, decode_object, object_body, storage};
use crate::{Page, PageQuery, StoreError};
use reactor_core::object::{Object, ObjectKey, Revision, Selector};
use redb::{ReadTransaction, ReadableDatabase};
use std::sync::Arc;
use std::time::Instant;

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
    let txn = db.begin_read().map_err(storage)?;
    let page = read_page(&txn, kind, selector, None, None)?;
    Ok((page.items, page.revision))
}

/// One page of a list. A first page that leaves objects for later is read from a snapshot the
/// store keeps (see [`Snapshots`]), and a later page from the snapshot its first was; one no
/// longer kept is refused, unless nothing changed in the store since.
pub fn list_page(
    db: &redb::Database,
    snapshots: &Snapshots,
    latest: Revision,
    kind: &str,
    selector: &Selector,
    query: PageQuery<'_>,
) -> Result<Page, StoreError> {
    let now = Instant::now();
    let txn = match query.at {
        Some(at) => match snapshots.get(at, now) {
            Some(txn) => txn,
            None if at == latest => Arc::new(db.begin_read().map_err(storage)?),
            None => return Err(StoreError::SnapshotGone { revision: at }),
        },
        None => Arc::new(db.begin_read().map_err(storage)?),
    };
    let page = read_page(&txn, kind, selector, query.after, query.limit)?;
    if let Some(at) = query.at
        && page.revision != at
    {
        // Read afresh because nothing had changed, but something committed in between.
        return Err(StoreError::SnapshotGone { revision: at });
    }
    if page.more {
        snapshots.keep(page.revision, txn, now);
    }
    Ok(page)
}

/// Up to `limit` objects of `kind` that `selector` matches named after `after`, in name order,
/// as `txn` sees them.
pub fn read_page(
    txn: &ReadTransaction,
    kind: &str,
    selector: &Selector,
    after: Option<&str>,
    limit: Option<usize>,
) -> Result<Page, StoreError> {
    let counters = txn.open_table(COUNTERS).map_err(storage)?;
    let revision = counters
        .get(REVISION)
        .map_err(storage)?
        .map(|v| v.value())
        .unwrap_or(0);
    let table = txn.open_table(OBJECTS).map_err(storage)?;
    let mut items = Vec::new();
    // One more than the page holds tells whether objects remain.
    let full = |items: &Vec<Object>| limit.is_some_and(|limit| items.len() > limit);
    let terms = selector.equalities();
    if !terms.is_empty() {
        for name in names_with_all(txn, kind, &terms, after)? {
            let object = object_named(&table, kind, &name)?;
            if selector.matches(&object.labels) {
                items.push(object);
                if full(&items) {
                    break;
                }
            }
        }
    } else {
        let (start, end) = ObjectKey::kind_range(kind);
        // Names hold no NUL: the first key after a name's is that key and a NUL.
        let start = match after {
            Some(after) => format!("{}\0", ObjectKey::new(kind, after)),
            None => start,
        };
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
            items.push(decode_object(key, record)?);
            if full(&items) {
                break;
            }
        }
    }
    let more = full(&items);
    if let Some(limit) = limit {
        items.truncate(limit);
    }
    Ok(Page {
        items,
        revision,
        more,
    })
}
