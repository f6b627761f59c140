//! The errors every store backend reports.

use reactor_core::object::{NameError, Revision};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    #[error("{kind}/{name} not found")]
    NotFound { kind: String, name: String },
    #[error("conflict on {key}: expected revision {expected}, current revision is {actual}")]
    Conflict {
        key: String,
        expected: Revision,
        actual: Revision,
    },
    #[error("conflict on {key}: expected revision {expected}, but it does not exist")]
    ConflictMissing { key: String, expected: Revision },
    #[error(
        "revision {requested} has been compacted (the oldest watchable is {oldest}): list again and watch from the listed revision"
    )]
    Compacted {
        requested: Revision,
        oldest: Revision,
    },
    /// A later page of a list asked for the snapshot its first page was read from, and the
    /// store no longer keeps it (kept a short while, as etcd keeps revisions until compaction).
    #[error(
        "the snapshot at revision {revision} this list was paged from is no longer kept: list again from the first page"
    )]
    SnapshotGone { revision: Revision },
    #[error("{0}")]
    Invalid(String),
    #[error("{key} is not this reactor's to write: {reason}")]
    NotOwned { key: String, reason: String },
    #[error(
        "{key} is {size} bytes, over the limit of {limit} bytes per object (serve --max-object-bytes)"
    )]
    TooLarge {
        key: String,
        size: usize,
        limit: usize,
    },
    #[error("the transaction is too large: {0}")]
    TxnTooLarge(String),
    #[error("revision {requested} is beyond the store's latest revision {latest}")]
    Future {
        requested: Revision,
        latest: Revision,
    },
    #[error("corrupt record {record}: {reason}")]
    Corrupt { record: String, reason: String },
    /// An answer the store cannot give soundly because it found itself damaged: "absent", or a
    /// list, could miss an object a corrupt record or page hides.
    #[error(
        "cannot tell {what}: the store is corrupt ({found} problem(s) found, see /healthz), so it may hide objects"
    )]
    Damaged { what: String, found: usize },
    #[error("document {index}: {source}")]
    Document {
        index: usize,
        source: Box<StoreError>,
    },
    #[error("store backend failed: {0}")]
    Backend(String),
    #[error("store is closed")]
    Closed,
}

impl StoreError {
    /// The error of document `index` (counted from 1) of a multi-document apply.
    pub fn in_document(index: usize, source: StoreError) -> Self {
        Self::Document {
            index,
            source: Box::new(source),
        }
    }

    /// The error itself, without the document it happened in.
    pub fn root(&self) -> &StoreError {
        match self {
            Self::Document { source, .. } => source.root(),
            other => other,
        }
    }
}

impl From<NameError> for StoreError {
    fn from(e: NameError) -> Self {
        Self::Invalid(e.to_string())
    }
}

/// What a store found wrong with itself while serving (the embedded store's start check,
/// background scrub and reads); nothing for a store that checks no such thing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreHealth {
    /// The problems found, first found first (at most the first 100).
    pub problems: Vec<String>,
    /// How many problems were found in all.
    pub found: usize,
    /// What each check did last, e.g. `the scrub: pass 3 done, ...`.
    pub checks: Vec<String>,
}

impl StoreHealth {
    pub fn damaged(&self) -> bool {
        self.found > 0
    }
}
