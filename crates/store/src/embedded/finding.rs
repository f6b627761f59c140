//! What a check found wrong in a store: the record or structure, the problem, the part of
//! the store it is in and the kind it is confined to; shared by the checks and the reads.

use super::record;
use crate::StoreError;
use reactor_core::object::ObjectKey;

/// The part of the store a problem is in, which says what a read may miss because of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// The objects table: a lookup that finds nothing, or a list, may miss an object.
    Objects,
    /// The label index: a list by label may miss an object.
    Index,
    /// The change log: a watch may miss a change.
    Log,
    /// The file as a whole (redb's pages, its structure): any read may miss anything.
    File,
}

/// One thing wrong in a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The record or structure it concerns: `Policy/a`, `log entry 12`, `the file`.
    pub record: String,
    pub problem: String,
    pub area: Area,
    /// The kind of the objects the damage is confined to, when it is known to be (a record
    /// whose key is known); `None`: it may concern objects of any kind.
    pub kind: Option<String>,
}

impl Finding {
    pub fn new(area: Area, record: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            record: record.into(),
            problem: problem.into(),
            area,
            kind: None,
        }
    }

    /// The same finding, confined to the objects of `kind`.
    pub fn of_kind(mut self, kind: &str) -> Self {
        self.kind = Some(kind.to_owned());
        self
    }

    /// The finding of a read that failed with `error` in `area`: confined to the kind of the
    /// record the error names, if it names an object.
    pub fn of_error(area: Area, error: &StoreError) -> Self {
        match error.root() {
            StoreError::Corrupt { record, reason } => {
                let finding = Self::new(area, record, reason);
                match object_kind(record) {
                    Some(kind) => finding.of_kind(kind),
                    None => finding,
                }
            }
            other => Self::new(area, "the file", other.to_string()),
        }
    }
}

/// The kind of `record` if it is an object's key (`Kind/name`).
pub(super) fn object_kind(record: &str) -> Option<&str> {
    let (kind, name) = record.split_once('/')?;
    let mut chars = kind.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !name.is_empty();
    valid.then_some(kind)
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.record, self.problem)
    }
}

/// The finding for the object record stored under `key` whose frame or body is refused with
/// `error`. A record whose body is sound but was found under another key (a damaged key, which
/// a lookup of its real key no longer reaches) is named by its real key.
///
/// The damage is confined to one kind when the record's key is known: the checksum matches
/// the key its body names (only the stored key was damaged), or the stored key and the body
/// name the same object (two copies agree). Otherwise it may hide an object of any kind.
pub fn damaged_object(key: &str, value: &[u8], error: &StoreError) -> Finding {
    let named = named_key(value);
    let sealed_for_named = named
        .as_ref()
        .is_some_and(|named| record::open(&String::new, named.as_str().as_bytes(), value).is_ok());
    if let Some(real) = named
        .as_ref()
        .filter(|named| sealed_for_named && named.as_str() != key)
    {
        return Finding::new(
            Area::Objects,
            real.as_str(),
            format!("its key is damaged (stored as {key:?}): a lookup does not find it"),
        )
        .of_kind(real.kind());
    }
    let problem = if record::unframed(value) {
        unframed_problem()
    } else {
        problem_of(error)
    };
    let finding = Finding::new(Area::Objects, key, problem);
    match named {
        Some(named) if named.as_str() == key => finding.of_kind(named.kind()),
        _ => finding,
    }
}

/// The key of the object the body of record `value` names, if the body can be read.
fn named_key(value: &[u8]) -> Option<ObjectKey> {
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        kind: &'a str,
        name: &'a str,
    }
    let body = if record::unframed(value) {
        value
    } else {
        value.get(record::HEADER..)?
    };
    let named: Named = serde_json::from_slice(body).ok()?;
    Some(ObjectKey::new(named.kind, named.name))
}

pub fn unframed_problem() -> String {
    "has no checksum (written before records had one; serve adds them when it opens the store)"
        .into()
}

/// The problem of a record error, without the record's name (the finding carries it).
pub fn problem_of(error: &StoreError) -> String {
    match error {
        StoreError::Corrupt { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}
